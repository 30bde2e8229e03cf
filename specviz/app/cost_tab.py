"""The Verification cost tab: the target's forward time against new tokens, measured; and the
GPU projection, labelled as one, with the fixed cost per forward of each execution mode. Wiring
only; the work is in ``cost_curve``, ``gpu_projection`` and ``fixed_cost``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
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
from specviz.core.settings import GenerationSettings
from specviz.labs.speedup import charts as speedup_charts
from specviz.labs.speedup import fixed_cost, gpu_projection
from specviz.labs.speedup import panel as speedup_panel
from specviz.labs.speedup import theory as speedup_model
from specviz.labs.speedup.cost_curve import CostCurve, iter_verification_cost
from specviz.labs.speedup.pass_costs import pass_costs
from specviz.measure.harness import Staged
from specviz.models.cpu_load import OthersShare
from specviz.text import UserError, t

# The bundled pair's weights in bf16 (1,543,714,304 and 494,032,768 weights read per forward,
# from gpu_projection.model_footprint): the projection's defaults until a measurement fills them.
TARGET_GB, DRAFT_GB = 3.087, 0.988
TARGET_LAYERS, DRAFT_LAYERS = 28, 24  # the bundled pair's decoder layers (Qwen2.5 1.5B and 0.5B)
COST_BUDGET_S = 60.0  # the cost curve stops measuring after this long


@dataclass(frozen=True)
class CostMeasurement:
    """The cost lab's result: the curve, and the two models' weights (for the projection)."""

    curve: CostCurve
    target: gpu_projection.Footprint
    draft: gpu_projection.Footprint
    others_share: float | None  # the CPU other programs took while it was measured


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
        pass_table = gr.HTML("", elem_id="sv-pass-costs")
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
        # Fixed costs: gpu-check's calibration on this machine if it has run, else published.
        costs = fixed_cost.load_fixed_costs()
        eager = costs[fixed_cost.EAGER]
        with gr.Row():
            target_layers = gr.Number(
                TARGET_LAYERS, label=t("app.projection.target_layers", lang), precision=0
            )
            draft_layers = gr.Number(
                DRAFT_LAYERS, label=t("app.projection.draft_layers", lang), precision=0
            )
            modes = [(fixed_cost.mode_words(m).text(lang), m) for m in fixed_cost.MODES]
            mode = gr.Dropdown(modes, value=eager.mode, label=t("app.projection.mode", lang))
            per_layer = gr.Number(
                _microseconds(eager), label=t("app.projection.per_layer", lang), minimum=0
            )
        fixed_note = gr.Markdown(_fixed_note(eager, lang), elem_id="sv-projection-fixed")
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
            pass_table: speedup_panel.pass_costs_html(
                pass_costs(curve, GenerationSettings().gamma), lang=lang
            ),
            target_gb: round(record.target.bytes_at(2) / 1e9, 3),
            draft_gb: round(record.draft.bytes_at(2) / 1e9, 3),
            target_layers: record.target.layers or TARGET_LAYERS,
            draft_layers: record.draft.layers or DRAFT_LAYERS,
        }

    def project_gpu(
        name: str,
        bandwidth_v: float | None,
        tflops_v: float | None,
        target_v: float | None,
        draft_v: float | None,
        alpha_v: float | None,
        target_layers_v: float | None,
        draft_layers_v: float | None,
        mode_v: str,
        per_layer_v: float | None,
    ) -> dict[Any, Any]:
        numbers = (
            bandwidth_v,
            tflops_v,
            target_v,
            draft_v,
            alpha_v,
            target_layers_v,
            draft_layers_v,
            per_layer_v,
        )
        if any(value is None for value in numbers) or mode_v not in costs:
            raise gr.Error(t("error.app.projection_blank", lang))
        bandwidth_v, tflops_v, target_v, draft_v, alpha_v, target_l, draft_l, per_layer_us = (
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
        shown = costs[mode_v]
        if per_layer_us != _microseconds(shown):  # typed in: the figure is the visitor's
            shown = replace(shown, per_layer_s=per_layer_us / 1e6, source="custom", device="")
        # bf16: two bytes per weight
        target = gpu_projection.Footprint(
            int(target_v * 1e9 / 2), int(target_v * 1e9), int(target_l)
        )
        draft = gpu_projection.Footprint(int(draft_v * 1e9 / 2), int(draft_v * 1e9), int(draft_l))
        try:
            projection, others = gpu_projection.project_each_mode(
                alpha_v, spec, target, draft, {**costs, shown.mode: shown}, shown
            )
        except UserError as error:
            raise gr.Error(t("error.app.projection", lang, cause=error.message(lang))) from None
        except (ValueError, ZeroDivisionError) as error:
            raise gr.Error(t("error.app.projection", lang, cause=str(error))) from None
        return {
            projection_plot: speedup_charts.projection_chart(projection, others=others, lang=lang),
            projection_note: speedup_panel.projection_html(projection, others=others, lang=lang),
            fixed_note: _fixed_note(shown, lang),
        }

    def pick_mode(mode_v: str) -> tuple[float, str]:
        chosen = costs.get(mode_v, eager)
        return _microseconds(chosen), _fixed_note(chosen, lang)

    def pick_gpu(name: str) -> tuple[float, float]:
        spec = gpu_projection.GPU_PRESETS[name]
        return spec.bandwidth_gb_s, spec.tflops

    private: dict[str, Any] = {"api_visibility": "private"}
    outputs = [status, curve_plot, pass_table, target_gb, draft_gb, target_layers, draft_layers]
    wiring.start(button, cost_work, show_cost, [sizes, repeats], outputs, status)
    gpu.change(pick_gpu, gpu, [bandwidth, tflops], **private)
    mode.change(pick_mode, mode, [per_layer, fixed_note], **private)
    numbers = [bandwidth, tflops, target_gb, draft_gb, alpha, target_layers, draft_layers]
    project_button.click(
        project_gpu,
        [gpu, *numbers, mode, per_layer],
        [projection_plot, projection_note, fixed_note],
        **private,
    )
    measured_alpha.change(lambda value: round(value, 3), measured_alpha, alpha, **private)


def _microseconds(fixed: fixed_cost.FixedCost) -> float:
    """A mode's fixed cost per layer in µs, as the box shows it (one decimal)."""
    return round(fixed.per_layer_s * 1e6, 1)


def _fixed_note(fixed: fixed_cost.FixedCost, lang: str) -> str:
    """The line under the fixed-cost inputs: which figures the projection uses, and whence."""
    return t("app.projection.fixed_source", lang, fixed=fixed.words().text(lang))
