"""Speedup-lab records -> Plotly figures, and the paragraph that reads the theory chart aloud.

Four figures: the speedup model with the measured speedups overlaid, and τ in its own panel below
(a count of tokens, never on the speedup's axis); the verification-cost curve as measured on this
device, with the line the prediction reads v(γ) from; and the GPU projection, which is a model and is titled as one so it is
never mistaken for, or drawn with, a measurement; and draft trees against the chain, predicted
over the node budget with the measured runs on it. The words come from the text catalogue in the
language each function is given.
"""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from specviz.labs.speedup.cost_curve import CostCurve
from specviz.labs.speedup.fixed_cost import mode_words
from specviz.labs.speedup.gpu_projection import Projection
from specviz.labs.speedup.theory import MeasuredRun, SpeedupRow, SpeedupTheory
from specviz.labs.speedup.tree_lab import TreeLab
from specviz.text import DEFAULT_LANGUAGE, t
from specviz.views.run_charts import (
    ACCEPTED,
    BONUS,
    PLAIN,
    REJECTED,
    RESAMPLED,
    TAU,
    empty_chart,
    empty_note,
    hover,
    reference_line,
)
from specviz.views.run_charts import apply_layout as layout

PREDICTED = ACCEPTED
MEASURED = REJECTED
PROJECTED = RESAMPLED
_NEARLY_FREE = 1.1  # v(γ) up to this reads as "nearly free" in the paragraph


def _speedup_line(
    fig: go.Figure, rows: Sequence[SpeedupRow], name: str, colour: str, dash: str, lang: str
) -> None:
    """Speedup against γ, with τ and v(γ) in the hover (shared by the theory and the projection)."""
    fig.add_trace(
        go.Scatter(
            name=name,
            x=[row.gamma for row in rows],
            y=[row.speedup for row in rows],
            mode="lines+markers",
            line={"color": colour, "width": 3, "dash": dash},
            # Open markers where v(γ) lies beyond the measured cost curve.
            marker={
                "size": 7,
                "symbol": ["circle-open" if row.verify_extrapolated else "circle" for row in rows],
            },
            customdata=[
                [
                    row.tau,
                    row.verify_cost,
                    t("speedup.chart.extrapolated", lang) if row.verify_extrapolated else "",
                ]
                for row in rows
            ],
            hovertemplate=hover(
                "speedup.chart.hover.line",
                lang,
                gamma="%{x}",
                speedup="%{y:.2f}",
                tau="%{customdata[0]:.2f}",
                verify="%{customdata[1]:.2f}",
                extrapolated="%{customdata[2]}",
            ),
        )
    )


def measured_markers(
    name: str,
    x: Sequence[float],
    y: Sequence[float],
    customdata: Sequence[Sequence[float]],
    hovertemplate: str,
) -> go.Scatter:
    """Measured speedups as the labs draw them: red diamonds over the predicted line."""
    return go.Scatter(
        name=name,
        x=list(x),
        y=list(y),
        mode="markers",
        marker={"symbol": "diamond", "size": 12, "color": MEASURED},
        customdata=[list(row) for row in customdata],
        hovertemplate=hovertemplate,
    )


def no_gain_line(gammas: Sequence[int], lang: str, meta: str | None = None) -> go.Scatter:
    """The dotted 1× line across the γ axis: below it speculation is slower than plain."""
    return go.Scatter(
        meta=meta,
        name=t("speedup.chart.no_gain", lang),
        x=[min(gammas), max(gammas)],
        y=[1.0, 1.0],
        mode="lines",
        line={"color": PLAIN, "width": 1.5, "dash": "dot"},
        hoverinfo="skip",
    )


def _best_and_no_gain(
    fig: go.Figure,
    rows: Sequence[SpeedupRow],
    best_gamma: int,
    best: float,
    lang: str,
    draw_best: bool = True,
) -> None:
    fig.add_trace(no_gain_line([row.gamma for row in rows], lang))
    if not draw_best:
        fig.update_yaxes(rangemode="tozero")
        fig.update_xaxes(dtick=1)
        return
    fig.add_trace(
        go.Scatter(
            name=t("speedup.chart.best", lang, gamma=best_gamma, speedup=f"{best:.2f}"),
            x=[best_gamma],
            y=[best],
            mode="markers",
            marker={"symbol": "star", "size": 16, "color": BONUS},
            hovertemplate=hover("speedup.chart.hover.best", lang, gamma="%{x}", speedup="%{y:.2f}"),
        )
    )
    fig.update_yaxes(rangemode="tozero")
    fig.update_xaxes(dtick=1)


def theory_chart(
    theory: SpeedupTheory | None,
    measured: Sequence[MeasuredRun] = (),
    *,
    lang: str = DEFAULT_LANGUAGE,
    draw_best: bool = True,
) -> go.Figure:
    """Predicted speedup against γ from the measured α, c and v(γ), measured runs on top; τ,
    predicted and measured, in a panel of its own below on the same γ axis. *draw_best* False
    (an inconclusive measurement) leaves the best γ unmarked, as the summary draws none."""
    if theory is None or not theory.rows:
        fig = layout(
            go.Figure(),
            t("speedup.chart.title", lang),
            t("speedup.chart.gamma_axis", lang),
            t("speedup.chart.y", lang),
        )
        empty_note(fig, t("speedup.chart.empty", lang))
        return fig
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, row_heights=[0.64, 0.36])
    layout(fig, t("speedup.chart.title", lang), "", t("speedup.chart.y", lang))
    rows = theory.rows
    name = t(
        "speedup.chart.predicted",
        lang,
        alpha=f"{theory.alpha:.2f}",
        cost=f"{theory.draft_cost:.2f}",
    )
    if any(row.verify_extrapolated for row in rows):
        name += t("speedup.chart.open_markers", lang)
    _speedup_line(fig, rows, name, PREDICTED, "solid", lang)
    fig.add_trace(
        go.Scatter(
            name=t("speedup.chart.predicted_tau", lang),
            x=[row.gamma for row in rows],
            y=[row.tau for row in rows],
            mode="lines",
            line={"color": TAU, "width": 2, "dash": "dot"},
            hovertemplate=hover("speedup.chart.hover.tau", lang, gamma="%{x}", tau="%{y:.2f}"),
        ),
        row=2,
        col=1,
    )
    if measured:
        fig.add_trace(
            measured_markers(
                t("speedup.chart.measured", lang),
                [run.gamma for run in measured],
                [run.speedup for run in measured],
                [[run.alpha, run.tau, run.tokens_per_s] for run in measured],
                hover(
                    "speedup.chart.hover.measured",
                    lang,
                    gamma="%{x}",
                    speedup="%{y:.2f}",
                    alpha="%{customdata[0]:.2f}",
                    tau="%{customdata[1]:.2f}",
                    tps="%{customdata[2]:.1f}",
                ),
            )
        )
        fig.add_trace(
            go.Scatter(
                name=t("speedup.chart.measured_tau", lang),
                x=[run.gamma for run in measured],
                y=[run.tau for run in measured],
                mode="markers",
                marker={"symbol": "square", "size": 9, "color": TAU},
                hovertemplate=hover(
                    "speedup.chart.hover.measured_tau", lang, gamma="%{x}", tau="%{y:.2f}"
                ),
            ),
            row=2,
            col=1,
        )
    _best_and_no_gain(fig, rows, theory.best_gamma, theory.best_speedup, lang, draw_best)
    fig.update_yaxes(title_text=t("speedup.chart.tau_axis", lang), row=2, col=1)
    fig.update_xaxes(title_text=t("speedup.chart.gamma_axis", lang), row=2, col=1)
    fig.update_layout(height=460)
    return fig


def cost_curve_chart(curve: CostCurve | None, *, lang: str = DEFAULT_LANGUAGE) -> go.Figure:
    """Median forward time for 1, 2, ... new tokens (bars: fastest and slowest run), measured."""
    x_title, y_title = t("speedup.cost.x", lang), t("chart.axis.milliseconds", lang)
    if curve is None or not curve.points:
        title, note = t("speedup.cost.title", lang), t("speedup.cost.empty", lang)
        return empty_chart(title, x_title, y_title, note)
    fig = go.Figure()
    points = curve.points
    sizes = [point.new_tokens for point in points]
    median_ms = [point.median_s * 1000 for point in points]
    one_ms = median_ms[0]
    references = [
        (t("speedup.cost.flat", lang), "dot", [one_ms] * len(sizes)),
        (t("speedup.cost.linear", lang), "dash", [one_ms * k for k in sizes]),
    ]
    for name, dash, values in references:
        fig.add_trace(reference_line(name, sizes, values, dash=dash))
    fig.add_trace(
        go.Scatter(
            name=t("speedup.cost.fit", lang, slope=f"{curve.line()[1]:.3f}"),
            x=sizes,
            y=[one_ms * curve.fitted(k - 1) for k in sizes],
            mode="lines",
            line={"color": PREDICTED, "width": 1.5, "dash": "dashdot"},
            hoverinfo="skip",
        )
    )
    fig.add_trace(
        go.Scatter(
            name=t("speedup.cost.measured", lang, device=curve.device),
            x=sizes,
            y=median_ms,
            mode="lines+markers",
            line={"color": PREDICTED, "width": 3},
            error_y={
                "type": "data",
                "symmetric": False,
                "array": [(max(p.runs_s) - p.median_s) * 1000 for p in points],
                "arrayminus": [(p.median_s - min(p.runs_s)) * 1000 for p in points],
                "color": PREDICTED,
            },
            customdata=curve.relative(),
            hovertemplate=hover(
                "speedup.cost.hover", lang, n="%{x}", ms="%{y:.1f}", ratio="%{customdata:.2f}"
            ),
        )
    )
    title = (
        t("speedup.cost.title", lang)
        if curve.complete
        else t("speedup.cost.title_cut", lang, n=sizes[-1])
    )
    layout(fig, title, x_title, y_title)
    fig.update_xaxes(dtick=1)
    # Scaled to the measurement: the k × one-token reference may leave the chart, showing its slope.
    highest = max(max(point.runs_s) for point in points) * 1000
    fig.update_yaxes(range=[0, 1.4 * highest])
    return fig


def projection_chart(
    projection: Projection | None,
    *,
    others: Sequence[Projection] = (),
    lang: str = DEFAULT_LANGUAGE,
) -> go.Figure:
    """Projected speedup against γ on a chosen GPU: a roofline model, drawn dashed, never measured;
    `others` (the same pair in the other execution modes) drawn thinner beside it."""
    x_title, y_title = t("speedup.chart.gamma_axis", lang), t("speedup.projection.y", lang)
    if projection is None or not projection.rows:
        title, note = t("speedup.projection.title", lang), t("speedup.projection.empty", lang)
        return empty_chart(title, x_title, y_title, note)
    fig = go.Figure()
    for other, colour in zip(others, _OTHER_MODES, strict=False):
        _speedup_line(fig, other.rows, _series_name(other, lang), colour, "dot", lang)
    _speedup_line(fig, projection.rows, _series_name(projection, lang), PROJECTED, "dash", lang)
    _best_and_no_gain(fig, projection.rows, projection.best_gamma, projection.best_speedup, lang)
    layout(fig, t("speedup.projection.title_gpu", lang, gpu=projection.gpu.name), x_title, y_title)
    return fig


_OTHER_MODES = (TAU, BONUS)  # colours of the other execution modes' lines


def _series_name(projection: Projection, lang: str) -> str:
    return t(
        "speedup.projection.series",
        lang,
        mode=mode_words(projection.fixed.mode).text(lang),
        alpha=f"{projection.alpha:.2f}",
        cost=f"{projection.draft_cost:.2f}",
    )


def break_even_paragraph(theory: SpeedupTheory, lang: str = DEFAULT_LANGUAGE) -> str:
    """One plain-text paragraph: when speculation cannot win, with this run's numbers."""
    rows = {row.gamma: row for row in theory.rows}
    shown = sorted({min(rows), theory.best_gamma, max(rows)})
    verify = t("list.separator", lang).join(
        t("speedup.verify_cost", lang, gamma=gamma, cost=f"{rows[gamma].verify_cost:.2f}")
        for gamma in shown
    )
    text = t(
        "speedup.break_even.cost",
        lang,
        cost=f"{theory.draft_cost:.2f}",
        alpha=f"{theory.alpha:.2f}",
    )
    if max(rows[gamma].verify_cost for gamma in shown) > _NEARLY_FREE:
        text += t("speedup.break_even.verify_costly", lang, verify=verify)
    else:
        text += t("speedup.break_even.verify_free", lang, verify=verify)
    if theory.break_even_alpha is None:
        return text + t("speedup.break_even.never", lang)
    return text + t(
        "speedup.break_even.wins" if theory.best_speedup > 1.0 else "speedup.break_even.loses",
        lang,
        alpha=f"{theory.break_even_alpha:.2f}",
        gamma=theory.best_gamma,
        speedup=f"{theory.best_speedup:.2f}",
    )


def tree_chart(lab: TreeLab | None, *, lang: str = DEFAULT_LANGUAGE) -> go.Figure:
    """Predicted speedup against a tree's node budget (log axis), the measured tree runs on it,
    the chain at its γ as a level line, predicted and measured, and the best budget starred."""
    title = t("tree_lab.chart.title", lang)
    x_title, y_title = t("tree_lab.chart.nodes_axis", lang), t("speedup.chart.y", lang)
    if lab is None:
        return empty_chart(title, x_title, y_title, t("tree_lab.chart.empty", lang))
    fig = layout(go.Figure(), title, x_title, y_title)
    rows = sorted(lab.predicted, key=lambda row: row.nodes)
    span = [rows[0].nodes, rows[-1].nodes]
    fig.add_trace(
        go.Scatter(
            name=t("tree_lab.chart.predicted", lang),
            x=[row.nodes for row in rows],
            y=[row.speedup for row in rows],
            mode="lines+markers",
            line={"color": PREDICTED, "width": 3},
            marker={"size": 7},
            customdata=[
                [row.tau, row.verify_cost, row.draft_cost, row.prompt_cost] for row in rows
            ],
            hovertemplate=hover(
                "tree_lab.chart.hover.predicted",
                lang,
                nodes="%{x}",
                speedup="%{y:.2f}",
                tau="%{customdata[0]:.2f}",
                verify="%{customdata[1]:.2f}",
                draft="%{customdata[2]:.2f}",
                prompt="%{customdata[3]:.2f}",
            ),
        )
    )
    fig.add_trace(
        measured_markers(
            t("tree_lab.chart.measured", lang),
            [run.nodes for run in lab.trees],
            [run.speedup for run in lab.trees],
            [[run.tau, run.tokens_per_s] for run in lab.trees],
            hover(
                "tree_lab.chart.hover.measured",
                lang,
                nodes="%{x}",
                speedup="%{y:.2f}",
                tau="%{customdata[0]:.2f}",
                tps="%{customdata[1]:.1f}",
            ),
        )
    )
    chain = t("tree_lab.row.chain", lang, gamma=lab.gamma)
    for value, key, dash in [
        (lab.chain_predicted.speedup, "tree_lab.chart.chain_predicted", "dash"),
        (lab.chain.speedup, "tree_lab.chart.chain_measured", "dot"),
    ]:
        fig.add_trace(
            go.Scatter(
                name=t(key, lang, chain=chain, speedup=f"{value:.2f}"),
                x=span,
                y=[value, value],
                mode="lines",
                line={"color": TAU, "width": 2, "dash": dash},
                hoverinfo="skip",
            )
        )
    fig.add_trace(no_gain_line(span, lang))
    fig.add_trace(
        go.Scatter(
            name=t(
                "tree_lab.chart.best", lang, nodes=lab.best.nodes, speedup=f"{lab.best.speedup:.2f}"
            ),
            x=[lab.best.nodes],
            y=[lab.best.speedup],
            mode="markers",
            # open, so a measured run at the same size shows through it
            marker={"symbol": "star-open", "size": 20, "color": BONUS, "line": {"width": 2}},
            hoverinfo="skip",
        )
    )
    fig.update_xaxes(type="log", tickvals=[row.nodes for row in rows])
    fig.update_yaxes(rangemode="tozero")
    return fig
