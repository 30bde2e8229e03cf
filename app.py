"""Serve the specviz app: ``python app.py [--host H] [--port P] [--share]``."""

from __future__ import annotations

import argparse
import os

from specviz.app.builder import build_demo, launch_options
from specviz.models.loader import ModelCache
from specviz.models.presets import load_presets


def main() -> None:
    """Parse the address, build the demo on the presets, launch it and print where it is."""
    parser = argparse.ArgumentParser(description="Speculative decoding, live in the browser.")
    parser.add_argument("--host", default=os.environ.get("GRADIO_SERVER_NAME", "127.0.0.1"))
    parser.add_argument(
        "--port", type=int, default=int(os.environ.get("GRADIO_SERVER_PORT", "7860"))
    )
    parser.add_argument("--share", action="store_true", help="also open a public gradio.live link")
    args = parser.parse_args()
    demo = build_demo(load_presets(), ModelCache())
    _, local_url, share_url = demo.queue().launch(
        server_name=args.host,
        server_port=args.port,
        share=args.share,
        prevent_thread_lock=True,
        quiet=True,
        **launch_options(),
    )
    print(f"specviz is running at {local_url}", flush=True)
    if share_url:
        print(f"public link: {share_url}", flush=True)
    demo.block_thread()


if __name__ == "__main__":
    main()
