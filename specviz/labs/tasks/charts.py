"""The task-dependence lab as a Plotly figure: α, τ and speedup per task, side by side.

The three measures have different scales (a rate in [0, 1], tokens per pass up to γ + 1, a ratio
around 1), so each gets its own panel with the tasks in the same order, and a task's three bars can
be read across. A dashed line at 1 marks plain decoding in the τ and speedup panels. The words come
from the text catalogue in the language given.
"""

from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from specviz.labs.tasks.experiment import TaskReport
from specviz.models.presets import task_label
from specviz.text import DEFAULT_LANGUAGE, t
from specviz.views.run_charts import (
    ACCEPTED,
    DRAFT_TIME,
    PLAIN,
    REJECTED,
    TAU,
    apply_layout,
    empty_note,
    hover,
)

# The dashed lines are named in the titles: as annotations inside the panels they cover bars.
_PANELS = ("tasks.chart.panel.alpha", "tasks.chart.panel.tau", "tasks.chart.panel.speedup")


def _title(report: TaskReport | None, lang: str) -> str:
    """The chart's title: the settings every task ran with, and whether the run was cut short."""
    if report is None:
        return t("tasks.chart.title", lang)
    settings = report.settings
    gamma = str(settings.gamma)
    if settings.cost_gamma:
        gamma = t("tasks.chart.gamma_cost", lang, gamma=settings.gamma)
    elif settings.adaptive_gamma:
        gamma = t("tasks.chart.gamma_adaptive", lang, gamma=settings.gamma)
    temperature = (
        t("tasks.chart.temperature", lang, temperature=f"{settings.temperature:g}")
        if settings.temperature
        else t("tasks.chart.greedy", lang)
    )
    title = t(
        "tasks.chart.title_run",
        lang,
        gamma=gamma,
        temperature=temperature,
        tokens=settings.max_new_tokens,
    )
    return title if report.complete else title + t("tasks.chart.stopped_early", lang)


def task_chart(report: TaskReport | None, *, lang: str = DEFAULT_LANGUAGE) -> go.Figure:
    """Bars per task for α, τ and speedup; a placeholder note before anything is measured."""
    panel_titles = [t(key, lang) for key in _PANELS]
    fig = make_subplots(rows=1, cols=3, subplot_titles=panel_titles, horizontal_spacing=0.08)
    tasks = report.tasks if report is not None else ()
    apply_layout(fig, _title(report, lang), "", "")
    fig.update_layout(showlegend=False, height=340, margin={"t": 70})
    if not tasks:
        fig.update_xaxes(visible=False)
        fig.update_yaxes(visible=False)
        empty_note(fig, t("tasks.chart.empty", lang))
        return fig

    names = [task_label(result.task, lang) for result in tasks]
    runs_text = [
        t(
            "tasks.chart.hover.runs",
            lang,
            prompts=len(result.runs),
            tokens=result.speculative.new_tokens,
            spec_tps=f"{result.speculative.tokens_per_s:.1f}",
            plain_tps=f"{result.plain.tokens_per_s:.1f}",
        )
        for result in tasks
    ]
    alphas = [result.acceptance_rate for result in tasks]
    taus = [result.tokens_per_target_pass for result in tasks]
    speedups = [result.speedup for result in tasks]
    panels = [
        (t("tasks.chart.bar.alpha", lang), alphas, ACCEPTED, [f"{value:.0%}" for value in alphas]),
        (t("tasks.chart.bar.tau", lang), taus, TAU, [f"{value:.2f}" for value in taus]),
        (
            t("tasks.chart.bar.speedup", lang),
            speedups,
            # Vermillion where speculation loses: the audience should see that it can.
            [DRAFT_TIME if value >= 1.0 else REJECTED for value in speedups],
            [f"{value:.2f}×" for value in speedups],
        ),
    ]
    for column, (name, values, colour, labels) in enumerate(panels, start=1):
        fig.add_trace(
            go.Bar(
                name=name,
                x=names,
                y=values,
                marker_color=colour,
                text=labels,
                textposition="outside",
                customdata=runs_text,
                hovertemplate=hover(
                    "tasks.chart.hover.bar",
                    lang,
                    task="%{x}",
                    name=name,
                    value="%{text}",
                    runs="%{customdata}",
                ),
            ),
            row=1,
            col=column,
        )
    fig.update_yaxes(range=[0, 1.15], tickformat=".0%", row=1, col=1)
    for column, values in ((2, taus), (3, speedups)):
        fig.update_yaxes(range=[0, max([*values, 1.0]) * 1.2], row=1, col=column)
        fig.add_hline(y=1.0, line={"color": PLAIN, "dash": "dash", "width": 1.5}, row=1, col=column)
    return fig
