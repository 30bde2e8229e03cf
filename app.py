"""Serve the specviz app: ``python app.py [--host H] [--port P] [--share] [--hosted]
[--presets IDS] [--replay FILE]``; with --replay, the trace FILE plays in the live tab when a
page opens.

English at ``/``, Japanese at ``/ja/`` (``specviz.app.site``): a browser that prefers Japanese is
sent there, and the switch at the top of each page changes language.

On a Hugging Face Space (SPACE_ID or SYSTEM=spaces in the environment) or with ``--hosted`` the
app runs in hosted mode: the caps of ``specviz.app.limits`` and the presets the host allows
(``--presets`` or $SPECVIZ_HOSTED_PRESETS; the bundled pair alone by default); on ZeroGPU the
default pair is placed on the GPU at start-up (``specviz.app.zerogpu``).
"""

from __future__ import annotations

import argparse
import os
import secrets
from pathlib import Path

from gradio import networking

from specviz.app import zerogpu
from specviz.app.limits import HOSTED_PRESETS_VARIABLE, hosted_presets, limits_for, on_spaces
from specviz.app.site import bilingual_app, serve
from specviz.export.trace import read_trace_file
from specviz.models.allocator import steady_allocator
from specviz.models.loader import ModelCache
from specviz.models.presets import default_preset, served_presets
from specviz.text import UserError


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
    parser.add_argument(
        "--presets",
        default=os.environ.get(HOSTED_PRESETS_VARIABLE),
        metavar="IDS",
        help="hosted mode: the presets visitors may choose, comma-separated ids or 'all' "
        f"(default: ${HOSTED_PRESETS_VARIABLE}, else the bundled pair alone)",
    )
    parser.add_argument(
        "--replay",
        type=Path,
        metavar="FILE",
        help="replay a trace (python -m specviz generate --trace FILE) when a page opens; "
        "no model is loaded for it",
    )
    args = parser.parse_args()
    # Before the server's threads exist: freed run memory goes back to the OS, so a server's
    # resident set stays level over many visitors (docs/hosting.md, "Memory over many runs").
    steady_allocator()
    replay = None
    if args.replay is not None:
        try:
            replay = read_trace_file(args.replay)
        except (UserError, OSError) as error:
            message = error.message() if isinstance(error, UserError) else str(error)
            parser.exit(2, f"{args.replay}: {message}\n")
    hosted = args.hosted or on_spaces()
    limits = limits_for(hosted)
    try:
        presets = hosted_presets(served_presets(), args.presets) if hosted else served_presets()
    except UserError as error:
        parser.exit(2, f"{error.message()}\n")
    cache = ModelCache(max_pairs=limits.pairs_in_memory)
    if zerogpu.zero_gpu():
        zerogpu.start()
        cache.load_pair(default_preset(presets), device="cuda")  # ZeroGPU: on cuda at start-up
    # The default pair loads and warms up while the server starts (its progress shown in the
    # page), so the first visitor's Step does not wait for it; ZeroGPU placed it above already.
    site = bilingual_app(
        presets, cache, limits=limits, replay=replay, startup=not zerogpu.zero_gpu()
    )
    running = serve(site, args.host, args.port)
    mode = " (hosted mode)" if hosted else ""
    print(f"specviz is running at {running.url}{mode} (日本語: {running.url}ja/)", flush=True)
    if args.share:
        port = int(running.url.rstrip("/").rsplit(":", 1)[1])
        share_url = networking.setup_tunnel(
            "127.0.0.1", port, secrets.token_urlsafe(32), None, None
        )
        print(f"public link: {share_url}", flush=True)
    running.thread.join()


if __name__ == "__main__":
    main()
