"""The task-dependence lab as a Plotly figure: α, τ and speedup per task, side by side.

The three measures have different scales (a rate in [0, 1], tokens per pass up to γ + 1, a ratio
around 1), so each gets its own panel with the tasks in the same order, and a task's three bars can
be read across. A dashed line at 1 marks plain decoding in the τ and speedup panels.
"""

from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from specviz.labs.tasks.experiment import TaskReport
from specviz.views.run_charts import (
    ACCEPTED,
    BONUS,
    DRAFT_TIME,
    PLAIN,
    REJECTED,
    apply_layout,
    empty_note,
)

# The dashed lines are named in the titles: as annotations inside the panels they cover bars.
_PANELS = (
    "acceptance rate α",
    "tokens per target pass τ (- - plain: 1)",
    "speedup over plain (- - no gain)",
)


def task_chart(report: TaskReport | None) -> go.Figure:
    """Bars per task for α, τ and speedup; a placeholder note before anything is measured."""
    fig = make_subplots(rows=1, cols=3, subplot_titles=_PANELS, horizontal_spacing=0.08)
    tasks = report.tasks if report is not None else ()
    title = "Task dependence"
    if report is not None:
        settings = report.settings
        gamma = f"adaptive from {settings.gamma}" if settings.adaptive_gamma else settings.gamma
        temperature = f"T = {settings.temperature:g}" if settings.temperature else "greedy"
        title += f" (γ = {gamma}, {temperature}, {settings.max_new_tokens} tokens per prompt)"
        if not report.complete:
            title += ", stopped early"
    apply_layout(fig, title, "", "")
    fig.update_layout(showlegend=False, height=340, margin={"t": 70})
    if not tasks:
        fig.update_xaxes(visible=False)
        fig.update_yaxes(visible=False)
        empty_note(fig, "no tasks measured yet")
        return fig

    names = [result.task for result in tasks]
    hover = [
        f"{len(result.runs)} prompt(s), {result.speculative.new_tokens} tokens<br>"
        f"speculative {result.speculative.tokens_per_s:.1f} tok/s, "
        f"plain {result.plain.tokens_per_s:.1f} tok/s"
        for result in tasks
    ]
    alphas = [result.acceptance_rate for result in tasks]
    taus = [result.tokens_per_target_pass for result in tasks]
    speedups = [result.speedup for result in tasks]
    panels = [
        ("α", alphas, ACCEPTED, [f"{value:.0%}" for value in alphas]),
        ("τ", taus, BONUS, [f"{value:.2f}" for value in taus]),
        (
            "speedup",
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
                customdata=hover,
                hovertemplate=f"%{{x}}: {name} %{{text}}<br>%{{customdata}}<extra></extra>",
            ),
            row=1,
            col=column,
        )
    fig.update_yaxes(range=[0, 1.15], tickformat=".0%", row=1, col=1)
    for column, values in ((2, taus), (3, speedups)):
        fig.update_yaxes(range=[0, max([*values, 1.0]) * 1.2], row=1, col=column)
        fig.add_hline(y=1.0, line={"color": PLAIN, "dash": "dash", "width": 1.5}, row=1, col=column)
    return fig
