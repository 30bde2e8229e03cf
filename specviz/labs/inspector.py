"""The probability inspector ("the dice roll"): one cycle's decisions, drafted position by position.

Pure views over a finished ``Cycle``: a table (HTML, and plain text for the CLI) and a Plotly figure
with one panel per drafted position, showing the draft's q and the target's p over their most
probable tokens, the number min(1, p/q) the token had to beat and the u that was drawn. At the
rejected position the residual norm(max(0, p − q)) and the token drawn from it are added. Token text
is model output, so it is escaped everywhere (``render.esc`` for HTML, ``charts.token_label`` for axes).
"""

from __future__ import annotations

import math

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from specviz.core.events import (
    Cycle,
    DraftToken,
    EmittedToken,
    Origin,
    TokenProb,
    scaled_confidence,
)
from specviz.views.run_charts import (
    ACCEPTED,
    BONUS,
    REJECTED,
    RESAMPLED,
    apply_layout,
    empty_note,
    token_label,
)
from specviz.views.run_html import esc, num, shown

BARS_PER_POSITION = 8
_UNTESTED_OPACITY = 0.35

EXPLANATION = (
    "Each drafted token x was sampled by the draft from q. The target then scored it: p(x). "
    "The verifier draws u uniformly from [0, 1) and **accepts x if u < min(1, p(x)/q(x))**: a token "
    "the target likes at least as much as the draft always passes; one the draft over-rates passes "
    "only sometimes (Leviathan et al. 2023, Algorithm 1). At the first rejection the replacement is "
    "drawn from the **residual** norm(max(0, p − q)), the probability the draft under-supplied, which "
    "is exactly what makes every emitted token follow p. Later drafts are never tested. In greedy "
    "mode (temperature 0) there is no dice roll: a draft is kept while it is the target's top choice."
)


def decision_text(cycle: Cycle, token: DraftToken) -> str:
    """One sentence saying why this drafted token was accepted, rejected or never tested."""
    if not token.tested:
        return "not tested: an earlier draft was rejected, so this guess was discarded"
    if cycle.greedy:
        target_top = token.top_p[0].text if token.top_p else "?"
        if token.accepted:
            return "the target's top choice too → accepted"
        return f"the target's top choice is {_quote(target_top)} → rejected"
    u = token.uniform if token.uniform is not None else float("nan")
    relation = "<" if token.accepted else "≥"
    verdict = "accepted" if token.accepted else "rejected"
    return f"u = {u:.3f} {relation} min(1, p/q) = {token.accept_prob:.3f} → {verdict}"


def extra_token(cycle: Cycle) -> EmittedToken | None:
    """The resampled or bonus token that closed the cycle (None if the run stopped before it)."""
    last = cycle.emitted[-1] if cycle.emitted else None
    return last if last is not None and last.origin is not Origin.ACCEPTED else None


def extra_text(cycle: Cycle) -> str:
    """Where the cycle's last token came from, in words."""
    extra = extra_token(cycle)
    if extra is None:
        return "The run stopped inside this cycle, so no token was added after the drafts."
    if extra.origin is Origin.BONUS:
        return (
            f"All {cycle.gamma} drafts passed, so the target's own next distribution p gave a "
            f"bonus token {_quote(extra.text)} (p = {extra.prob:.3f})."
        )
    if cycle.greedy:
        return (
            f"Draft {cycle.accepted_len + 1} was rejected; the target's top choice "
            f"{_quote(extra.text)} (p = {extra.prob:.3f}) took its place."
        )
    return (
        f"Draft {cycle.accepted_len + 1} was rejected; {_quote(extra.text)} was drawn from "
        f"the residual norm(max(0, p − q)) with probability {extra.prob:.3f}."
    )


def draft_end_text(cycle: Cycle) -> str:
    """Why the draft stopped where it did, in words ('' when it simply reached γ)."""
    if not cycle.drafted or cycle.draft_end == "gamma":
        return ""
    n = len(cycle.drafted)
    if cycle.draft_end == "budget":
        return f"The draft stopped after {n}: only that many tokens were left in the budget."
    last = cycle.drafted[-1]
    if cycle.draft_end == "eos":
        return (
            f"The draft stopped after {n}: its last guess ends the text, so nothing after it "
            "could be kept."
        )
    if cycle.draft_end == "confidence":
        return (
            f"The draft stopped itself after {n}: it gave its last guess "
            f"{_quote(last.text)} only q = {last.q_draft:.2f} (the per-token confidence stop)."
        )
    scale = cycle.draft_doubt_scale
    factors = [
        scaled_confidence(token.top_q[0].prob, scale) for token in cycle.drafted if token.top_q
    ]
    product = " × ".join(f"{factor:.2f}" for factor in factors)
    if scale < 1.0:
        return (
            f"The draft stopped itself after {n}: its estimate that every guess is right, "
            f"{product} = {math.prod(factors):.2f}, fell below the cumulative stop. Each factor "
            f"is 1 − {scale:.2f} × (1 − its top probability): earlier in this run its guesses "
            "were right more often than it expected, so its doubts count for less."
        )
    return (
        f"The draft stopped itself after {n}: its own estimate that every guess is right, "
        f"{product} = {math.prod(factors):.2f}, fell below the cumulative stop."
    )


def inspector_lines(cycle: Cycle) -> list[str]:
    """The inspector as plain text, one line per drafted position: what the CLI prints."""
    lines = [
        f"cycle {cycle.index + 1}: γ = {cycle.gamma}, {cycle.accepted_len} accepted"
        f"{' (greedy)' if cycle.greedy else ''}"
    ]
    for token in cycle.drafted:
        lines.append(
            f"  draft {token.position} {_quote(token.text):>14}  q {token.q_draft:.3f}  "
            f"p {token.p_target:.3f}  {decision_text(cycle, token)}"
        )
        for name, top in (("q", token.top_q), ("p", token.top_p)):
            entries = ", ".join(f"{_quote(e.text)} {e.prob:.3f}" for e in top[:5])
            lines.append(f"      top {name}: {entries}")
    if ended := draft_end_text(cycle):
        lines.append(f"  {ended}")
    lines.append(f"  {extra_text(cycle)}")
    if cycle.rejection is not None and cycle.rejection.top_residual:
        entries = ", ".join(
            f"{_quote(e.text)} {e.prob:.3f}" for e in cycle.rejection.top_residual[:5]
        )
        lines.append(f"      top residual: {entries}")
    return lines


def inspector_html(cycle: Cycle | None, cycle_count: int = 0) -> str:
    """A table of the cycle's decisions: token, q, p, p/q, min(1, p/q), u and the verdict."""
    if cycle is None:
        return (
            '<div class="sv-inspect"><div class="sv-placeholder">Run or Step on the Live run '
            "tab first, then pick a cycle here (or click a token in the stream).</div></div>"
        )
    head = (
        f'<div class="sv-inspect-head"><b>Cycle {cycle.index + 1}</b>'
        f"{f' of {cycle_count}' if cycle_count else ''} · γ = {cycle.gamma} drafted · "
        f"{cycle.accepted_len} accepted{' · greedy' if cycle.greedy else ''}</div>"
    )
    rows = []
    for token in cycle.drafted:
        ratio = token.p_target / token.q_draft if token.q_draft > 0 else float("inf")
        rows.append(
            f'<tr class="sv-row-{token.verdict}" data-pos="{token.position}">'
            f"<td>{token.position}</td>"
            f'<td class="sv-inspect-tok"><span class="sv-tok sv-{token.verdict}">'
            f"{shown(token.text)}</span></td>"
            f"<td>{num(token.q_draft)}</td><td>{num(token.p_target)}</td>"
            f"<td>{'—' if cycle.greedy else num(ratio)}</td>"
            f"<td>{'—' if cycle.greedy else num(token.accept_prob)}</td>"
            f"<td>{num(token.uniform)}</td>"
            f"<td>{esc(decision_text(cycle, token))}</td></tr>"
        )
    table = (
        '<table class="sv-inspect-table"><thead><tr><th>draft</th><th>token x</th>'
        "<th>q(x)</th><th>p(x)</th><th>p/q</th><th>min(1, p/q)</th><th>u</th>"
        f"<th>decision</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )
    extra = extra_token(cycle)
    extra_css = f" sv-foot-{extra.origin.value}" if extra is not None else ""
    foot = f'<div class="sv-inspect-foot{extra_css}">{esc(extra_text(cycle))}</div>'
    if ended := draft_end_text(cycle):
        foot = f'<div class="sv-inspect-note">{esc(ended)}</div>{foot}'
    return f'<div class="sv-inspect" data-cycle="{cycle.index + 1}">{head}{table}{foot}</div>'


def inspector_figure(cycle: Cycle | None) -> go.Figure:
    """One panel per drafted position: q and p over the top tokens, the drafted token marked."""
    if cycle is None or not cycle.drafted:
        fig = apply_layout(
            go.Figure(), "The dice roll, position by position", "token", "probability"
        )
        empty_note(fig, "no cycle selected")
        return fig
    titles = [_panel_title(cycle, token) for token in cycle.drafted]
    fig = make_subplots(
        rows=len(cycle.drafted), cols=1, subplot_titles=titles, vertical_spacing=0.28 / len(titles)
    )
    for row, token in enumerate(cycle.drafted, start=1):
        _add_position(fig, cycle, token, row)
    apply_layout(
        fig, f"Cycle {cycle.index + 1}: q (draft) and p (target) at each drafted position", "", ""
    )
    height = 140 + 210 * len(cycle.drafted)
    plot_px = height - 140  # the plotting area between the margins below
    fig.update_layout(
        height=height,
        barmode="group",
        # Above the first panel's title: paper coordinates, so offset by pixels / plot height.
        legend={"orientation": "h", "y": 1 + 34 / plot_px, "yanchor": "bottom", "x": 0},
        margin={"t": 110, "b": 30},
        # The title at the very top, clear of the legend below it.
        title={"yref": "container", "y": 1.0, "yanchor": "top", "pad": {"t": 12}},
    )
    fig.update_annotations(font_size=12)
    fig.update_yaxes(rangemode="tozero")
    return fig


def _panel_title(cycle: Cycle, token: DraftToken) -> str:
    # Plotly reads tags in titles: the token goes through token_label, the sentence through esc.
    return f"draft {token.position}: <b>{token_label(token.text)}</b> — {esc(decision_text(cycle, token))}"


def _add_position(fig: go.Figure, cycle: Cycle, token: DraftToken, row: int) -> None:
    rejection = (
        cycle.rejection if cycle.rejection and cycle.rejection.position == token.position else None
    )
    residual = rejection.top_residual if rejection is not None else ()
    chosen = {token.token_id: TokenProb(token.token_id, token.text, 0.0)}
    for entry in (*token.top_p, *token.top_q, *residual):
        chosen.setdefault(entry.token_id, entry)
    q_of = {entry.token_id: entry.prob for entry in token.top_q} | {token.token_id: token.q_draft}
    p_of = {entry.token_id: entry.prob for entry in token.top_p} | {token.token_id: token.p_target}
    r_of = {entry.token_id: entry.prob for entry in residual}
    ids = sorted(chosen, key=lambda i: -max(p_of.get(i, 0.0), q_of.get(i, 0.0), r_of.get(i, 0.0)))
    ids = ids[:BARS_PER_POSITION]
    if token.token_id not in ids:
        ids[-1] = token.token_id
    replacement = rejection.resampled_token.token_id if rejection is not None else None
    labels = []
    for token_id in ids:
        label = token_label(chosen[token_id].text)
        if token_id == token.token_id:
            label = f"▶ {label}"
        if token_id == replacement:
            label += " ↻"
        labels.append(label)
    opacity = 1.0 if token.tested else _UNTESTED_OPACITY
    series = [("q (draft)", REJECTED, q_of), ("p (target)", ACCEPTED, p_of)]
    if residual:
        series.append(("residual norm(max(0, p − q))", RESAMPLED, r_of))
    for name, colour, values in series:
        # A token outside a distribution's top entries has a small, unrecorded probability: 0 bar.
        fig.add_trace(
            go.Bar(
                name=name,
                x=labels,
                y=[values.get(token_id, 0.0) for token_id in ids],
                marker={
                    "color": colour,
                    "opacity": opacity,
                    "line": {
                        "color": [BONUS if i == token.token_id else colour for i in ids],
                        "width": [3 if i == token.token_id else 0 for i in ids],
                    },
                },
                legendgroup=name,
                showlegend=row == 1 or (name.startswith("residual") and bool(residual)),
                hovertemplate=f"%{{x}}<br>{name} = %{{y:.4f}}<extra></extra>",
            ),
            row=row,
            col=1,
        )


def _quote(text: str) -> str:
    spelled = text.replace("\n", "\\n").replace("\t", "\\t")
    return f"“{spelled}”"
