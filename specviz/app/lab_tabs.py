"""The teaching labs' tabs: thin wiring from controls to the lab functions and their views.

Each lab's computation lives in its own engine-level module (``inspector``, ``exactness``,
``speedup_model``, ``task_dependence``); this module only lays out the tab, validates the shared
controls through ``App.inputs`` (the settings through the settings schema), runs the lab under the
engine lock and hands records to the views.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import gradio as gr

from specviz.app.run_controls import read_run_inputs
from specviz.app.session import App, Inputs, Session
from specviz.labs import inspector
from specviz.labs.exactness import charts as exactness_charts
from specviz.labs.exactness import experiment as exactness
from specviz.labs.exactness import panel as exactness_panel
from specviz.labs.tasks import charts as task_charts
from specviz.labs.tasks import experiment as task_dependence
from specviz.labs.tasks import panel as tasks_panel
from specviz.views import run_html as render


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
        try:
            number = event.cycle  # gr.EventData exposes the data trigger() sent as attributes
        except (AttributeError, TypeError):  # a click that sent no cycle (TypeError: no data)
            return {}
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
    controls: dict[str, Any]  # a run's inputs by parameter name (RunControls.run_inputs)
    engine_group: str
    chosen: gr.State  # the validated Inputs of the last lab start
    warmed: set[str] = field(default_factory=set)  # presets run once here (first runs are slow)
    events: list[Any] = field(default_factory=list)  # the labs' runs, for the Stop button

    def start(
        self,
        button: gr.Button,
        handler: Callable[..., Any],
        lab_inputs: list[Any],
        outputs: list[Any],
        status: gr.HTML,
    ) -> Any:
        """Validate the shared controls (errors show at once), then run the lab in the engine queue."""

        def collect(**values: Any) -> Inputs:
            return read_run_inputs(self.app, values)

        private: dict[str, Any] = {"api_visibility": "private"}
        event = button.click(
            collect, None, self.chosen, inputs_kwargs=self.controls, queue=False, **private
        ).success(
            handler,
            [self.chosen, *lab_inputs],
            outputs,
            concurrency_id=self.engine_group,
            concurrency_limit=1,
            show_progress_on=status,
            **private,
        )
        self.events.append(event)
        return event

    def warm_up(self, inputs: Inputs) -> bool:
        """True the first time a preset runs a lab here: one short unmeasured run comes first."""
        first = inputs.preset.id not in self.warmed
        self.warmed.add(inputs.preset.id)
        return first


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
        status = gr.HTML(status_line("Not run yet."), elem_id="sv-exact-status")
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
        summary = gr.HTML(exactness_panel.exactness_html(None), elem_id="sv-exact-summary")
        needed = gr.Plot(exactness_charts.samples_needed_chart(None), show_label=False)

    def run_exactness(
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
                status: status_line(
                    "Temperature 0 is greedy decoding, so there is no distribution to sample: "
                    "compared the two greedy outputs token for token. Raise the temperature to "
                    "compare distributions.",
                    "done",
                ),
                summary: exactness_panel.greedy_html(greedy),
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
            status: status_line(f"Done in {report.elapsed_s:.1f} s.", "done"),
            first: exactness_charts.distribution_chart(report, 1),
            pairs: exactness_charts.distribution_chart(report, 2),
            summary: exactness_panel.exactness_html(report),
            needed: exactness_charts.samples_needed_chart(report),
        }

    wiring.start(
        button,
        run_exactness,
        [samples, tokens, rule],
        [status, first, pairs, summary, needed],
        status,
    )


TASKS_INTRO = (
    "The draft model only helps where it can guess what the target will write. Code and "
    "translations are predictable, so most drafts pass; an open-ended story has many good "
    "continuations, the two models pick different ones, and more drafts are rejected. One click "
    "runs every task group's example prompt twice, speculatively and plainly, at the settings on "
    "the left, and compares α (accepted / tested drafts), τ (tokens per target pass) and the "
    "measured speedup (engine time, both runs reading the prompt in their first pass)."
)


def tasks_tab(wiring: LabWiring) -> None:
    """Tab 5: α, τ and speedup per task group."""
    with gr.Tab("Task dependence", id="tasks", elem_id="sv-tab-tasks"):
        gr.Markdown(TASKS_INTRO, elem_classes="sv-lab-intro")
        with gr.Row():
            per_task = gr.Slider(1, 3, value=1, step=1, label="Prompts per task", scale=3)
            button = gr.Button("▶ Run every task", variant="primary", elem_id="sv-tasks-run")
        status = gr.HTML(status_line("Not run yet."), elem_id="sv-tasks-status")
        plot = gr.Plot(task_charts.task_chart(None), show_label=False, elem_id="sv-tasks-plot")
        table = gr.HTML(tasks_panel.tasks_html(None), elem_id="sv-tasks-table")

    def run_tasks(
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
                status: status_line(
                    "Done." if done else f"Running: {update.message}…", "done" if done else "info"
                ),
                plot: task_charts.task_chart(update.report),
                table: tasks_panel.tasks_html(update.report),
            }

    wiring.start(button, run_tasks, [per_task], [status, plot, table], status)


def status_line(message: str, kind: str = "info") -> str:
    return render.status_html(message, kind=kind)
