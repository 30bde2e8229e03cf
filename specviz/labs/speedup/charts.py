"""Speedup-lab records -> Plotly figures, and the paragraph that reads the theory chart aloud.

Three figures: the speedup model with the measured speedups overlaid; the verification-cost curve
as measured on this device; and the GPU projection, which is a model and is titled as one so it is
never mistaken for, or drawn with, a measurement.
"""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from specviz.labs.speedup.cost_curve import CostCurve
from specviz.labs.speedup.gpu_projection import Projection
from specviz.labs.speedup.theory import MeasuredRun, SpeedupRow, SpeedupTheory
from specviz.views.run_charts import (
    ACCEPTED,
    BONUS,
    DRAFT_TIME,
    PLAIN,
    REJECTED,
    RESAMPLED,
    empty_note,
)
from specviz.views.run_charts import apply_layout as layout

PREDICTED = ACCEPTED
MEASURED = REJECTED
PROJECTED = RESAMPLED
PROJECTION_TITLE = "Projection (roofline model, not measured)"
_NEARLY_FREE = 1.1  # v(γ) up to this reads as "nearly free" in the paragraph


def _speedup_line(
    fig: go.Figure, rows: Sequence[SpeedupRow], name: str, colour: str, dash: str
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
                [row.tau, row.verify_cost, " (extrapolated)" if row.verify_extrapolated else ""]
                for row in rows
            ],
            hovertemplate="γ = %{x}: %{y:.2f}×<br>τ = %{customdata[0]:.2f} tokens per pass"
            "<br>v(γ) = %{customdata[1]:.2f}%{customdata[2]}<extra></extra>",
        )
    )


def _best_and_no_gain(
    fig: go.Figure, rows: Sequence[SpeedupRow], best_gamma: int, best: float
) -> None:
    gammas = [row.gamma for row in rows]
    fig.add_trace(
        go.Scatter(
            name="no gain (1×)",
            x=[min(gammas), max(gammas)],
            y=[1.0, 1.0],
            mode="lines",
            line={"color": PLAIN, "width": 1.5, "dash": "dot"},
            hoverinfo="skip",
        )
    )
    fig.add_trace(
        go.Scatter(
            name=f"best γ = {best_gamma} ({best:.2f}×)",
            x=[best_gamma],
            y=[best],
            mode="markers",
            marker={"symbol": "star", "size": 16, "color": BONUS},
            hovertemplate="best γ = %{x}: %{y:.2f}×<extra></extra>",
        )
    )
    fig.update_yaxes(rangemode="tozero")
    fig.update_xaxes(dtick=1)


def theory_chart(theory: SpeedupTheory | None, measured: Sequence[MeasuredRun] = ()) -> go.Figure:
    """Predicted speedup and τ against γ from the measured α, c and v(γ); measured runs on top."""
    fig = go.Figure()
    layout(
        fig, "Speedup: theory vs measurement", "γ (tokens drafted per cycle)", "speedup over plain"
    )
    if theory is None or not theory.rows:
        empty_note(fig, "run the lab to measure α, c and the verification cost")
        return fig
    rows = theory.rows
    name = f"predicted (α = {theory.alpha:.2f}, c = {theory.draft_cost:.2f})"
    if any(row.verify_extrapolated for row in rows):
        name += ", open: v extrapolated"
    _speedup_line(fig, rows, name, PREDICTED, "solid")
    fig.add_trace(
        go.Scatter(
            name="predicted τ (right axis)",
            x=[row.gamma for row in rows],
            y=[row.tau for row in rows],
            yaxis="y2",
            mode="lines",
            line={"color": DRAFT_TIME, "width": 2, "dash": "dot"},
            hovertemplate="γ = %{x}: τ = %{y:.2f} tokens per pass<extra></extra>",
        )
    )
    if measured:
        fig.add_trace(
            go.Scatter(
                name="measured speedup",
                x=[run.gamma for run in measured],
                y=[run.speedup for run in measured],
                mode="markers",
                marker={"symbol": "diamond", "size": 12, "color": MEASURED},
                customdata=[[run.alpha, run.tau, run.tokens_per_s] for run in measured],
                hovertemplate="measured at γ = %{x}: %{y:.2f}×<br>α = %{customdata[0]:.2f}, "
                "τ = %{customdata[1]:.2f}, %{customdata[2]:.1f} tokens/s<extra></extra>",
            )
        )
        fig.add_trace(
            go.Scatter(
                name="measured τ (right axis)",
                x=[run.gamma for run in measured],
                y=[run.tau for run in measured],
                yaxis="y2",
                mode="markers",
                marker={"symbol": "circle-open", "size": 10, "color": MEASURED},
                hovertemplate="measured at γ = %{x}: τ = %{y:.2f}<extra></extra>",
            )
        )
    _best_and_no_gain(fig, rows, theory.best_gamma, theory.best_speedup)
    fig.update_layout(
        yaxis2={
            "title": {"text": "τ (tokens per target pass)"},
            "overlaying": "y",
            "side": "right",
            "rangemode": "tozero",
            "showgrid": False,
            "tickmode": "auto",
        },
        margin={"r": 55},
        height=360,
    )
    return fig


def cost_curve_chart(curve: CostCurve | None) -> go.Figure:
    """Median forward time for 1, 2, ... new tokens (bars: fastest and slowest run), measured."""
    fig = go.Figure()
    title = "Verification cost (measured)"
    if curve is None or not curve.points:
        layout(fig, title, "new tokens in one target forward", "milliseconds")
        empty_note(fig, "no cost curve measured yet")
        return fig
    points = curve.points
    sizes = [point.new_tokens for point in points]
    median_ms = [point.median_s * 1000 for point in points]
    one_ms = median_ms[0]
    references = [
        ("reference: flat (verification free)", [one_ms] * len(sizes)),
        ("reference: k × one token (no gain from batching)", [one_ms * k for k in sizes]),
    ]
    for name, values in references:
        fig.add_trace(
            go.Scatter(
                name=name,
                x=sizes,
                y=values,
                mode="lines",
                line={"color": PLAIN, "width": 1.5, "dash": "dot" if "flat" in name else "dash"},
                hoverinfo="skip",
            )
        )
    fig.add_trace(
        go.Scatter(
            name=f"measured on {curve.device} (median)",
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
            hovertemplate="%{x} new tokens: %{y:.1f} ms<br>%{customdata:.2f}× one token"
            "<extra></extra>",
        )
    )
    if not curve.complete:
        title += f", time budget reached after {sizes[-1]} tokens"
    layout(fig, title, "new tokens in one target forward", "milliseconds")
    fig.update_xaxes(dtick=1)
    # Scaled to the measurement: the k × one-token reference may leave the chart, showing its slope.
    highest = max(max(point.runs_s) for point in points) * 1000
    fig.update_yaxes(range=[0, 1.4 * highest])
    return fig


def projection_chart(projection: Projection | None) -> go.Figure:
    """Projected speedup against γ on a chosen GPU: a roofline model, drawn dashed, never measured."""
    fig = go.Figure()
    if projection is None or not projection.rows:
        layout(fig, PROJECTION_TITLE, "γ (tokens drafted per cycle)", "projected speedup")
        empty_note(fig, "choose a GPU and run the speedup lab for α")
        return fig
    name = f"projected (α = {projection.alpha:.2f}, c = {projection.draft_cost:.2f})"
    _speedup_line(fig, projection.rows, name, PROJECTED, "dash")
    _best_and_no_gain(fig, projection.rows, projection.best_gamma, projection.best_speedup)
    layout(
        fig,
        f"{PROJECTION_TITLE}: {projection.gpu.name}",
        "γ (tokens drafted per cycle)",
        "projected speedup",
    )
    return fig


def break_even_paragraph(theory: SpeedupTheory) -> str:
    """One plain-text paragraph: when speculation cannot win, with this run's numbers."""
    rows = {row.gamma: row for row in theory.rows}
    shown = sorted({min(rows), theory.best_gamma, max(rows)})
    verify = ", ".join(f"v({gamma}) = {rows[gamma].verify_cost:.2f}" for gamma in shown)
    text = (
        f"Each drafted token costs c = {theory.draft_cost:.2f} of a target step and saves at most "
        f"α = {theory.alpha:.2f} of one (it is kept with probability α, and only if every earlier "
        "guess was kept), so when α is below c no γ can win, even if verification were free. "
    )
    if max(rows[gamma].verify_cost for gamma in shown) > _NEARLY_FREE:
        text += (
            "Verification is not free on this hardware either: one forward over γ + 1 tokens "
            f"costs v(γ) one-token forwards ({verify}) where Leviathan et al. assume v = 1, "
            "which raises the bar further. "
        )
    else:
        text += (
            f"Verification is nearly free here ({verify}): one forward over γ + 1 tokens costs "
            "about as much as over one, as Leviathan et al. assume, because the weights are read "
            "once either way. "
        )
    if theory.break_even_alpha is None:
        return text + "With these costs even a draft that is always right (α = 1) cannot win."
    verdict = "wins" if theory.best_speedup > 1.0 else "does not win"
    return text + (
        f"With these costs speculation needs α ≥ {theory.break_even_alpha:.2f} to beat plain "
        f"decoding at some γ; at the measured α it {verdict}: the best γ is {theory.best_gamma}, "
        f"predicted {theory.best_speedup:.2f}×."
    )
