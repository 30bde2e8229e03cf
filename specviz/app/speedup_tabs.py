"""The speedup labs' tabs: theory vs measurement, and the verification-cost curve with a GPU
projection. Wiring only; the work is in ``speedup_model``, ``cost_curve`` and ``gpu_projection``.
"""

from __future__ import annotations

from typing import Any

import gradio as gr

from specviz.app.lab_tabs import LabWiring, status_line
from specviz.app.session import Inputs
from specviz.core.settings import GAMMA_MAX, GAMMA_MIN
from specviz.labs.speedup import charts as speedup_charts
from specviz.labs.speedup import gpu_projection
from specviz.labs.speedup import panel as speedup_panel
from specviz.labs.speedup import theory as speedup_model
from specviz.labs.speedup.cost_curve import measure_verification_cost

# The bundled pair's weights in bf16 (1,543,714,304 and 494,032,768 weights read per forward,
# from gpu_projection.model_footprint): the projection's defaults until a measurement fills them.
TARGET_GB, DRAFT_GB = 3.087, 0.988
COST_BUDGET_S = 60.0  # the cost curve stops measuring after this long

SPEEDUP_INTRO = (
    "Why is it faster, and by how much? Each cycle costs γ draft steps (each c of a target step) "
    "plus one verification pass (v(γ) target steps), and yields on average "
    "τ = (1 − α^(γ+1)) / (1 − α) tokens, where α is the chance a draft token is accepted "
    "(Leviathan et al. 2023, eq. 1). So the predicted speedup over plain decoding is "
    "**τ / (γ·c + v(γ))**. This lab measures α, c and v(γ) on this machine from the prompt on the "
    "left, plots the prediction for every γ and overlays the speedups measured at a few γ "
    "(fixed γ, no early draft stop, as the formula assumes)."
)
COST_INTRO = (
    "Why can the target check 5 tokens for about the price of writing 1? At batch size 1 a "
    "forward pass is bound by reading the weights from memory; extra positions reuse the weights "
    "already read, so the time barely grows until the arithmetic catches up. This measures the "
    "target's forward time for 1, 2, … new tokens against a warm KV cache (median of several "
    "runs, min–max as error bars) on this device. Below, a **projection** (a roofline model, not "
    "a measurement) shows what a GPU would give at the same α."
)


def speedup_tab(wiring: LabWiring) -> gr.Number:
    """Tab 3: τ and predicted speedup against γ, with measured speedups overlaid."""
    with gr.Tab("Speedup theory", id="speedup", elem_id="sv-tab-speedup"):
        gr.Markdown(SPEEDUP_INTRO, elem_classes="sv-lab-intro")
        with gr.Row():
            gammas = gr.Textbox(value="1,3,5,8", label="γ values to measure", scale=2)
            budget = gr.Slider(20, 300, value=90, step=10, label="Time budget (s)", scale=2)
            button = gr.Button("▶ Measure", variant="primary", elem_id="sv-speedup-run")
        status = gr.HTML(status_line("Not run yet."), elem_id="sv-speedup-status")
        plot = gr.Plot(
            speedup_charts.theory_chart(None), show_label=False, elem_id="sv-speedup-plot"
        )
        summary = gr.HTML(speedup_panel.speedup_html(None), elem_id="sv-speedup-summary")
        alpha = gr.Number(visible=False)  # the measured α, handed to the projection

    def run_speedup(
        inputs: Inputs,
        gammas_value: str,
        budget_value: float,
        progress: gr.Progress = gr.Progress(),  # noqa: B008
    ) -> dict[Any, Any]:
        chosen = _gammas(gammas_value)
        pair = wiring.app.load(inputs.preset, progress)
        prompt_ids = pair.encode_prompt(inputs.prompt, chat=inputs.chat)
        lab = wiring.app.run_locked(
            lambda: speedup_model.measure_speedup_lab(
                pair,
                prompt_ids,
                inputs.settings,
                gammas=chosen,
                time_budget_s=float(budget_value),
                progress=lambda fraction, message: progress(fraction, desc=message),
            ),
            "measuring speedups",
        )
        note = "Done." if lab.complete else "Done, but the time budget cut some runs short."
        return {
            status: status_line(f"{note} ({lab.elapsed_s:.0f} s)", "done"),
            plot: speedup_charts.theory_chart(lab.theory, lab.runs),
            summary: speedup_panel.speedup_html(lab),
            alpha: lab.theory.alpha,
        }

    wiring.start(button, run_speedup, [gammas, budget], [status, plot, summary, alpha], status)
    return alpha


def _gammas(text: str) -> tuple[int, ...]:
    """ "1,3,5" -> (1, 3, 5), checked against the engine's range."""
    try:
        values = tuple(sorted({int(part) for part in (text or "").split(",") if part.strip()}))
    except ValueError:
        raise gr.Error(
            "γ values must be whole numbers separated by commas, e.g. 1,3,5,8."
        ) from None
    if not values or not all(GAMMA_MIN <= value <= GAMMA_MAX for value in values):
        raise gr.Error(f"Give one to a few γ values between {GAMMA_MIN} and {GAMMA_MAX}.")
    return values


def cost_tab(wiring: LabWiring, measured_alpha: gr.Number) -> None:
    """Tab 4: the verification-cost curve, measured; and a GPU projection, labelled as one."""
    gpus = list(gpu_projection.GPU_PRESETS)
    first_gpu = gpu_projection.GPU_PRESETS[gpus[1]]
    with gr.Tab("Verification cost", id="cost", elem_id="sv-tab-cost"):
        gr.Markdown(COST_INTRO, elem_classes="sv-lab-intro")
        with gr.Row():
            sizes = gr.Slider(
                2,
                16,
                value=16,
                step=1,
                label="Up to this many new tokens",
                scale=2,
                elem_id="sv-cost-sizes",
            )
            repeats = gr.Slider(1, 9, value=3, step=1, label="Repeats (median)", scale=2)
            button = gr.Button("▶ Measure", variant="primary", elem_id="sv-cost-run")
        status = gr.HTML(status_line("Not measured yet."), elem_id="sv-cost-status")
        curve_plot = gr.Plot(
            speedup_charts.cost_curve_chart(None), show_label=False, elem_id="sv-cost-plot"
        )
        gr.Markdown("### What if: a GPU (projection, not measured)")
        with gr.Row():
            gpu = gr.Dropdown(gpus, value=gpus[1], label="GPU preset", scale=2)
            bandwidth = gr.Number(first_gpu.bandwidth_gb_s, label="Memory bandwidth (GB/s)")
            tflops = gr.Number(first_gpu.tflops, label="Dense bf16 TFLOPS")
        with gr.Row():
            target_gb = gr.Number(TARGET_GB, label="Target weights (GB, bf16)")
            draft_gb = gr.Number(DRAFT_GB, label="Draft weights (GB, bf16)")
            alpha = gr.Number(
                0.8, label="α (filled by the Speedup theory lab)", minimum=0, maximum=1
            )
            overhead = gr.Number(0.0, label="Fixed cost per forward (ms)", minimum=0)
        project_button = gr.Button("Project", elem_id="sv-project")
        projection_plot = gr.Plot(
            speedup_charts.projection_chart(None), show_label=False, elem_id="sv-projection-plot"
        )
        projection_note = gr.HTML(speedup_panel.projection_html(None), elem_id="sv-projection-note")

    def measure_cost(
        inputs: Inputs,
        sizes_value: float,
        repeats_value: float,
        progress: gr.Progress = gr.Progress(),  # noqa: B008
    ) -> dict[Any, Any]:
        pair = wiring.app.load(inputs.preset, progress)
        context = pair.encode_prompt(inputs.prompt, chat=inputs.chat)
        progress(0.5, desc="timing target forwards")
        curve = wiring.app.run_locked(
            lambda: measure_verification_cost(
                pair.target, context, int(sizes_value), int(repeats_value), COST_BUDGET_S
            ),
            "measuring forward times",
        )
        target = gpu_projection.model_footprint(pair.target)
        draft = gpu_projection.model_footprint(pair.draft)
        return {
            status: status_line(
                f"Measured on {curve.device} after a {curve.context_len}-token context"
                + ("." if curve.complete else " (stopped early: time budget)."),
                "done",
            ),
            curve_plot: speedup_charts.cost_curve_chart(curve),
            target_gb: round(target.bytes_at(2) / 1e9, 3),
            draft_gb: round(draft.bytes_at(2) / 1e9, 3),
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
            raise gr.Error("Fill in every number of the projection.")
        bandwidth_v, tflops_v, target_v, draft_v, alpha_v, overhead_v = (
            float(value or 0) for value in numbers
        )
        preset = gpu_projection.GPU_PRESETS.get(name)
        if preset is None or (preset.bandwidth_gb_s, preset.tflops) != (bandwidth_v, tflops_v):
            name = f"custom GPU ({bandwidth_v:g} GB/s, {tflops_v:g} TFLOPS)"
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
        except (ValueError, ZeroDivisionError) as error:
            raise gr.Error(f"Check the projection's numbers: {error}") from None
        return {
            projection_plot: speedup_charts.projection_chart(projection),
            projection_note: speedup_panel.projection_html(projection),
        }

    def pick_gpu(name: str) -> tuple[float, float]:
        spec = gpu_projection.GPU_PRESETS[name]
        return spec.bandwidth_gb_s, spec.tflops

    private: dict[str, Any] = {"api_visibility": "private"}
    wiring.start(
        button, measure_cost, [sizes, repeats], [status, curve_plot, target_gb, draft_gb], status
    )
    gpu.change(pick_gpu, gpu, [bandwidth, tflops], **private)
    numbers = [bandwidth, tflops, target_gb, draft_gb, alpha, overhead]
    project_button.click(
        project_gpu, [gpu, *numbers], [projection_plot, projection_note], **private
    )
    measured_alpha.change(lambda value: round(value, 3), measured_alpha, alpha, **private)
