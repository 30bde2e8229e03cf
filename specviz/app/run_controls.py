"""The left column: model pair, prompt and examples, the run buttons and the decoding settings.

The settings' controls come from the settings schema (``setting_controls``); choosing a pair
shows its description, its default settings and its example prompts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import gradio as gr

from specviz.app.limits import LOCAL, Limits
from specviz.app.llama_lanes import llama_choice
from specviz.app.race_panel import RaceControls, race_controls
from specviz.app.setting_controls import SettingControls, setting_controls
from specviz.drafters.registry import DRAFTERS, drafter_label
from specviz.models.presets import TASKS, Preset, default_preset, task_label
from specviz.text import DEFAULT_LANGUAGE, t

PRIVATE: dict[str, Any] = {"api_visibility": "private"}  # UI-only events stay out of the API


@dataclass
class RunControls:
    """The column's components that other areas read or wire."""

    preset: gr.Dropdown
    drafter: gr.Dropdown
    prompt: gr.Textbox
    chat: gr.Checkbox
    race: gr.Checkbox
    race_lanes: RaceControls
    run: gr.Button
    step: gr.Button
    stop: gr.Button
    settings: SettingControls
    # The event that shows a newly chosen pair's defaults: whatever sets the controls past those
    # defaults (a shared link) runs after it.
    pair_shown: Any = None

    def run_inputs(self) -> dict[str, Any]:
        """A run's inputs by parameter name, in the order the API lists them (``inputs_kwargs``):
        handlers take ``preset``, ``drafter``, ``prompt``, ``chat_template`` and the settings by
        name, and read them with ``RequestChecks.read``."""
        return {
            "preset": self.preset,
            "drafter": self.drafter,
            "prompt": self.prompt,
            "chat_template": self.chat,
            **self.settings.components,
        }


def run_controls(presets: Mapping[str, Preset], lang: str, limits: Limits = LOCAL) -> RunControls:
    """Lay out the column in the current Blocks context, worded in *lang*, its settings within
    *limits*, and wire its own events."""
    first = default_preset(presets)
    tasks = example_tasks(first, lang)
    preset = gr.Dropdown(
        choices=[(p.label_in(lang), p.id) for p in presets.values()],
        value=first.id,
        label=t("app.control.preset", lang),
    )
    preset_note = gr.Markdown(first.describe(lang))
    drafter = gr.Dropdown(
        choices=drafter_choices(first, lang),
        value=first.drafter,
        label=t("app.control.drafter", lang),
        info=t("app.control.drafter.info", lang),
        elem_id="sv-drafter",
    )
    prompt = gr.Textbox(
        label=t("app.control.prompt", lang),
        lines=3,
        value=first_prompt(first, lang),
        elem_id="sv-prompt",
    )
    with gr.Row(elem_classes="sv-run-row"):
        run = gr.Button(t("app.button.run", lang), variant="primary", elem_id="sv-run")
        step = gr.Button(t("app.button.step", lang), elem_id="sv-step")
        stop = gr.Button(t("app.button.stop", lang), variant="stop", elem_id="sv-stop")
    race = gr.Checkbox(value=False, label=t("app.control.race", lang), elem_id="sv-race-toggle")
    race_lanes = race_controls(race_choices(first, lang, limits), first.drafter, lang, limits)
    task = gr.Radio(
        choices=task_choices(tasks, lang), value=tasks[0], label=t("app.control.task", lang)
    )
    examples = gr.Dataset(
        components=[prompt],
        samples=example_samples(first, tasks[0], lang),
        label=t("app.control.examples", lang),
        elem_id="sv-examples",
    )
    chat = gr.Checkbox(value=first.chat_template, label=t("app.control.chat", lang))
    with gr.Accordion(t("app.control.settings", lang), open=True):
        settings = setting_controls(first.settings, lang, limits=limits)

    def on_preset(preset_id: str) -> dict[Any, Any]:
        if preset_id not in presets:  # a hand-built request (the run's checks word it): no change
            return {}
        chosen = presets[preset_id]
        chosen_tasks = example_tasks(chosen, lang)
        return {
            preset_note: chosen.describe(lang),
            drafter: gr.Dropdown(choices=drafter_choices(chosen, lang), value=chosen.drafter),
            race_lanes.drafters: gr.Dropdown(
                choices=race_choices(chosen, lang, limits), value=[chosen.drafter]
            ),
            chat: chosen.chat_template,
            prompt: first_prompt(chosen, lang),
            task: gr.Radio(choices=task_choices(chosen_tasks, lang), value=chosen_tasks[0]),
            examples: gr.Dataset(samples=example_samples(chosen, chosen_tasks[0], lang)),
        } | settings.updates(chosen.settings)

    refreshed = [
        preset_note,
        drafter,
        race_lanes.drafters,
        chat,
        prompt,
        task,
        examples,
        *settings.components.values(),
    ]
    pair_shown = preset.change(on_preset, preset, refreshed, **PRIVATE)
    task.change(
        lambda name, preset_id: gr.Dataset(
            samples=example_samples(presets.get(preset_id, first), name, lang)
        ),
        [task, preset],
        examples,
        **PRIVATE,
    )
    examples.click(lambda sample: sample[0], examples, prompt, **PRIVATE)
    return RunControls(
        preset, drafter, prompt, chat, race, race_lanes, run, step, stop, settings, pair_shown
    )


def drafter_choices(preset: Preset, lang: str) -> list[tuple[str, str]]:
    """The drafter dropdown's (label in *lang*, spec) choices: every registered kind, each
    followed by the specs its entry lists (the tree's teaching shape), and the preset's own spec
    when it sets options ("lookup:max_ngram=3")."""
    choices = []
    for kind, entry in DRAFTERS.items():
        choices.append((drafter_label(kind, lang), kind))
        choices += [(t(key, lang), spec) for spec, key in entry.listed_specs]
    if all(spec != preset.drafter for _, spec in choices):
        choices.append((preset.drafter, preset.drafter))
    return choices


def race_choices(preset: Preset, lang: str, limits: Limits) -> list[tuple[str, str]]:
    """The race's lane choices: the drafters, and llama.cpp where a llama-server was found and
    the app is not hosted."""
    return drafter_choices(preset, lang) + llama_choice(limits.hosted, lang)


def example_tasks(preset: Preset, lang: str = DEFAULT_LANGUAGE) -> list[str]:
    """The preset's task groups that have example prompts, in TASKS order."""
    return [task for task in TASKS if preset.example_prompts(lang).get(task)]


def task_choices(tasks: list[str], lang: str) -> list[tuple[str, str]]:
    """The example radio's (label in *lang*, task name) choices: the value stays the name."""
    return [(task_label(task, lang), task) for task in tasks]


def example_samples(preset: Preset, task: str, lang: str = DEFAULT_LANGUAGE) -> list[list[str]]:
    """The example prompts of one task for a page in *lang*, as gr.Dataset samples."""
    return [[text] for text in preset.example_prompts(lang).get(task, ())]


def first_prompt(preset: Preset, lang: str = DEFAULT_LANGUAGE) -> str:
    """The prompt the box shows when the preset is chosen (on a page in *lang*)."""
    flat = preset.prompts_flat(lang)
    return flat[0][1] if flat else ""
