"""A lookahead cycle as the lookahead decoding paper draws it (Fu et al. 2024): the 2D window of
past Jacobi iterations, the n-grams its columns hand to the pool, and the pooled guesses the
target verified in the same pass, each token coloured by what the target made of it.

Pure: a Cycle in, a string out ("" for a cycle without a window: the record's window rows are
what make a lookahead cycle, no drafter name is compared). Rows are iterations, oldest on top,
then the row this pass computed (the target's first choice after each slot of the newest row);
columns are positions after the last committed token (offset 0), placed as the reference's
position ids place them, so each column's n-gram climbs a diagonal: its foot, one token a row,
the new token. A token backed by a tree node carries the tree panel's ``data-node`` and opens
in the inspector as a chip of the tree does. Token text goes through ``token_text``.
"""

from __future__ import annotations

from dataclasses import dataclass

from specviz.core.events import Cycle, TokenProb, TreeRecord
from specviz.text import DEFAULT_LANGUAGE, t, t_html
from specviz.views.numbers import prob
from specviz.views.token_text import esc, shown, tip_name

_VERDICTS = {
    "accepted": "origin.accepted",
    "rejected": "origin.rejected",
    "untested": "origin.untested",
}


@dataclass(frozen=True)
class _Chip:
    """One token of the panel: a window slot (its node's verdict), the committed root, a token
    of the row the target computed, or a slot the tree left out."""

    kind: str  # accepted / rejected / untested, or root / next / out
    html: str  # the token, escaped
    tip: str  # plain text for the title attribute (escaped when written)
    node: int = -1  # its node in the tree; -1: none
    token: int = -1  # its token id; -1: none (a slot left out)

    def span(self, attrs: str = "") -> str:
        """The chip as a span; a node's chip is a button that opens it in the inspector."""
        verdict = f" sv-{self.kind}" if self.kind in _VERDICTS else f" sv-look-{self.kind}"
        node = f' data-node="n{self.node}" tabindex="0" role="button"' if self.node >= 0 else ""
        return (
            f'<span class="sv-tchip sv-look-chip{verdict}" data-kind="{self.kind}"{node} '
            f'data-token="{self.token}"{attrs} title="{esc(self.tip)}">{self.html}</span>'
        )


def _offset(row: int, slot: int) -> int:
    """A window slot's position after the root: the spine's (row 0) slot i at i + 1, row l's
    slot i at l + i (drafters.lookahead: each path from the root ends there)."""
    return slot + max(row, 1)


def _node_chip(record: TreeRecord, node: int, where: str, lang: str) -> _Chip:
    """The chip of the node holding a slot, coloured by its verdict; a slot left out is a dot."""
    if node < 0:
        return _Chip("out", "·", t("tree.window.out.tip", lang))
    item = record.nodes[node]
    verdict = t(_VERDICTS[item.verdict], lang)
    tip = f"{tip_name(item.text, item.special)} · {verdict} · {where}"
    return _Chip(item.verdict, shown(item.text, item.special, lang), tip, node, item.token_id)


def _root_chip(record: TreeRecord, lang: str) -> _Chip:
    root = record.window_root
    tip = t("tree.window.root.tip", lang)
    if root is None:  # a record built without it: the tree panel's words for the root
        return _Chip("root", t_html("tree.root", lang), tip)
    return _Chip("root", shown(root.text), f"{tip_name(root.text, '')} · {tip}", -1, root.token_id)


def _next_chip(token: TokenProb, lang: str) -> _Chip:
    tip = f"{tip_name(token.text, '')} · {t('tree.window.next.tip', lang, p=prob(token.prob))}"
    return _Chip("next", shown(token.text), tip, -1, token.token_id)


def _cell(chip: _Chip, row: int, offset: int, grid_row: int) -> str:
    """A chip placed in the grid: grid column 1 holds the row labels, offset 0 is column 2."""
    style = f' style="grid-area:{grid_row}/{offset + 2}"'
    return chip.span(f' data-row="{row}" data-offset="{offset}"{style}')


def _label(text: str, tip: str, grid_row: int) -> str:
    return (
        f'<span class="sv-look-label" title="{esc(tip)}" '
        f'style="grid-area:{grid_row}/1">{esc(text)}</span>'
    )


def _window_grid(record: TreeRecord, lang: str) -> str:
    """Rows oldest first, then the target's new row, under a line of offsets."""
    rows = record.window_rows
    count = len(rows)
    cells = [_cell(_root_chip(record, lang), 0, 0, 2)]
    labels: list[str] = []
    for r, row in enumerate(rows):
        back = count - r
        labels.append(
            _label(t("tree.window.row", lang, back=back), t("tree.window.row.tip", lang), r + 2)
        )
        for slot, node in enumerate(row):
            offset = _offset(r, slot)
            where = t("tree.window.where", lang, back=back, offset=offset)
            cells.append(_cell(_node_chip(record, node, where, lang), r, offset, r + 2))
    newest = count - 1
    for slot, token in enumerate(record.window_next):
        offset = _offset(newest, slot) + 1  # the target's guess for the position after the slot
        cells.append(_cell(_next_chip(token, lang), count, offset, count + 2))
    if record.window_next:
        labels.append(
            _label(t("tree.window.next", lang), t("tree.window.next.row_tip", lang), count + 2)
        )
    last = max(
        [_offset(r, len(row) - 1) for r, row in enumerate(rows) if row]
        + [_offset(newest, len(record.window_next) - 1) + 1 if record.window_next else 0]
    )
    heads = [
        f'<span class="sv-look-offset" style="grid-area:1/{offset + 2}">+{offset}</span>'
        for offset in range(last + 1)
    ]
    return (
        f'<div class="sv-look-grid" style="--sv-look-columns:{last + 1}">'
        f"{''.join(heads)}{''.join(labels)}{''.join(cells)}</div>"
    )


def _grams(record: TreeRecord, lang: str) -> str:
    """Each column's n-gram, when the window was full: its foot (the root or a spine token),
    its tooth (one slot a row) and the target's new first choice."""
    rows, fresh = record.window_rows, record.window_next
    if not (record.window_harvest and fresh and rows):
        key = "tree.window.grams.waiting" if rows and not fresh else "tree.window.grams.warming"
        return f'<p class="sv-look-note">{t_html(key, lang)}</p>'
    arrow = '<span class="sv-look-arrow" aria-hidden="true">→</span>'
    lines: list[str] = []
    for column, token in enumerate(fresh):
        foot = rows[0][column - 1] if 0 < column <= len(rows[0]) else -1
        teeth = [row[column] if column < len(row) else -1 for row in rows[1:]]
        if -1 in teeth or (column and foot < 0):
            continue  # a hand-built record with a gap: no n-gram to read
        where = t("tree.window.gram.where", lang, column=column + 1)
        key_chip = _node_chip(record, foot, where, lang) if column else _root_chip(record, lang)
        chips = [key_chip.span(), arrow]
        chips += [_node_chip(record, node, where, lang).span() for node in teeth]
        chips += [arrow, _next_chip(token, lang).span()]
        tip = t("tree.window.gram.tip", lang, column=column + 1)
        lines.append(
            f'<li class="sv-look-gram" data-column="{column}" data-key="{key_chip.token}" '
            f'title="{esc(tip)}">{"".join(chips)}</li>'
        )
    return f'<ol class="sv-look-list">{"".join(lines)}</ol>'


def _path_to(record: TreeRecord, node: int) -> list[int]:
    """The nodes from the root's child down to *node*."""
    path: list[int] = []
    while node >= 0:
        path.append(node)
        node = record.nodes[node].parent
    return path[::-1]


def _kept_counts(record: TreeRecord) -> list[tuple[list[int], int]]:
    """Each verified guess's nodes, and how many of them are on the kept path."""
    kept = set(record.path)
    paths = [_path_to(record, end) for end in record.window_guesses]
    return [(path, len(kept.intersection(path))) for path in paths]


def kept_guess(record: TreeRecord) -> int:
    """The pooled guess the target kept (the most of its tokens on the kept path; the most
    recently pooled of equals), as an index into window_guesses; -1 when none was kept."""
    counts = [on_path for _, on_path in _kept_counts(record)]
    best = max(counts, default=0)
    return counts.index(best) if best else -1


def _guesses(record: TreeRecord, lang: str) -> str:
    """The pooled n-grams verified this cycle, the kept one marked, then who carried the cycle:
    a guess, else the window's own path, else the target's token alone."""
    chosen = kept_guess(record)
    counts = _kept_counts(record)
    lines: list[str] = []
    for i, (nodes, on_path) in enumerate(counts):
        where = t("tree.window.guess.where", lang, guess=i + 1)
        chips = "".join(_node_chip(record, node, where, lang).span() for node in nodes)
        mark = " sv-look-kept" if i == chosen else ""
        lines.append(
            f'<li class="sv-look-guess{mark}" data-guess="{i}" data-kept="{on_path}">'
            f'<span class="sv-look-guess-n">{i + 1}</span>{chips}</li>'
        )
    listed = (
        f'<ol class="sv-look-list">{"".join(lines)}</ol>'
        if lines
        else f'<p class="sv-look-note">{t_html("tree.window.guesses.none", lang)}</p>'
    )
    if chosen >= 0:
        nodes, on_path = counts[chosen]
        told = t_html(
            "tree.window.kept.guess", lang, guess=chosen + 1, kept=on_path, tokens=len(nodes)
        )
    elif record.path:
        told = t_html("tree.window.kept.window", lang, kept=len(record.path))
    else:
        told = t_html("tree.window.kept.none", lang)
    return f'{listed}<p class="sv-look-verdict">{told}</p>'


def _part(title_key: str, body: str, css: str, lang: str) -> str:
    return (
        f'<div class="sv-look-part {css}"><div class="sv-look-title">{t_html(title_key, lang)}'
        f"</div>{body}</div>"
    )


def lookahead_panel_html(cycle: Cycle | None, *, lang: str = DEFAULT_LANGUAGE) -> str:
    """A lookahead cycle's window, its harvested n-grams and its verified guesses ("" for a
    cycle without a window)."""
    if cycle is None or cycle.tree is None or not cycle.tree.window_rows:
        return ""
    record = cycle.tree
    head = t_html(
        "tree.window.head",
        lang,
        rows=len(record.window_rows),
        slots=sum(node >= 0 for row in record.window_rows for node in row),
        guesses=len(record.window_guesses),
    )
    harvested = len(record.window_next) if record.window_harvest else 0
    body = (
        _part("tree.window.title", _window_grid(record, lang), "sv-look-window", lang)
        + _part("tree.window.grams.title", _grams(record, lang), "sv-look-grams", lang)
        + _part("tree.window.guesses.title", _guesses(record, lang), "sv-look-guesses", lang)
    )
    caption = t_html("tree.window.caption", lang)
    return (
        f'<div class="sv-look" data-rows="{len(record.window_rows)}" data-grams="{harvested}" '
        f'data-guesses="{len(record.window_guesses)}" data-kept-guess="{kept_guess(record)}">'
        f'<div class="sv-tree-head">{head}</div><div class="sv-look-caption">{caption}</div>'
        f'<div class="sv-look-body">{body}</div></div>'
    )
