"""The teaching labs' tabs: thin wiring from controls to the lab functions and their views.

Each lab's computation lives in its own engine-level module (``inspector``, ``exactness``,
``speedup_model``, ``task_dependence``); this module only lays out the tab, validates the shared
controls through ``App.inputs``, runs the lab under the engine lock and hands records to the views.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gradio as gr

from specviz import inspector, render
from specviz.ui_session import Session


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


def lab_tabs(app: Any, controls: list[Any], engine_group: str) -> None:
    """Tabs 2-5: the labs that run models, each from the shared controls on the left."""
    del app, controls, engine_group  # filled in as the labs land


def _status(message: str, kind: str = "info") -> str:
    return render.status_html(message, kind=kind)


ProgressFn = Callable[[float, str], None]
