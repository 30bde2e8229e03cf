"""Ready when the room is: the default pair loaded and warmed up at start-up, not on the first Step.

``Startup`` loads the default preset's pair through the app's model cache (the same call a Run
makes, so the first Run finds it there) and then runs a short speculative and plain generation,
so the first visitor's Run is timed on warm code paths (allocator, kernels, the lean step's
first-use check). Both hold the engine lock, so a visitor who presses Run meanwhile waits for
them rather than loading a second copy. ``startup_banner`` shows the progress in the page and
hides itself once the models are ready.
"""

from __future__ import annotations

import threading

import gradio as gr

from specviz.app.run_controls import first_prompt
from specviz.app.session import App
from specviz.core.engine import autoregressive_generate, speculative_generate
from specviz.drafters.registry import make_drafter
from specviz.measure.harness import warm_up_settings
from specviz.models.loader import ModelPair
from specviz.models.presets import Preset
from specviz.text import Phrase, UserError, t_html

POLL_S = 1.0  # how often the page asks how far start-up has got


class Startup:
    """The start-up load and warm-up of one preset's pair, and how far they have got."""

    def __init__(self, app: App, preset: Preset) -> None:
        self.app = app
        self.preset = preset
        self.phase = "waiting"  # then "loading", "warming", "ready" or "failed"
        self.fraction = 0.0
        self.doing: Phrase | None = None  # what the loader reports it is doing
        self.failure: Exception | None = None  # why start-up failed
        self.ready = threading.Event()  # set when start-up is over, ready or failed

    def start(self) -> threading.Thread:
        """Run start-up in a background thread (the server starts serving meanwhile)."""
        thread = threading.Thread(target=self.run, name="specviz-startup", daemon=True)
        thread.start()
        return thread

    def run(self) -> None:
        """Load the pair, then warm it up; a failure is recorded, and the first Run loads then."""
        try:
            with self.app.engine_lock:
                self.phase = "loading"
                pair = self.app.cache.load_pair(self.preset, progress=self._report)
                self.phase = "warming"
                self._warm_up(pair)
            self.phase = "ready"
        except Exception as error:  # shown in the page; the first Run tries again and says why
            self.failure = error
            self.phase = "failed"
        finally:
            self.ready.set()

    def _report(self, fraction: float, message: Phrase) -> None:
        self.doing, self.fraction = message, fraction

    def _warm_up(self, pair: ModelPair) -> None:
        """A few tokens of speculative and of plain decoding, at the preset's settings."""
        settings = warm_up_settings(self.preset.settings)
        prompt = first_prompt(self.preset) or "Hello"
        prompt_ids = pair.encode_prompt(prompt, chat=self.preset.chat_template)
        drafter = make_drafter(self.preset.drafter, pair)
        for _ in speculative_generate(pair, prompt_ids, settings, drafter):
            pass
        for _ in autoregressive_generate(pair, prompt_ids, settings):
            pass

    def banner_html(self, lang: str) -> str:
        """What the page says while start-up runs ("" once the models are ready)."""
        if self.phase == "ready":
            return ""
        if self.phase == "failed":
            error = self.failure
            cause = error.message(lang) if isinstance(error, UserError) else str(error)
            line = t_html("app.startup.failed", lang, cause=cause)
        elif self.phase == "warming":
            line = t_html("app.startup.warming", lang)
        else:
            doing = self.doing.text(lang) if self.doing is not None else ""
            line = t_html("app.startup.loading", lang, percent=f"{self.fraction:.0%}", doing=doing)
        return f'<div class="sv-startup" role="status" data-phase="{self.phase}">{line}</div>'


def startup_banner(startup: Startup, lang: str) -> gr.HTML:
    """A status line in the current Blocks context that follows start-up and hides once ready."""
    banner = gr.HTML(startup.banner_html(lang), elem_id="sv-startup")
    timer = gr.Timer(POLL_S)

    def poll() -> tuple[str, gr.Timer]:
        return startup.banner_html(lang), gr.Timer(active=not startup.ready.is_set())

    timer.tick(poll, None, [banner, timer], queue=False, api_visibility="private")
    return banner
