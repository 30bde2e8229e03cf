"""Event records -> Plotly figures: where drafts get accepted, what a cycle buys, where time goes.

Pure functions, one figure each, tested by reading the traces back. Figures use transparent
backgrounds and a mid-grey font so they read in Gradio's light and dark themes alike, and the
colours follow the token stream's (Okabe-Ito, safe for colour-blind viewers). Titles, axes and
trace names come from the text catalogue in the language each function is given. A probability in
a hover reads as everywhere else (``numbers.prob``): it is formatted here and handed to Plotly as
``customdata``, since Plotly's own number formats cannot say 0.0031 and 0.63 with one rule.
"""

from __future__ import annotations

import html
import textwrap
from collections.abc import Sequence

import plotly.graph_objects as go

from specviz.core.events import Cycle, Rejection, Step, TokenProb
from specviz.text import DEFAULT_LANGUAGE, t
from specviz.views.numbers import prob

# Okabe-Ito colours, the same hues as assets/specviz.css.
ACCEPTED = "#0072B2"  # blue
REJECTED = "#D55E00"  # vermillion
RESAMPLED = "#E69F00"  # orange
BONUS = "#CC79A7"  # reddish purple
PLAIN = "#7F7F7F"  # grey
DRAFT_TIME = "#56B4E9"  # sky blue
TAU = "#009E73"  # bluish green: τ, tokens per target pass (a rate, not a token's origin)
VERIFY_TIME = "#0072B2"
OVERHEAD_TIME = "#BBBBBB"

# What a point of a per-run chart stands for, named in its trace's meta ({"link": name}) with
# the value in its customdata, so the page's script (assets/linked.js) lights the points of a
# hovered token and moves the player to the cycle of a clicked point without guessing from x:
LINK_CYCLE = "cycle"  # customdata: the cycle's number, 1-based (None: no cycle, the origin)
LINK_POSITION = "position"  # customdata: a draft position, 1-based
LINK_ACCEPTED = "accepted"  # customdata: a count of accepted drafts in one cycle

_FONT = "#8a8f98"  # legible on white and on Gradio's dark background
_GRID = "rgba(138, 143, 152, 0.25)"


def apply_layout(fig: go.Figure, title: str, x_title: str, y_title: str) -> go.Figure:
    """The shared look: title, transparent backgrounds, mid-grey font, axis titles."""
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


def hover(key: str, lang: str, **fields: object) -> str:
    """A hover template from the catalogue's sentence ``key``, without Plotly's side box that
    repeats the trace name (``<extra></extra>``). Fields are Plotly's, e.g. ``"%{y:.2f}"``."""
    return t(key, lang, **fields) + "<extra></extra>"


def reference_line(
    name: str,
    x: Sequence[float],
    y: Sequence[float],
    *,
    dash: str,
    width: float = 1.5,
    hover: bool = False,
) -> go.Scatter:
    """A grey line to compare against (plain decoding, a flat or a linear cost), dashed or dotted."""
    return go.Scatter(
        name=name,
        x=x,
        y=y,
        mode="lines",
        line={"color": PLAIN, "width": width, "dash": dash},
        hoverinfo=None if hover else "skip",
    )


def linked(name: str) -> dict[str, str]:
    """A trace's meta naming what its points' customdata stands for (one of the LINK_* names)."""
    return {"link": name}


def empty_note(fig: go.Figure, text: str) -> None:
    """A note in the middle of an empty chart saying why it is empty."""
    fig.add_annotation(
        text=text, showarrow=False, xref="paper", yref="paper", x=0.5, y=0.5, font={"size": 13}
    )


def placeholder(fig: go.Figure, note: str, width: int = 64) -> go.Figure:
    """An empty chart as a note saying what will appear (wrapped at `width` characters): no axes
    or grid to misread."""
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    # Plotly reads tags in annotation text: the sentence is escaped, then broken with <br>.
    empty_note(fig, "<br>".join(textwrap.wrap(html.escape(note, quote=False), width)))
    return fig


def placeholder_chart(title: str, note: str) -> go.Figure:
    """A chart before its first data: its title, and the note saying what will appear there."""
    return placeholder(apply_layout(go.Figure(), title, "", ""), note)


def empty_chart(title: str, x_title: str, y_title: str, note: str) -> go.Figure:
    """A chart with nothing to show yet: the shared look, its titles, and the note saying why."""
    fig = apply_layout(go.Figure(), title, x_title, y_title)
    empty_note(fig, note)
    return fig


def acceptance_by_position(cycles: Sequence[Cycle], *, lang: str = DEFAULT_LANGUAGE) -> go.Figure:
    """Acceptance rate at draft positions 1..γ: later guesses depend on earlier ones, so it falls."""
    if not cycles:
        return placeholder_chart(
            t("chart.acceptance.title", lang), t("chart.acceptance.placeholder", lang)
        )
    longest_draft = max((cycle.draft_len for cycle in cycles), default=0)
    tested = [0] * longest_draft
    accepted = [0] * longest_draft
    for cycle in cycles:
        for token in cycle.drafted:
            if token.tested:
                tested[token.position - 1] += 1
                accepted[token.position - 1] += token.accepted
    positions = list(range(1, longest_draft + 1))
    rates = [a / t if t else 0.0 for a, t in zip(accepted, tested, strict=True)]
    fig = go.Figure(
        go.Bar(
            name=t("chart.acceptance.series", lang),
            x=positions,
            y=rates,
            marker_color=ACCEPTED,
            text=[f"{a}/{t}" for a, t in zip(accepted, tested, strict=True)],
            textposition="outside",
            customdata=positions,
            meta=linked(LINK_POSITION),
            hovertemplate=hover(
                "chart.acceptance.hover", lang, position="%{x}", counts="%{text}", rate="%{y:.0%}"
            ),
        )
    )
    apply_layout(
        fig,
        t("chart.acceptance.title", lang),
        t("chart.acceptance.x", lang),
        t("chart.acceptance.y", lang),
    )
    fig.update_yaxes(range=[0, 1.15], tickformat=".0%")
    fig.update_xaxes(dtick=1)
    return fig


def accepted_length_histogram(
    cycles: Sequence[Cycle], *, lang: str = DEFAULT_LANGUAGE
) -> go.Figure:
    """How many draft tokens each cycle kept (0..γ): the payoff of one target pass."""
    if not cycles:
        return placeholder_chart(
            t("chart.accepted_length.title", lang), t("chart.accepted_length.placeholder", lang)
        )
    longest_draft = max((cycle.draft_len for cycle in cycles), default=0)
    counts = [0] * (longest_draft + 1)
    for cycle in cycles:
        counts[cycle.accepted_len] += 1
    lengths = list(range(longest_draft + 1))
    fig = go.Figure(
        go.Bar(
            name=t("chart.accepted_length.series", lang),
            x=lengths,
            y=counts,
            customdata=lengths,
            meta=linked(LINK_ACCEPTED),
            marker_color=[
                BONUS if n == longest_draft and n else ACCEPTED for n in range(longest_draft + 1)
            ],
            hovertemplate=hover(
                "chart.accepted_length.hover", lang, cycles="%{y}", accepted="%{x}"
            ),
        )
    )
    apply_layout(
        fig,
        t("chart.accepted_length.title", lang),
        t("chart.accepted_length.x", lang),
        t("chart.accepted_length.y", lang),
    )
    fig.update_xaxes(dtick=1)
    return fig


def tokens_vs_passes(
    cycles: Sequence[Cycle], steps: Sequence[Step] = (), *, lang: str = DEFAULT_LANGUAGE
) -> go.Figure:
    """Cumulative tokens against target forward passes: speculative climbs faster than 1 per pass."""
    if not cycles:  # no line of 0 tokens to read a scale from: say what will appear
        return placeholder_chart(t("chart.tokens.title", lang), t("chart.tokens.placeholder", lang))
    spec_x = [0] + [cycle.totals.target_forwards for cycle in cycles]
    spec_y = [0] + [cycle.totals.new_tokens for cycle in cycles]
    fig = go.Figure(
        go.Scatter(
            name=t("chart.tokens.speculative", lang),
            x=spec_x,
            y=spec_y,
            mode="lines+markers",
            line={"color": ACCEPTED, "width": 3},
            marker={"symbol": "circle", "size": 6},
            selected={"marker": {"size": 13}},  # a hovered token's cycle, large enough to find
            # The origin is no cycle's: it carries none, and a click on it moves nothing.
            customdata=[None] + [cycle.index + 1 for cycle in cycles],
            meta=linked(LINK_CYCLE),
        )
    )
    if steps:
        plain_x = [0] + [step.totals.target_forwards for step in steps]
        plain_y = [0] + [step.totals.new_tokens for step in steps]
        name = t("chart.tokens.plain_measured", lang)
    else:
        # Without a race, plain decoding is still exactly one token per target pass.
        last = max(spec_y[-1], 1)
        plain_x, plain_y = [0, last], [0, last]
        name = t("chart.tokens.plain_ideal", lang)
    fig.add_trace(reference_line(name, plain_x, plain_y, dash="dash", width=2, hover=True))
    apply_layout(
        fig, t("chart.tokens.title", lang), t("chart.tokens.x", lang), t("chart.tokens.y", lang)
    )
    return fig


def time_split(cycles: Sequence[Cycle], *, lang: str = DEFAULT_LANGUAGE) -> go.Figure:
    """Milliseconds per cycle spent drafting, verifying, and on everything else."""
    if not cycles:
        return placeholder_chart(t("chart.time.title", lang), t("chart.time.placeholder", lang))
    x = [cycle.index + 1 for cycle in cycles]  # the cycle's number: its customdata too
    parts = [
        (t("chart.time.draft", lang), DRAFT_TIME, [c.timing.draft_s * 1000 for c in cycles]),
        (t("chart.time.verify", lang), VERIFY_TIME, [c.timing.verify_s * 1000 for c in cycles]),
        (
            t("chart.time.overhead", lang),
            OVERHEAD_TIME,
            [c.timing.overhead_s * 1000 for c in cycles],
        ),
    ]
    fig = go.Figure(
        [
            go.Bar(
                name=name,
                x=x,
                y=values,
                marker_color=colour,
                customdata=x,
                meta=linked(LINK_CYCLE),
                hovertemplate=hover(
                    "chart.time.hover", lang, cycle="%{x}", part=name, ms="%{y:.0f}"
                ),
            )
            for name, colour, values in parts
        ]
    )
    apply_layout(
        fig,
        t("chart.time.title", lang),
        t("chart.time.x", lang),
        t("chart.axis.milliseconds", lang),
    )
    fig.update_layout(barmode="stack")
    return fig


def token_label(text: str) -> str:
    """A token as an axis label: whitespace spelled out, markup escaped (Plotly reads tags)."""
    spelled = text.replace("\n", "↵").replace("\t", "⇥").replace(" ", "␣") or "∅"
    # Tags are what Plotly interprets; it shows entities such as &quot; literally, so quotes
    # stay as they are.
    return html.escape(spelled, quote=False)


def rejection_chart(rejection: Rejection | None, *, lang: str = DEFAULT_LANGUAGE) -> go.Figure:
    """p, q and the residual norm(max(0, p − q)) over the top tokens at the rejected position."""
    if rejection is None:
        return placeholder_chart(
            t("chart.rejection.empty_title", lang), t("chart.rejection.none", lang)
        )
    fig = go.Figure()
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
    series = [
        (t("chart.series.p_target", lang), ACCEPTED, p_of),
        (t("chart.series.q_draft", lang), REJECTED, q_of),
    ]
    if rejection.top_residual:
        series.append((t("chart.rejection.residual", lang), RESAMPLED, r_of))
    for name, colour, values in series:
        heights = [values.get(token_id, 0.0) for token_id in ids]
        fig.add_trace(
            go.Bar(
                name=name,
                x=labels,
                y=heights,
                marker_color=colour,
                # A token outside a distribution's recorded top entries: a 0 bar, "—" on hover.
                customdata=[prob(values.get(token_id)) for token_id in ids],
                hovertemplate=hover(
                    "chart.hover.value", lang, label="%{x}", name=name, value="%{customdata}"
                ),
            )
        )
    apply_layout(
        fig,
        t("chart.rejection.title", lang, position=rejection.position),
        t("chart.rejection.x", lang),
        t("chart.axis.probability", lang),
    )
    fig.update_layout(barmode="group")
    return fig
