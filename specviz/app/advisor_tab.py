"""The draft advisor's tab: which drafter, draft format and γ to use, measured on these prompts.

Thin wiring around specviz.labs.advisor: the prompts (the one on the left, or a task group's
examples), the candidates to compare and the size of the measurement; the ranked table, the chart
and the recommendation fill in as each candidate finishes, and Stop ends it between runs.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any

import gradio as gr

from specviz.app.lab_tabs import LabRun, LabWiring, chart, lab_tab, run_button, status_box
from specviz.app.lab_tabs import status_line as lab_status
from specviz.app.llama_lanes import llama_build, llama_pool
from specviz.app.run_controls import drafter_choices, task_choices
from specviz.core.settings import GAMMA_MAX, GAMMA_MIN
from specviz.drafters.registry import default_drafters
from specviz.labs.advisor import charts as advisor_charts
from specviz.labs.advisor import panel as advisor_panel
from specviz.labs.advisor.advice import (
    ADVISOR_GAMMAS,
    DEFAULT_BUDGET_S,
    DEFAULT_TOKENS,
    AdviceUpdate,
    iter_advice,
    preset_format_first,
)
from specviz.labs.advisor.setup import advice_plan, drafts_at, format_pairs, llama_engine_lanes
from specviz.models.loader import pick_device
from specviz.models.presets import TASKS, Preset
from specviz.models.step_costs import draft_formats
from specviz.text import Phrase, t


def advisor_tab(wiring: LabWiring, preset: Preset) -> None:
    """Tab 6: the draft advisor (its task choices and drafters from the first preset)."""
    lang = wiring.lang
    gamma_cap = wiring.app.limits.cap("gamma") or GAMMA_MAX
    with lab_tab(t("app.tab.advisor", lang), t("app.advisor.intro", lang), "advisor"):
        with gr.Row():
            source = gr.Radio(
                [
                    (t("app.advisor.source.prompt", lang), "prompt"),
                    (t("app.advisor.source.task", lang), "task"),
                ],
                value="task",
                label=t("app.advisor.source", lang),
                elem_id="sv-advisor-source",
            )
            tasks = [task for task in TASKS if preset.prompts.get(task)]
            task = gr.Dropdown(
                task_choices(tasks, lang),
                value="code" if "code" in tasks else tasks[0],
                label=t("app.advisor.task", lang),
                elem_id="sv-advisor-task",
            )
        with gr.Row():
            drafters = gr.CheckboxGroup(
                drafter_choices(preset, lang),
                value=list(default_drafters()),
                label=t("app.advisor.drafters", lang),
                elem_id="sv-advisor-drafters",
            )
            limits = wiring.app.limits
            every_format = list(draft_formats("auto", pick_device()))
            own_format = preset.draft_quantization
            format_choices = every_format if limits.advisor_formats else [own_format]
            # The preset's format is compared by default; ticking more loads each one.
            formats = gr.CheckboxGroup(
                format_choices,
                value=[own_format] if own_format in format_choices else format_choices[:1],
                label=t("app.advisor.formats", lang),
                info=t("app.advisor.formats.info", lang),
                elem_id="sv-advisor-formats",
            )
        with gr.Row():
            gamma_choices = [gamma for gamma in ADVISOR_GAMMAS if gamma <= gamma_cap]
            gammas = gr.CheckboxGroup(
                gamma_choices,
                value=gamma_choices,
                label=t("app.advisor.gammas", lang),
                elem_id="sv-advisor-gammas",
            )
            adaptive = gr.Checkbox(value=True, label=t("app.advisor.adaptive", lang))
            # llama.cpp's lanes, where a llama-server was found and the app is not hosted.
            with_llama = gr.Checkbox(
                value=False,
                label=t("app.advisor.llama", lang),
                info=t("app.advisor.llama.info", lang),
                visible=llama_build(wiring.app.limits.hosted) is not None,
                elem_id="sv-advisor-llama",
            )
        with gr.Row():
            tokens = wiring.size_slider(
                4,
                limits.advisor_tokens,
                DEFAULT_TOKENS,
                4,
                "app.advisor.tokens",
                elem_id="sv-advisor-tokens",
            )
            budget = wiring.size_slider(
                20,
                limits.advisor_budget_s,
                int(DEFAULT_BUDGET_S),
                10,
                "app.advisor.budget",
                elem_id="sv-advisor-budget",
            )
            button = run_button(t("app.advisor.run", lang), "sv-advisor-run")
        status = status_box(t("app.status.not_run", lang), "sv-advisor-status")
        result = gr.HTML(advisor_panel.advice_html(None, lang=lang), elem_id="sv-advisor-result")
        plot = chart(advisor_charts.advice_chart(None, lang=lang), "sv-advisor-plot")

    def advisor_work(
        lab: LabRun,
        source_value: str,
        task_value: str,
        drafter_values: list[str],
        format_values: list[str],
        gamma_values: list[int],
        adaptive_value: bool,
        tokens_value: float,
        budget_value: float,
        llama_value: bool = False,
    ) -> Iterator[Phrase | AdviceUpdate]:
        limits, checks = wiring.app.limits, wiring.app.checks
        checks.check_lab_size(tokens_value, limits.advisor_tokens, "app.advisor.tokens")
        checks.check_lab_size(budget_value, limits.advisor_budget_s, "app.advisor.budget")
        chosen = lab.inputs.preset
        own = drafts_at(chosen.draft_quantization, lab.pair)  # "auto": the format it chose
        every_format = draft_formats("auto", lab.pair.device)
        allowed_formats = every_format if limits.advisor_formats else (chosen.draft_quantization,)
        known_drafters = [spec for _, spec in drafter_choices(chosen, lang)]
        _check_choices(wiring, drafter_values, known_drafters, "app.advisor.drafters")
        _check_choices(wiring, format_values, allowed_formats, "app.advisor.formats")
        allowed_gammas = list(range(GAMMA_MIN, gamma_cap + 1))
        _check_choices(wiring, gamma_values, allowed_gammas, "app.advisor.gammas")
        if source_value == "task":
            if task_value not in chosen.prompts:
                raise gr.Error(t("app.advisor.no_task", lang, preset=chosen.label_in(lang)))
            prompt = chosen.prompts[task_value][0]
        else:
            prompt = lab.inputs.prompt  # read already (lab.prompt_ids), within the token cap
        yield Phrase("app.advisor.loading")
        ordered = preset_format_first(own, format_values or [own])
        pairs = format_pairs(chosen, ordered, wiring.app.load, loaded={own: lab.pair})
        settings = replace(lab.inputs.settings, max_new_tokens=int(tokens_value))
        fixed = tuple(sorted(int(gamma) for gamma in gamma_values))
        engines = []
        if llama_value:
            hosted = wiring.app.limits.hosted
            engines = wiring.app.run_locked(
                lambda: llama_engine_lanes(llama_pool(hosted), chosen, settings, fixed),
                "app.doing.advisor",
            )
        plan = advice_plan(
            pairs,
            [prompt],
            chat=lab.inputs.chat,
            settings=settings,
            drafters=drafter_values,
            gammas=fixed,
            adaptive=bool(adaptive_value),
            time_budget_s=float(budget_value),
            warm_up=wiring.warm_up(lab.inputs),
            engines=engines,
        )
        updates = wiring.app.run_locked(lambda: iter_advice(plan), "app.doing.advisor")
        for update in wiring.app.locked(updates, "app.doing.advisor"):
            lab.progress(update.fraction, update.message)
            yield update

    def show_advice(record: Phrase | AdviceUpdate) -> dict[Any, Any]:
        if isinstance(record, Phrase):  # the pairs are loading
            return {status: lab_status(record.text(lang))}
        line = (
            t("app.status.done", lang)
            if record.finished
            else t("app.advisor.running", lang, name=record.message)
        )
        return {
            status: lab_status(line, "done" if record.finished else "info"),
            result: advisor_panel.advice_html(record.advice, lang=lang),
            plot: advisor_charts.advice_chart(record.advice, lang=lang),
        }

    wiring.start(
        button,
        advisor_work,
        show_advice,
        [source, task, drafters, formats, gammas, adaptive, tokens, budget, with_llama],
        [status, result, plot],
        status,
    )


def _check_choices(
    wiring: LabWiring, values: object, allowed: Sequence[object], label_key: str
) -> None:
    """Refuse a list of choices that is no list or holds a value the control does not offer (the
    lab's endpoint is private but reachable with a hand-built request)."""
    if not isinstance(values, list) or any(value not in allowed for value in values):
        raise wiring.app.checks.error(
            "error.app.advisor_choice", control=t(label_key, wiring.lang), got=repr(values)
        )
