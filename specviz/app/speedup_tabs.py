"""The speedup labs' tabs: theory vs measurement, and the verification-cost curve with a GPU
projection. Wiring only; the work is in ``speedup_model``, ``cost_curve`` and ``gpu_projection``.
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
    status_box,
    status_line,
)
from specviz.core.settings import GAMMA_MAX, GAMMA_MIN
from specviz.drafters.tree_growth import budgets_of
from specviz.labs.speedup import charts as speedup_charts
from specviz.labs.speedup import gpu_projection, tree_lab, what_if
from specviz.labs.speedup import panel as speedup_panel
from specviz.labs.speedup import theory as speedup_model
from specviz.labs.speedup.cost_curve import CostCurve, iter_verification_cost
from specviz.measure.harness import Staged
from specviz.models.cpu_load import OthersShare
from specviz.text import UserError, t

# The bundled pair's weights in bf16 (1,543,714,304 and 494,032,768 weights read per forward,
# from gpu_projection.model_footprint): the projection's defaults until a measurement fills them.
TARGET_GB, DRAFT_GB = 3.087, 0.988
COST_BUDGET_S = 60.0  # the cost curve stops measuring after this long

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
        measured = stage.result
        if measured is None:  # a stage on the way; the last one holds the lab's result
            return {status: status_line(stage.message.text(lang))}
        return {
            status: done_line(measured.complete, measured.elapsed_s, lang),
            plot: speedup_charts.theory_chart(
                measured.theory,
                measured.runs,
                lang=lang,
                draw_best=measured.firmness.refusal is None,
            ),
            summary: speedup_panel.speedup_html(measured, lang=lang),
            alpha: measured.theory.alpha,
            **what.show(what_if.from_lab(measured)),
        }

    outputs = [status, plot, summary, alpha, *what.outputs]
    wiring.start(button, speedup_work, show_speedup, [gammas, budget, repeats], outputs, status)
    trees.wire(wiring)
    return alpha


@dataclass(frozen=True)
class TreeLabSection:
    """Trees against the chain, under the speedup lab: its controls and what it shows."""

    nodes: gr.Textbox
    budget: gr.Slider
    button: gr.Button
    status: gr.HTML
    plot: gr.Plot
    summary: gr.HTML

    def wire(self, wiring: LabWiring) -> None:
        lang = wiring.lang
        cap = int(self.budget.maximum)

        def work(lab: LabRun, nodes_value: str, budget_value: float) -> Iterator[Any]:
            wiring.app.checks.check_lab_size(budget_value, cap, "app.trees.budget")
            budgets = _tree_budgets(nodes_value, lang)
            settings = lab.inputs.settings
            stages = wiring.app.run_locked(
                lambda: tree_lab.iter_tree_lab(
                    lab.pair,
                    lab.prompt_ids,
                    settings,
                    gamma=settings.gamma,
                    budgets=budgets,
                    time_budget_s=float(budget_value),
                ),
                "app.doing.trees",
            )
            yield from wiring.staged(lab, stages, "app.doing.trees")

        def show(stage: Staged[Any]) -> dict[Any, Any]:
            measured = stage.result
            if measured is None:
                return {self.status: status_line(stage.message.text(lang))}
            return {
                self.status: done_line(measured.complete, measured.elapsed_s, lang),
                self.plot: speedup_charts.tree_chart(measured, lang=lang),
                self.summary: speedup_panel.tree_lab_html(measured, lang=lang),
            }

        outputs = [self.status, self.plot, self.summary]
        wiring.start(self.button, work, show, [self.nodes, self.budget], outputs, self.status)


def done_line(complete: bool, seconds: float, lang: str) -> str:
    """A speedup lab's closing status line: done (or cut by its budget) after so many seconds."""
    note = t("app.status.done" if complete else "app.speedup.cut", lang)
    return status_line(t("app.speedup.done", lang, note=note, seconds=f"{seconds:.0f}"), "done")


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
        button = run_button(t("app.button.measure_trees", lang), "sv-trees-run")
    status = status_box(t("app.status.not_run", lang), "sv-trees-status")
    plot = chart(speedup_charts.tree_chart(None, lang=lang), "sv-trees-plot")
    summary = gr.HTML(speedup_panel.tree_lab_html(None, lang=lang), elem_id="sv-trees-summary")
    return TreeLabSection(nodes, budget, button, status, plot, summary)


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


@dataclass(frozen=True)
class CostMeasurement:
    """The cost lab's result: the curve, and the two models' weights (for the projection)."""

    curve: CostCurve
    target: gpu_projection.Footprint
    draft: gpu_projection.Footprint
    others_share: float | None  # the CPU other programs took while it was measured


def _gammas(text: str, lang: str, high: int = GAMMA_MAX) -> tuple[int, ...]:
    """ "1,3,5" -> (1, 3, 5), checked against the engine's range up to *high* (the app's γ cap)."""
    try:
        values = tuple(sorted({int(part) for part in (text or "").split(",") if part.strip()}))
    except ValueError:
        raise gr.Error(t("error.app.gammas_format", lang, example=DEFAULT_GAMMAS)) from None
    if not values or not all(GAMMA_MIN <= value <= high for value in values):
        raise gr.Error(t("error.app.gammas_range", lang, low=GAMMA_MIN, high=high))
    return values


def cost_tab(wiring: LabWiring, measured_alpha: gr.Number) -> None:
    """Tab 4: the verification-cost curve, measured; and a GPU projection, labelled as one."""
    lang = wiring.lang
    gpus = list(gpu_projection.GPU_PRESETS)
    first_gpu = gpu_projection.GPU_PRESETS[gpus[1]]
    with lab_tab(t("app.tab.cost", lang), t("app.cost.intro", lang), "cost"):
        with gr.Row():
            cap = wiring.app.limits.cost_sizes
            sizes = wiring.size_slider(
                2, cap, cap, 1, "app.cost.sizes", scale=2, elem_id="sv-cost-sizes"
            )
            repeats = gr.Slider(1, 9, value=3, step=1, label=t("app.cost.repeats", lang), scale=2)
            button = run_button(t("app.button.measure", lang), "sv-cost-run")
        status = status_box(t("app.status.not_measured", lang), "sv-cost-status")
        curve_plot = chart(speedup_charts.cost_curve_chart(None, lang=lang), "sv-cost-plot")
        gr.Markdown(t("app.projection.heading", lang))
        with gr.Row():
            gpu = gr.Dropdown(gpus, value=gpus[1], label=t("app.projection.gpu", lang), scale=2)
            bandwidth = gr.Number(
                first_gpu.bandwidth_gb_s, label=t("app.projection.bandwidth", lang)
            )
            tflops = gr.Number(first_gpu.tflops, label=t("app.projection.tflops", lang))
        with gr.Row():
            target_gb = gr.Number(TARGET_GB, label=t("app.projection.target_gb", lang))
            draft_gb = gr.Number(DRAFT_GB, label=t("app.projection.draft_gb", lang))
            alpha = gr.Number(0.8, label=t("app.projection.alpha", lang), minimum=0, maximum=1)
            overhead = gr.Number(0.0, label=t("app.projection.overhead", lang), minimum=0)
        project_button = gr.Button(t("app.projection.run", lang), elem_id="sv-project")
        projection_plot = chart(
            speedup_charts.projection_chart(None, lang=lang), "sv-projection-plot"
        )
        projection_note = gr.HTML(
            speedup_panel.projection_html(None, lang=lang), elem_id="sv-projection-note"
        )

    def cost_work(
        lab: LabRun, sizes_value: float, repeats_value: float
    ) -> Iterator[Staged[CostCurve] | CostMeasurement]:
        wiring.app.checks.check_lab_size(sizes_value, cap, "app.cost.sizes")
        others = OthersShare()
        stages = wiring.app.run_locked(
            lambda: iter_verification_cost(
                lab.pair.target, lab.prompt_ids, int(sizes_value), int(repeats_value), COST_BUDGET_S
            ),
            "app.doing.forward_times",
        )
        # A stage per forward: Stop ends the curve between two.
        curve = None
        for stage in wiring.staged(lab, stages, "app.doing.forward_times"):
            if stage.result is None:
                yield stage
            curve = stage.result
        assert curve is not None  # the last stage holds the curve
        target = gpu_projection.model_footprint(lab.pair.target)
        draft = gpu_projection.model_footprint(lab.pair.draft)
        yield CostMeasurement(curve, target, draft, others.share())

    def show_cost(record: Staged[CostCurve] | CostMeasurement) -> dict[Any, Any]:
        if isinstance(record, Staged):  # a forward on the way
            return {status: status_line(record.message.text(lang))}
        curve = record.curve
        done = "app.cost.measured" if curve.complete else "app.cost.measured_cut"
        firmness = speedup_model.curve_firmness(curve, record.others_share)
        words = [t(done, lang, device=curve.device, context=curve.context_len)]
        if firmness.refusal is not None:
            words.append(firmness.refusal.text(lang))
        words.append(t("labs.firmness", lang, line=firmness.line))
        return {
            status: status_line(" ".join(words), "done"),
            curve_plot: speedup_charts.cost_curve_chart(curve, lang=lang),
            target_gb: round(record.target.bytes_at(2) / 1e9, 3),
            draft_gb: round(record.draft.bytes_at(2) / 1e9, 3),
        }

    def project_gpu(
        name: str,
        bandwidth_v: float | None,
        tflops_v: float | None,
        target_v: float | None,
        draft_v: float | None,
        alpha_v: float | None,
        overhead_v: float | None,
    ) -> dict[Any, Any]:
        numbers = (bandwidth_v, tflops_v, target_v, draft_v, alpha_v, overhead_v)
        if any(value is None for value in numbers):
            raise gr.Error(t("error.app.projection_blank", lang))
        bandwidth_v, tflops_v, target_v, draft_v, alpha_v, overhead_v = (
            float(value or 0) for value in numbers
        )
        preset = gpu_projection.GPU_PRESETS.get(name)
        if preset is None or (preset.bandwidth_gb_s, preset.tflops) != (bandwidth_v, tflops_v):
            name = t(
                "app.projection.custom_gpu",
                lang,
                bandwidth=f"{bandwidth_v:g}",
                tflops=f"{tflops_v:g}",
            )
        spec = gpu_projection.GpuSpec(name, bandwidth_v, tflops_v)
        try:
            projection = gpu_projection.project_speedup(
                alpha_v,
                spec,
                target_v * 1e9,
                draft_v * 1e9,
                target_v * 1e9 / 2,  # bf16: two bytes per weight
                draft_v * 1e9 / 2,
                overhead_s=overhead_v / 1000,
            )
        except UserError as error:
            raise gr.Error(t("error.app.projection", lang, cause=error.message(lang))) from None
        except (ValueError, ZeroDivisionError) as error:
            raise gr.Error(t("error.app.projection", lang, cause=str(error))) from None
        return {
            projection_plot: speedup_charts.projection_chart(projection, lang=lang),
            projection_note: speedup_panel.projection_html(projection, lang=lang),
        }

    def pick_gpu(name: str) -> tuple[float, float]:
        spec = gpu_projection.GPU_PRESETS[name]
        return spec.bandwidth_gb_s, spec.tflops

    private: dict[str, Any] = {"api_visibility": "private"}
    outputs = [status, curve_plot, target_gb, draft_gb]
    wiring.start(button, cost_work, show_cost, [sizes, repeats], outputs, status)
    gpu.change(pick_gpu, gpu, [bandwidth, tflops], **private)
    numbers = [bandwidth, tflops, target_gb, draft_gb, alpha, overhead]
    project_button.click(
        project_gpu, [gpu, *numbers], [projection_plot, projection_note], **private
    )
    measured_alpha.change(lambda value: round(value, 3), measured_alpha, alpha, **private)
