"""The "Production configs" tab: the current pair, drafter and settings as serving configs.

One copyable code block per engine (``specviz.production``), headed by the version it was written
for, with its notes under it; every change of the preset, the drafter or a setting rewrites them.
Where a llama-server was found (and the app is not hosted), "Run it here" runs the llama.cpp
command as printed, on the bundled pair's GGUF files, as a race beside specviz: plain decoding and
the run's drafter in specviz, plain and speculative decoding in llama.cpp, the same prompt and
settings, interleaved (``specviz.measure.race`` with llama.cpp's lanes).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import gradio as gr

from specviz.app.lab_tabs import LabRun, LabWiring, run_button, status_box
from specviz.app.lab_tabs import status_line as lab_status
from specviz.app.llama_lanes import llama_build, llama_race_servers
from specviz.app.run_controls import PRIVATE, RunControls
from specviz.core.settings import SettingError, settings_from_mapping
from specviz.measure.race import iter_race
from specviz.measure.race_records import RaceProgress
from specviz.models.presets import Preset, default_preset
from specviz.production.engines import LLAMA_CPP
from specviz.production.snippets import Snippet, production_snippets
from specviz.text import UserError, t
from specviz.views import race_html


def notes_markdown(snippet: Snippet, lang: str) -> str:
    """The snippet's notes as a Markdown list ("" when it carries everything over)."""
    return "\n".join(f"- {note.text(lang)}" for note in snippet.notes)


def current_snippets(
    presets: Mapping[str, Preset], values: dict[str, Any]
) -> tuple[Snippet, ...] | None:
    """The snippets for the controls' values by name (preset, drafter, settings); None while a
    value is invalid (the run's own checks say why when it is used)."""
    preset = presets.get(values.pop("preset"))
    drafter = values.pop("drafter", None)
    if preset is None:
        return None
    try:
        settings = settings_from_mapping(values, preset.settings, exact=False)
        return production_snippets(preset, drafter or preset.drafter, settings)
    except (SettingError, UserError, ValueError):
        return None


def configs_panel(
    controls: RunControls,
    presets: Mapping[str, Preset],
    lang: str,
    wiring: LabWiring | None = None,
) -> None:
    """Lay out the configs tab in the current Tabs context and keep it in step with *controls*:
    a tab of its own, so the snippets have the page's width to be read and copied. With
    *wiring* (the labs' runs), the llama.cpp command gets its "Run it here"."""
    inputs = {
        "preset": controls.preset,
        "drafter": controls.drafter,
        **controls.settings.components,
    }
    with gr.Tab(t("production.title", lang), id="configs", elem_id="sv-tab-configs"):
        gr.Markdown(t("production.intro", lang))
        first = default_preset(presets)
        blocks: list[tuple[gr.Code, gr.Markdown]] = []
        for snippet in production_snippets(first, first.drafter, first.settings):
            engine = snippet.engine
            label = t("production.written_for", lang, engine=engine.label, version=engine.version)
            code = gr.Code(
                snippet.code,
                language=snippet.language,  # type: ignore[arg-type]  # "shell" or "python"
                label=label,
                lines=4,
                buttons=["copy"],
                interactive=False,
            )
            blocks.append((code, gr.Markdown(notes_markdown(snippet, lang))))
            if engine.name == LLAMA_CPP and wiring is not None:
                run_here(wiring, lang)

    def refresh(*values: Any) -> list[Any]:
        snippets = current_snippets(presets, dict(zip(inputs, values, strict=True)))
        if snippets is None:
            return [gr.update() for _ in range(2 * len(blocks))]
        shown: list[Any] = []
        for snippet in snippets:
            shown += [
                gr.Code(value=snippet.code, language=snippet.language),
                notes_markdown(snippet, lang),
            ]
        return shown

    outputs = [component for pair in blocks for component in pair]
    for component in inputs.values():
        component.change(refresh, list(inputs.values()), outputs, queue=False, **PRIVATE)


# Repeats of each lane when the configs tab runs its command: enough for a median and a range.
RUN_HERE_REPEATS = 3


def run_here(wiring: LabWiring, lang: str) -> None:
    """The llama.cpp command's "Run it here": a button, its status and the race it measures;
    where no llama-server was found (or on a Space), a line saying how to get one instead."""
    if llama_build(wiring.app.limits.hosted) is None:
        key = (
            "production.run_here.hosted" if wiring.app.limits.hosted else "production.run_here.none"
        )
        gr.Markdown(t(key, lang), elem_id="sv-run-here-missing")
        return
    button = run_button(t("production.run_here", lang), "sv-run-here")
    status = status_box(t("production.run_here.intro", lang), "sv-run-here-status")
    view = gr.HTML(race_html.race_html(None, lang=lang), elem_id="sv-run-here-race")

    def work(lab: LabRun) -> Iterator[RaceProgress]:
        inputs = lab.inputs
        drafters = [str(inputs.drafter)]
        lanes = wiring.app.run_locked(
            lambda: llama_race_servers(inputs.preset, inputs.settings, drafters, False),
            "app.doing.race",
        )
        races = iter_race(
            lab.pair, lab.prompt_ids, inputs.settings, drafters, RUN_HERE_REPEATS, llama=lanes
        )
        for update in wiring.app.locked(races, "app.doing.race"):
            lab.progress(update.fraction, update.message)
            yield update

    def show(update: RaceProgress) -> dict[Any, Any]:
        line = t("app.status.done", lang) if update.finished else update.message.text(lang)
        return {
            status: lab_status(line, "done" if update.finished else "info"),
            view: race_html.race_html(update.result, lang=lang),
        }

    wiring.start(button, work, show, [], [status, view], status)
