"""The app's programmatic endpoints: ``/generate`` (gradio_client), text and stats per cycle, and
``/health``, the server's memory and threads.

Its parameters are ``prompt``, ``preset``, one per generation setting (from the settings schema;
None keeps the preset's value), ``chat_template``, ``race`` and ``drafter`` (a drafter spec; None
keeps the preset's). A race here races the run's drafter against plain decoding, repeated
(``DEFAULT_REPEATS`` within the app's cap); its stats are under ``race``, the median speedup
under ``speedup``.
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Iterator, Mapping
from typing import Any

import gradio as gr

from specviz.app.gpu_work import Runs
from specviz.app.refusals import refusing
from specviz.app.session import App, Session, Started, final_text, stats
from specviz.app.setting_controls import POSITIONAL, with_setting_parameters
from specviz.measure.memory import resident_bytes
from specviz.models.presets import Preset


def generate_endpoint(runs: Runs, default: Preset, engine_group: str) -> Any:
    """Register ``/generate`` in the current Blocks context, on the engine's queue; returns the
    endpoint's function. The model work is done where ``runs`` does it (on ZeroGPU, in its
    worker)."""
    app = runs.app

    def generate(
        request: gr.Request | None = None, **values: Any
    ) -> tuple[str, dict[str, Any]]:  # a generator: one (text, stats) per cycle, final last
        """Run speculative decoding (and, with race, the race); stream (text, stats)."""
        inputs = app.checks.read(run_values(**values))  # checked by the validator: taken here
        with app.one_run(request.session_hash if request is not None else None):
            sess = Session()
            for record in runs.play(sess, inputs):
                if not isinstance(record, Started):
                    yield final_text(sess), stats(sess)
            if inputs.race:
                for _ in runs.race(sess, inputs):
                    pass
            yield final_text(sess), stats(sess)

    def check(request: gr.Request | None = None, **values: Any) -> Iterator[None]:
        """The request's inputs checked before the queue, kept for generate; nothing runs."""
        app.checks.read_ahead(run_values(**values))
        yield from ()

    parameters: dict[str, list[inspect.Parameter]] = {
        "before": [
            inspect.Parameter("prompt", POSITIONAL, annotation=str),
            inspect.Parameter("preset", POSITIONAL, default=default.id, annotation=str),
        ],
        "after": [
            inspect.Parameter("chat_template", POSITIONAL, default=True, annotation=bool),
            inspect.Parameter("race", POSITIONAL, default=False, annotation=bool),
            # A drafter spec ("draft-model", "lookup", "hybrid", with options); None: the preset's.
            inspect.Parameter("drafter", POSITIONAL, default=None, annotation=str | None),
        ],
    }
    # Gradio hands the handler the visitor's request (it is no API parameter): one run each.
    request = inspect.Parameter("request", POSITIONAL, default=None, annotation=gr.Request)
    endpoint = with_setting_parameters(
        generate,  # type: ignore[arg-type]  # its annotation names the API's two outputs
        before=parameters["before"],
        after=[*parameters["after"], request],
    )
    checked = with_setting_parameters(check, parameters["before"], parameters["after"])
    gr.api(endpoint, api_name="generate", concurrency_id=engine_group, concurrency_limit=1)
    # gr.api takes no validator=: it is set on the event it registered (a public attribute).
    event = next(fn for fn in registered_events() if fn.api_name == "generate")
    names = list(inspect.signature(checked).parameters)  # each refusal on its own parameter
    event.validator = refusing(lambda *args, **kwargs: list(checked(*args, **kwargs)), names)
    return endpoint


def run_values(settings: Mapping[str, Any], **values: Any) -> dict[str, Any]:
    """``/generate``'s arguments by name as a run's values, read as every run's are
    (``RequestChecks.read``): the settings given among the others, by name."""
    return {**values, **settings}


def registered_events() -> list[Any]:
    """The events registered so far in the Blocks being built (Gradio's BlockFunctions)."""
    blocks = gr.context.Context.root_block
    return list(blocks.fns.values()) if blocks is not None else []


def health_endpoint(app: App) -> None:
    """Register ``/health`` (outside the queue, so a full queue still answers): the server's
    resident memory, its live threads and whether the engine is running a visitor's work. The
    load test reads it before and after; a host can poll it."""

    def health() -> dict[str, Any]:
        """The server's resident memory in bytes, live threads, and whether the engine is busy."""
        return {
            "rss_bytes": resident_bytes(),
            "threads": threading.active_count(),
            "busy": app.engine_lock.locked(),
        }

    gr.api(health, api_name="health", queue=False, api_visibility="undocumented")
