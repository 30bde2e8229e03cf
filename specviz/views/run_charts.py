"""Event records -> Plotly figures: where drafts get accepted, what a cycle buys, where time goes.

Pure functions, one figure each, tested by reading the traces back. Figures use transparent
backgrounds and a mid-grey font so they read in Gradio's light and dark themes alike, and the
colours follow the token stream's (Okabe-Ito, safe for colour-blind viewers).
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import plotly.graph_objects as go

from specviz.core.events import Cycle, Rejection, Step, TokenProb

# Okabe-Ito colours, the same hues as assets/specviz.css.
ACCEPTED = "#0072B2"  # blue
REJECTED = "#D55E00"  # vermillion
RESAMPLED = "#E69F00"  # orange
BONUS = "#CC79A7"  # reddish purple
PLAIN = "#7F7F7F"  # grey
DRAFT_TIME = "#56B4E9"  # sky blue
VERIFY_TIME = "#0072B2"
OVERHEAD_TIME = "#BBBBBB"

_FONT = "#8a8f98"  # legible on white and on Gradio's dark background
_GRID = "rgba(138, 143, 152, 0.25)"


def apply_layout(fig: go.Figure, title: str, x_title: str, y_title: str) -> go.Figure:
    fig.update_layout(
        title={"text": title, "x": 0.01, "font": {"size": 15}},
        paper_bgcolor="rgba(0,0,0,0)",
        plot_bgcolor="rgba(0,0,0,0)",
        font={"color": _FONT, "size": 12},
        margin={"l": 50, "r": 15, "t": 45, "b": 45},
        height=300,
        legend={"orientation": "h", "y": -0.25, "x": 0},
        bargap=0.15,
    )
    fig.update_xaxes(title_text=x_title, gridcolor=_GRID, zerolinecolor=_GRID)
    fig.update_yaxes(title_text=y_title, gridcolor=_GRID, zerolinecolor=_GRID)
    return fig


def empty_note(fig: go.Figure, text: str) -> None:
    fig.add_annotation(
        text=text, showarrow=False, xref="paper", yref="paper", x=0.5, y=0.5, font={"size": 13}
    )


def acceptance_by_position(cycles: Sequence[Cycle]) -> go.Figure:
    """Acceptance rate at draft positions 1..γ: later guesses depend on earlier ones, so it falls."""
    max_gamma = max((cycle.gamma for cycle in cycles), default=0)
    tested = [0] * max_gamma
    accepted = [0] * max_gamma
    for cycle in cycles:
        for token in cycle.drafted:
            if token.tested:
                tested[token.position - 1] += 1
                accepted[token.position - 1] += token.accepted
    positions = list(range(1, max_gamma + 1))
    rates = [a / t if t else 0.0 for a, t in zip(accepted, tested, strict=True)]
    fig = go.Figure(
        go.Bar(
            name="acceptance rate",
            x=positions,
            y=rates,
            marker_color=ACCEPTED,
            text=[f"{a}/{t}" for a, t in zip(accepted, tested, strict=True)],
            textposition="outside",
            hovertemplate="draft position %{x}<br>accepted %{text}<br>rate %{y:.0%}<extra></extra>",
        )
    )
    apply_layout(fig, "Acceptance rate by draft position", "draft position", "accepted / tested")
    fig.update_yaxes(range=[0, 1.15], tickformat=".0%")
    fig.update_xaxes(dtick=1)
    if not cycles:
        empty_note(fig, "no cycles yet")
    return fig


def accepted_length_histogram(cycles: Sequence[Cycle]) -> go.Figure:
    """How many draft tokens each cycle kept (0..γ): the payoff of one target pass."""
    max_gamma = max((cycle.gamma for cycle in cycles), default=0)
    counts = [0] * (max_gamma + 1)
    for cycle in cycles:
        counts[cycle.accepted_len] += 1
    fig = go.Figure(
        go.Bar(
            name="cycles",
            x=list(range(max_gamma + 1)),
            y=counts,
            marker_color=[
                BONUS if n == max_gamma and n else ACCEPTED for n in range(max_gamma + 1)
            ],
            hovertemplate="%{y} cycles accepted %{x} draft tokens<extra></extra>",
        )
    )
    apply_layout(fig, "Accepted draft tokens per cycle", "accepted tokens in the cycle", "cycles")
    fig.update_xaxes(dtick=1)
    if not cycles:
        empty_note(fig, "no cycles yet")
    return fig


def tokens_vs_passes(cycles: Sequence[Cycle], steps: Sequence[Step] = ()) -> go.Figure:
    """Cumulative tokens against target forward passes: speculative climbs faster than 1 per pass."""
    spec_x = [0] + [cycle.totals.target_forwards for cycle in cycles]
    spec_y = [0] + [cycle.totals.new_tokens for cycle in cycles]
    fig = go.Figure(
        go.Scatter(
            name="speculative",
            x=spec_x,
            y=spec_y,
            mode="lines+markers",
            line={"color": ACCEPTED, "width": 3},
            marker={"symbol": "circle", "size": 6},
        )
    )
    if steps:
        plain_x = [0] + [step.totals.target_forwards for step in steps]
        plain_y = [0] + [step.totals.new_tokens for step in steps]
        name = "plain decoding (measured)"
    else:
        # Without a race, plain decoding is still exactly one token per target pass.
        last = max(spec_y[-1], 1)
        plain_x, plain_y = [0, last], [0, last]
        name = "plain decoding (1 token per pass)"
    fig.add_trace(
        go.Scatter(
            name=name,
            x=plain_x,
            y=plain_y,
            mode="lines",
            line={"color": PLAIN, "width": 2, "dash": "dash"},
        )
    )
    apply_layout(
        fig, "Tokens vs target forward passes", "target forward passes", "tokens generated"
    )
    return fig


def time_split(cycles: Sequence[Cycle]) -> go.Figure:
    """Milliseconds per cycle spent drafting, verifying, and on everything else."""
    x = [cycle.index + 1 for cycle in cycles]
    parts = [
        ("draft", DRAFT_TIME, [cycle.timing.draft_s * 1000 for cycle in cycles]),
        ("verify", VERIFY_TIME, [cycle.timing.verify_s * 1000 for cycle in cycles]),
        ("overhead", OVERHEAD_TIME, [cycle.timing.overhead_s * 1000 for cycle in cycles]),
    ]
    fig = go.Figure(
        [
            go.Bar(
                name=name,
                x=x,
                y=values,
                marker_color=colour,
                hovertemplate=f"cycle %{{x}}: {name} %{{y:.0f}} ms<extra></extra>",
            )
            for name, colour, values in parts
        ]
    )
    apply_layout(fig, "Time per cycle", "cycle", "milliseconds")
    fig.update_layout(barmode="stack")
    if not cycles:
        empty_note(fig, "no cycles yet")
    return fig


def token_label(text: str) -> str:
    """A token as an axis label: whitespace spelled out, markup escaped (Plotly reads tags)."""
    spelled = text.replace("\n", "↵").replace("\t", "⇥").replace(" ", "␣") or "∅"
    # Tags are what Plotly interprets; it shows entities such as &quot; literally, so quotes
    # stay as they are.
    return html.escape(spelled, quote=False)


def rejection_chart(rejection: Rejection | None) -> go.Figure:
    """p, q and the residual norm(max(0, p − q)) over the top tokens at the rejected position."""
    fig = go.Figure()
    if rejection is None:
        apply_layout(fig, "At a rejection: p, q and the residual", "token", "probability")
        empty_note(fig, "no rejection yet")
        return fig
    # Union of the top tokens of all three distributions, ordered by the target's probability.
    by_id: dict[int, TokenProb] = {}
    for entry in (*rejection.top_p, *rejection.top_q, *rejection.top_residual):
        by_id.setdefault(entry.token_id, entry)
    p_of = {entry.token_id: entry.prob for entry in rejection.top_p}
    q_of = {entry.token_id: entry.prob for entry in rejection.top_q}
    r_of = {entry.token_id: entry.prob for entry in rejection.top_residual}
    ids = sorted(by_id, key=lambda token_id: -p_of.get(token_id, 0.0))[:10]
    labels = []
    for token_id in ids:
        label = token_label(by_id[token_id].text)
        if token_id == rejection.rejected_token.token_id:
            label += " ✗"
        if token_id == rejection.resampled_token.token_id:
            label += " ↻"
        labels.append(label)
    series = [("p (target)", ACCEPTED, p_of), ("q (draft)", REJECTED, q_of)]
    if rejection.top_residual:
        series.append(("residual max(0, p − q), normalised", RESAMPLED, r_of))
    for name, colour, values in series:
        fig.add_trace(
            go.Bar(
                name=name,
                x=labels,
                y=[values.get(token_id, 0.0) for token_id in ids],
                marker_color=colour,
                hovertemplate=f"%{{x}}<br>{name} = %{{y:.3f}}<extra></extra>",
            )
        )
    apply_layout(
        fig,
        f"Rejection at draft {rejection.position}: p, q and the residual",
        "token (✗ rejected guess, ↻ replacement)",
        "probability",
    )
    fig.update_layout(barmode="group")
    return fig
