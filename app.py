"""Serve the specviz app: ``python app.py [--host H] [--port P] [--share] [--hosted]``.

On a Hugging Face Space (SPACE_ID or SYSTEM=spaces in the environment) or with ``--hosted`` the
app runs in hosted mode: the hosted presets and caps of ``specviz.app.limits``; on ZeroGPU the
default pair is placed on the GPU at start-up (``specviz.app.zerogpu``).
"""

from __future__ import annotations

import argparse
import os

from specviz.app import zerogpu
from specviz.app.builder import build_demo, launch_options, queue_options
from specviz.app.limits import hosted_presets, limits_for, on_spaces
from specviz.models.loader import ModelCache
from specviz.models.presets import default_preset, load_presets


def main() -> None:
    """Parse the address and mode, build the demo on the presets, launch it, print where it is."""
    parser = argparse.ArgumentParser(description="Speculative decoding, live in the browser.")
    parser.add_argument("--host", default=os.environ.get("GRADIO_SERVER_NAME", "127.0.0.1"))
    parser.add_argument(
        "--port", type=int, default=int(os.environ.get("GRADIO_SERVER_PORT", "7860"))
    )
    parser.add_argument("--share", action="store_true", help="also open a public gradio.live link")
    parser.add_argument(
        "--hosted",
        action="store_true",
        help="hosted mode for a public server (on by itself on a Hugging Face Space)",
    )
    args = parser.parse_args()
    hosted = args.hosted or on_spaces()
    limits = limits_for(hosted)
    presets = hosted_presets(load_presets()) if hosted else load_presets()
    cache = ModelCache(max_pairs=limits.pairs_in_memory)
    if zerogpu.zero_gpu():
        zerogpu.start()
        cache.load_pair(default_preset(presets), device="cuda")  # ZeroGPU: on cuda at start-up
    # The default pair loads and warms up while the server starts (its progress shown in the
    # page), so the first visitor's Step does not wait for it; ZeroGPU placed it above already.
    demo = build_demo(presets, cache, limits=limits, startup=not zerogpu.zero_gpu())
    _, local_url, share_url = demo.queue(**queue_options(limits)).launch(
        server_name=args.host,
        server_port=args.port,
        share=args.share,
        prevent_thread_lock=True,
        quiet=True,
        **launch_options(limits),
    )
    mode = " (hosted mode)" if hosted else ""
    print(f"specviz is running at {local_url}{mode}", flush=True)
    if share_url:
        print(f"public link: {share_url}", flush=True)
    demo.block_thread()


if __name__ == "__main__":
    main()
