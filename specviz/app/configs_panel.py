"""The "Production configs" accordion: the current pair, drafter and settings as serving configs.

One copyable code block per engine (``specviz.production``), headed by the version it was written
for, with its notes under it; every change of the preset, the drafter or a setting rewrites them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gradio as gr

from specviz.app.run_controls import PRIVATE, RunControls
from specviz.core.settings import SettingError, settings_from_mapping
from specviz.models.presets import Preset, default_preset
from specviz.production.snippets import Snippet, production_snippets
from specviz.text import UserError, t


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


def configs_panel(controls: RunControls, presets: Mapping[str, Preset], lang: str) -> None:
    """Lay out the configs tab in the current Tabs context and keep it in step with *controls*:
    a tab of its own, so the snippets have the page's width to be read and copied."""
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
