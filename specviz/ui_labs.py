"""The teaching labs' tabs: thin wiring from controls to the lab functions and their views.

Each lab's computation lives in its own engine-level module (``inspector``, ``exactness``,
``speedup_model``, ``task_dependence``); this module only lays out the tab, validates the shared
controls through ``App.inputs``, runs the lab under the engine lock and hands records to the views.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import gradio as gr

from specviz import (
    exactness,
    exactness_charts,
    gpu_projection,
    inspector,
    lab_render,
    render,
    speedup_charts,
    speedup_model,
    task_charts,
    task_dependence,
)
from specviz.cost_curve import measure_verification_cost
from specviz.settings import GAMMA_MAX, GAMMA_MIN
from specviz.ui_session import App, Inputs, Session

# The bundled pair's weights in bf16 (1,543,714,304 and 494,032,768 weights read per forward,
# from gpu_projection.model_footprint): the projection's defaults until a measurement fills them.
TARGET_GB, DRAFT_GB = 3.087, 0.988
COST_BUDGET_S = 60.0  # the cost curve stops measuring after this long


@dataclass
class InspectorTab:
    """The inspector's components, so the live run can refresh them when it finishes."""

    cycle: gr.Slider
    table: gr.HTML
    plot: gr.Plot

    @property
    def outputs(self) -> list[Any]:
        return [self.cycle, self.table, self.plot]

    def latest(self, sess: Session) -> dict[Any, Any]:
        """Updates that show the session's last cycle."""
        count = len(sess.cycles)
        return {
            # Gradio needs maximum > minimum; show() clamps a one-cycle run's "2" back to 1.
            self.cycle: gr.Slider(minimum=1, maximum=max(count, 2), value=max(count, 1)),
            self.table: inspector.inspector_html(sess.cycles[-1] if count else None, count),
            self.plot: inspector.inspector_figure(sess.cycles[-1] if count else None),
        }


def inspector_tab(session: gr.State, tabs: gr.Tabs, stream: gr.HTML) -> InspectorTab:
    """Tab 1: the dice roll of any cycle of the last run, chosen on a slider or by a token click."""
    with gr.Tab("Dice roll inspector", id="inspector", elem_id="sv-tab-inspector"):
        gr.Markdown(inspector.EXPLANATION, elem_classes="sv-lab-intro")
        cycle = gr.Slider(
            1, 2, value=1, step=1, label="Cycle of the last run", elem_id="sv-inspect-cycle"
        )
        table = gr.HTML(inspector.inspector_html(None), elem_id="sv-inspect")
        plot = gr.Plot(
            inspector.inspector_figure(None), show_label=False, elem_id="sv-inspect-plot"
        )
    tab = InspectorTab(cycle, table, plot)

    def show(sess: Session | None, number: float | None) -> tuple[str, Any]:
        cycles = sess.cycles if sess is not None else []
        if not cycles:
            return inspector.inspector_html(None), inspector.inspector_figure(None)
        index = min(max(int(number or 1), 1), len(cycles)) - 1
        return (
            inspector.inspector_html(cycles[index], len(cycles)),
            inspector.inspector_figure(cycles[index]),
        )

    def clicked(sess: Session | None, event: gr.EventData) -> dict[Any, Any]:
        data = event._data if isinstance(event._data, dict) else {}
        number = data.get("cycle")
        if sess is None or not sess.cycles or not isinstance(number, (int, float)):
            return {}
        html_view, figure = show(sess, number)
        return {
            tabs: gr.Tabs(selected="inspector"),
            cycle: gr.Slider(maximum=max(len(sess.cycles), 2), value=int(number)),
            table: html_view,
            plot: figure,
        }

    private: dict[str, Any] = {"api_visibility": "private"}
    cycle.input(show, [session, cycle], [table, plot], trigger_mode="always_last", **private)
    stream.click(clicked, session, [tabs, cycle, table, plot], **private)
    return tab


@dataclass
class LabWiring:
    """What every model-running lab needs: the app, the shared controls and one event recipe."""

    app: App
    controls: list[Any]
    engine_group: str
    chosen: gr.State  # the validated Inputs of the last lab start
    warmed: set[str]  # presets that have run once in this process (first runs are slow)

    def start(
        self,
        button: gr.Button,
        handler: Callable[..., Any],
        lab_inputs: list[Any],
        outputs: list[Any],
        status: gr.HTML,
    ) -> Any:
        """Validate the shared controls (errors show at once), then run the lab in the engine queue."""

        def collect(*values: Any) -> Inputs:
            return self.app.inputs(*values, False)

        private: dict[str, Any] = {"api_visibility": "private"}
        return button.click(collect, self.controls, self.chosen, queue=False, **private).success(
            handler,
            [self.chosen, *lab_inputs],
            outputs,
            concurrency_id=self.engine_group,
            concurrency_limit=1,
            show_progress_on=status,
            **private,
        )

    def warm_up(self, inputs: Inputs) -> bool:
        """True the first time a preset runs a lab here: one short unmeasured run comes first."""
        first = inputs.preset.id not in self.warmed
        self.warmed.add(inputs.preset.id)
        return first


def lab_tabs(app: App, controls: list[Any], chosen: gr.State, engine_group: str) -> None:
    """Tabs 2-5: the labs that run models, each from the shared controls on the left."""
    wiring = LabWiring(app, controls, engine_group, chosen, set())
    exactness_tab(wiring)
    alpha = speedup_tab(wiring)
    cost_tab(wiring, alpha)
    tasks_tab(wiring)


EXACTNESS_INTRO = (
    "Speculative sampling claims that its output follows the **target's** distribution exactly, "
    "whatever the draft proposes (Leviathan et al. 2023, Theorem 1; Chen et al. 2023). Test it: "
    "from the prompt on the left, draw N short continuations with plain sampling of the target "
    "and N with speculative sampling (same temperature, top-k, top-p), and compare the two "
    "empirical distributions with a chi-square test. Then switch to the **wrong rule**, which "
    "accepts every draft, and watch the test catch it. At temperature 0 the button compares "
    "greedy outputs token for token instead."
)
RULE_CHOICES = [
    ("The paper's rule: accept with min(1, p/q), resample from the residual", "exact"),
    ("Wrong rule: accept every draft (ships the draft's q)", "accept_draft"),
]


def exactness_tab(wiring: LabWiring) -> None:
    """Tab 2: is it really lossless? Distributions, tests, and greedy equality."""
    with gr.Tab("Exactness lab", id="exactness", elem_id="sv-tab-exactness"):
        gr.Markdown(EXACTNESS_INTRO, elem_classes="sv-lab-intro")
        with gr.Row():
            samples = gr.Slider(
                100, 5000, value=2000, step=100, label="N samples per arm", elem_id="sv-exact-n"
            )
            tokens = gr.Radio([1, 2], value=2, label="Tokens per continuation")
        rule = gr.Radio(RULE_CHOICES, value="exact", label="Acceptance rule", elem_id="sv-rule")
        button = gr.Button("▶ Draw and compare", variant="primary", elem_id="sv-exact-run")
        status = gr.HTML(_status("Not run yet."), elem_id="sv-exact-status")
        first = gr.Plot(
            exactness_charts.distribution_chart(None, 1),
            show_label=False,
            elem_id="sv-exact-first",
        )
        pairs = gr.Plot(
            exactness_charts.distribution_chart(None, 2),
            show_label=False,
            elem_id="sv-exact-pairs",
        )
        summary = gr.HTML(lab_render.exactness_html(None), elem_id="sv-exact-summary")
        needed = gr.Plot(exactness_charts.samples_needed_chart(None), show_label=False)

    def run(
        inputs: Inputs,
        samples_value: float,
        tokens_value: float,
        rule_value: str,
        progress: gr.Progress = gr.Progress(),  # noqa: B008
    ) -> dict[Any, Any]:
        pair = wiring.app.load(inputs.preset, progress)
        prompt_ids = pair.encode_prompt(inputs.prompt, chat=inputs.chat)
        if inputs.settings.temperature <= 0:
            greedy = wiring.app.run_locked(
                lambda: exactness.greedy_equality(pair, prompt_ids, inputs.settings),
                "comparing greedy outputs",
            )
            return {
                status: _status(
                    "Temperature 0 is greedy decoding, so there is no distribution to sample: "
                    "compared the two greedy outputs token for token. Raise the temperature to "
                    "compare distributions.",
                    "done",
                ),
                summary: lab_render.greedy_html(greedy),
            }

        def report_progress(fraction: float, message: str) -> None:
            progress(fraction, desc=message)

        report = wiring.app.run_locked(
            lambda: exactness.run_exactness_lab(
                pair,
                prompt_ids,
                inputs.settings,
                samples=int(samples_value),
                tokens=int(tokens_value),
                rule=rule_value,
                progress=report_progress,
            ),
            "sampling",
        )
        return {
            status: _status(f"Done in {report.elapsed_s:.1f} s.", "done"),
            first: exactness_charts.distribution_chart(report, 1),
            pairs: exactness_charts.distribution_chart(report, 2),
            summary: lab_render.exactness_html(report),
            needed: exactness_charts.samples_needed_chart(report),
        }

    wiring.start(
        button, run, [samples, tokens, rule], [status, first, pairs, summary, needed], status
    )


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
        status = gr.HTML(_status("Not run yet."), elem_id="sv-speedup-status")
        plot = gr.Plot(
            speedup_charts.theory_chart(None), show_label=False, elem_id="sv-speedup-plot"
        )
        summary = gr.HTML(lab_render.speedup_html(None), elem_id="sv-speedup-summary")
        alpha = gr.Number(visible=False)  # the measured α, handed to the projection

    def run(
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
            status: _status(f"{note} ({lab.elapsed_s:.0f} s)", "done"),
            plot: speedup_charts.theory_chart(lab.theory, lab.runs),
            summary: lab_render.speedup_html(lab),
            alpha: lab.theory.alpha,
        }

    wiring.start(button, run, [gammas, budget], [status, plot, summary, alpha], status)
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
        status = gr.HTML(_status("Not measured yet."), elem_id="sv-cost-status")
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
        projection_note = gr.HTML(lab_render.projection_html(None), elem_id="sv-projection-note")

    def measure(
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
            status: _status(
                f"Measured on {curve.device} after a {curve.context_len}-token context"
                + ("." if curve.complete else " (stopped early: time budget)."),
                "done",
            ),
            curve_plot: speedup_charts.cost_curve_chart(curve),
            target_gb: round(target.bytes_at(2) / 1e9, 3),
            draft_gb: round(draft.bytes_at(2) / 1e9, 3),
        }

    def project(
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
            projection_note: lab_render.projection_html(projection),
        }

    def pick_gpu(name: str) -> tuple[float, float]:
        spec = gpu_projection.GPU_PRESETS[name]
        return spec.bandwidth_gb_s, spec.tflops

    private: dict[str, Any] = {"api_visibility": "private"}
    wiring.start(
        button, measure, [sizes, repeats], [status, curve_plot, target_gb, draft_gb], status
    )
    gpu.change(pick_gpu, gpu, [bandwidth, tflops], **private)
    numbers = [bandwidth, tflops, target_gb, draft_gb, alpha, overhead]
    project_button.click(project, [gpu, *numbers], [projection_plot, projection_note], **private)
    measured_alpha.change(lambda value: round(value, 3), measured_alpha, alpha, **private)


TASKS_INTRO = (
    "The draft model only helps where it can guess what the target will write. Code and "
    "translations are predictable, so most drafts pass; an open-ended story has many good "
    "continuations, the two models pick different ones, and more drafts are rejected. One click "
    "runs every task group's example prompt twice, speculatively and plainly, at the settings on "
    "the left, and compares α (accepted / tested drafts), τ (tokens per target pass) and the "
    "measured speedup (engine time, prefill excluded)."
)


def tasks_tab(wiring: LabWiring) -> None:
    """Tab 5: α, τ and speedup per task group."""
    with gr.Tab("Task dependence", id="tasks", elem_id="sv-tab-tasks"):
        gr.Markdown(TASKS_INTRO, elem_classes="sv-lab-intro")
        with gr.Row():
            per_task = gr.Slider(1, 3, value=1, step=1, label="Prompts per task", scale=3)
            button = gr.Button("▶ Run every task", variant="primary", elem_id="sv-tasks-run")
        status = gr.HTML(_status("Not run yet."), elem_id="sv-tasks-status")
        plot = gr.Plot(task_charts.task_chart(None), show_label=False, elem_id="sv-tasks-plot")
        table = gr.HTML(lab_render.tasks_html(None), elem_id="sv-tasks-table")

    def run(
        inputs: Inputs,
        per_task_value: float,
        progress: gr.Progress = gr.Progress(),  # noqa: B008
    ) -> Iterator[dict[Any, Any]]:
        pair = wiring.app.load(inputs.preset, progress)
        updates = task_dependence.iter_task_measurements(
            pair,
            inputs.preset.prompts,
            lambda text: pair.encode_prompt(text, chat=inputs.chat),
            inputs.settings,
            int(per_task_value or 1),
            warm_up=wiring.warm_up(inputs),
        )
        for update in wiring.app.locked(updates, "measuring the tasks"):
            progress(update.fraction, desc=update.message)
            done = update.report.complete
            yield {
                status: _status(
                    "Done." if done else f"Running: {update.message}…", "done" if done else "info"
                ),
                plot: task_charts.task_chart(update.report),
                table: lab_render.tasks_html(update.report),
            }

    wiring.start(button, run, [per_task], [status, plot, table], status)


def _status(message: str, kind: str = "info") -> str:
    return render.status_html(message, kind=kind)
