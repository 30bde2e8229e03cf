"""Event records -> HTML: the token stream, the current cycle's cards and counters (the race
is ``race_html``; the prompt a copying drafter copies from, ``prompt_strip``).

Every function here is pure (records in, a string out) so it is tested by rendering to a string and
comparing, without a browser. Token text comes from a model and may contain anything, so every
piece of it goes through ``esc`` (``html.escape`` with ``quote=True``) before it lands in an element
or an attribute; numbers are formatted by this module and never escaped twice. How a token's text
reads (control-token markers, characters split over byte tokens, whitespace glyphs) lives in
``token_text``, the sentence saying why each token was kept or thrown away in ``verdicts``, and
every probability a person reads goes through ``numbers.prob``. The words come from the text
catalogue (``specviz.text``) in the language each function is given.

The classes map to ``assets/specviz.css``: ``sv-accepted``, ``sv-rejected``, ``sv-untested``,
``sv-resampled``, ``sv-bonus`` and ``sv-target``. Each origin differs in shape as well as hue
(underline, strike-through, double underline, outline) so the stream reads without colour vision.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from specviz.core.events import Cycle, DraftToken, EmittedToken, Rejection, Step, Totals
from specviz.drafters.registry import Drafts, find_drafter
from specviz.measure.race_records import LaneGain
from specviz.models.heads.report import HeadsAgreement
from specviz.text import DEFAULT_LANGUAGE, Html, t, t_html
from specviz.views.draft_length import drafted_words, short_draft_reason
from specviz.views.heads_html import heads_panel_html
from specviz.views.lookahead_html import lookahead_panel_html
from specviz.views.numbers import prob, ratio
from specviz.views.token_text import (
    Joined,
    esc,
    joined_characters,
    num,
    shown,
    text_tip,
    tip_name,
    token_classes,
)
from specviz.views.tree_html import tree_panel_html
from specviz.views.verdicts import (
    chance_text,
    dice_numbers,
    draft_verdict,
    extra_verdict,
    has_dice_roll,
    math_text,
)


@dataclass(frozen=True)
class _Kind:
    """How one origin looks, and the catalogue keys of its legend label and meaning."""

    css: str
    label: str
    meaning: str


_KINDS: dict[str, _Kind] = {
    "accepted": _Kind("sv-accepted", "origin.accepted", "origin.accepted.meaning"),
    "rejected": _Kind("sv-rejected", "origin.rejected", "origin.rejected.meaning"),
    "untested": _Kind("sv-untested", "origin.untested", "origin.untested.meaning"),
    "resampled": _Kind("sv-resampled", "origin.resampled", "origin.resampled.meaning"),
    "bonus": _Kind("sv-bonus", "origin.bonus", "origin.bonus.meaning"),
    "target": _Kind("sv-target", "origin.target", "origin.target.meaning"),
}


def _span(
    css: str,
    token: DraftToken | EmittedToken,
    tip_lines: Sequence[str],
    data: dict[str, str],
    joined: Joined | None,
    lang: str,
) -> str:
    """One token: a focusable span whose data-tip holds the tooltip (CSS shows it on hover/focus)."""
    text, special = token.text, token.special
    tip = "\n".join([*tip_lines, *text_tip(text, special, joined, lang)])
    attrs = "".join(f' data-{key}="{esc(value)}"' for key, value in data.items())
    classes = css + token_classes(text, special, joined)
    return (
        f'<span class="sv-tok {classes}" tabindex="0"{attrs} data-tip="{esc(tip)}">'
        f"{shown(text, special, lang)}</span>"
    )


def _head(token: DraftToken | EmittedToken, kind: str, lang: str) -> str:
    """A tooltip's first line: the token, and its origin."""
    name = tip_name(token.text, token.special)
    return t("tip.head", lang, token=name, origin=t(_KINDS[kind].label, lang))


# --- the token stream ---------------------------------------------------------------------------


def _draft_span(
    cycle: Cycle, token: DraftToken, joined: Joined | None, lang: str, prompt_shown: bool
) -> str:
    kind = token.verdict
    copied = _copy_source(cycle, token)
    rolled = has_dice_roll(cycle, token)
    lines = [
        _head(token, kind, lang),
        t(
            "tip.draft_where",
            lang,
            cycle=cycle.index + 1,
            position=token.position,
            gamma=cycle.draft_len,
        ),
        t("tip.q_and_p", lang, q=prob(token.q_draft), p=prob(token.p_target)),
    ]
    # The maths that decided a sampled draft, then the same in words (the inspector's sentence).
    # Greedy compares argmaxes and has no die; an untested draft was never judged.
    if rolled:
        lines.append(math_text(cycle, token, lang))
    lines.append(draft_verdict(cycle, token).text(lang))
    if copied is not None:
        source, prompt_len = copied
        if source < prompt_len:
            key = "tip.copied_from.prompt_shown" if prompt_shown else "tip.copied_from.prompt"
            lines.append(t(key, lang, index=source + 1))
        else:
            lines.append(t("tip.copied_from.text", lang, index=source - prompt_len + 1))
    data = {
        "origin": kind,
        "cycle": str(cycle.index + 1),
        "pos": str(token.position),
        "seq": str(token.seq_index),
        "q": num(token.q_draft, 4),
        "p": num(token.p_target, 4),
        "accept": num(token.accept_prob if rolled else None),
        "u": num(token.uniform, 4),
    }
    if copied is not None and cycle.copied_from is not None:
        # The stream's tokens carry data-seq (their index in the generated text; the prompt
        # strip's count back from the prompt's end, so -1 is its last token); the stream's script
        # lights up the token a copy came from, and the span the cycle copied, on hover.
        prompt_len = copied[1]
        data["from-seq"] = str(copied[0] - prompt_len)
        data["from-span"] = " ".join(str(source - prompt_len) for source in cycle.copied_from)
    return _span(_KINDS[kind].css, token, lines, data, joined, lang)


def _copy_source(cycle: Cycle, token: DraftToken) -> tuple[int, int] | None:
    """(context position the token was copied from, prompt length) for a copying drafter's
    token, None for a guessed one. The context is the prompt then the generated text."""
    if cycle.copied_from is None or not 1 <= token.position <= len(cycle.copied_from):
        return None
    prompt_len = cycle.context_len - cycle.totals.new_tokens
    return cycle.copied_from[token.position - 1], prompt_len


def _extra_span(cycle: Cycle, token: EmittedToken, joined: Joined | None, lang: str) -> str:
    """The resampled or bonus token that closes a cycle."""
    kind = token.origin.value
    lines = [
        _head(token, kind, lang),
        t("tip.extra_where", lang, cycle=cycle.index + 1, position=cycle.accepted_len + 1),
        extra_verdict(cycle, token).text(lang),
    ]
    data = {
        "origin": kind,
        "cycle": str(cycle.index + 1),
        "pos": str(cycle.accepted_len + 1),
        "seq": str(token.seq_index),
        "prob": num(token.prob, 4),
    }
    return _span(_KINDS[kind].css, token, lines, data, joined, lang)


def cycle_tokens_html(
    cycle: Cycle,
    *,
    joined: Mapping[int, Joined] | None = None,
    lang: str = DEFAULT_LANGUAGE,
    prompt_shown: bool = False,
) -> str:
    """One cycle in the stream: a boundary mark, accepted drafts, the discarded guesses, the extra.

    ``joined`` (from ``joined_characters`` over the whole run) says which kept tokens wrote a
    character split over several tokens; by default it is worked out from this cycle alone.
    ``prompt_shown``: the prompt's tokens are on the page (``prompt_strip_html``), so a copy
    from the prompt says its source is lit up there.
    """
    if joined is None:
        joined = joined_characters(cycle.emitted)
    # A draft model's cycles are the ordinary case and go unmarked; any other proposer (one not
    # registered here too, in a trace read back) is named on its cycles' marks.
    entry = find_drafter(cycle.drafter)
    drafts = entry.drafts if entry is not None else None
    by = "" if drafts is Drafts.WITH_DRAFT_MODEL or not cycle.drafter else cycle.drafter
    if by:
        named = f"{by} {cycle.drafter_detail}".strip()  # layer skip adds its layers: "skip=8-15"
        title = t_html("stream.cycle_mark.by", lang, cycle=cycle.index + 1, drafter=named)
    else:
        title = t_html("stream.cycle_mark", lang, cycle=cycle.index + 1)
    # A cycle drafted by a proposer other than the draft model (lookup's copies, per cycle in
    # the hybrid) gets its mark styled by how it drafts, so the stream shows who drafted.
    by_attr = f' data-drafter="{esc(by)}"' if by else ""
    if by and drafts is not None:
        by_attr += f' data-drafts="{drafts.value}"'
    parts = [
        f'<span class="sv-cut" data-cycle="{cycle.index + 1}"{by_attr} '
        f'title="{title}">{cycle.index + 1}</span>'
    ]
    accepted = cycle.drafted[: cycle.accepted_len]
    parts.extend(
        _draft_span(cycle, token, joined.get(token.seq_index), lang, prompt_shown)
        for token in accepted
    )
    # The rejected guess and the untested tail sit where they were proposed, struck through. They
    # share seq indices with the tokens kept in their place, so they never take part in a join.
    parts.extend(
        _draft_span(cycle, token, None, lang, prompt_shown)
        for token in cycle.drafted[len(accepted) :]
    )
    parts.extend(
        _extra_span(cycle, token, joined.get(token.seq_index), lang)
        for token in cycle.emitted[len(accepted) :]
    )
    # data-accepted: the bar of the accepted-length chart this cycle counts in (assets/linked.js).
    return (
        f'<span class="sv-cycle" data-cycle="{cycle.index + 1}" '
        f'data-accepted="{cycle.accepted_len}">{"".join(parts)}</span>'
    )


def stream_html(
    cycles: Sequence[Cycle],
    *,
    placeholder: str = "",
    lang: str = DEFAULT_LANGUAGE,
    prompt_shown: bool = False,
) -> str:
    """The whole speculative token stream so far, coloured by origin, with cycle boundaries
    (``prompt_shown``: the prompt strip is on the page, see ``cycle_tokens_html``)."""
    joined = joined_characters(token for cycle in cycles for token in cycle.emitted)
    body = "".join(
        cycle_tokens_html(cycle, joined=joined, lang=lang, prompt_shown=prompt_shown)
        for cycle in cycles
    )
    if not body:
        body = f'<span class="sv-placeholder">{esc(placeholder)}</span>'
    end = _stop_note(cycles[-1].stop_reason, lang) if cycles else ""
    return f'<div class="sv-stream" data-cycles="{len(cycles)}">{body}{end}</div>'


_STOP_WORDS = {"eos": "stream.stop.eos", "max_new_tokens": "stream.stop.max_new_tokens"}


def _stop_note(stop_reason: str | None, lang: str) -> str:
    if stop_reason is None:
        return ""
    key = _STOP_WORDS.get(stop_reason)
    words = t(key, lang) if key is not None else stop_reason
    return f'<span class="sv-stop">■ {esc(words)}</span>'


def plain_stream_html(
    steps: Sequence[Step], *, placeholder: str = "", lang: str = DEFAULT_LANGUAGE
) -> str:
    """Plain decoding's tokens: one neutral span each (there is nothing to accept or reject)."""
    joined = joined_characters(step.token for step in steps)
    spans = [
        _span(
            "sv-target",
            step.token,
            [
                _head(step.token, "target", lang),
                t("tip.plain_where", lang, index=step.index + 1),
                t("tip.p_target", lang, p=prob(step.token.prob)),
            ],
            {"origin": "target", "seq": str(step.index), "prob": num(step.token.prob, 4)},
            joined.get(step.token.seq_index),
            lang,
        )
        for step in steps
    ]
    body = "".join(spans) or f'<span class="sv-placeholder">{esc(placeholder)}</span>'
    end = _stop_note(steps[-1].stop_reason, lang) if steps else ""
    return f'<div class="sv-stream sv-plain" data-steps="{len(steps)}">{body}{end}</div>'


def legend_html(*, include_target: bool = False, lang: str = DEFAULT_LANGUAGE) -> str:
    """A key to the token colours and shapes, with a sample token for each."""
    names = ["accepted", "rejected", "untested", "resampled", "bonus"]
    if include_target:
        names.append("target")
    sample = t_html("legend.sample", lang)
    items = "".join(
        f'<span class="sv-legend-item"><span class="sv-tok {_KINDS[name].css}">{sample}</span>'
        f"<b>{t_html(_KINDS[name].label, lang)}</b> "
        f"<small>{t_html(_KINDS[name].meaning, lang)}</small></span>"
        for name in names
    )
    cut = (
        '<span class="sv-legend-item"><span class="sv-cut">7</span>'
        f"<b>{t_html('legend.cycle', lang)}</b> "
        f"<small>{t_html('legend.cycle.meaning', lang)}</small></span>"
    )
    hint = f'<span class="sv-legend-hint">{t_html("legend.hint", lang)}</span>'
    return f'<div class="sv-legend">{items}{cut}{hint}</div>'


# --- the current cycle, large -------------------------------------------------------------------

_VERDICTS = {
    "accepted": "card.verdict.accepted",
    "rejected": "card.verdict.rejected",
    "untested": "card.verdict.untested",
}


def _acceptance_bar(cycle: Cycle, token: DraftToken, lang: str) -> str:
    """min(1, p/q) as a filled bar with the drawn u as a labelled tick: accepted when the tick
    lies inside the fill."""
    accept_pct = max(0.0, min(100.0, token.accept_prob * 100))
    marker = ""
    if token.uniform is not None:
        u_pct = max(0.0, min(100.0, token.uniform * 100))
        # The label sits under the tick, turned inwards near either end so it stays on the card.
        side = " sv-bar-u-end" if u_pct > 70 else " sv-bar-u-start" if u_pct < 30 else ""
        label = t_html("card.u", lang, u=dice_numbers(token)[0])
        marker = (
            f'<span class="sv-bar-u{side}" style="left:{u_pct:.1f}%" aria-hidden="true">'
            f'<span class="sv-bar-u-label">{label}</span></span>'
        )
    return (
        f'<div class="sv-bar" role="img" aria-label="{esc(math_text(cycle, token, lang))}">'
        f'<span class="sv-bar-fill" style="width:{accept_pct:.1f}%"></span>{marker}</div>'
    )


def _card(cycle: Cycle, token: DraftToken, lang: str) -> str:
    """A drafted token: its verdict as the headline and the reason under it, the bar where a die
    decided, then q, p and min(1, p/q)."""
    kind = token.verdict
    lines: list[str] = [t_html("card.q_and_p", lang, q=prob(token.q_draft), p=prob(token.p_target))]
    bar = ""
    if has_dice_roll(cycle, token):
        bar = _acceptance_bar(cycle, token, lang)
        lines.append(esc(chance_text(cycle, token, lang)))
    reason = esc(draft_verdict(cycle, token).reason.text(lang))
    return (
        f'<div class="sv-card {_KINDS[kind].css}" style="--i:{token.position - 1}" '
        f'data-origin="{kind}" data-pos="{token.position}">'
        f'<div class="sv-card-pos">{t_html("card.position", lang, position=token.position)}</div>'
        f'<div class="sv-card-tok">{shown(token.text, token.special, lang)}</div>'
        f'<div class="sv-card-verdict">{t_html(_VERDICTS[kind], lang)}</div>'
        f'<div class="sv-card-reason">{reason}</div>'
        f'{bar}<div class="sv-card-nums">{"<br>".join(lines)}</div></div>'
    )


def _extra_card(cycle: Cycle, token: EmittedToken, lang: str) -> str:
    """The resampled or bonus token: its verdict and where it came from, with its probability."""
    kind = token.origin.value
    verdict = "card.verdict.bonus" if kind == "bonus" else "card.verdict.resampled"
    reason = esc(extra_verdict(cycle, token).reason.text(lang))
    return (
        f'<div class="sv-card sv-card-extra {_KINDS[kind].css}" style="--i:{cycle.draft_len}" '
        f'data-origin="{kind}" data-pos="{cycle.accepted_len + 1}">'
        f'<div class="sv-card-pos">{t_html(_KINDS[kind].label, lang)}</div>'
        f'<div class="sv-card-tok">{shown(token.text, token.special, lang)}</div>'
        f'<div class="sv-card-verdict">{t_html(verdict, lang)}</div>'
        f'<div class="sv-card-reason">{reason}</div></div>'
    )


def _outcome(cycle: Cycle, lang: str) -> str:
    """How the cycle ended, in a few words."""
    if cycle.rejection is not None:
        return t("cards.outcome.rejected", lang, position=cycle.rejection.position)
    if cycle.emitted[cycle.accepted_len :]:
        return t("cards.outcome.bonus", lang)
    if cycle.stop_reason == "eos":
        return t("cards.outcome.eos", lang)
    return t("cards.outcome.limit", lang)


def _short_draft_line(cycle: Cycle, lang: str) -> str:
    """The line under the head saying why the draft stopped before γ ("" when it reached γ)."""
    reason = short_draft_reason(cycle, lang)
    if not reason:
        return ""
    line = t_html("cards.short", lang, drafted=drafted_words(cycle, lang), reason=reason)
    return f'<div class="sv-cards-why" data-end="{cycle.draft_end}">{line}</div>'


def cycle_cards_html(
    cycle: Cycle | None,
    *,
    lang: str = DEFAULT_LANGUAGE,
    run: Sequence[Cycle] | None = None,
    heads: HeadsAgreement | None = None,
) -> str:
    """The current cycle: γ draft cards that flip to their verdict, then the resampled/bonus card;
    a tree cycle's tree under them, and a Medusa cycle's heads panel (*run*: the cycles up to
    this one, itself alone by default; *heads*: the heads' training report, None if unknown)."""
    if cycle is None:
        return (
            f'<div class="sv-cards-wrap"><div class="sv-cards-head">{t_html("cards.title", lang)}'
            f'</div><div class="sv-placeholder">{t_html("cards.placeholder", lang)}</div></div>'
        )
    accepted = cycle.accepted_len
    emitted_extra = cycle.emitted[accepted:]
    count = len(cycle.emitted)
    new_tokens = t_html("cards.new_tokens.one" if count == 1 else "cards.new_tokens", lang, n=count)
    head = t_html(
        "cards.head",
        lang,
        cycle=Html(f"<b>{t_html('cards.cycle', lang, cycle=cycle.index + 1)}</b>"),
        drafted=drafted_words(cycle, lang),
        accepted=accepted,
        outcome=_outcome(cycle, lang),
        # Classed so the guide (assets/guide.js) can quote the count as the page words it.
        new_tokens=Html(f'<b class="sv-cards-new">{new_tokens}</b>'),
    )
    cards = [_card(cycle, token, lang) for token in cycle.drafted]
    cards.extend(_extra_card(cycle, token, lang) for token in emitted_extra)
    arrow = '<div class="sv-card-arrow" aria-hidden="true">→</div>'
    if emitted_extra:
        cards.insert(len(cycle.drafted), arrow)
    timing = cycle.timing
    foot = t_html(
        "cards.foot",
        lang,
        draft_ms=f"{timing.draft_s * 1000:.0f}",
        verify_ms=f"{timing.verify_s * 1000:.0f}",
        overhead_ms=f"{timing.overhead_s * 1000:.0f}",
        target_cache=cycle.target_cache_len,
        draft_cache=cycle.draft_cache_len,
    )
    # Opening the inspector is its own action (the cards' script sends it), not a side effect of
    # a click on a token: a click on a token moves the player instead.
    inspect = (
        f'<button type="button" class="sv-inspect-open" data-cycle="{cycle.index + 1}">'
        f"{t_html('cards.inspect', lang)}</button>"
    )
    heads_panel = heads_panel_html(cycle, (cycle,) if run is None else run, heads, lang=lang)
    panel = heads_panel + lookahead_panel_html(cycle, lang=lang)
    # A tree cycle is laid out around its tree in presentation mode, to fit one screen: the tree
    # above the cards, or beside them with a panel under both (Medusa's heads, lookahead's
    # window); assets/specviz.css, .sv-tree-cycle and .sv-with-panel.
    tree = tree_panel_html(cycle, lang=lang)
    wrap = "sv-cards-wrap"
    if panel:
        wrap += " sv-with-panel"
    elif tree:
        wrap += " sv-tree-cycle"
    return (
        f'<div class="{wrap}" data-cycle="{cycle.index + 1}">'
        f'<div class="sv-cards-head">{head}{inspect}</div>{_short_draft_line(cycle, lang)}'
        f'<div class="sv-cards">{"".join(cards)}</div>{tree}'
        f'{panel}<div class="sv-cards-foot">{foot}</div></div>'
    )


def rejection_caption(
    rejection: Rejection | None, cycle_number: int | None = None, *, lang: str = DEFAULT_LANGUAGE
) -> str:
    """A line under the p/q/residual chart saying which guess lost to which replacement."""
    if rejection is None:
        return f'<div class="sv-caption">{t_html("caption.none", lang)}</div>'
    if cycle_number is not None:
        where = t_html("caption.where_cycle", lang, cycle=cycle_number, position=rejection.position)
    else:
        where = t_html("caption.where", lang, position=rejection.position)
    rejected = shown(rejection.rejected_token.text)
    resampled = shown(rejection.resampled_token.text)
    caption = t_html(
        "caption.rejection",
        lang,
        where=where,
        rejected=Html(f'<span class="sv-tok sv-rejected">{rejected}</span>'),
        q=prob(rejection.rejected_token.prob),
        resampled=Html(f'<span class="sv-tok sv-resampled">{resampled}</span>'),
    )
    return f'<div class="sv-caption">{caption}</div>'


# --- counters -----------------------------------------------------------------------------------


def _stat(label: str, value: str, note: str, key: str) -> str:
    """One counter; label and note are plain text, escaped here."""
    return (
        f'<div class="sv-stat" data-stat="{key}"><div class="sv-stat-value">{value}</div>'
        f'<div class="sv-stat-label">{esc(label)}</div>'
        f'<div class="sv-stat-note">{esc(note)}</div></div>'
    )


def time_saved_words(seconds: float, lang: str = DEFAULT_LANGUAGE) -> str:
    """Seconds gained over plain decoding: "0.45 s saved", or "5.38 s lost" when the lane was
    slower (never a negative "saved")."""
    key = "race.time.lost" if seconds < 0 else "race.time.saved"
    return t(key, lang, seconds=f"{abs(seconds):.2f}")


def raced_runs_words(count: int, lang: str = DEFAULT_LANGUAGE) -> str:
    """How many raced runs a median is over: "median of 3 raced runs", "one raced run: no spread"."""
    if count == 1:
        return t("race.runs.one", lang)
    return t("race.runs.median", lang, repeats=count)


def _speedup_stat(gain: LaneGain | None, lang: str) -> str:
    """The time counter: the raced speedup, the seconds it saved or lost and how firm it is, or
    how to measure it; an inconclusive speedup's note is its refusal to rank."""
    if gain is None:
        return _stat(t("counter.speedup", lang), "—", t("counter.speedup.none", lang), "speedup")
    judgement = gain.firmness
    if judgement.refusal is not None:
        note = t("counter.speedup.refused", lang, label=judgement.label, refusal=judgement.refusal)
    else:
        note = t(
            "counter.speedup.note",
            lang,
            time=time_saved_words(gain.seconds_saved.median, lang),
            runs=raced_runs_words(gain.speedup.count, lang),
            label=judgement.label,
        )
    value = f"{ratio(gain.speedup.median)}×"
    return _stat(t("counter.speedup", lang), value, note, "speedup")


def counters_html(
    totals: Totals | None,
    *,
    gamma_now: int | None = None,
    gain: LaneGain | None = None,
    lang: str = DEFAULT_LANGUAGE,
) -> str:
    """The live counters, time first: the raced speedup and seconds saved (*gain*, None before
    a race), target passes saved (work, not time), tokens, passes of each model, α, τ, tokens/s."""
    if totals is None:
        totals = Totals(0, 0, 0, 0, 0, 0.0, 0.0)
    saved = totals.new_tokens - totals.target_forwards
    saved_pct = 100 * saved / totals.new_tokens if totals.new_tokens else 0.0
    stats = [
        _speedup_stat(gain, lang),
        _stat(
            t("counter.saved", lang),
            str(saved),
            t("counter.saved.note", lang, percent=f"{saved_pct:.0f}"),
            "saved",
        ),
        _stat(
            t("counter.tokens", lang),
            str(totals.new_tokens),
            t("counter.tokens.note", lang),
            "tokens",
        ),
        _stat(
            t("counter.target_forwards", lang),
            str(totals.target_forwards),
            t("counter.target_forwards.note", lang, n=totals.new_tokens),
            "target_forwards",
        ),
        _stat(
            t("counter.draft", lang),
            str(totals.draft_forwards),
            t("counter.draft.note", lang),
            "draft",
        ),
        _stat(
            t("counter.alpha", lang),
            f"{totals.acceptance_rate:.0%}",
            t(
                "counter.alpha.note",
                lang,
                accepted=totals.accepted_positions,
                tested=totals.tested_positions,
            ),
            "alpha",
        ),
        _stat(
            t("counter.tau", lang),
            f"{totals.tokens_per_target_pass:.2f}",
            t("counter.tau.note", lang),
            "tau",
        ),
        _stat(
            t("counter.tps", lang),
            f"{totals.tokens_per_s:.1f}",
            t("counter.tps.note", lang, seconds=f"{totals.elapsed_s:.2f}"),
            "tps",
        ),
    ]
    if gamma_now is not None:
        stats.append(
            _stat(t("counter.gamma", lang), str(gamma_now), t("counter.gamma.note", lang), "gamma")
        )
    return f'<div class="sv-counters">{"".join(stats)}</div>'


def status_html(message: str, *, kind: str = "info") -> str:
    """A one-line status above the stream (loading, running, paused, finished). Focusable: in
    presentation mode it is cut to one line, and a tap (a touch screen has no hover) or the
    keyboard opens the rest."""
    return f'<div class="sv-status sv-status-{esc(kind)}" tabindex="0">{esc(message)}</div>'
