"""One page per language, served side by side on one FastAPI app: ``python app.py``.

Every word the app shows, static or rendered on the server (stream, cards, counters, charts, labs,
errors), comes from the catalogue in the language its ``App`` was built with, so ``bilingual_app``
builds one demo per catalogue language over one shared model cache and one engine lock and mounts
each at its path (``language_switch.LANGUAGE_PATHS``). The bare root sends a browser whose
Accept-Language prefers another language to that page; the switch on each page links to the
others. Each visitor reads their own language; the models are loaded once. Why not ``gr.I18n``:
docs/design.md, "Languages".
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import fastapi
import gradio as gr
import uvicorn
from fastapi.responses import PlainTextResponse, RedirectResponse

from specviz.app.builder import REPLAY_GROUP, build_demo, mount_options, queue_options
from specviz.app.language_switch import CHOICE_PARAMETER, LANGUAGE_PATHS, browser_language
from specviz.app.limits import LOCAL, Limits
from specviz.app.server_queue import ServerQueue
from specviz.app.session import App
from specviz.app.startup import Startup
from specviz.export.trace import Trace
from specviz.models.loader import ModelCache
from specviz.models.presets import Preset, default_preset


def bilingual_app(
    presets: Mapping[str, Preset],
    model_cache: ModelCache | None = None,
    *,
    limits: Limits = LOCAL,
    replay: Trace | None = None,
    startup: bool = False,
) -> fastapi.FastAPI:
    """One FastAPI app serving the demo in every language of ``LANGUAGE_PATHS``, all over one
    model cache, one engine lock (so two pages never run two generations at once) and one queue
    size (``ServerQueue``: the events waiting on all pages together); a *replay*
    trace plays on every page when it opens; with *startup* the default pair loads and warms up
    once, in the background, every page showing its progress."""
    cache = model_cache or ModelCache()
    lock = threading.Lock()
    site = fastapi.FastAPI()
    preload = None
    if startup:
        preload = Startup(App(presets, cache, limits=limits, lock=lock), default_preset(presets))

    @site.middleware("http")
    async def follow_the_browser(request: fastapi.Request, call_next: Any) -> Any:
        # An upload that says it is past the cap is refused before its body is read: Gradio's
        # own cap reads (and parses) up to the cap first, which a burst of large uploads turns
        # into seconds of a busy server.
        if request.url.path.endswith(UPLOAD_ROUTE) and too_large(request, limits.trace_bytes):
            return PlainTextResponse(
                f"File size exceeded maximum allowed size of {limits.trace_bytes} bytes.",
                status_code=413,
            )
        # The bare root sends a browser that prefers another language to that language's page.
        if request.url.path == "/" and CHOICE_PARAMETER not in request.query_params:
            preferred = browser_language(request.headers.get("accept-language"))
            if LANGUAGE_PATHS[preferred]:
                return RedirectResponse(f"./{LANGUAGE_PATHS[preferred]}/", status_code=307)
        return await call_next(request)

    # One waiting line for every page: the queue's size is the server's, not each language's.
    # Replays wait in a line of their own, so uploads never crowd out visitors' runs.
    own = {REPLAY_GROUP: limits.replay_waiting} if limits.replay_waiting is not None else {}
    waiting = ServerQueue(limits.queue_size, own)
    site.state.queue = waiting
    # Starlette tries mounts in order: the root's catch-all comes last.
    for lang in sorted(LANGUAGE_PATHS, key=lambda code: LANGUAGE_PATHS[code] == ""):
        demo = build_demo(presets, cache, lang=lang, limits=limits, replay=replay, engine_lock=lock)
        demo.queue(**queue_options(limits))
        waiting.join(demo._queue)
        options = mount_options(limits)
        gr.mount_gradio_app(site, demo, f"/{LANGUAGE_PATHS[lang]}", **options)
        serve_validators_from_mount(site, demo)
    if preload is not None:
        preload.start()
    return site


def serve_validators_from_mount(site: fastapi.FastAPI, demo: gr.Blocks) -> None:
    """Point *demo* at the Gradio app *site* serves it through.

    Gradio runs an event's validator (the uploaded trace's check) through ``demo.app``, which
    mounting leaves at the app ``demo.queue()`` made, with sessions of its own: every checked
    upload then built a second copy of a visitor's session state on the server's event loop
    and kept it apart from the page's."""
    for route in site.routes:
        mounted = getattr(route, "app", None)
        if getattr(mounted, "blocks", None) is demo:
            demo.app = mounted
            return
    raise LookupError("the demo is not mounted on this site")


UPLOAD_ROUTE = "/gradio_api/upload"
# A multipart request carries its boundaries and headers beside the file itself.
_MULTIPART_SLACK = 64 * 1024


def too_large(request: fastapi.Request, cap: int) -> bool:
    """Whether the request's declared length is past *cap* bytes of file (plus the multipart
    framing); a request without a length is left to Gradio's own cap."""
    declared = request.headers.get("content-length", "")
    return declared.isdigit() and int(declared) > cap + _MULTIPART_SLACK


@dataclass
class RunningSite:
    """A site served by uvicorn in a background thread."""

    url: str
    server: uvicorn.Server
    thread: threading.Thread

    def close(self) -> None:
        """Stop serving and wait for the server's thread to end."""
        self.server.should_exit = True
        self.thread.join(timeout=10)


def serve(site: fastapi.FastAPI, host: str = "127.0.0.1", port: int = 0) -> RunningSite:
    """Serve *site* on *host*:*port* (0: a free port) in a background thread, started."""
    if port == 0:
        with socket.socket() as probe:
            probe.bind((host, 0))
            port = probe.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(site, host=host, port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True, name="specviz-site")
    thread.start()
    while not server.started and thread.is_alive():
        time.sleep(0.05)
    shown = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    return RunningSite(f"http://{shown}:{port}/", server, thread)
