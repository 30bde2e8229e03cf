"""Event records -> HTML: the token stream, the current cycle's cards, counters and the race.

Every function here is pure (records in, a string out) so it is tested by rendering to a string and
comparing, without a browser. Token text comes from a model and may contain anything, so every
piece of it goes through ``esc`` (``html.escape`` with ``quote=True``) before it lands in an element
or an attribute; numbers are formatted by this module and never escaped twice.

The classes map to ``assets/specviz.css``: ``sv-accepted``, ``sv-rejected``, ``sv-untested``,
``sv-resampled``, ``sv-bonus`` and ``sv-target``. Each origin differs in shape as well as hue
(underline, strike-through, double underline, outline) so the stream reads without colour vision.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass

from specviz.core.events import Cycle, DraftToken, EmittedToken, Origin, Rejection, Step, Totals

# The sentence the race panel shows, so nobody has to ask how the speedup was measured.
RACE_METHOD = (
    "Both runs decode the same target with the same settings and seed, one after the other; "
    "speeds are compute time measured inside the engine (each reads the prompt in its first "
    "pass; the app's own drawing is excluded), so the UI does not distort the comparison."
)


@dataclass(frozen=True)
class _Kind:
    """How one origin looks and what the legend says about it."""

    css: str
    label: str
    meaning: str


_KINDS: dict[str, _Kind] = {
    "accepted": _Kind(
        "sv-accepted", "accepted draft", "the draft guessed it and the target agreed"
    ),
    "rejected": _Kind(
        "sv-rejected", "rejected draft", "the draft's guess, thrown away by the target"
    ),
    "untested": _Kind(
        "sv-untested", "never tested", "drafted after a rejection, so discarded unchecked"
    ),
    "resampled": _Kind(
        "sv-resampled", "resampled", "the target's replacement for the rejected guess"
    ),
    "bonus": _Kind("sv-bonus", "bonus", "a free extra token when every draft was accepted"),
    "target": _Kind("sv-target", "plain decoding", "one target forward pass per token"),
}


def esc(text: str) -> str:
    return html.escape(text, quote=True)


def num(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def shown(text: str) -> str:
    """Token text for display in an element: escaped, with newlines and empties made visible."""
    if text == "":
        return '<span class="sv-empty" aria-hidden="true">∅</span>'
    return esc(text).replace("\n", '<span class="sv-nl" aria-hidden="true">↵</span>\n')


def _quoted(text: str) -> str:
    """Token text for a tooltip line: whitespace spelled out so a lone space or newline is visible."""
    spelled = text.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t")
    return f"“{spelled}”"


def _span(css: str, text: str, tip_lines: Sequence[str], data: dict[str, str]) -> str:
    """One token: a focusable span whose data-tip holds the tooltip (CSS shows it on hover/focus)."""
    tip = "\n".join(tip_lines)
    attrs = "".join(f' data-{key}="{esc(value)}"' for key, value in data.items())
    return (
        f'<span class="sv-tok {css}" tabindex="0"{attrs} data-tip="{esc(tip)}">{shown(text)}</span>'
    )


# --- the token stream ---------------------------------------------------------------------------


def _draft_span(cycle: Cycle, token: DraftToken) -> str:
    kind = token.verdict
    if cycle.greedy:
        rule = "greedy: accepted only if it is the target's top choice"
    else:
        rule = f"u = {num(token.uniform)}  (accepted when u < min(1, p/q))"
    lines = [
        f"{_quoted(token.text)}  {_KINDS[kind].label}",
        f"cycle {cycle.index + 1}, draft position {token.position} of {cycle.gamma}",
        f"q_draft = {num(token.q_draft)}   p_target = {num(token.p_target)}",
        f"min(1, p/q) = {num(token.accept_prob)}",
        rule if token.tested else "never tested: an earlier draft token was rejected",
    ]
    data = {
        "origin": kind,
        "cycle": str(cycle.index + 1),
        "pos": str(token.position),
        "seq": str(token.seq_index),
        "q": num(token.q_draft, 4),
        "p": num(token.p_target, 4),
        "accept": num(token.accept_prob, 4),
        "u": num(token.uniform, 4),
    }
    return _span(_KINDS[kind].css, token.text, lines, data)


def _extra_span(cycle: Cycle, token: EmittedToken) -> str:
    """The resampled or bonus token that closes a cycle."""
    kind = token.origin.value
    if token.origin is Origin.BONUS:
        source = "drawn from p after every draft token was accepted"
    elif cycle.greedy:
        source = "the target's top choice at the rejected position"
    else:
        source = "drawn from norm(max(0, p − q)) at the rejected position"
    lines = [
        f"{_quoted(token.text)}  {_KINDS[kind].label}",
        f"cycle {cycle.index + 1}, position {cycle.accepted_len + 1}",
        source,
        f"probability = {num(token.prob)}",
    ]
    data = {
        "origin": kind,
        "cycle": str(cycle.index + 1),
        "pos": str(cycle.accepted_len + 1),
        "seq": str(token.seq_index),
        "prob": num(token.prob, 4),
    }
    return _span(_KINDS[kind].css, token.text, lines, data)


def cycle_tokens_html(cycle: Cycle) -> str:
    """One cycle in the stream: a boundary mark, accepted drafts, the discarded guesses, the extra."""
    parts = [
        f'<span class="sv-cut" data-cycle="{cycle.index + 1}" '
        f'title="cycle {cycle.index + 1}">{cycle.index + 1}</span>'
    ]
    accepted = cycle.drafted[: cycle.accepted_len]
    parts.extend(_draft_span(cycle, token) for token in accepted)
    # The rejected guess and the untested tail sit where they were proposed, struck through.
    parts.extend(_draft_span(cycle, token) for token in cycle.drafted[cycle.accepted_len :])
    parts.extend(_extra_span(cycle, token) for token in cycle.emitted[len(accepted) :])
    return f'<span class="sv-cycle" data-cycle="{cycle.index + 1}">{"".join(parts)}</span>'


def stream_html(cycles: Sequence[Cycle], *, placeholder: str = "") -> str:
    """The whole speculative token stream so far, coloured by origin, with cycle boundaries."""
    body = "".join(cycle_tokens_html(cycle) for cycle in cycles)
    if not body:
        body = f'<span class="sv-placeholder">{esc(placeholder)}</span>'
    end = _stop_note(cycles[-1].stop_reason) if cycles else ""
    return f'<div class="sv-stream" data-cycles="{len(cycles)}">{body}{end}</div>'


def _stop_note(stop_reason: str | None) -> str:
    if stop_reason is None:
        return ""
    words = {"eos": "end of text", "max_new_tokens": "token limit reached"}
    return f'<span class="sv-stop">■ {esc(words.get(stop_reason, stop_reason))}</span>'


def plain_stream_html(steps: Sequence[Step], *, placeholder: str = "") -> str:
    """Plain decoding's tokens: one neutral span each (there is nothing to accept or reject)."""
    spans = [
        _span(
            "sv-target",
            step.token.text,
            [
                f"{_quoted(step.token.text)}  plain decoding",
                f"token {step.index + 1}: one target forward pass",
                f"p_target = {num(step.token.prob)}",
            ],
            {"origin": "target", "seq": str(step.index), "prob": num(step.token.prob, 4)},
        )
        for step in steps
    ]
    body = "".join(spans) or f'<span class="sv-placeholder">{esc(placeholder)}</span>'
    end = _stop_note(steps[-1].stop_reason) if steps else ""
    return f'<div class="sv-stream sv-plain" data-steps="{len(steps)}">{body}{end}</div>'


def legend_html(*, include_target: bool = False) -> str:
    """A key to the token colours and shapes, with a sample token for each."""
    names = ["accepted", "rejected", "untested", "resampled", "bonus"]
    if include_target:
        names.append("target")
    items = "".join(
        f'<span class="sv-legend-item"><span class="sv-tok {_KINDS[name].css}">token</span>'
        f"<b>{esc(_KINDS[name].label)}</b> <small>{esc(_KINDS[name].meaning)}</small></span>"
        for name in names
    )
    cut = (
        '<span class="sv-legend-item"><span class="sv-cut">7</span>'
        "<b>cycle boundary</b> <small>one target forward pass each</small></span>"
    )
    hint = '<span class="sv-legend-hint">Hover or click a token for q, p, min(1, p/q) and u.</span>'
    return f'<div class="sv-legend">{items}{cut}{hint}</div>'


# --- the current cycle, large -------------------------------------------------------------------


def _card(cycle: Cycle, token: DraftToken) -> str:
    kind = token.verdict
    verdict = {"accepted": "✓ accepted", "rejected": "✗ rejected", "untested": "– not tested"}
    accept_pct = max(0.0, min(100.0, token.accept_prob * 100))
    marker = ""
    if token.uniform is not None:
        u_pct = max(0.0, min(100.0, token.uniform * 100))
        marker = f'<span class="sv-bar-u" style="left:{u_pct:.1f}%" title="u = {token.uniform:.3f}"></span>'
    if cycle.greedy:
        rule = "greedy: is it the target's top choice?"
    else:
        rule = f"accept if u {num(token.uniform, 2)} &lt; {num(token.accept_prob, 2)}"
    return (
        f'<div class="sv-card {_KINDS[kind].css}" style="--i:{token.position - 1}" '
        f'data-origin="{kind}" data-pos="{token.position}">'
        f'<div class="sv-card-pos">draft {token.position}</div>'
        f'<div class="sv-card-tok">{shown(token.text)}</div>'
        f'<div class="sv-card-verdict">{verdict[kind]}</div>'
        f'<div class="sv-bar" role="img" aria-label="min(1, p/q) = {num(token.accept_prob)}">'
        f'<span class="sv-bar-fill" style="width:{accept_pct:.1f}%"></span>{marker}</div>'
        f'<div class="sv-card-nums">q {num(token.q_draft, 2)} · p {num(token.p_target, 2)}'
        f"<br>min(1, p/q) {num(token.accept_prob, 2)}<br>{rule}</div></div>"
    )


def _extra_card(cycle: Cycle, token: EmittedToken) -> str:
    kind = token.origin.value
    why = (
        "every draft accepted: one more token from p for free"
        if token.origin is Origin.BONUS
        else ("target's top choice" if cycle.greedy else "drawn from norm(max(0, p − q))")
    )
    return (
        f'<div class="sv-card sv-card-extra {_KINDS[kind].css}" style="--i:{cycle.gamma}" '
        f'data-origin="{kind}">'
        f'<div class="sv-card-pos">{esc(_KINDS[kind].label)}</div>'
        f'<div class="sv-card-tok">{shown(token.text)}</div>'
        f'<div class="sv-card-verdict">{"★ bonus" if kind == "bonus" else "↻ resampled"}</div>'
        f'<div class="sv-card-nums">probability {num(token.prob, 2)}<br>{why}</div></div>'
    )


def cycle_cards_html(cycle: Cycle | None) -> str:
    """The current cycle: γ draft cards that flip to their verdict, then the resampled/bonus card."""
    if cycle is None:
        return (
            '<div class="sv-cards-wrap"><div class="sv-cards-head">Current cycle</div>'
            '<div class="sv-placeholder">Press Run or Step: the draft model proposes γ tokens, '
            "the target checks them all in one forward pass.</div></div>"
        )
    accepted = cycle.accepted_len
    emitted_extra = cycle.emitted[accepted:]
    if cycle.rejection is not None:
        outcome = f"rejected at draft {cycle.rejection.position}, the target supplied a replacement"
    elif emitted_extra:
        outcome = "all accepted, plus a bonus token"
    elif cycle.stop_reason == "eos":
        outcome = "all accepted, and the answer ended"
    else:
        outcome = "all accepted, and the token limit was reached"
    head = (
        f'<div class="sv-cards-head"><b>Cycle {cycle.index + 1}</b> · drafted γ = {cycle.gamma}'
        f" · {accepted} accepted · {esc(outcome)} → <b>{len(cycle.emitted)} new token"
        f"{'s' if len(cycle.emitted) != 1 else ''}</b> from one target pass</div>"
    )
    cards = [_card(cycle, token) for token in cycle.drafted]
    cards.extend(_extra_card(cycle, token) for token in emitted_extra)
    arrow = '<div class="sv-card-arrow" aria-hidden="true">→</div>'
    if emitted_extra:
        cards.insert(len(cycle.drafted), arrow)
    timing = cycle.timing
    foot = (
        f'<div class="sv-cards-foot">draft {timing.draft_s * 1000:.0f} ms · verify '
        f"{timing.verify_s * 1000:.0f} ms · overhead {timing.overhead_s * 1000:.0f} ms · "
        f"KV cache after rollback: target {cycle.target_cache_len}, draft {cycle.draft_cache_len}"
        "</div>"
    )
    return (
        f'<div class="sv-cards-wrap" data-cycle="{cycle.index + 1}">{head}'
        f'<div class="sv-cards">{"".join(cards)}</div>{foot}</div>'
    )


def rejection_caption(rejection: Rejection | None, cycle_number: int | None = None) -> str:
    """A line under the p/q/residual chart saying which guess lost to which replacement."""
    if rejection is None:
        return (
            '<div class="sv-caption">No rejection yet: every draft token has been accepted.</div>'
        )
    where = f"cycle {cycle_number}, " if cycle_number is not None else ""
    return (
        f'<div class="sv-caption">Last rejection ({where}draft {rejection.position}): '
        f'the draft guessed <span class="sv-tok sv-rejected">{shown(rejection.rejected_token.text)}</span>'
        f" (q = {num(rejection.rejected_token.prob)}); the target replaced it with "
        f'<span class="sv-tok sv-resampled">{shown(rejection.resampled_token.text)}</span>.</div>'
    )


# --- counters and the race ----------------------------------------------------------------------


def _stat(label: str, value: str, note: str, key: str) -> str:
    return (
        f'<div class="sv-stat" data-stat="{key}"><div class="sv-stat-value">{value}</div>'
        f'<div class="sv-stat-label">{label}</div><div class="sv-stat-note">{note}</div></div>'
    )


def counters_html(totals: Totals | None, *, gamma_now: int | None = None) -> str:
    """The live counters: tokens, passes of each model, α, τ, tokens/s and target passes saved."""
    if totals is None:
        totals = Totals(0, 0, 0, 0, 0, 0.0, 0.0)
    saved = totals.new_tokens - totals.target_forwards
    saved_pct = 100 * saved / totals.new_tokens if totals.new_tokens else 0.0
    stats = [
        _stat("tokens generated", str(totals.new_tokens), "new tokens so far", "tokens"),
        _stat(
            "target passes",
            str(totals.target_forwards),
            f"plain decoding needs {totals.new_tokens}",
            "target_forwards",
        ),
        _stat(
            "target passes saved",
            str(saved),
            f"{saved_pct:.0f}% fewer than plain decoding",
            "saved",
        ),
        _stat("draft passes", str(totals.draft_forwards), "cheap forwards of the draft", "draft"),
        _stat(
            "acceptance rate α",
            f"{totals.acceptance_rate:.0%}",
            f"{totals.accepted_positions} of {totals.tested_positions} tested drafts",
            "alpha",
        ),
        _stat(
            "tokens per target pass τ",
            f"{totals.tokens_per_target_pass:.2f}",
            "plain decoding: 1.00",
            "tau",
        ),
        _stat(
            "tokens / s",
            f"{totals.tokens_per_s:.1f}",
            f"{totals.elapsed_s:.2f} s engine time",
            "tps",
        ),
    ]
    if gamma_now is not None:
        stats.append(_stat("γ this cycle", str(gamma_now), "tokens drafted", "gamma"))
    return f'<div class="sv-counters">{"".join(stats)}</div>'


def _race_panel(title: str, body: str, totals: Totals | None, extra_class: str) -> str:
    if totals is None:
        numbers = "waiting"
    else:
        numbers = (
            f"<b>{totals.tokens_per_s:.1f} tok/s</b> · {totals.new_tokens} tokens · "
            f"{totals.target_forwards} target passes · {totals.elapsed_s:.2f} s"
        )
    return (
        f'<div class="sv-race-panel {extra_class}"><div class="sv-race-title">{esc(title)}'
        f'<span class="sv-race-numbers">{numbers}</span></div>{body}</div>'
    )


def speedup(cycles: Sequence[Cycle], steps: Sequence[Step]) -> float | None:
    """Speculative tokens/s over plain tokens/s (engine compute time), once both have tokens."""
    if not cycles or not steps:
        return None
    spec, plain = cycles[-1].totals.tokens_per_s, steps[-1].totals.tokens_per_s
    return spec / plain if plain > 0 else None


def race_html(
    cycles: Sequence[Cycle],
    steps: Sequence[Step],
    *,
    status: str = "",
) -> str:
    """The two runs side by side with their speeds, the measured speedup and how it was measured."""
    spec_totals = cycles[-1].totals if cycles else None
    plain_totals = steps[-1].totals if steps else None
    ratio = speedup(cycles, steps)
    headline = (
        f'<span class="sv-speedup" data-speedup="{ratio:.3f}">{ratio:.2f}× faster</span>'
        if ratio is not None
        else '<span class="sv-speedup">speedup: waiting for both runs</span>'
    )
    panels = _race_panel(
        "Speculative decoding",
        stream_html(cycles, placeholder="not started"),
        spec_totals,
        "sv-race-spec",
    ) + _race_panel(
        "Plain decoding (target only)",
        plain_stream_html(steps, placeholder="runs after the speculative run"),
        plain_totals,
        "sv-race-plain",
    )
    status_html = f'<span class="sv-race-status">{esc(status)}</span>' if status else ""
    note = divergence_note(cycles, steps)
    note_html = f'<div class="sv-race-method sv-race-diverge">{esc(note)}</div>' if note else ""
    return (
        f'<div class="sv-race"><div class="sv-race-head">{headline}{status_html}</div>'
        f'<div class="sv-race-panels">{panels}</div>'
        f'<div class="sv-race-method">{esc(RACE_METHOD)}</div>{note_html}</div>'
    )


def divergence_note(cycles: Sequence[Cycle], steps: Sequence[Step]) -> str:
    """Why two finished greedy runs can print different texts, said where they part."""
    if not cycles or not steps or not cycles[-1].finished or not steps[-1].finished:
        return ""
    spec = [token.token_id for cycle in cycles for token in cycle.emitted]
    plain = [step.token.token_id for step in steps]
    if spec == plain:
        return "Both runs produced exactly the same tokens." if cycles[-1].greedy else ""
    if not cycles[-1].greedy:
        return (
            "The texts differ because sampling draws different random numbers; both follow the "
            "target's distribution exactly."
        )
    parted = next(
        (i for i, pair in enumerate(zip(spec, plain, strict=False)) if pair[0] != pair[1]), None
    )
    where = f"at token {parted + 1}" if parted is not None else "in length"
    return (
        f"The greedy texts part {where}: in reduced precision the target's one batched "
        "verification pass and its one-token steps round slightly differently, so a near-tie can "
        "break the other way. In float32 they match token for token (see the tests)."
    )


def replay_frame(cycles: Sequence[Cycle], steps: Sequence[Step], at_s: float) -> str:
    """The race as it stood ``at_s`` seconds of engine time into both runs (for Replay)."""
    shown_cycles = [cycle for cycle in cycles if cycle.totals.elapsed_s <= at_s]
    shown_steps = [step for step in steps if step.totals.elapsed_s <= at_s]
    return race_html(shown_cycles, shown_steps, status=f"replay · {at_s:.1f} s")


def replay_duration(cycles: Sequence[Cycle], steps: Sequence[Step]) -> float:
    """Engine seconds until both runs have finished: how long Replay takes at real speed."""
    ends = [run[-1].totals.elapsed_s for run in (cycles, steps) if run]
    return max(ends, default=0.0)


def status_html(message: str, *, kind: str = "info") -> str:
    """A one-line status above the stream (loading, running, paused, finished)."""
    return f'<div class="sv-status sv-status-{esc(kind)}">{esc(message)}</div>'
