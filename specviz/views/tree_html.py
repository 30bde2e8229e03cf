"""A tree cycle's draft tree as HTML: every guess laid out by depth, coloured by the target's
verdict in the stream's colours, the kept path and the token after it drawn thick.

Pure: a Cycle in, a string out. Nodes are absolutely placed chips over one SVG of curved edges,
both in the same pixel grid (a column per depth, a row per leaf), so the picture needs no script
and reads the same in a test, a screenshot and presentation mode. Token text is escaped through
``token_text`` as everywhere else; each chip's title gives its q, p and chance of being kept.
"""

from __future__ import annotations

from dataclasses import dataclass

from specviz.core.events import Cycle, TreeRecord
from specviz.text import DEFAULT_LANGUAGE, t, t_html
from specviz.views.numbers import prob
from specviz.views.token_text import esc, shown

COLUMN = 118  # px from one depth to the next
ROW = 36  # px per leaf
CHIP_W, CHIP_H = 94, 26
PAD = 8
# A tree more than WIDE_SPAN columns deep (the token after the kept path included) gets narrower
# columns and chips, so a six-deep tree with its bonus token fits the cards at 1280 px.
WIDE_SPAN = 5
COMPACT_COLUMN, COMPACT_CHIP_W = 96, 80

# The label of each verdict and origin a chip shows, and the line under the head for each rule.
_LABELS = {
    "accepted": "origin.accepted",
    "rejected": "origin.rejected",
    "untested": "origin.untested",
    "resampled": "origin.resampled",
    "bonus": "origin.bonus",
}
_VERDICT_WORDS = {kind: f"verdict.{kind}" for kind in _LABELS}
_RULES = {
    "greedy": "tree.rule.greedy",
    "traversal": "tree.rule.traversal",
    "recursive": "tree.rule.recursive",
    "recursive_one_hot": "tree.rule.recursive_one_hot",
}


@dataclass(frozen=True)
class _Chip:
    """One box of the picture: a drafted node, the committed text, or the token after the path."""

    key: str  # "root", "n<i>" or "extra"
    parent: str | None
    depth: int
    kind: str  # accepted / rejected / untested / resampled / bonus / root
    html: str  # the token, escaped
    tip: str  # plain text for the title attribute (escaped when written)
    kept: bool  # on the kept path (its edge is drawn thick)
    rank: int = 0  # a drafted node's rank among its siblings (1: the draft's first choice)
    brief: str = ""  # its verdict and numbers in a few words, for the outline's line


def _chips(cycle: Cycle, record: TreeRecord, lang: str) -> list[_Chip]:
    chips = [
        _Chip("root", None, 0, "root", t_html("tree.root", lang), t("tree.root.tip", lang), True)
    ]
    for i, node in enumerate(record.nodes):
        tip = t(
            "tree.tip",
            lang,
            verdict=t(_LABELS[node.verdict], lang),
            q=prob(node.q_draft),
            p=prob(node.p_target),
            rank=node.rank,
        )
        if node.verdict != "untested":
            chance_key = "tree.tip.accept_path" if record.from_leaves else "tree.tip.accept"
            tip += " · " + t(chance_key, lang, accept=prob(node.accept_prob))
        numbers = f"q {prob(node.q_draft)} · p {prob(node.p_target)}"
        brief = f"{t(_VERDICT_WORDS[node.verdict], lang)} · {numbers}"
        tip += "\n" + t("tree.tip.inspect", lang)
        chips.append(
            _Chip(
                f"n{i}",
                "root" if node.parent < 0 else f"n{node.parent}",
                node.depth,
                node.verdict,
                shown(node.text, node.special, lang),
                tip,
                node.verdict == "accepted",
                node.rank,
                brief,
            )
        )
    extra = cycle.emitted[len(record.path) :]
    if extra:  # the resampled or bonus token, after the kept path (unless the budget cut it)
        token = extra[0]
        parent = f"n{record.path[-1]}" if record.path else "root"
        kind = token.origin.value
        tip = t("tree.tip.extra", lang, origin=t(_LABELS[kind], lang), p=prob(token.prob))
        depth = len(record.path) + 1
        brief = f"{t(_VERDICT_WORDS[kind], lang)} · p {prob(token.prob)}"
        text = shown(token.text, token.special, lang)
        chips.append(_Chip("extra", parent, depth, kind, text, tip, True, 0, brief))
    return chips


def _rows(chips: list[_Chip]) -> dict[str, float]:
    """Each chip's row: leaves take rows in depth-first order, a parent sits midway between
    its first and last leaf."""
    children: dict[str, list[str]] = {}
    for chip in chips:
        if chip.parent is not None:
            children.setdefault(chip.parent, []).append(chip.key)
    rows: dict[str, float] = {}
    next_row = 0

    def place(key: str) -> tuple[float, float]:
        nonlocal next_row
        below = children.get(key, [])
        if not below:
            rows[key] = next_row
            next_row += 1
            return rows[key], rows[key]
        spans = [place(child) for child in below]
        first, last = spans[0][0], spans[-1][1]
        rows[key] = (first + last) / 2
        return first, last

    place("root")
    return rows


def _preorder(chips: list[_Chip]) -> list[_Chip]:
    """The chips parent first, then each child's branch in rank order (an outline's order)."""
    children: dict[str | None, list[_Chip]] = {}
    for chip in chips:
        children.setdefault(chip.parent, []).append(chip)
    order: list[_Chip] = []

    def visit(chip: _Chip) -> None:
        order.append(chip)
        for child in children.get(chip.key, []):
            visit(child)

    for top in children.get(None, []):
        visit(top)
    return order


def _outline(chips: list[_Chip]) -> str:
    """The same tree as an indented list, one guess a line with its verdict, q and p in words:
    what a phone shows instead of the picture, which is wider than its screen once a tree is
    three deep. The lines carry the chips' data-node, so a tap opens a node as a click does."""
    lines = []
    for chip in _preorder(chips):
        kind = "" if chip.kind == "root" else f" sv-{chip.kind}"
        kept = " sv-tline-kept" if chip.kept else ""
        lines.append(
            f'<li class="sv-tline{kept}" data-verdict="{chip.kind}" data-node="{chip.key}" '
            f'style="--sv-depth:{chip.depth}" title="{esc(chip.tip)}">'
            f'<span class="sv-tchip{kind}">{chip.html}</span>'
            f'<span class="sv-tline-tip">{esc(chip.brief)}</span></li>'
        )
    return f'<ol class="sv-tree-outline">{"".join(lines)}</ol>'


def tree_panel_html(cycle: Cycle | None, *, lang: str = DEFAULT_LANGUAGE) -> str:
    """The draft tree of a tree cycle ("" for a chain cycle or none)."""
    if cycle is None or cycle.tree is None:
        return ""
    record = cycle.tree
    chips = _chips(cycle, record, lang)
    rows = _rows(chips)
    span = max(chip.depth for chip in chips)
    column, chip_w = (COLUMN, CHIP_W) if span <= WIDE_SPAN else (COMPACT_COLUMN, COMPACT_CHIP_W)
    chip_style = "" if chip_w == CHIP_W else f"width:{chip_w}px;"
    width = PAD * 2 + span * column + chip_w
    height = PAD * 2 + int(max(rows.values()) + 1) * ROW
    place = {chip.key: (PAD + chip.depth * column, PAD + rows[chip.key] * ROW) for chip in chips}
    edges, boxes = [], []
    for chip in chips:
        x, y = place[chip.key]
        if chip.parent is not None:
            px, py = place[chip.parent]
            x0, y0, x1, y1 = px + chip_w, py + CHIP_H / 2, x, y + CHIP_H / 2
            bend = (x1 - x0) / 2
            css = "sv-tedge sv-tedge-kept" if chip.kept else "sv-tedge"
            edges.append(
                f'<path class="{css}" data-to="{chip.key}" '
                f'd="M{x0:.0f},{y0:.0f} C{x0 + bend:.0f},{y0:.0f} {x1 - bend:.0f},{y1:.0f} '
                f'{x1:.0f},{y1:.0f}"/>'
            )
        kind = "" if chip.kind == "root" else f" sv-{chip.kind}"
        rank = f' data-rank="{chip.rank}"' if chip.rank else ""
        # A drafted guess ("n<i>") is a button: a click or Enter opens it in the inspector (the
        # cards' script), so Tab reaches it too.
        button = ' tabindex="0" role="button"' if chip.key.startswith("n") else ""
        boxes.append(
            f'<div class="sv-tnode{kind}" data-node="{chip.key}" data-verdict="{chip.kind}"{rank}'
            f"{button} "
            f'title="{esc(chip.tip)}" style="{chip_style}left:{x:.0f}px;top:{y:.0f}px">{chip.html}</div>'
        )
    kept = len(record.path)
    head = t_html(
        "tree.head",
        lang,
        nodes=len(record.nodes),
        depth=max((node.depth for node in record.nodes), default=0),
        kept=kept,
    )
    rule = t_html(_RULES[record.rule], lang)
    return (
        f'<div class="sv-tree" data-nodes="{len(record.nodes)}" data-kept="{kept}" '
        f'data-rule="{esc(record.rule)}">'
        f'<div class="sv-tree-head">{head}</div><div class="sv-tree-rule">{rule}</div>'
        f'<div class="sv-tree-scroll"><div class="sv-tree-plot" '
        f'style="width:{width}px;height:{height}px">'
        f'<svg class="sv-tree-edges" width="{width}" height="{height}" aria-hidden="true">'
        f"{''.join(edges)}</svg>{''.join(boxes)}</div></div>{_outline(chips)}</div>"
    )
