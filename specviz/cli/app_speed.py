"""Does the UI slow the engine? The app's reported tokens/s against the engine alone.

The app is built and served in this process on the same model cache; the engine alone and the
app's `/run` endpoint (driven through gradio_client, as a browser would) take turns through the
measurement harness on the same prompt and settings. The app's figure is the one its counters show
(engine time inside the app); the record also holds when the first cycle reached the client.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, fields
from typing import Any

from specviz.core.events import Totals
from specviz.core.settings import GenerationSettings
from specviz.measure.harness import Method, Outcome, Trial, measure
from specviz.measure.methods import speculative_decoding

__all__ = ["AppSpeed", "measure_app_speed", "run_inputs"]


@dataclass(frozen=True)
class AppSpeed:
    """Engine-time tokens/s of the engine alone and inside the app, per repeat."""

    engine_tokens_per_s: tuple[float, ...]
    app_tokens_per_s: tuple[float, ...]
    first_cycle_s: tuple[float, ...]  # from the request to the first cycle shown, per app run
    new_tokens: int

    @property
    def ratio(self) -> float:
        """Median app tokens/s over median engine tokens/s (1.0: the UI costs nothing)."""
        return statistics.median(self.app_tokens_per_s) / statistics.median(
            self.engine_tokens_per_s
        )


def measure_app_speed(
    presets: Any, model_cache: Any, preset: Any, task: str, max_new_tokens: int, repeats: int
) -> AppSpeed:
    """Serve the app, then time the engine alone and the app's /run alternately (after a warm-up).

    Settings are the preset's, greedy, at `max_new_tokens`; the prompt is the task's first.
    """
    from gradio_client import Client

    from specviz.app.builder import build_demo, launch_options

    pair = model_cache.load_pair(preset)
    prompt = preset.prompts[task][0]
    settings = GenerationSettings(
        gamma=preset.settings.gamma,
        adaptive_gamma=preset.settings.adaptive_gamma,
        max_new_tokens=max_new_tokens,
        draft_stop_below=preset.settings.draft_stop_below,
        draft_stop_cumulative=preset.settings.draft_stop_cumulative,
    )
    demo = build_demo(presets, model_cache).queue()
    _, url, _ = demo.launch(
        server_name="127.0.0.1", prevent_thread_lock=True, quiet=True, **launch_options()
    )
    try:
        client = Client(url, verbose=False)
        first_cycles: list[float] = []

        def via_app(trial: Trial) -> Outcome:
            inputs = run_inputs(preset, prompt, trial.settings)
            began = time.perf_counter()
            first = None
            job = client.submit(api_name="/run", **inputs)
            for out in job:
                if first is None and 'class="sv-cut"' in str(out[1]):
                    first = time.perf_counter() - began
            first_cycles.append(first if first is not None else float("nan"))
            totals = _totals(job.outputs()[-1][-1]["totals"])
            return Outcome(totals.new_tokens, totals)

        engine = speculative_decoding(
            pair, pair.encode_prompt(prompt, chat=preset.chat_template), settings, "engine"
        )
        app = Method("app", via_app, settings)
        measured = measure([engine, app], repeats=repeats, warm_up=[engine])
    finally:
        demo.close()

    def engine_rates(name: str) -> tuple[float, ...]:
        return tuple(
            sample.outcome.totals.tokens_per_s if sample.outcome.totals else 0.0
            for sample in measured[name].samples
        )

    return AppSpeed(
        engine_rates("engine"),
        engine_rates("app"),
        tuple(first_cycles),
        measured["engine"].new_tokens,
    )


def run_inputs(preset: Any, prompt: str, settings: GenerationSettings) -> dict[str, Any]:
    """The live run's inputs by the names the app's /run endpoint takes them.

    Passed by name, so the order the app lists them in cannot drift from this; the settings are
    the ones the app has controls for, from the schema the app builds them from.
    """
    from specviz.app.setting_controls import shown_settings
    from specviz.measure.spread import DEFAULT_REPEATS

    shown = {item.name: getattr(settings, item.name) for item in shown_settings(type(settings))}
    return {
        "preset": preset.id,
        "drafter": preset.drafter,
        "prompt": prompt,
        "chat_template": preset.chat_template,
        **shown,
        "race": False,
        "race_drafters": [],  # no race: the run's drafter would be its only lane
        "race_repeats": DEFAULT_REPEATS,
    }


def _totals(reported: dict[str, Any]) -> Totals:
    """The counters the app reports, back as a Totals record (rates are recomputed from them)."""
    return Totals(**{field.name: reported[field.name] for field in fields(Totals)})
