"""The speedup labs' tabs: theory vs measurement, with the what-if sliders, trees against the
chain, and Medusa heads and lookahead against their papers (``self_draft_section``; the
verification-cost tab and its GPU projection are in ``cost_tab``). Wiring only; the work is in
``theory``, ``what_if``, ``tree_lab`` and ``self_draft_lab``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import gradio as gr

from specviz.app.lab_tabs import (
    LabRun,
    LabWiring,
    chart,
    lab_tab,
    run_button,
    speedup_shown,
    status_box,
)
from specviz.app.self_draft_section import self_draft_section
from specviz.core.settings import GAMMA_MAX, GAMMA_MIN
from specviz.drafters.tree_growth import budgets_of
from specviz.labs.speedup import charts as speedup_charts
from specviz.labs.speedup import panel as speedup_panel
from specviz.labs.speedup import theory as speedup_model
from specviz.labs.speedup import tree_lab, what_if
from specviz.measure.harness import Staged
from specviz.text import UserError, t

DEFAULT_GAMMAS = "1,3,5,8"  # the γ values the speedup lab measures unless told others
# the tree budgets the tree lab measures unless told others
DEFAULT_TREE_NODES = ",".join(map(str, tree_lab.DEFAULT_NODES))


def speedup_tab(wiring: LabWiring) -> gr.Number:
    """Tab 3: τ and predicted speedup against γ, with measured speedups overlaid."""
    lang = wiring.lang
    with lab_tab(t("app.tab.speedup", lang), t("app.speedup.intro", lang), "speedup"):
        with gr.Row():
            gammas = gr.Textbox(value=DEFAULT_GAMMAS, label=t("app.speedup.gammas", lang), scale=2)
            cap = wiring.app.limits.speedup_budget_s
            budget = wiring.size_slider(20, cap, 90, 10, "app.speedup.budget", scale=2)
            # One run per γ fits the default budget; a firm speedup needs three and a quiet CPU.
            repeat_cap = wiring.app.limits.task_repeats
            repeats = wiring.size_slider(
                1, repeat_cap, 1, 1, "app.tasks.repeats", scale=2, elem_id="sv-speedup-repeats"
            )
            button = run_button(t("app.button.measure", lang), "sv-speedup-run")
        status = status_box(t("app.status.not_run", lang), "sv-speedup-status")
        plot = chart(speedup_charts.theory_chart(None, lang=lang), "sv-speedup-plot")
        what = what_if_panel(lang)  # beside what happened: what would happen at other α, γ, c
        summary = gr.HTML(speedup_panel.speedup_html(None, lang=lang), elem_id="sv-speedup-summary")
        alpha = gr.Number(visible=False)  # the measured α, handed to the projection
        trees = tree_lab_section(wiring, cap)
        self_drafts = self_draft_section(wiring, cap)

    def speedup_work(
        lab: LabRun, gammas_value: str, budget_value: float, repeats_value: float
    ) -> Iterator[Any]:
        wiring.app.checks.check_lab_size(budget_value, cap, "app.speedup.budget")
        wiring.app.checks.check_lab_size(repeats_value, repeat_cap, "app.tasks.repeats")
        chosen = _gammas(gammas_value, lang, wiring.app.limits.cap("gamma") or GAMMA_MAX)
        stages = wiring.app.run_locked(
            lambda: speedup_model.iter_speedup_lab(
                lab.pair,
                lab.prompt_ids,
                lab.inputs.settings,
                gammas=chosen,
                time_budget_s=float(budget_value),
                repeats=int(repeats_value or 1),
            ),
            "app.doing.speedups",
        )
        # A stage per run, and per forward of the cost curves: Stop ends the lab between them.
        yield from wiring.staged(lab, stages, "app.doing.speedups")

    def show_speedup(stage: Staged[Any]) -> dict[Any, Any]:
        return speedup_shown(
            stage,
            status,
            lang,
            lambda measured: {
                plot: speedup_charts.theory_chart(
                    measured.theory,
                    measured.runs,
                    lang=lang,
                    draw_best=measured.firmness.refusal is None,
                ),
                summary: speedup_panel.speedup_html(measured, lang=lang),
                alpha: measured.theory.alpha,
                **what.show(what_if.from_lab(measured)),
            },
        )

    outputs = [status, plot, summary, alpha, *what.outputs]
    wiring.start(button, speedup_work, show_speedup, [gammas, budget, repeats], outputs, status)
    trees.wire(wiring)
    self_drafts.wire(wiring)
    return alpha


@dataclass(frozen=True)
class TreeLabSection:
    """Trees against the chain, under the speedup lab: its controls and what it shows."""

    nodes: gr.Textbox
    budget: gr.Slider
    repeats: gr.Slider
    button: gr.Button
    status: gr.HTML
    plot: gr.Plot
    summary: gr.HTML

    def wire(self, wiring: LabWiring) -> None:
        lang = wiring.lang
        cap = int(self.budget.maximum)
        repeat_cap = int(self.repeats.maximum)

        def work(
            lab: LabRun, nodes_value: str, budget_value: float, repeats_value: float
        ) -> Iterator[Any]:
            wiring.app.checks.check_lab_size(budget_value, cap, "app.trees.budget")
            wiring.app.checks.check_lab_size(repeats_value, repeat_cap, "app.tasks.repeats")
            budgets = _tree_budgets(nodes_value, lang)
            settings = lab.inputs.settings
            yield from wiring.run_staged(
                lab,
                lambda: tree_lab.iter_tree_lab(
                    lab.pair,
                    lab.prompt_ids,
                    settings,
                    gamma=settings.gamma,
                    budgets=budgets,
                    time_budget_s=float(budget_value),
                    repeats=int(repeats_value or 1),
                ),
                "app.doing.trees",
            )

        def show(stage: Staged[Any]) -> dict[Any, Any]:
            return speedup_shown(
                stage,
                self.status,
                lang,
                lambda measured: {
                    self.plot: speedup_charts.tree_chart(measured, lang=lang),
                    self.summary: speedup_panel.tree_lab_html(measured, lang=lang),
                },
            )

        outputs = [self.status, self.plot, self.summary]
        inputs = [self.nodes, self.budget, self.repeats]
        wiring.start(self.button, work, show, inputs, outputs, self.status)


def tree_lab_section(wiring: LabWiring, cap: int) -> TreeLabSection:
    """The tree lab's controls and outputs, laid out where it is called."""
    lang = wiring.lang
    gr.Markdown(t("app.trees.intro", lang), elem_classes="sv-lab-intro", elem_id="sv-trees-intro")
    with gr.Row():
        nodes = gr.Textbox(
            value=DEFAULT_TREE_NODES,
            label=t("app.trees.nodes", lang),
            scale=2,
            elem_id="sv-trees-nodes",
        )
        budget = wiring.size_slider(20, cap, 150, 10, "app.trees.budget", scale=2)
        # One run per method fits the default budget; a 64-token run's speed moves by a fifth
        # between identical runs on a 2-core CPU, so the median of three is steadier.
        repeats = wiring.size_slider(
            1,
            wiring.app.limits.task_repeats,
            1,
            1,
            "app.tasks.repeats",
            scale=1,
            elem_id="sv-trees-repeats",
        )
        button = run_button(t("app.button.measure_trees", lang), "sv-trees-run")
    status = status_box(t("app.status.not_run", lang), "sv-trees-status")
    plot = chart(speedup_charts.tree_chart(None, lang=lang), "sv-trees-plot")
    summary = gr.HTML(speedup_panel.tree_lab_html(None, lang=lang), elem_id="sv-trees-summary")
    return TreeLabSection(nodes, budget, repeats, button, status, plot, summary)


def _tree_budgets(text: str, lang: str) -> tuple[int, ...]:
    """The field's node budgets (tree_growth.budgets_of), or its message in the page's language."""
    try:
        return budgets_of(text)
    except UserError as error:
        raise gr.Error(error.message(lang)) from None


@dataclass(frozen=True)
class WhatIfPanel:
    """The what-if's sliders and chart: redrawn in the browser, reset to each new measurement."""

    alpha: gr.Slider
    gamma: gr.Slider
    cost: gr.Slider
    plot: gr.Plot
    lang: str

    @property
    def outputs(self) -> list[Any]:
        return [self.alpha, self.gamma, self.cost, self.plot]

    def show(self, start: what_if.WhatIf) -> dict[Any, Any]:
        """Updates that put the sliders and the chart at a new run's α, γ and c."""
        return {
            self.alpha: start.alpha,
            self.gamma: start.gamma,
            self.cost: gr.Slider(maximum=what_if.cost_limit(start.cost), value=start.cost),
            self.plot: what_if.what_if_chart(start, lang=self.lang),
        }


def what_if_panel(lang: str) -> WhatIfPanel:
    """α, γ and c sliders over the speedup model, redrawn in the page with no server round trip
    (what_if.REDRAW_JS), and a button back to the run's own values; the paper's model until a
    run measures them."""
    start = what_if.paper_default()
    with gr.Row(equal_height=True):
        gr.Markdown(t("app.speedup.whatif", lang), elem_classes="sv-lab-intro")
        reset = gr.Button(
            t("app.speedup.whatif.reset", lang), elem_id="sv-whatif-reset", scale=0, min_width=180
        )
    with gr.Row():
        alpha = gr.Slider(
            0,
            1,
            value=start.alpha,
            step=10**-what_if.SLIDER_DIGITS,
            label=t("app.speedup.whatif.alpha", lang),
            elem_id="sv-whatif-alpha",
        )
        gamma = gr.Slider(
            GAMMA_MIN,
            GAMMA_MAX,
            value=start.gamma,
            step=1,
            label=t("app.speedup.whatif.gamma", lang),
            elem_id="sv-whatif-gamma",
        )
        cost = gr.Slider(
            0,
            what_if.cost_limit(start.cost),
            value=start.cost,
            step=10**-what_if.SLIDER_DIGITS,
            label=t("app.speedup.whatif.cost", lang),
            elem_id="sv-whatif-cost",
        )
    plot = chart(what_if.what_if_chart(start, lang=lang), "sv-whatif-plot")
    sliders = [alpha, gamma, cost]
    # fn=None: the JavaScript is the whole handler, so a slider never reaches the server.
    gr.on(
        [slider.input for slider in sliders],
        None,
        [*sliders, plot],
        plot,
        js=what_if.REDRAW_JS,
        trigger_mode="always_last",
    )
    reset.click(None, plot, [*sliders, plot], js=what_if.RESET_JS)
    return WhatIfPanel(alpha, gamma, cost, plot, lang)


def _gammas(text: str, lang: str, high: int = GAMMA_MAX) -> tuple[int, ...]:
    """ "1,3,5" -> (1, 3, 5), checked against the engine's range up to *high* (the app's γ cap)."""
    try:
        values = tuple(sorted({int(part) for part in (text or "").split(",") if part.strip()}))
    except ValueError:
        raise gr.Error(t("error.app.gammas_format", lang, example=DEFAULT_GAMMAS)) from None
    if not values or not all(GAMMA_MIN <= value <= high for value in values):
        raise gr.Error(t("error.app.gammas_range", lang, low=GAMMA_MIN, high=high))
    return values
