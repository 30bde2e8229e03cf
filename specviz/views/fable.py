"""Fable mode: one cycle told as the story of a master scribe and a quick apprentice.

The master is the target model: exact, and slow because every word he writes costs him carrying
his whole library (all the weights read from memory for each token: decoding is memory-bandwidth
bound). The apprentice is the drafter: he writes γ guesses on a slate, and the master checks the
whole slate in one glance (one parallel verification forward, which costs about what one word
does). A word the master agrees with gets his seal (accepted with probability min(1, p/q),
Leviathan et al. 2023, Algorithm 1); at the first word he does not, he crosses it out, writes his
own word (resampled from norm(max(0, p − q))) and wipes the rest of the slate (rollback); when
the whole slate passes, the same glance gives a free word (the bonus token).

``narrate`` builds a ``Story`` from one cycle's records and nothing else, so the story of cycle 7
is what happened in cycle 7; the story is language-free (catalogue keys and values) until
``story_text`` or ``fable_html`` words it. Token text comes from a model: the HTML escapes it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from specviz.core.events import Cycle, DraftToken, EmittedToken, Origin, TreeRecord
from specviz.drafters.registry import Drafts, find_drafter
from specviz.text import DEFAULT_LANGUAGE, Html, Phrase, t, t_html
from specviz.views.draft_length import draft_end_values
from specviz.views.numbers import prob
from specviz.views.token_text import quoted, shown, special_words
from specviz.views.verdicts import dice_numbers, greedy_choice


@dataclass(frozen=True)
class Word:
    """A token as the story names it, with its fate: the stream's CSS kind (``sv-<kind>``)."""

    text: str
    special: str
    kind: str  # "accepted", "rejected", "untested", "resampled", "bonus" or "draft"


@dataclass(frozen=True)
class Words:
    """Several tokens named in a row (the slate, the wiped words)."""

    words: tuple[Word, ...]


@dataclass(frozen=True)
class Line:
    """One sentence of the story: a catalogue key and its values (numbers already formatted;
    Word and Words are worded by the renderer, Phrase in the story's language)."""

    key: str
    values: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class Story:
    """The story of one cycle, in telling order."""

    cycle: int  # 1-based, as the cards number cycles
    lines: tuple[Line, ...]


# --- the plain words for a probability --------------------------------------------------------

# How sure each of them was, in words, by threshold (the highest threshold the value reaches).
_P_WORDS = ((0.5, "fable.p.likely"), (0.15, "fable.p.possible"), (0.0, "fable.p.unlikely"))
_Q_WORDS = ((0.9, "fable.q.sure"), (0.5, "fable.q.fairly_sure"), (0.0, "fable.q.unsure"))


def _in_words(value: float, scale: tuple[tuple[float, str], ...]) -> Phrase:
    return next(Phrase(key) for threshold, key in scale if value >= threshold)


def _count(n: int) -> Phrase:
    return Phrase("fable.count.one") if n == 1 else Phrase("fable.count.many", n=n)


# --- narration: records in, a Story out --------------------------------------------------------

# Why a draft stopped before γ (Cycle.draft_end), in the story's words; the values are the cards'
# (``draft_end_values``). An empty slate (no match, the prefill, one token of budget left) is
# told by _EMPTY_SLATE instead.
_SHORT_REASONS = {
    "confidence": "fable.short.confidence",
    "cumulative": "fable.short.cumulative",
    "eos": "fable.short.eos",
    "budget": "fable.short.budget",
    "text_end": "fable.short.text_end",
}
_EMPTY_SLATE = {
    "no_match": "fable.empty.no_match",
    "prefill": "fable.empty.prefill",
    "budget": "fable.empty.budget",
}


def narrate(cycle: Cycle) -> Story:
    """The story of *cycle*, told from its own records only."""
    lines = _drafting(cycle)
    if cycle.tree is not None and cycle.tree.nodes:
        lines.append(_tree_slate(cycle.tree))
        if cycle.tree.from_leaves:  # before the verdicts, whose chances are the paths'
            lines.append(Line("fable.tree.from_leaves"))
    if cycle.drafted:
        lines.append(_glance(cycle))
        lines.extend(_verdict(cycle, token) for token in cycle.drafted if token.tested)
        if cycle.tree is not None:
            lines.extend(_tree_choices(cycle.tree))
        untested = [token for token in cycle.drafted if not token.tested]
        if untested:
            words = Words(tuple(_word(token, "untested") for token in untested))
            lines.append(Line("fable.wiped", {"words": words}))
    lines.extend(_extra(cycle, token) for token in cycle.emitted[cycle.accepted_len :])
    if cycle.drafted:
        lines.append(
            Line(
                "fable.tally",
                {
                    "sealed": cycle.accepted_len,
                    "drafted": len(cycle.drafted),
                    "count": _count(len(cycle.emitted)),
                },
            )
        )
    if cycle.stop_reason == "eos":
        lines.append(Line("fable.finish.eos"))
    elif cycle.stop_reason == "max_new_tokens":
        lines.append(Line("fable.finish.budget"))
    return Story(cycle.index + 1, tuple(lines))


def _word(token: DraftToken | EmittedToken, kind: str) -> Word:
    return Word(token.text, token.special, kind)


def _drafting(cycle: Cycle) -> list[Line]:
    """Who wrote the slate and how, and why it is shorter than γ if it is."""
    if not cycle.drafted:
        key = _EMPTY_SLATE.get(cycle.draft_end, "fable.empty.no_match")
        return [Line(key), Line("fable.alone", {"verify_ms": _ms(cycle.timing.verify_s)})]
    slate = Words(tuple(_word(token, "draft") for token in cycle.drafted))
    values: dict[str, object] = {"count": _count(len(cycle.drafted)), "words": slate}
    # How the cycle's drafter drafts, as its registry entry says (an unknown one guesses).
    entry = find_drafter(cycle.drafter)
    drafts = entry.drafts if entry is not None else Drafts.WITH_DRAFT_MODEL
    if cycle.copied_from:  # a copy of the text (lookup alone or as the hybrid's first choice)
        line = Line("fable.draft.copy", values | {"start": cycle.copied_from[0] + 1})
    elif drafts is Drafts.WITH_TARGET_LAYERS:
        detail = cycle.drafter_detail or "—"
        line = Line("fable.draft.hurry", values | {"detail": detail})
    elif drafts is Drafts.WITH_TARGET_HEADS:
        line = Line("fable.draft.ahead", values)
    elif drafts is Drafts.BY_RULE:
        line = Line("fable.draft.rule", values)
    elif drafts is Drafts.BY_TARGET_WINDOW:
        line = Line("fable.draft.window", values)
    else:
        line = Line("fable.draft.guess", values)
    lines = [line]
    reason = _SHORT_REASONS.get(cycle.draft_end)
    if reason is not None:
        allowed = cycle.draft_gamma or len(cycle.drafted)
        why = Phrase(reason, **draft_end_values(cycle))
        lines.append(Line("fable.short", {"gamma": allowed, "reason": why}))
    return lines


def _tree_slate(tree: TreeRecord) -> Line:
    """A branching slate: how many guesses, and the alternatives for the next word."""
    first = [node for node in tree.nodes if node.parent < 0]
    words = Words(tuple(Word(node.text, node.special, "draft") for node in first))
    return Line("fable.tree.slate", {"nodes": len(tree.nodes), "first": len(first), "words": words})


def _tree_choices(tree: TreeRecord) -> list[Line]:
    """Where the master kept an alternative rather than the first guess, and the word where
    several alternatives all failed."""
    lines = []
    for node_index in tree.path:
        node = tree.nodes[node_index]
        if node.rank > 1:
            word = Word(node.text, node.special, "accepted")
            lines.append(Line("fable.tree.kept", {"rank": node.rank, "word": word}))
    stop = tree.path[-1] if tree.path else -1
    lost = [tree.nodes[child] for child in tree.children(stop)]
    if len(lost) > 1:
        words = Words(tuple(Word(node.text, node.special, "rejected") for node in lost))
        key = "fable.tree.all_lost_leaves" if tree.from_leaves else "fable.tree.all_lost"
        lines.append(Line(key, {"words": words}))
    return lines


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f}"


def _glance(cycle: Cycle) -> Line:
    """One verification pass over the whole slate, and why it costs about one word."""
    return Line(
        "fable.glance",
        {
            "count": _count(len(cycle.drafted)),
            "verify_ms": _ms(cycle.timing.verify_s),
            "draft_ms": _ms(cycle.timing.draft_s),
        },
    )


def _verdict(cycle: Cycle, token: DraftToken) -> Line:
    """The seal or the crossing-out of one tested word, with the numbers that decided it."""
    kind = "accepted" if token.accepted else "rejected"
    word = _word(token, kind)
    if cycle.greedy:
        if token.accepted:
            return Line("fable.seal.greedy", {"word": word, "p": prob(token.p_target)})
        choice = greedy_choice(cycle, token)
        first = Word(*choice, "draft") if choice is not None else Word("?", "", "draft")
        return Line("fable.cross.greedy", {"word": word, "p": prob(token.p_target), "top": first})
    u, accept = dice_numbers(token)  # the cards' and the tooltips' numbers, never equal-looking
    values = {
        "word": word,
        "p_words": _in_words(token.p_target, _P_WORDS),
        "p": prob(token.p_target),
        "q_words": _in_words(token.q_draft, _Q_WORDS),
        "q": prob(token.q_draft),
        "accept": accept,
        "u": u,
    }
    return Line("fable.seal" if token.accepted else "fable.cross", values)


def _extra(cycle: Cycle, token: EmittedToken) -> Line:
    """The word the master writes himself: the replacement, the free word, or his only word."""
    chance = prob(token.prob)
    if token.origin is Origin.RESAMPLED:
        key = "fable.resample.greedy" if cycle.greedy else "fable.resample"
        return Line(key, {"word": _word(token, "resampled"), "prob": chance})
    if not cycle.drafted:
        return Line("fable.alone.word", {"word": _word(token, "bonus"), "prob": chance})
    return Line("fable.bonus", {"word": _word(token, "bonus"), "prob": chance})


# --- wording: a Story in a language ------------------------------------------------------------


def _word_text(word: Word, lang: str) -> str:
    return f"[{special_words(word.special, lang)}]" if word.special else quoted(word.text)


def _plain_value(value: object, lang: str) -> object:
    if isinstance(value, Word):
        return _word_text(value, lang)
    if isinstance(value, Words):
        return t("fable.words.separator", lang).join(_word_text(w, lang) for w in value.words)
    return value


def story_text(story: Story, lang: str = DEFAULT_LANGUAGE) -> list[str]:
    """The story as plain sentences (the CLI's), its words in curly quotes."""
    return [
        t(line.key, lang, **{name: _plain_value(v, lang) for name, v in line.values.items()})
        for line in story.lines
    ]


def _word_html(word: Word, lang: str) -> Html:
    """A word in the stream's colours: sealed, crossed out, the master's own, the free one."""
    # A line break inside a quoted word would split the sentence: its glyph (↵) says it, the
    # break itself belongs to the stream only.
    text = shown(word.text, word.special, lang).replace("\r", "").replace("\n", "")
    return Html(
        f'“<span class="sv-tok sv-{word.kind}" data-fable-word="{word.kind}">{text}</span>”'
    )


def _html_value(value: object, lang: str) -> object:
    if isinstance(value, Word):
        return _word_html(value, lang)
    if isinstance(value, Words):
        separator = t_html("fable.words.separator", lang)
        return Html(separator.join(_word_html(w, lang) for w in value.words))
    return value


def story_html(story: Story, lang: str = DEFAULT_LANGUAGE, *, current: bool = True) -> str:
    """One cycle's story as a short paragraph under its cycle number, a sentence a span (the
    current cycle's sentences stand on lines of their own: assets/specviz.css)."""
    sentences = t("fable.sentence.separator", lang).join(
        f'<span class="sv-fable-line" data-line="{line.key}">'
        + t_html(line.key, lang, **{name: _html_value(v, lang) for name, v in line.values.items()})
        + "</span>"
        for line in story.lines
    )
    title = t_html("cards.cycle", lang, cycle=story.cycle)
    state = " sv-fable-current" if current else ""
    return (
        f'<div class="sv-fable-cycle{state}" data-cycle="{story.cycle}">'
        f'<div class="sv-fable-title">{title}</div><p>{sentences}</p></div>'
    )


EARLIER_SHOWN = 2  # earlier cycles told above the current one, so the story reads on


def fable_html(cycles: Sequence[Cycle], *, lang: str = DEFAULT_LANGUAGE) -> str:
    """The story of the last cycle in *cycles* (the one shown), after the few before it."""
    if not cycles:
        placeholder = t_html("app.fable.placeholder", lang)
        return f'<div class="sv-fable"><div class="sv-placeholder">{placeholder}</div></div>'
    told = cycles[-1 - EARLIER_SHOWN :]
    parts = [story_html(narrate(cycle), lang, current=cycle is told[-1]) for cycle in told]
    return f'<div class="sv-fable" data-cycle="{cycles[-1].index + 1}">{"".join(parts)}</div>'


# The help panel's rows in telling order, each a (story term, model meaning) pair of catalogue keys.
CAST = (
    ("fable.cast.master.term", "fable.cast.master"),
    ("fable.cast.apprentice.term", "fable.cast.apprentice"),
    ("fable.cast.slate.term", "fable.cast.slate"),
    ("fable.cast.library.term", "fable.cast.library"),
    ("fable.cast.glance.term", "fable.cast.glance"),
    ("fable.cast.seal.term", "fable.cast.seal"),
    ("fable.cast.cross.term", "fable.cast.cross"),
    ("fable.cast.own.term", "fable.cast.own"),
    ("fable.cast.wipe.term", "fable.cast.wipe"),
    ("fable.cast.free.term", "fable.cast.free"),
    ("fable.cast.exact.term", "fable.cast.exact"),
)


def fable_help_html(*, lang: str = DEFAULT_LANGUAGE) -> str:
    """The metaphor table: each element of the story beside what it is in the model."""
    rows = "".join(
        f"<tr><th scope='row'>{t_html(term, lang)}</th><td>{t_html(meaning, lang)}</td></tr>"
        for term, meaning in CAST
    )
    head = (
        f"<tr><th scope='col'>{t_html('app.fable.help.story', lang)}</th>"
        f"<th scope='col'>{t_html('app.fable.help.model', lang)}</th></tr>"
    )
    return f'<table class="sv-fable-cast"><thead>{head}</thead><tbody>{rows}</tbody></table>'
