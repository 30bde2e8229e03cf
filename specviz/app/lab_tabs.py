"""The teaching labs' tabs: thin wiring from controls to the lab functions and their views.

Each lab's computation lives in its own engine-level module (``inspector``, ``exactness``,
``speedup_model``, ``task_dependence``); this module only lays out the tab, validates the shared
controls through the app's request checks (``RequestChecks``: the settings through the settings
schema), runs the lab's model work under the engine lock where the models are (on ZeroGPU, in the
worker: ``gpu_work``) and hands the records it yields to the views, here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

import gradio as gr

from specviz.app.gpu_work import Runs
from specviz.app.limits import at_most
from specviz.app.page_events import sent_number
from specviz.app.request_checks import Inputs
from specviz.app.session import App, Session
from specviz.labs import inspector
from specviz.labs.exactness import charts as exactness_charts
from specviz.labs.exactness import experiment as exactness
from specviz.labs.exactness import greedy as greedy_check
from specviz.labs.exactness import panel as exactness_panel
from specviz.labs.tasks import charts as task_charts
from specviz.labs.tasks import experiment as task_dependence
from specviz.labs.tasks import panel as tasks_panel
from specviz.measure.harness import Staged
from specviz.measure.spread import DEFAULT_REPEATS
from specviz.models.loader import ModelPair
from specviz.text import t
from specviz.text.progress import Progress
from specviz.views import run_html as render

if TYPE_CHECKING:
    import torch

R = TypeVar("R")  # what a staged lab measures


@dataclass
class InspectorTab:
    """The inspector's components, so the live run can refresh them when it finishes."""

    cycle: gr.Slider
    table: gr.HTML
    plot: gr.Plot

    lang: str

    @property
    def outputs(self) -> list[Any]:
        return [self.cycle, self.table, self.plot]

    def latest(self, sess: Session) -> dict[Any, Any]:
        """Updates that show the session's last cycle."""
        count = len(sess.cycles)
        last = sess.cycles[-1] if count else None
        return {
            # Gradio needs maximum > minimum; show() clamps a one-cycle run's "2" back to 1.
            self.cycle: gr.Slider(minimum=1, maximum=max(count, 2), value=max(count, 1)),
            self.table: inspector.inspector_html(last, count, lang=self.lang),
            self.plot: inspector.inspector_figure(last, lang=self.lang),
        }


# A click (or Enter) on a draft-tree node, a chip of the cards' tree panel (data-node "n3") or a
# row of the inspector's node table (data-node "3"), becomes a "click" event carrying the cycle
# (1-based, from the nearest data-cycle) and the node's index; the text and extra chips carry none.
# The cards' "Inspect this cycle" button (a real button: Enter and Space click it) sends the cycle
# alone. These are the only ways into the inspector from the live tab: a click on a token moves
# the player instead (live_tab.STREAM_JS).
NODE_CLICK_JS = (
    "const pick = (event) => {"
    " const node = event.target.closest('[data-node]'); if (!node) return;"
    " const key = node.dataset.node.replace(/^n/, ''); if (!/^[0-9]+$/.test(key)) return;"
    " const cycle = node.closest('[data-cycle]'); if (!cycle) return;"
    " trigger('click', {cycle: Number(cycle.dataset.cycle), node: Number(key)}); };"
    " element.addEventListener('click', (event) => {"
    " const open = event.target.closest('.sv-inspect-open[data-cycle]');"
    " if (open) trigger('click', {cycle: Number(open.dataset.cycle)}); else pick(event); });"
    " element.addEventListener('keydown', (event) => { if (event.key === 'Enter') pick(event); });"
)


def inspector_tab(session: gr.State, tabs: gr.Tabs, cards: gr.HTML, lang: str) -> InspectorTab:
    """Tab 1: the dice roll of any cycle of the last run, chosen on a slider or by the cards'
    "Inspect this cycle"; a tree cycle's node, chosen by a click on it in the cards' tree panel
    or in the tab's table."""
    with gr.Tab(t("app.tab.inspector", lang), id="inspector", elem_id="sv-tab-inspector"):
        gr.Markdown(inspector.explanation(lang), elem_classes="sv-lab-intro")
        cycle = gr.Slider(
            1,
            2,
            value=1,
            step=1,
            label=t("app.inspector.cycle", lang),
            elem_id="sv-inspect-cycle",
        )
        table = gr.HTML(
            inspector.inspector_html(None, lang=lang),
            elem_id="sv-inspect",
            js_on_load=NODE_CLICK_JS,  # a click on a node's row tells that node's story
        )
        plot = chart(inspector.inspector_figure(None, lang=lang), "sv-inspect-plot")
    tab = InspectorTab(cycle, table, plot, lang)

    def show(
        sess: Session | None, number: float | None, node: int | None = None
    ) -> tuple[str, Any]:
        cycles = sess.cycles if sess is not None else []
        chosen = cycles[min(max(int(number or 1), 1), len(cycles)) - 1] if cycles else None
        return (
            inspector.inspector_html(chosen, len(cycles), node=node, lang=lang),
            inspector.inspector_figure(chosen, lang=lang),
        )

    def picked(event: gr.EventData) -> tuple[int, int | None] | None:
        """The cycle and node a click sent (node None: the whole cycle, as the cards' Inspect
        button sends it), None for a click that sent no cycle."""
        number = sent_number(event, "cycle")
        return None if number is None else (number, sent_number(event, "node"))

    def opened(sess: Session, number: float, node: int | None = None) -> dict[Any, Any]:
        """The inspector tab brought forward at cycle *number* (and *node* of its tree)."""
        html_view, figure = show(sess, number, node)
        return {
            tabs: gr.Tabs(selected="inspector"),
            cycle: gr.Slider(maximum=max(len(sess.cycles), 2), value=int(number)),
            table: html_view,
            plot: figure,
        }

    def inspect_in_cards(sess: Session | None, event: gr.EventData) -> dict[Any, Any]:
        chosen = picked(event)
        if sess is None or not sess.cycles or chosen is None:
            return {}
        return opened(sess, *chosen)

    def node_in_table(sess: Session | None, event: gr.EventData) -> dict[Any, Any]:
        chosen = picked(event)
        if sess is None or not sess.cycles or chosen is None or chosen[1] is None:
            return {}
        return {table: show(sess, *chosen)[0]}

    private: dict[str, Any] = {"api_visibility": "private"}
    cycle.input(show, [session, cycle], [table, plot], trigger_mode="always_last", **private)
    cards.click(inspect_in_cards, session, [tabs, cycle, table, plot], **private)
    table.click(node_in_table, session, [table], **private)
    return tab


@dataclass(frozen=True)
class LabRun:
    """What a lab's handler starts from: the validated inputs, their loaded pair and prompt, and a
    progress bar worded in the app's language."""

    inputs: Inputs
    pair: ModelPair
    prompt_ids: torch.Tensor  # (1, T)
    progress: Progress


@dataclass
class LabWiring:
    """What every model-running lab needs: the runs, the shared controls and one event recipe."""

    runs: Runs
    controls: dict[str, Any]  # a run's inputs by parameter name (RunControls.run_inputs)
    engine_group: str
    chosen: gr.State  # the validated Inputs of the last lab start
    warmed: set[str] = field(default_factory=set)  # presets run once here (first runs are slow)
    events: list[Any] = field(default_factory=list)  # the labs' runs, for the Stop button

    @property
    def app(self) -> App:
        return self.runs.app

    def start(
        self,
        button: gr.Button,
        work: Callable[..., Any],
        show: Callable[[Any], dict[Any, Any]],
        lab_inputs: list[Any],
        outputs: list[Any],
        status: gr.HTML,
    ) -> Any:
        """Validate the shared controls (errors show at once), then run the lab in the engine queue.

        ``work(LabRun, *lab values)`` is the model work: it runs where the models are (on ZeroGPU,
        in the worker, so it may only take and give plain values) and returns a record or yields
        them as it goes; ``show(record)`` turns each into the outputs' updates, here.
        """
        name = f"lab-{len(self.runs.labs)}"
        self.runs.labs[name] = lambda inputs, values, progress: self.work_on(
            work, inputs, values, progress
        )

        def collect(**values: Any) -> Inputs:
            return self.app.checks.check_values(values)

        # Gradio finds gr.Progress among positional parameters, as a default value. The name is
        # the event's private API name; "run" belongs to the live run.
        def run_lab(progress: gr.Progress = gr.Progress(), *values: Any) -> Iterator[Any]:  # noqa: B008
            inputs, *lab_values = values
            for record in self.runs.lab(name, inputs, lab_values, progress):
                yield show(record)

        private: dict[str, Any] = {"api_visibility": "private"}
        event = button.click(
            collect, None, self.chosen, inputs_kwargs=self.controls, queue=False, **private
        ).success(
            run_lab,
            [self.chosen, *lab_inputs],
            outputs,
            concurrency_id=self.engine_group,
            concurrency_limit=1,
            show_progress_on=status,
            **private,
        )
        self.events.append(event)
        return event

    def work_on(
        self, work: Callable[..., Any], inputs: Inputs, values: Any, progress: Any
    ) -> Iterator[Any]:
        """The lab's records: its pair loaded (with a progress bar, where there is one) and its
        prompt read, then *work* on them."""
        pair, prompt_ids = self.app.load_with_prompt(inputs, progress)
        lab = LabRun(inputs, pair, prompt_ids, self.app.progress_bar(progress))
        records = work(lab, *values)
        yield from records if isinstance(records, Iterator) else (records,)

    def size_slider(
        self, low: int, cap: int, default: int, step: int, label_key: str, **options: Any
    ) -> gr.Slider:
        """A lab's size control from *low* up to its *cap*, showing *default* (or the cap, if
        lower); in hosted mode the cap is stated as its info text ("at most 2 here")."""
        return gr.Slider(
            low,
            cap,
            value=min(default, cap),
            step=step,
            label=t(label_key, self.lang),
            info=at_most(cap).text(self.lang) if self.app.limits.hosted else None,
            **options,
        )

    @property
    def lang(self) -> str:
        """The language the labs' tabs are worded in: the app's."""
        return self.app.lang

    def staged(self, lab: LabRun, stages: Iterator[Staged[R]], doing: str) -> Iterator[Staged[R]]:
        """A staged lab advanced one stage at a time under the engine lock, so Stop (or a closed
        tab) ends it between two; each stage's words go to the progress bar (where there is one)
        and the stage itself to the lab's show function. *doing* is the ``app.doing.*`` key a
        failure is worded with."""
        for stage in self.app.locked(stages, doing):
            lab.progress(stage.fraction, stage.message)
            yield stage

    def run_staged(
        self, lab: LabRun, make: Callable[[], Iterator[Staged[R]]], doing: str
    ) -> Iterator[Staged[R]]:
        """*make*'s staged lab, its input checks worded for the page (``App.run_locked``), then
        advanced under the engine lock one stage at a time (``staged``)."""
        stages = self.app.run_locked(make, doing)
        yield from self.staged(lab, stages, doing)

    def warm_up(self, inputs: Inputs) -> bool:
        """True the first time a preset runs a lab here: one short unmeasured run comes first."""
        first = inputs.preset.id not in self.warmed
        self.warmed.add(inputs.preset.id)
        return first


def done_line(complete: bool, seconds: float, lang: str) -> str:
    """A speedup lab's closing status line: done (or cut by its budget) after so many seconds."""
    note = t("app.status.done" if complete else "app.speedup.cut", lang)
    return status_line(t("app.speedup.done", lang, note=note, seconds=f"{seconds:.0f}"), "done")


def speedup_shown(
    stage: Staged[Any], status: gr.HTML, lang: str, views: Callable[[Any], dict[Any, Any]]
) -> dict[Any, Any]:
    """A speedup lab's updates for *stage*: its words on the status line on the way, then the
    closing line (done_line) and *views* of the lab's result."""
    measured = stage.result
    if measured is None:
        return {status: status_line(stage.message.text(lang))}
    return {status: done_line(measured.complete, measured.elapsed_s, lang), **views(measured)}


def rule_choices(lang: str) -> list[tuple[str, str]]:
    """The exactness lab's acceptance rules as (label, value) radio choices."""
    return [
        (t("app.exactness.rule.exact", lang), "exact"),
        (t("app.exactness.rule.accept_draft", lang), "accept_draft"),
    ]


def exactness_tab(wiring: LabWiring) -> None:
    """Tab 2: is it really lossless? Distributions, tests, and greedy equality."""
    lang = wiring.lang
    with lab_tab(t("app.tab.exactness", lang), t("app.exactness.intro", lang), "exactness"):
        with gr.Row():
            cap = wiring.app.limits.exactness_samples
            samples = wiring.size_slider(
                100, cap, 2000, 100, "app.exactness.samples", elem_id="sv-exact-n"
            )
            tokens = gr.Radio([1, 2], value=2, label=t("app.exactness.tokens", lang))
        rule = gr.Radio(
            rule_choices(lang),
            value="exact",
            label=t("app.exactness.rule", lang),
            elem_id="sv-rule",
        )
        button = run_button(t("app.exactness.run", lang), "sv-exact-run")
        status = status_box(t("app.status.not_run", lang), "sv-exact-status")
        first = chart(exactness_charts.distribution_chart(None, 1, lang=lang), "sv-exact-first")
        pairs = chart(exactness_charts.distribution_chart(None, 2, lang=lang), "sv-exact-pairs")
        summary = gr.HTML(
            exactness_panel.exactness_html(None, lang=lang), elem_id="sv-exact-summary"
        )
        needed = chart(exactness_charts.samples_needed_chart(None, lang=lang))

    def exactness_work(
        lab: LabRun, samples_value: float, tokens_value: float, rule_value: str
    ) -> Iterator[Any]:
        wiring.app.checks.check_lab_size(samples_value, cap, "app.exactness.samples")
        if lab.inputs.settings.temperature <= 0:
            checks = wiring.app.run_locked(
                lambda: greedy_check.iter_greedy_equality(
                    lab.pair,
                    lab.prompt_ids,
                    lab.inputs.settings,
                    str(lab.inputs.drafter),  # the visitor's: every drafter must equal plain
                    prefill_chunk=wiring.app.limits.prefill_chunk,
                ),
                "app.doing.greedy",
            )
            # A stage per cycle, step or prompt chunk: Stop ends the two runs between forwards.
            yield from wiring.staged(lab, checks, "app.doing.greedy")
            return
        stages = wiring.app.run_locked(
            lambda: exactness.iter_exactness_lab(
                lab.pair,
                lab.prompt_ids,
                lab.inputs.settings,
                samples=int(samples_value),
                tokens=int(tokens_value),
                rule=rule_value,
            ),
            "app.doing.sampling",
        )
        # A stage per batch of forwards: Stop ends the lab between them.
        yield from wiring.staged(lab, stages, "app.doing.sampling")

    def show_exactness(stage: Staged[Any]) -> dict[Any, Any]:
        report = stage.result
        if report is None:  # a stage on the way; the last one holds the report
            return {status: status_line(stage.message.text(lang))}
        if isinstance(report, greedy_check.GreedyReport):
            return {
                status: status_line(t("app.exactness.greedy_done", lang), "done"),
                summary: exactness_panel.greedy_html(report, lang=lang),
            }
        return {
            status: status_line(
                t("app.status.done_in", lang, seconds=f"{report.elapsed_s:.1f}"), "done"
            ),
            first: exactness_charts.distribution_chart(report, 1, lang=lang),
            pairs: exactness_charts.distribution_chart(report, 2, lang=lang),
            summary: exactness_panel.exactness_html(report, lang=lang),
            needed: exactness_charts.samples_needed_chart(report, lang=lang),
        }

    wiring.start(
        button,
        exactness_work,
        show_exactness,
        [samples, tokens, rule],
        [status, first, pairs, summary, needed],
        status,
    )


def tasks_tab(wiring: LabWiring) -> None:
    """Tab 5: α, τ and speedup per task group."""
    lang = wiring.lang
    with lab_tab(t("app.tab.tasks", lang), t("app.tasks.intro", lang), "tasks"):
        with gr.Row():
            cap = wiring.app.limits.task_prompts
            per_task = wiring.size_slider(1, cap, 1, 1, "app.tasks.per_task", scale=3)
            repeat_cap = wiring.app.limits.task_repeats
            repeats = wiring.size_slider(
                1,
                repeat_cap,
                DEFAULT_REPEATS,
                1,
                "app.tasks.repeats",
                scale=3,
                elem_id="sv-tasks-repeats",
            )
            button = run_button(t("app.tasks.run", lang), "sv-tasks-run")
        status = status_box(t("app.status.not_run", lang), "sv-tasks-status")
        plot = chart(task_charts.task_chart(None, lang=lang), "sv-tasks-plot")
        table = gr.HTML(tasks_panel.tasks_html(None, lang=lang), elem_id="sv-tasks-table")

    def tasks_work(lab: LabRun, per_task_value: float, repeats_value: float) -> Iterator[Any]:
        wiring.app.checks.check_lab_size(per_task_value, cap, "app.tasks.per_task")
        wiring.app.checks.check_lab_size(repeats_value, repeat_cap, "app.tasks.repeats")
        plan = task_dependence.TaskPlan(
            lab.pair,
            lab.inputs.preset.example_prompts(lang),
            lambda text: lab.pair.encode_prompt(text, chat=lab.inputs.chat),
            lab.inputs.settings,
            int(per_task_value or 1),
            warm_up=wiring.warm_up(lab.inputs),
            drafter=str(lab.inputs.drafter),
            repeats=int(repeats_value or 1),
        )
        updates = task_dependence.iter_task_measurements(plan)
        for update in wiring.app.locked(updates, "app.doing.tasks"):
            lab.progress(update.fraction, update.message)
            yield update

    def show_tasks(update: task_dependence.TaskProgress) -> dict[Any, Any]:
        done = update.report.complete
        line = (
            t("app.status.done", lang)
            if done
            else t("app.status.running_task", lang, task=update.message)
        )
        return {
            status: status_line(line, "done" if done else "info"),
            plot: task_charts.task_chart(update.report, lang=lang),
            table: tasks_panel.tasks_html(update.report, lang=lang),
        }

    wiring.start(button, tasks_work, show_tasks, [per_task, repeats], [status, plot, table], status)


def status_line(message: str, kind: str = "info") -> str:
    """A lab's status line around *message* (already in the reader's language)."""
    return render.status_html(message, kind=kind)


# --- the pieces every lab tab is built from ------------------------------------------------------


@contextmanager
def lab_tab(title: str, intro: str, tab_id: str) -> Iterator[None]:
    """A lab's tab (``id`` *tab_id*), opened with its intro paragraph; lay the lab out inside."""
    with gr.Tab(title, id=tab_id, elem_id=f"sv-tab-{tab_id}"):
        gr.Markdown(intro, elem_classes="sv-lab-intro")
        yield


def run_button(label: str, elem_id: str) -> gr.Button:
    """The button that starts a lab's measurement."""
    return gr.Button(label, variant="primary", elem_id=elem_id)


def status_box(message: str, elem_id: str) -> gr.HTML:
    """A lab's status line, showing *message* until the lab runs."""
    return gr.HTML(status_line(message), elem_id=elem_id)


def chart(figure: Any, elem_id: str | None = None) -> gr.Plot:
    """A lab's figure: the chart carries its own title, so the component shows no label."""
    return gr.Plot(figure, show_label=False, elem_id=elem_id)
