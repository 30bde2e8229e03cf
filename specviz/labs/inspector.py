"""The probability inspector ("the dice roll"): one cycle's decisions, drafted position by position.

Pure views over a finished ``Cycle``: a table (HTML, and plain text for the CLI) and a Plotly figure
with one panel per drafted position, showing the draft's q and the target's p over their most
probable tokens, the number min(1, p/q) the token had to beat and the u that was drawn. At the
rejected position the residual norm(max(0, p − q)) and the token drawn from it are added. Token text
is model output, so it is escaped everywhere (``esc`` and ``t_html`` for HTML, ``token_label`` for
axes); the sentences come from the text catalogue in the language each function is given. Each
drafted token's verdict is the cards' and the tooltips' sentence (``views.verdicts``), and every
probability reads as ``views.numbers.prob`` writes it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from specviz.core.events import (
    Cycle,
    DraftToken,
    EmittedToken,
    Origin,
    TokenProb,
    TreeRecord,
)
from specviz.drafters.registry import Drafts, drafter_label, find_drafter
from specviz.text import DEFAULT_LANGUAGE, Html, t, t_html
from specviz.views.draft_length import cumulative_factors
from specviz.views.numbers import prob, ratio
from specviz.views.run_charts import (
    ACCEPTED,
    BONUS,
    REJECTED,
    RESAMPLED,
    apply_layout,
    empty_chart,
    hover,
    token_label,
)
from specviz.views.token_text import esc, quoted, shown, tip_name
from specviz.views.verdicts import (
    accept_text,
    decided_by_path,
    dice_numbers,
    draft_sentence,
    has_dice_roll,
    math_text,
)

BARS_PER_POSITION = 8
_UNTESTED_OPACITY = 0.35


def explanation(lang: str = DEFAULT_LANGUAGE) -> str:
    """The Markdown paragraph above the inspector: the acceptance rule and the residual."""
    return t("inspector.explanation", lang)


def extra_token(cycle: Cycle) -> EmittedToken | None:
    """The resampled or bonus token that closed the cycle (None if the run stopped before it)."""
    last = cycle.emitted[-1] if cycle.emitted else None
    return last if last is not None and last.origin is not Origin.ACCEPTED else None


def extra_text(cycle: Cycle, lang: str = DEFAULT_LANGUAGE) -> str:
    """Where the cycle's last token came from, in words."""
    extra = extra_token(cycle)
    if extra is None:
        return t("inspector.extra.none", lang)
    token, chance = tip_name(extra.text, extra.special), prob(extra.prob)
    if extra.origin is Origin.BONUS:
        return t("inspector.extra.bonus", lang, gamma=cycle.draft_len, token=token, prob=chance)
    key = "inspector.extra.greedy" if cycle.greedy else "inspector.extra.residual"
    return t(key, lang, position=cycle.accepted_len + 1, token=token, prob=chance)


# Where the drafts and their q come from, by how the cycle's drafter drafts (its registry entry).
_DRAFTS_WORDS = {
    Drafts.WITH_DRAFT_MODEL: "inspector.drafts.draft_model",
    Drafts.WITH_TARGET_LAYERS: "inspector.drafts.target_layers",
    Drafts.WITH_TARGET_HEADS: "inspector.drafts.target_heads",
    Drafts.BY_RULE: "inspector.drafts.rule",
    Drafts.BY_TARGET_WINDOW: "inspector.drafts.target_window",
}


def drafter_text(cycle: Cycle, lang: str = DEFAULT_LANGUAGE) -> str:
    """Who drafted the cycle and what its q means ('' for a record that names no drafter)."""
    if not cycle.drafter:
        return ""
    entry = find_drafter(cycle.drafter)
    drafter = drafter_label(cycle.drafter, lang)
    how = _DRAFTS_WORDS.get(entry.drafts) if entry is not None else None
    if how is None:
        return t("inspector.drafter.unknown", lang, drafter=drafter)
    return t("inspector.drafter", lang, drafter=drafter, how=t(how, lang))


def draft_end_text(cycle: Cycle, lang: str = DEFAULT_LANGUAGE) -> str:
    """Why the draft stopped where it did, in words ('' when it simply reached γ)."""
    if not cycle.drafted or cycle.draft_end == "gamma":
        return ""
    n = len(cycle.drafted)
    if cycle.draft_end == "budget":
        return t("inspector.end.budget", lang, n=n)
    last = cycle.drafted[-1]
    if cycle.draft_end == "eos":
        return t("inspector.end.eos", lang, n=n)
    if cycle.draft_end == "text_end":
        return t("inspector.end.text_end", lang, n=n)
    if cycle.draft_end == "confidence":
        return t(
            "inspector.end.confidence",
            lang,
            n=n,
            token=quoted(last.text),
            q=prob(last.q_draft),
        )
    scale = cycle.draft_doubt_scale
    factors = cumulative_factors(cycle)
    product = " × ".join(prob(factor) for factor in factors)
    total = prob(math.prod(factors))
    if scale < 1.0:
        return t(
            "inspector.end.cumulative_scaled",
            lang,
            n=n,
            product=product,
            total=total,
            scale=f"{scale:.2f}",
        )
    return t("inspector.end.cumulative", lang, n=n, product=product, total=total)


def inspector_lines(cycle: Cycle, lang: str = DEFAULT_LANGUAGE) -> list[str]:
    """The inspector as plain text, one line per drafted position: what the CLI prints."""
    head = t(
        "inspector.lines.head",
        lang,
        cycle=cycle.index + 1,
        gamma=cycle.draft_len,
        accepted=cycle.accepted_len,
    )
    lines = [head + (t("inspector.lines.greedy", lang) if cycle.greedy else "")]
    for token in cycle.drafted:
        # The maths that decided a sampled draft, then the same in words (the table's columns).
        decision = draft_sentence(cycle, token, lang)
        if has_dice_roll(cycle, token):
            decision = f"{math_text(cycle, token, lang)}  {decision}"
        lines.append(
            t(
                "inspector.lines.draft",
                lang,
                position=token.position,
                token=f"{tip_name(token.text, token.special):>14}",
                q=prob(token.q_draft),
                p=prob(token.p_target),
                decision=decision,
            )
        )
        for key, top in (
            ("inspector.lines.top_q", token.top_q),
            ("inspector.lines.top_p", token.top_p),
        ):
            lines.append(t(key, lang, entries=_entries(top)))
    if ended := draft_end_text(cycle, lang):
        lines.append(f"  {ended}")
    lines.append(f"  {extra_text(cycle, lang)}")
    if drafted_by := drafter_text(cycle, lang):
        lines.append(f"  {drafted_by}")
    if cycle.rejection is not None and cycle.rejection.top_residual:
        lines.append(
            t("inspector.lines.top_residual", lang, entries=_entries(cycle.rejection.top_residual))
        )
    return lines


def _entries(top: Sequence[TokenProb]) -> str:
    """The five most probable tokens with their probabilities, for a line of text."""
    return ", ".join(f"{quoted(entry.text)} {prob(entry.prob)}" for entry in top[:5])


_COLUMNS = (
    "inspector.column.draft",
    "inspector.column.token",
    "inspector.column.q",
    "inspector.column.p",
    "inspector.column.ratio",
    "inspector.column.accept",
    "inspector.column.u",
    "inspector.column.decision",
)


def _path_chance_in(columns: tuple[str, ...], chance: str) -> tuple[str, ...]:
    """*columns* for a tree tested from its leaves up: the *chance* column is the whole path's."""
    return tuple("inspector.column.path_chance" if key == chance else key for key in columns)


_PATH_COLUMNS = _path_chance_in(_COLUMNS, "inspector.column.accept")


def inspector_html(
    cycle: Cycle | None,
    cycle_count: int = 0,
    *,
    node: int | None = None,
    lang: str = DEFAULT_LANGUAGE,
) -> str:
    """A table of the cycle's decisions: token, q, p, p/q, min(1, p/q), u and the verdict; for a
    tree cycle every node too, and *node* (an index into its nodes) told in words above them."""
    if cycle is None:
        return (
            '<div class="sv-inspect"><div class="sv-placeholder">'
            f"{t_html('inspector.placeholder', lang)}</div></div>"
        )
    title = t_html("inspector.cycle", lang, cycle=cycle.index + 1)
    of_count = t_html("inspector.of_count", lang, count=cycle_count) if cycle_count else ""
    summary = t_html("inspector.summary", lang, gamma=cycle.draft_len, accepted=cycle.accepted_len)
    greedy = t_html("inspector.summary.greedy", lang) if cycle.greedy else ""
    head = f'<div class="sv-inspect-head"><b>{title}</b>{of_count}{summary}{greedy}</div>'
    rows = []
    for token in cycle.drafted:
        p_over_q = token.p_target / token.q_draft if token.q_draft > 0 else float("inf")
        u = dice_numbers(token)[0] if has_dice_roll(cycle, token) else "—"
        rows.append(
            f'<tr class="sv-row-{token.verdict}" data-pos="{token.position}">'
            f"<td>{token.position}</td>"
            f'<td class="sv-inspect-tok"><span class="sv-tok sv-{token.verdict}">'
            f"{shown(token.text, token.special, lang)}</span></td>"
            f"<td>{prob(token.q_draft)}</td><td>{prob(token.p_target)}</td>"
            f"<td>{'—' if cycle.greedy else ratio(p_over_q)}</td>"
            f"<td>{accept_text(cycle, token)}</td>"
            f"<td>{u}</td>"
            f"<td>{esc(draft_sentence(cycle, token, lang))}</td></tr>"
        )
    keys = _PATH_COLUMNS if decided_by_path(cycle) else _COLUMNS
    columns = "".join(f"<th>{t_html(key, lang)}</th>" for key in keys)
    table = (
        f'<table class="sv-inspect-table"><thead><tr>{columns}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )
    extra = extra_token(cycle)
    extra_css = f" sv-foot-{extra.origin.value}" if extra is not None else ""
    foot = f'<div class="sv-inspect-foot{extra_css}">{esc(extra_text(cycle, lang))}</div>'
    if ended := draft_end_text(cycle, lang):
        foot = f'<div class="sv-inspect-note">{esc(ended)}</div>{foot}'
    if drafted_by := drafter_text(cycle, lang):
        foot += f'<div class="sv-inspect-drafter">{esc(drafted_by)}</div>'
    tree = _tree_table(cycle, node, lang)
    return f'<div class="sv-inspect" data-cycle="{cycle.index + 1}">{head}{table}{foot}{tree}</div>'


_TREE_COLUMNS = (
    "inspector.column.node",
    "inspector.column.after",
    "inspector.column.token",
    "inspector.column.rank",
    "inspector.column.q",
    "inspector.column.p",
    "inspector.column.kept_chance",
    "inspector.column.u",
    "inspector.column.verdict",
)
_TREE_PATH_COLUMNS = _path_chance_in(_TREE_COLUMNS, "inspector.column.kept_chance")
_NODE_VERDICTS = {
    "accepted": "origin.accepted",
    "rejected": "origin.rejected",
    "untested": "origin.untested",
}


def _tree_table(cycle: Cycle, chosen: int | None, lang: str) -> str:
    """Every node of a tree cycle's draft tree: where it hangs, its rank among its siblings, q,
    p, its chance of being kept when tested, the u that decided and the verdict ("" for a
    chain); the chosen node's row marked and its story told above the table."""
    if cycle.tree is None or not cycle.tree.nodes:
        return ""
    nodes = cycle.tree.nodes
    if chosen is not None and not 0 <= chosen < len(nodes):
        chosen = None
    rows = []
    for index, node in enumerate(nodes):
        after = (
            t_html("tree.root", lang)
            if node.parent < 0
            else f"{node.parent + 1} {shown(nodes[node.parent].text, nodes[node.parent].special, lang)}"
        )
        tested = node.verdict != "untested"
        chance = prob(node.accept_prob) if tested else "—"
        u = prob(node.uniform) if node.uniform is not None else "—"
        picked = ' sv-row-chosen" aria-selected="true' if index == chosen else ""
        rows.append(
            f'<tr class="sv-row-{node.verdict}{picked}" data-node="{index}" tabindex="0">'
            f"<td>{index + 1}</td><td>{after}</td>"
            f'<td class="sv-inspect-tok"><span class="sv-tok sv-{node.verdict}">'
            f"{shown(node.text, node.special, lang)}</span></td>"
            f"<td>{node.rank}</td><td>{prob(node.q_draft)}</td><td>{prob(node.p_target)}</td>"
            f"<td>{chance}</td><td>{u}</td>"
            f"<td>{t_html(_NODE_VERDICTS[node.verdict], lang)}</td></tr>"
        )
    from_leaves = cycle.tree.from_leaves
    keys = _TREE_PATH_COLUMNS if from_leaves else _TREE_COLUMNS
    columns = "".join(f"<th>{t_html(key, lang)}</th>" for key in keys)
    title_key = "inspector.tree.title_traversal" if from_leaves else "inspector.tree.title"
    title = t_html(title_key, lang, nodes=len(nodes))
    told = "" if chosen is None else node_story_html(cycle.tree, chosen, lang)
    pick = t_html("inspector.node.pick", lang)
    return (
        f'<div class="sv-inspect-tree"><div class="sv-inspect-head"><b>{title}</b> {pick}</div>'
        f'{told}<table class="sv-inspect-table"><thead><tr>{columns}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def node_story(record: TreeRecord, index: int, lang: str = DEFAULT_LANGUAGE) -> list[str]:
    """One node of a draft tree in words: where it hangs, what the draft and the target thought
    of it, and why it was kept, lost or never tested."""
    nodes = record.nodes
    node = nodes[index]
    way = [nodes[step] for step in _ancestors(record, index)[:-1]]
    path = " → ".join([t("tree.root", lang), *(tip_name(step.text, step.special) for step in way)])
    lines = [
        t(
            "inspector.node.head",
            lang,
            node=index + 1,
            token=tip_name(node.text, node.special),
            rank=node.rank,
            depth=node.depth,
            path=path,
        ),
        t("inspector.node.numbers", lang, q=prob(node.q_draft), p=prob(node.p_target)),
    ]
    from_leaves = record.from_leaves  # a tested node's chance is its whole path's
    if node.verdict == "untested":
        parent_kept = node.parent < 0 or node.parent in record.path
        key = "inspector.node.untested_sibling" if parent_kept else "inspector.node.untested"
        lines.append(t("inspector.node.path_untested" if from_leaves else key, lang))
    elif node.uniform is None:
        kept = node.verdict == "accepted"
        lines.append(
            t("inspector.node.greedy_kept" if kept else "inspector.node.greedy_lost", lang)
        )
    elif from_leaves:
        numbers = {"chance": prob(node.accept_prob), "u": prob(node.uniform)}
        if node.verdict == "accepted":
            leaf = record.path[-1] + 1
            lines.append(t("inspector.node.path_kept", lang, leaf=leaf, **numbers))
        else:
            lines.append(t("inspector.node.path_lost", lang, **numbers))
    else:
        key = "inspector.node.kept" if node.verdict == "accepted" else "inspector.node.lost"
        lines.append(t(key, lang, chance=prob(node.accept_prob), u=prob(node.uniform)))
    return lines


def node_story_html(record: TreeRecord, index: int, lang: str = DEFAULT_LANGUAGE) -> str:
    """node_story() as the block above the inspector's tree table, in the node's colour."""
    verdict = record.nodes[index].verdict
    lines = "".join(f"<div>{esc(line)}</div>" for line in node_story(record, index, lang))
    return f'<div class="sv-inspect-node sv-foot-{verdict}" data-node="{index}">{lines}</div>'


def _ancestors(record: TreeRecord, index: int) -> list[int]:
    """The nodes from the committed text's child down to *index*, itself included."""
    way = []
    while index >= 0:
        way.append(index)
        index = record.nodes[index].parent
    return way[::-1]


def inspector_figure(cycle: Cycle | None, *, lang: str = DEFAULT_LANGUAGE) -> go.Figure:
    """One panel per drafted position: q and p over the top tokens, the drafted token marked."""
    if cycle is None or not cycle.drafted:
        return empty_chart(
            t("inspector.chart.empty_title", lang),
            t("chart.axis.token", lang),
            t("chart.axis.probability", lang),
            t("inspector.chart.no_cycle", lang),
        )
    titles = [_panel_title(cycle, token, lang) for token in cycle.drafted]
    fig = make_subplots(
        rows=len(cycle.drafted), cols=1, subplot_titles=titles, vertical_spacing=0.28 / len(titles)
    )
    for row, token in enumerate(cycle.drafted, start=1):
        _add_position(fig, cycle, token, row, lang)
    apply_layout(fig, t("inspector.chart.title", lang, cycle=cycle.index + 1), "", "")
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


def _panel_title(cycle: Cycle, token: DraftToken, lang: str) -> str:
    # Plotly reads tags in titles: the token goes through token_label, the sentence is escaped.
    return t_html(
        "inspector.chart.panel",
        lang,
        position=token.position,
        token=Html(f"<b>{token_label(token.text)}</b>"),
        decision=draft_sentence(cycle, token, lang),
    )


def _add_position(fig: go.Figure, cycle: Cycle, token: DraftToken, row: int, lang: str) -> None:
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
    series = [
        (t("chart.series.q_draft", lang), REJECTED, q_of, False),
        (t("chart.series.p_target", lang), ACCEPTED, p_of, False),
    ]
    if residual:
        series.append((t("inspector.chart.residual", lang), RESAMPLED, r_of, True))
    for name, colour, values, is_residual in series:
        # A token outside a distribution's top entries has a small, unrecorded probability: a 0
        # bar, and "—" on hover (the hover's numbers are numbers.prob's, handed over as customdata).
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
                customdata=[prob(values.get(token_id)) for token_id in ids],
                legendgroup=name,
                showlegend=row == 1 or is_residual,
                hovertemplate=hover(
                    "chart.hover.value", lang, label="%{x}", name=name, value="%{customdata}"
                ),
            ),
            row=row,
            col=1,
        )
