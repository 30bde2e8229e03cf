"""A Medusa cycle's heads panel: how often each head's first guess was the target's token, in the
run so far and on held-out text when the heads were trained, then what each head guessed this
cycle and which guess the target kept, in the stream's verdict colours.

Pure: cycles and the training report's record in, a string out (``head_scores`` reads the
cycles). Token text is escaped through ``token_text`` as everywhere else; a guess is a button
that opens its node in the inspector, as the tree panel's chips are. On a phone the bars stack
two to a line under their head's name (assets/specviz.css).
"""

from __future__ import annotations

from collections.abc import Sequence

from specviz.core.events import Cycle
from specviz.models.heads.report import TRAIN_COMMAND, GroupAgreement, HeadsAgreement
from specviz.text import DEFAULT_LANGUAGE, Html, t, t_html
from specviz.views.head_scores import (
    Guess,
    HeadGuesses,
    HeadScore,
    drafted_by_heads,
    head_guesses,
    heads_used,
    run_agreement,
)
from specviz.views.numbers import prob
from specviz.views.token_text import esc, num, shown

# The held-out text's task groups (specviz.models.heads.corpus.GROUPS) in words; any other
# group reads "held-out <its name>".
_GROUP_KEYS = {
    "code": "tree.heads.group.code",
    "prose": "tree.heads.group.prose",
    "ja": "tree.heads.group.ja",
}
_VERDICT_LABELS = {
    "accepted": "origin.accepted",
    "rejected": "origin.rejected",
    "untested": "origin.untested",
}


def _percent(value: float) -> str:
    return f"{value:.0%}"


def _width(value: float) -> str:
    """A bar's fill, as a CSS width."""
    return f"{max(0.0, min(1.0, value)) * 100:.1f}%"


def _group_label(group: str, lang: str) -> str:
    key = _GROUP_KEYS.get(group)
    return t(key, lang) if key is not None else t("tree.heads.group.other", lang, group=group)


def _bar(measure: str, label: str, fills: str, values: Sequence[str], data: dict[str, str]) -> str:
    """One labelled bar: *fills* are its spans, *label* and *values* plain text (escaped here).
    The values after the first are classed so presentation mode can leave them to the tooltip."""
    attrs = "".join(f' data-{key}="{esc(text)}"' for key, text in data.items())
    # The label shows over the first head's bars only (on a phone, over each): the title and the
    # bar's name say it for every bar.
    named = esc(f"{label}: {' · '.join(values)}")
    first, *more = values
    shown_values = esc(first) + "".join(
        f'<span class="sv-hbar-more"> · {esc(value)}</span>' for value in more
    )
    return (
        f'<div class="sv-hbar-cell" data-measure="{esc(measure)}"{attrs} title="{named}">'
        f'<span class="sv-hbar-label">{esc(label)}</span>'
        f'<span class="sv-hbar" role="img" aria-label="{named}">{fills}</span>'
        f'<span class="sv-hbar-value">{shown_values}</span></div>'
    )


def _run_bar(score: HeadScore, lang: str) -> str:
    """The run's agreement: the share of its first guesses the target wrote, out of its chances."""
    rate = score.rate
    if rate is None:
        value, fill = t("tree.heads.run.none", lang), ""
    else:
        value = t(
            "tree.heads.run.value",
            lang,
            percent=_percent(rate),
            hits=score.hits,
            chances=score.chances,
        )
        fill = f'<span class="sv-hbar-top1" style="width:{_width(rate)}"></span>'
    data = {"hits": str(score.hits), "chances": str(score.chances)}
    return _bar("run", t("tree.heads.run", lang), fill, [value], data)


def _held_out_bar(group: GroupAgreement, head: int, lang: str) -> str:
    """A group's held-out agreement: the first guess solid, among the first five pale behind it."""
    if head > len(group.top1):
        return ""
    top1, top5 = group.top1[head - 1], group.top5[head - 1]
    fills = (
        f'<span class="sv-hbar-top5" style="width:{_width(top5)}"></span>'
        f'<span class="sv-hbar-top1" style="width:{_width(top1)}"></span>'
    )
    values = [
        t("tree.heads.held.top1", lang, top1=_percent(top1)),
        t("tree.heads.held.top5", lang, top5=_percent(top5)),
    ]
    data = {"top1": num(top1), "top5": num(top5), "positions": str(group.positions)}
    return _bar(group.group, _group_label(group.group, lang), fills, values, data)


def _scores_html(scores: Sequence[HeadScore], agreement: HeadsAgreement | None, lang: str) -> str:
    """One line per head: its name, the run's bar, then a bar per held-out group."""
    groups = agreement.groups if agreement is not None else ()
    lines = []
    for score in scores:
        name = (
            f'<div class="sv-heads-name"><b>{t_html("tree.heads.name", lang, head=score.head)}</b>'
            f"<small>{t_html('tree.heads.position', lang, position=score.head)}</small></div>"
        )
        bars = _run_bar(score, lang) + "".join(
            _held_out_bar(group, score.head, lang) for group in groups
        )
        lines.append(
            f'<div class="sv-heads-score" data-head="{score.head}" '
            f'style="--sv-bars:{1 + len(groups)}">{name}{bars}</div>'
        )
    untrained = ""
    if agreement is None:
        words = t_html("tree.heads.untrained", lang, command=Html(f"<code>{TRAIN_COMMAND}</code>"))
        untrained = f'<div class="sv-heads-untrained">{words}</div>'
    return f'<div class="sv-heads-scores">{"".join(lines)}</div>{untrained}'


def _guess_chip(guess: Guess, head: int, lang: str) -> str:
    """A guess: its token in its verdict's colour (a button that opens its node), then its q."""
    tip = t(
        "tree.heads.chip.tip",
        lang,
        verdict=t(_VERDICT_LABELS[guess.verdict], lang),
        head=head,
        rank=guess.rank,
        q=prob(guess.q_draft),
    )
    tip += "\n" + t("tree.tip.inspect", lang)
    return (
        f'<span class="sv-hguess-item" data-token="{guess.token_id}" '
        f'data-verdict="{guess.verdict}" data-q="{num(guess.q_draft)}">'
        f'<span class="sv-tchip sv-{guess.verdict}" data-node="n{guess.node}" tabindex="0" '
        f'role="button" title="{esc(tip)}">{shown(guess.text, guess.special, lang)}</span>'
        f'<span class="sv-hguess-q">q {prob(guess.q_draft)}</span></span>'
    )


def _outcome(row: HeadGuesses, ended_at: int, lang: str) -> tuple[str, str]:
    """What became of the head's position: (its name for tests and styles, its note's HTML)."""
    if not row.guesses:
        return "none", t_html("tree.heads.none", lang)
    if row.kept is not None:
        return "kept", t_html("tree.heads.kept", lang)
    if row.wrote is not None:
        token = row.wrote
        chip = (
            f'<span class="sv-tchip sv-{token.origin.value}" data-token="{token.token_id}">'
            f"{shown(token.text, token.special, lang)}</span>"
        )
        return "missed", t_html("tree.heads.wrote", lang, token=Html(chip))
    return "unreached", t_html("tree.heads.unreached", lang, position=ended_at)


def _guesses_html(cycle: Cycle, heads: int, lang: str) -> str:
    """One line per head: its guesses this cycle with their q, and what the target did there."""
    if cycle.tree is None or not cycle.tree.nodes:
        key = "tree.heads.first" if cycle.draft_end == "prefill" else "tree.heads.empty"
        return f'<div class="sv-heads-note">{t_html(key, lang)}</div>'
    ended_at = len(cycle.emitted)  # the position of the cycle's last token
    lines = []
    for row in head_guesses(cycle, heads):
        outcome, note = _outcome(row, ended_at, lang)
        chips = "".join(_guess_chip(guess, row.head, lang) for guess in row.guesses)
        lines.append(
            f'<li class="sv-hguess" data-head="{row.head}" data-outcome="{outcome}">'
            f'<span class="sv-hguess-name">{t_html("tree.heads.name", lang, head=row.head)}</span>'
            f'<span class="sv-hguess-list">{chips}</span>'
            f'<span class="sv-hguess-note">{note}</span></li>'
        )
    head = t_html("tree.heads.guesses", lang)
    return (
        f'<div class="sv-heads-guesses-head">{head}</div>'
        f'<ol class="sv-heads-guesses">{"".join(lines)}</ol>'
    )


def heads_panel_html(
    cycle: Cycle | None,
    run: Sequence[Cycle],
    agreement: HeadsAgreement | None,
    *,
    lang: str = DEFAULT_LANGUAGE,
) -> str:
    """The heads panel of a cycle the heads drafted ("" for any other, or none): *run* is the
    run's cycles up to it, *agreement* the heads' training report (None: none trained here)."""
    if cycle is None or not drafted_by_heads(cycle):
        return ""
    used = max(heads_used(run), heads_used([cycle]))
    count = max(used, agreement.heads if agreement is not None else 0)
    scores = run_agreement(run, count)
    head = t_html("tree.heads.head", lang)
    return (
        f'<div class="sv-heads" data-heads="{count}" data-used="{used}">'
        f'<div class="sv-heads-head">{head}</div>'
        f'<div class="sv-heads-caption">{t_html("tree.heads.caption", lang)}</div>'
        f"{_scores_html(scores, agreement, lang)}{_guesses_html(cycle, used, lang)}</div>"
    )
