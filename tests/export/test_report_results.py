"""The report's Results: one tokens/s on the page, the headline the ratio of the median speeds
it shows, how firm it is, α beside vLLM's draft_acceptance_rate with why they differ, time
lost never shown as a negative "saved", and drafters by name with their spec in a tooltip."""

from __future__ import annotations

import re

import pytest
from ui_events import (
    HARDWARE,
    VERSIONS,
    lengthened,
    plain_run,
    race_result,
    sample_run,
    setup_for,
    trace_of,
)

from specviz.export.report import report_html
from specviz.export.trace import TraceError, build_trace, read_trace, trace_text
from specviz.measure.race_records import RaceResult


def _report(race: RaceResult | None, lang: str = "en") -> str:
    trace = build_trace(
        setup_for("hi"),
        sample_run(),
        plain_run(),
        race=race,
        recorded_at="2026-12-01T10:00:00+00:00",
        hardware=HARDWARE,
        versions=VERSIONS,
    )
    return report_html(read_trace(trace_text(trace)), lang=lang)


def _results(page: str) -> str:
    found = re.search(r"<section><h2>(?:Results|結果)</h2>(.*?)</section>", page)
    assert found is not None
    return found.group(1)


def _card(results: str, stat: str) -> tuple[float, str]:
    """A card's unrounded value and the value shown."""
    found = re.search(
        rf'data-stat="{stat}" data-value="([^"]+)"><div class="sv-stat-value">([^<]*)<', results
    )
    assert found is not None, stat
    return float(found.group(1)), found.group(2)


# Plain decoding at 10, 10, 5 tok/s × 16; the draft model at 13.3, 20, 16 × 16: the medians'
# ratio (256 / 160 = 1.6) is not the median of the repeats' ratios (2.0), and the page shows one.
PARTED = lengthened(
    race_result([1.0, 1.0, 2.0], {"draft-model": [1.5, 1.0, 1.25]}), 16, others_share=0.1
)


def test_the_headline_is_the_ratio_of_the_median_speeds_shown() -> None:
    results = _results(_report(PARTED))
    headline = re.search(r'class="sv-report-headline">.*?data-speedup="([0-9.]+)"', results)
    assert headline is not None
    plain, plain_shown = _card(results, "plain_tps")
    lane, lane_shown = _card(results, "lane_tps")
    assert float(headline.group(1)) == pytest.approx(lane / plain, abs=1e-3) == 1.6
    assert (plain_shown, lane_shown) == ("160.0 tok/s", "256.0 tok/s")
    speedup, speedup_shown = _card(results, "speedup")
    assert speedup == pytest.approx(1.6) and speedup_shown == "1.60×"
    assert "1.60× faster" in results and "256.0 ÷ 160.0 tok/s" in results
    # The race below shows the same medians; the run's own tokens/s is not on the page.
    page = _report(PARTED)
    assert "<b>160.0 tok/s</b>" in page and "<b>256.0 tok/s</b>" in page
    assert 'data-stat="tps"' not in page


def test_the_firmness_is_said_under_the_headline() -> None:
    results = _results(_report(PARTED))
    assert 'data-firmness="indicative"' in results
    assert "How firm: indicative: 144 tokens a run; the repeats&#x27; ratios spread 117%" in results
    assert "other programs took 10% of the CPU." in results


def test_an_inconclusive_race_ranks_nothing_in_the_report() -> None:
    results = _results(_report(None))  # the run and its plain lane: one raced run, 9 tokens
    assert "Draft model (guesses)</span>: inconclusive" in results
    assert "too few tokens to rank: run with at least 32 new tokens" in results
    assert "faster" not in results and "saved" not in results
    assert _card(results, "speedup")[1] == "—" and _card(results, "time")[1] == "—"
    assert "one raced run: no spread" in results and "median of 1 raced run" not in results


def test_time_lost_is_never_a_negative_saving() -> None:
    slow = lengthened(race_result([1.0] * 3, {"draft-model": [4.0] * 3}), 16, others_share=0.0)
    results = _results(_report(slow))
    seconds, shown = _card(results, "time")
    assert seconds == pytest.approx(-0.9) and shown == "0.90 s lost"
    assert not re.search(r"[−-]\s*[0-9.]+\s*s saved", _report(slow))
    assert "0.50× as fast (slower)" in results


def test_alpha_and_draft_acceptance_rate_stand_together_with_why_they_differ() -> None:
    results = _results(_report(PARTED))
    assert _card(results, "alpha") == (pytest.approx(6 / 8), "0.75")
    assert _card(results, "vllm_rate") == (pytest.approx(6 / 9), "0.67")
    assert (
        "count the same 6 accepted drafts and differ in what they divide by: α by the 8 drafts "
        "the target tested (a cycle stops testing at its first rejection), "
        "draft_acceptance_rate by all 9 drafted"
    ) in results
    japanese = _results(_report(PARTED, "ja"))
    assert "同じ 6 個の受理ドラフトを数え" in japanese and "確度：目安" in japanese


def test_drafters_go_by_their_names_with_the_spec_in_a_tooltip() -> None:
    page = _report(PARTED)
    named = '<span class="sv-drafter" title="draft-model">Draft model (guesses)</span>'
    assert f"<th>Drafter</th><td>{named}</td>" in page  # the setup table
    assert f"the drafter ({named})" in page  # the method paragraph
    assert f"Speculative decoding · {named}" in page  # the race's lane
    assert "ドラフトモデル（推測）" in _report(PARTED, "ja")
    assert not re.search(r">[^<]*\bdraft-model\b[^<]*<", page)  # never shown as text


def test_a_run_without_plain_decoding_shows_its_own_speed_as_this_run() -> None:
    page = report_html(read_trace(trace_text(trace_of(sample_run()))))
    results = _results(page)
    speed, shown = _card(results, "tps")
    assert speed == pytest.approx(9 / (0.40 + 0.05)) and shown == "20.0"
    assert "tokens / s (this run)" in results and "9 tokens in 0.45 s of engine time" in results
    assert "no speedup to show" in results and 'data-stat="speedup"' not in results


def test_the_race_keeps_its_cpu_load_in_the_trace() -> None:
    trace = build_trace(
        setup_for("hi"),
        sample_run(),
        plain_run(),
        race=PARTED,
        hardware=HARDWARE,
        versions=VERSIONS,
    )
    assert trace["race"]["others_share"] == 0.1
    assert read_trace(trace_text(trace)).race.others_share == 0.1  # type: ignore[union-attr]
    assert trace["summary"]["specviz"]["speedup"] == pytest.approx(1.6)
    assert trace["summary"]["specviz"]["speedup_firmness"] == "indicative"
    older = dict(trace, race={k: v for k, v in trace["race"].items() if k != "others_share"})
    assert read_trace(trace_text(older)).race.others_share is None  # type: ignore[union-attr]
    busy = dict(trace, race=dict(trace["race"], others_share=1.5))
    with pytest.raises(TraceError, match="others_share"):
        read_trace(trace_text(busy))


def test_the_summary_counts_tokens_per_engine_second_as_the_race_does() -> None:
    own = trace_of(sample_run(), plain_run())["summary"]["specviz"]
    assert own["tokens_per_s"] == pytest.approx(9 / (0.40 + 0.05))
    assert own["plain_tokens_per_s"] == pytest.approx(9 / (0.9 + 0.05))
    assert own["speedup"] == pytest.approx(own["tokens_per_s"] / own["plain_tokens_per_s"])
    assert own["speedup_firmness"] == "inconclusive"
