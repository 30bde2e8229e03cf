"""A race's lanes -> HTML: the headline, one lane per decoder, the replay frames.

Pure functions of a `RaceResult` (measured, finished runs), so the headline is always the final
measured ratio: a replay moves each lane at its own measured speed under a headline that never
changes, and no ratio of partial times is ever shown. Each headline says how firm it is
(``specviz.measure.firmness``) and an inconclusive one ranks nothing. Drafters are named by
their catalogue label, their spec in a tooltip. Token text goes through the stream renderers of
``run_html``, which escape it.
"""

from __future__ import annotations

from collections.abc import Sequence

from specviz.core.events import Cycle, Step
from specviz.drafters.base import DrafterSpec
from specviz.drafters.registry import drafter_label
from specviz.measure.firmness import Judgement
from specviz.measure.race_records import (
    LLAMA_LANES,
    LLAMA_PLAIN_LANE,
    Lane,
    LaneGain,
    RaceResult,
    engine_seconds,
)
from specviz.measure.spread import NOISY_SPREAD, Spread
from specviz.text import DEFAULT_LANGUAGE, Html, UserError, t, t_html
from specviz.views.numbers import ratio as ratio_text
from specviz.views.run_html import plain_stream_html, stream_html
from specviz.views.token_text import esc


def drafter_name(spec: str, lang: str = DEFAULT_LANGUAGE) -> str:
    """A drafter spec as people name it: its kind's catalogue label ("Prompt lookup (copies)"),
    with the options the spec sets after it; the spec itself where it does not parse. llama.cpp's
    lanes by their catalogue names."""
    if spec in LLAMA_LANES:
        return t("race.llama.plain" if spec == LLAMA_PLAIN_LANE else "race.llama.spec", lang)
    try:
        parsed = DrafterSpec.parse(spec)
    except UserError:
        return spec
    label = drafter_label(parsed.kind, lang)
    if not parsed.options:
        return label
    options = ", ".join(f"{name}={value}" for name, value in parsed.options)
    return t("drafter.with_options", lang, label=label, options=options)


def drafter_html(spec: str, lang: str = DEFAULT_LANGUAGE) -> Html:
    """The drafter's name as HTML, its spec string in a tooltip (the title attribute)."""
    return Html(
        f'<span class="sv-drafter" title="{esc(spec)}">{esc(drafter_name(spec, lang))}</span>'
    )


def speedup_words(ratio: float, lang: str = DEFAULT_LANGUAGE) -> str:
    """A speedup in words, as HTML: "1.37× faster", or "0.88× as fast (slower)" below 1 (a
    ratio under one is no speedup, and "0.88× faster" reads as one)."""
    key = "race.speedup" if ratio >= 1 else "race.speedup.slower"
    return t_html(key, lang, ratio=ratio_text(ratio))


def _range(spread: Spread, digits: int) -> str:
    """A spread's range in words ("1.21–1.45"), or "" for a single run."""
    if spread.count < 2:
        return ""
    return f"{spread.low:.{digits}f}–{spread.high:.{digits}f}"


def _ratio_range(spread: Spread) -> str:
    """A range of speedups ("0.996–1.04"), or "" for a single run."""
    if spread.count < 2:
        return ""
    return f"{ratio_text(spread.low)}–{ratio_text(spread.high)}"


def firmness_badge(judgement: Judgement, lang: str = DEFAULT_LANGUAGE) -> str:
    """The firmness in one word, the facts behind it in a tooltip."""
    level = judgement.level.value
    return (
        f'<span class="sv-race-range sv-firmness" data-firmness="{level}" '
        f'title="{esc(judgement.line.text(lang))}">{esc(judgement.label.text(lang))}</span>'
    )


def headline_html(result: RaceResult | None, *, lang: str = DEFAULT_LANGUAGE) -> str:
    """Each drafter's final speedup over plain decoding (its median speed over plain decoding's,
    with the range of the repeats' own ratios) and how firm it is, or a waiting line until every
    run of the race has been measured."""
    gains = [(lane, result.gain(lane.name)) for lane in result.drafters] if result else []
    shown = [(lane, gain) for lane, gain in gains if gain is not None]
    if result is None or not result.complete or not shown:
        return f'<span class="sv-speedup">{t_html("race.speedup.waiting", lang)}</span>'
    return "".join(
        lane_headline_html(lane.name, gain, result.repeats, lang) for lane, gain in shown
    )


def present_headline_html(result: RaceResult | None, *, lang: str = DEFAULT_LANGUAGE) -> str:
    """The race's final headline on its own, for presentation mode's strip above the stream (at
    1280×720 the race panel sits below the fold); "" until the race is measured."""
    if result is None or not result.complete:
        return ""
    return f'<div class="sv-headline sv-race-head">{headline_html(result, lang=lang)}</div>'


def lane_headline_html(
    spec: str, gain: LaneGain, repeats: int, lang: str = DEFAULT_LANGUAGE
) -> str:
    """One drafter's headline: its speedup with the repeats' range and how firm it is, or, when
    inconclusive, the refusal in place of a ranking. data-speedup keeps the measured ratio for
    scripts either way."""
    speedup, judgement = gain.speedup, gain.firmness
    name = drafter_html(spec, lang)
    if not judgement.conclusive and judgement.refusal is not None:
        words = t_html("race.headline.refused", lang, lane=name, label=judgement.label)
        refusal = esc(judgement.refusal.text(lang))
        extra = f'<span class="sv-race-range sv-refusal">{refusal}</span>'
    else:
        words = t_html(
            "race.headline", lang, lane=name, speedup=Html(speedup_words(speedup.median, lang))
        )
        spread = _ratio_range(speedup)
        extra = (
            f'<span class="sv-race-range">{t_html("race.speedup.range", lang, range=spread, repeats=repeats)}</span>'
            if spread
            else ""
        )
        extra += firmness_badge(judgement, lang)
    return (
        f'<span class="sv-speedup" data-lane="{esc(spec)}" data-speedup="{speedup.median:.3f}" '
        f'data-firmness="{judgement.level.value}">{words}{extra}</span>'
    )


def _lane_numbers(lane: Lane, lang: str) -> str:
    """The lane's median speed with its range, and its shown run's tokens, passes and time."""
    speed, run = lane.tokens_per_s, lane.shown
    if speed is None or run is None:
        return t_html("race.waiting", lang)
    spread = _range(speed, 1)
    median = t_html("race.speed", lang, tps=f"{speed.median:.1f}")
    return t_html(
        "race.lane.numbers",
        lang,
        speed=Html(f"<b>{median}</b>"),
        range=Html(f" ({esc(spread)})") if spread else "",
        tokens=run.totals.new_tokens,
        passes=run.totals.target_forwards,
        seconds=f"{run.seconds:.2f}",
    )


def _llama_lane_html(lane: Lane, at_s: float | None, lang: str) -> str:
    """llama.cpp's lane: title and numbers, a bar filling at its average pace (the server
    reports no per-token times), and its text once the replay reaches its end."""
    run = lane.shown
    # The share of its run the replay has reached (all of it outside a replay).
    reached = (
        0.0 if run is None else 1.0 if at_s is None else min(1.0, at_s / max(run.seconds, 1e-9))
    )
    percent = 100 * reached
    text = run.outcome.text if run is not None and reached >= 1.0 else ""
    body = (
        f'<div class="sv-race-llama-text">{esc(text)}</div>'
        if text
        else f'<div class="sv-stream sv-empty">{t_html("race.lane.placeholder", lang)}</div>'
    )
    title = esc(drafter_name(lane.name, lang))
    return (
        f'<div class="sv-race-panel sv-race-llama" data-lane="{esc(lane.name)}">'
        f'<div class="sv-race-title">{title}'
        f'<span class="sv-race-numbers">{_lane_numbers(lane, lang)}</span></div>'
        f'<div class="sv-race-bar" data-progress="{percent:.1f}">'
        f'<div class="sv-race-fill" style="width: {percent:.1f}%"></div></div>{body}</div>'
    )


def _lane_html(lane: Lane, at_s: float | None, lang: str) -> str:
    """One lane: title and numbers, a progress bar, and its shown run's tokens up to at_s."""
    if lane.is_llama:
        return _llama_lane_html(lane, at_s, lang)
    run = lane.shown
    events = run.outcome.events if run is not None else ()
    shown = [e for e in events if at_s is None or engine_seconds(e.totals) <= at_s]
    total = run.totals.new_tokens if run is not None else 0
    done = shown[-1].totals.new_tokens if shown else 0
    percent = 100 * done / total if total else 0.0
    placeholder = t("race.lane.placeholder", lang)
    if lane.is_plain:
        title = t_html("race.plain", lang)
        steps = [e for e in shown if isinstance(e, Step)]
        body = plain_stream_html(steps, placeholder=placeholder, lang=lang)
    else:
        title = t_html("race.lane", lang, drafter=drafter_html(lane.name, lang))
        cycles = [e for e in shown if isinstance(e, Cycle)]
        body = stream_html(cycles, placeholder=placeholder, lang=lang)
    kind = "sv-race-plain" if lane.is_plain else "sv-race-spec"
    return (
        f'<div class="sv-race-panel {kind}" data-lane="{esc(lane.name)}">'
        f'<div class="sv-race-title">{title}'
        f'<span class="sv-race-numbers">{_lane_numbers(lane, lang)}</span></div>'
        f'<div class="sv-race-bar" data-progress="{percent:.1f}">'
        f'<div class="sv-race-fill" style="width: {percent:.1f}%"></div></div>{body}</div>'
    )


def race_html(
    result: RaceResult | None,
    *,
    status: str = "",
    at_s: float | None = None,
    lang: str = DEFAULT_LANGUAGE,
) -> str:
    """The race: the final headline, each lane with its measured speed, how it was measured, how
    firm each speedup is (with the CPU other programs took) and, when the repeats scattered
    widely, that the machine was noisy. *at_s* shows each lane's tokens as they stood that many
    engine seconds into its run (a replay frame); None: all."""
    lanes = "".join(_lane_html(lane, at_s, lang) for lane in result.lanes) if result else ""
    status_html = f'<span class="sv-race-status">{esc(status)}</span>' if status else ""
    notes = []
    if result is not None and result.complete and result.noisy:
        notes.append(
            t(
                "race.noisy",
                lang,
                percent=f"{100 * result.widest_spread:.0f}",
                threshold=f"{100 * NOISY_SPREAD:.0f}",
            )
        )
    if result is not None and result.complete:
        notes += firmness_notes(result, lang=lang)
        notes += divergence_notes(result, lang=lang)
    if result is not None and any(lane.is_llama for lane in result.lanes):
        notes.append(t("race.llama.note", lang))
    notes_html = "".join(f'<div class="sv-race-method sv-race-note">{esc(n)}</div>' for n in notes)
    repeats = result.repeats if result is not None else 1
    return (
        f'<div class="sv-race"><div class="sv-race-head">{headline_html(result, lang=lang)}'
        f"{status_html}</div>"
        f'<div class="sv-race-panels">{lanes}</div>'
        f'<div class="sv-race-method">{t_html("race.method", lang, repeats=repeats)}</div>'
        f"{notes_html}</div>"
    )


def firmness_notes(result: RaceResult, *, lang: str = DEFAULT_LANGUAGE) -> list[str]:
    """How firm each drafter's speedup is, one sentence a lane: its level and the tokens,
    repeats and CPU load behind it."""
    notes = []
    for lane in result.drafters:
        gain = result.gain(lane.name)
        if gain is not None:
            name = drafter_name(lane.name, lang)
            notes.append(t("race.firmness", lang, lane=name, line=gain.firmness.line))
    return notes


def divergence_notes(result: RaceResult, *, lang: str = DEFAULT_LANGUAGE) -> list[str]:
    """Why finished lanes can print different texts: one sentence for the whole race when every
    lane matches plain decoding (greedy), else one per lane that parts from it."""
    plain = result.plain.shown
    if plain is None:
        return []
    plain_steps = [e for e in plain.outcome.events if isinstance(e, Step)]
    notes = []
    # llama.cpp's lanes compute in Q4_K_M, not in specviz's bfloat16: their texts may part from
    # specviz's plain decoding without any fault (race.llama.note says so).
    for lane in [lane for lane in result.drafters if not lane.is_llama]:
        run = lane.shown
        cycles = [e for e in run.outcome.events if isinstance(e, Cycle)] if run else []
        name = drafter_name(lane.name, lang)
        note = divergence_note(cycles, plain_steps, name, lang=lang)
        notes += [note] if note else []
    if notes or not _all_greedy(result):
        return notes
    return [t("race.same_tokens", lang)]


def _all_greedy(result: RaceResult) -> bool:
    runs = [lane.shown for lane in result.drafters if not lane.is_llama]
    return all(
        run is not None and any(isinstance(e, Cycle) and e.greedy for e in run.outcome.events)
        for run in runs
    )


def divergence_note(
    cycles: Sequence[Cycle], steps: Sequence[Step], lane: str, *, lang: str = DEFAULT_LANGUAGE
) -> str:
    """Why a finished lane's text differs from plain decoding's, said where they part ("" when
    they match or a run has not finished)."""
    if not cycles or not steps or not cycles[-1].finished or not steps[-1].finished:
        return ""
    spec = [token.token_id for cycle in cycles for token in cycle.emitted]
    plain = [step.token.token_id for step in steps]
    if spec == plain:
        return ""
    if not cycles[-1].greedy:
        return t("race.differ.sampled", lang, lane=lane)
    parted = next(
        (i for i, pair in enumerate(zip(spec, plain, strict=False)) if pair[0] != pair[1]), None
    )
    where = (
        t("race.part.at", lang, index=parted + 1)
        if parted is not None
        else t("race.part.length", lang)
    )
    return t("race.differ.greedy", lang, lane=lane, where=where)


def replay_duration(result: RaceResult) -> float:
    """Engine seconds until every lane's shown run has finished: how long Replay takes."""
    runs = [lane.shown for lane in result.lanes]
    return max((run.seconds for run in runs if run is not None), default=0.0)


def replay_speed(duration_s: float, max_seconds: float) -> float:
    """How many times faster than measured a replay of *duration_s* engine seconds plays so that
    it lasts at most *max_seconds* of the visitor's time: 1 when it fits."""
    return max(1.0, duration_s / max_seconds)


def replay_frame(
    result: RaceResult, at_s: float, *, lang: str = DEFAULT_LANGUAGE, speed: float = 1.0
) -> str:
    """The race as it stood *at_s* engine seconds into every lane's run, under the final
    headline (for Replay); a *speed* above 1 (a replay sped up to its cap) is said."""
    seconds = f"{at_s:.1f}"
    if speed > 1:
        status = t("race.replay.faster", lang, seconds=seconds, speed=f"{speed:.1f}")
    else:
        status = t("race.replay", lang, seconds=seconds)
    return race_html(result, status=status, at_s=at_s, lang=lang)
