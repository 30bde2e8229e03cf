"""The report's Results: the headline, how firm it is, and cards whose numbers agree.

One tokens/s on the page: new tokens over engine seconds (compute plus a drafter's own
preparation, ``race_records.engine_seconds``), the race's. When the run raced plain decoding, the
race drives the headline and the cards: the speedup is the drafter lane's median speed over plain
decoding's, the two medians shown beside it, so the one divides into the other. α, τ and vLLM's
draft_acceptance_rate are this run's counts, labelled so, with the one line that says why α and
draft_acceptance_rate differ. The run's own tokens/s appears only when there is no race.
"""

from __future__ import annotations

from specviz.export.summary import vllm_summary
from specviz.export.trace import Trace
from specviz.measure.race_records import Lane, LaneGain, RaceResult, engine_seconds
from specviz.measure.spread import Spread
from specviz.text import DEFAULT_LANGUAGE, Html, t, t_html
from specviz.views import race_html as race_views
from specviz.views.numbers import NO_VALUE, prob, ratio
from specviz.views.run_html import raced_runs_words, time_saved_words
from specviz.views.token_text import esc


def results_html(trace: Trace, lang: str = DEFAULT_LANGUAGE) -> str:
    """The headline (or why there is none), its firmness, the cards and the α line."""
    race = trace.race
    gain = race.gain(trace.drafter) if race is not None else None
    lane = race.lane(trace.drafter) if race is not None else None
    if race is not None and gain is not None and lane is not None:
        head = _headline(race, gain, trace.drafter, lang)
        cards = _race_cards(race, lane, gain, trace.drafter, lang)
    else:
        head = f"<p>{t_html('report.no_speedup', lang)}</p>"
        cards = [_run_speed_card(trace, lang)] if trace.cycles else []
    cards += _acceptance_cards(trace, lang)
    return f'{head}<div class="sv-counters">{"".join(cards)}</div>{_alpha_line(trace, lang)}'


def _headline(race: RaceResult, gain: LaneGain, spec: str, lang: str) -> str:
    headline = race_views.lane_headline_html(spec, gain, race.repeats, lang)
    firmness = t_html("report.firmness", lang, line=gain.firmness.line)
    return (
        f'<p class="sv-report-headline">{headline}</p><p class="sv-report-firmness">{firmness}</p>'
    )


def _card(key: str, label: Html, value: str, note: Html, data: float | None = None) -> str:
    """One card in the live tab's counter style; label and note are HTML already escaped,
    *data* the unrounded value for scripts and tests."""
    number = f' data-value="{data:.6g}"' if data is not None else ""
    return (
        f'<div class="sv-stat" data-stat="{key}"{number}><div class="sv-stat-value">{esc(value)}'
        f'</div><div class="sv-stat-label">{label}</div><div class="sv-stat-note">{note}</div></div>'
    )


def _speed_note(spread: Spread, lang: str) -> Html:
    runs = raced_runs_words(spread.count, lang)
    if spread.count < 2:
        return Html(esc(runs))
    span = f"{spread.low:.1f}–{spread.high:.1f}"
    return t_html("report.card.speed.note", lang, runs=runs, range=span)


def _race_cards(race: RaceResult, lane: Lane, gain: LaneGain, spec: str, lang: str) -> list[str]:
    """The speedup, the two median speeds it divides, and the time it saved or lost."""
    plain_speed, lane_speed = race.plain.tokens_per_s, lane.tokens_per_s
    if plain_speed is None or lane_speed is None:  # pragma: no cover - a gain needs both
        return []
    judgement = gain.firmness
    runs = raced_runs_words(gain.speedup.count, lang)
    if judgement.conclusive:
        speedup = f"{ratio(gain.speedup.median)}×"
        speedup_note = t_html(
            "report.card.speedup.note",
            lang,
            lane=f"{lane_speed.median:.1f}",
            plain=f"{plain_speed.median:.1f}",
        )
        time = time_saved_words(gain.seconds_saved.median, lang)
    else:  # an inconclusive speedup is not ranked: no ratio, no time gained
        speedup, time = NO_VALUE, NO_VALUE
        speedup_note = Html(esc(judgement.label.text(lang)))
    shown = lane.shown
    tokens = shown.totals.new_tokens if shown is not None else gain.tokens
    return [
        _card(
            "speedup",
            t_html("report.card.speedup", lang),
            speedup,
            speedup_note,
            gain.speedup.median,
        ),
        _card(
            "plain_tps",
            t_html("race.plain", lang),
            t("race.speed", lang, tps=f"{plain_speed.median:.1f}"),
            _speed_note(plain_speed, lang),
            plain_speed.median,
        ),
        _card(
            "lane_tps",
            race_views.drafter_html(spec, lang),
            t("race.speed", lang, tps=f"{lane_speed.median:.1f}"),
            _speed_note(lane_speed, lang),
            lane_speed.median,
        ),
        _card(
            "time",
            t_html("report.card.time", lang),
            time,
            t_html("report.card.time.note", lang, tokens=tokens, runs=runs),
            gain.seconds_saved.median,
        ),
    ]


def _run_speed_card(trace: Trace, lang: str) -> str:
    """This run's tokens/s, counted as the race counts (engine seconds), labelled as this run's."""
    totals = trace.cycles[-1].totals
    seconds = engine_seconds(totals)
    speed = totals.new_tokens / seconds if seconds > 0 else 0.0
    return _card(
        "tps",
        t_html("report.card.tps", lang),
        f"{speed:.1f}",
        t_html("report.card.tps.note", lang, tokens=totals.new_tokens, seconds=f"{seconds:.2f}"),
        speed,
    )


def _acceptance_cards(trace: Trace, lang: str) -> list[str]:
    """α, vLLM's draft_acceptance_rate and τ of this run."""
    if not trace.cycles:
        return []
    totals = trace.cycles[-1].totals
    vllm = vllm_summary(trace.cycles, 0)
    rate = vllm["draft_acceptance_rate"]
    return [
        _card(
            "alpha",
            t_html("report.card.alpha", lang),
            prob(totals.acceptance_rate if totals.tested_positions else None),
            t_html(
                "counter.alpha.note",
                lang,
                accepted=totals.accepted_positions,
                tested=totals.tested_positions,
            ),
            totals.acceptance_rate,
        ),
        _card(
            "vllm_rate",
            t_html("report.card.vllm_rate", lang),
            prob(rate),
            t_html(
                "report.card.vllm_rate.note",
                lang,
                accepted=vllm["num_accepted_draft_tokens"],
                drafted=vllm["num_draft_tokens"],
            ),
            rate,
        ),
        _card(
            "tau",
            t_html("report.card.tau", lang),
            ratio(totals.tokens_per_target_pass),
            t_html("counter.tau.note", lang),
            totals.tokens_per_target_pass,
        ),
    ]


def _alpha_line(trace: Trace, lang: str) -> str:
    """Why α and draft_acceptance_rate differ, with this run's counts; "" with nothing drafted."""
    vllm = vllm_summary(trace.cycles, 0)
    if not vllm["num_draft_tokens"]:
        return ""
    totals = trace.cycles[-1].totals
    line = t_html(
        "report.alpha_vs_vllm",
        lang,
        accepted=vllm["num_accepted_draft_tokens"],
        tested=totals.tested_positions,
        drafted=vllm["num_draft_tokens"],
    )
    return f'<p class="sv-report-note">{line}</p>'
