"""specviz.measure.firmness: the rule at each of its boundaries, and the words it gives."""

from __future__ import annotations

import pytest

from specviz.measure.firmness import (
    BUSY_SHARE,
    FIRM_REPEATS,
    FIRM_SPREAD,
    FIRM_TOKENS,
    MIN_SIZES,
    MIN_TOKENS,
    Firmness,
    judge,
    judge_forward_times,
    judge_lab,
    weakest,
)
from specviz.measure.spread import Spread

# Three repeats that agree exactly: everything but the tokens and the load is firm.
STEADY = Spread(2.0, 2.0, 2.0, 3)
QUIET = 0.02


def level(tokens: int = FIRM_TOKENS, speedup: Spread = STEADY, share: float | None = QUIET):
    return judge(tokens, speedup, share).level


def test_the_thresholds_are_the_documented_ones() -> None:
    assert (MIN_TOKENS, FIRM_TOKENS, FIRM_REPEATS) == (32, 128, 3)
    assert (FIRM_SPREAD, BUSY_SHARE) == (0.15, 0.25)


def test_tokens_decide_between_inconclusive_indicative_and_firm() -> None:
    assert level(tokens=MIN_TOKENS - 1) is Firmness.INCONCLUSIVE
    assert level(tokens=MIN_TOKENS) is Firmness.INDICATIVE
    assert level(tokens=FIRM_TOKENS - 1) is Firmness.INDICATIVE
    assert level(tokens=FIRM_TOKENS) is Firmness.FIRM


def test_the_spread_of_the_repeats_at_its_limit_is_still_firm() -> None:
    # (1.3125 − 1.125) / 1.25 is 0.15 exactly in binary floating point.
    at_limit = Spread(1.25, 1.125, 1.3125, 3)
    assert at_limit.relative == FIRM_SPREAD
    assert level(speedup=at_limit) is Firmness.FIRM
    past = Spread(1.25, 1.125, 1.3126, 3)
    assert level(speedup=past) is Firmness.INDICATIVE


def test_fewer_than_three_repeats_are_indicative_at_best() -> None:
    assert level(speedup=Spread(2.0, 2.0, 2.0, 1)) is Firmness.INDICATIVE
    assert level(speedup=Spread(2.0, 2.0, 2.0, 2)) is Firmness.INDICATIVE
    assert level(speedup=Spread(2.0, 2.0, 2.0, FIRM_REPEATS)) is Firmness.FIRM


def test_repeats_that_disagree_on_the_winner_are_inconclusive() -> None:
    crossing = judge(FIRM_TOKENS, Spread(1.0, 0.99, 1.01, 3), QUIET)
    assert crossing.level is Firmness.INCONCLUSIVE
    assert crossing.refusal is not None and crossing.refusal.key == "firmness.refuse.crosses"
    # A repeat exactly as fast as plain decoding disagrees with none: the range touches 1.
    assert level(speedup=Spread(1.05, 1.0, 1.06, 3)) is Firmness.FIRM
    assert level(speedup=Spread(0.95, 0.94, 1.0, 3)) is Firmness.FIRM
    # One run has no range to cross.
    assert level(speedup=Spread(1.0, 1.0, 1.0, 1)) is Firmness.INDICATIVE


def test_other_programs_on_the_cpu_make_it_indicative_past_a_quarter() -> None:
    assert level(share=BUSY_SHARE) is Firmness.FIRM
    busy = judge(FIRM_TOKENS, STEADY, 0.2501)
    assert busy.level is Firmness.INDICATIVE and busy.busy
    # A load that could not be read does not stop a firm result; the words say so.
    unknown = judge(FIRM_TOKENS, STEADY, None)
    assert unknown.level is Firmness.FIRM and not unknown.busy
    assert unknown.facts[-1].text() == "CPU load not measured"


def test_too_few_tokens_is_the_refusal_given_first() -> None:
    both = judge(MIN_TOKENS - 1, Spread(1.0, 0.9, 1.1, 3), 0.5)
    assert both.refusal is not None and both.refusal.text() == (
        "too few tokens to rank: run with at least 32 new tokens (128 for a firm result); "
        "the shortest run made 31"
    )
    assert both.refusal.text("ja").startswith("トークンが少なすぎて順位をつけられません")
    assert not both.conclusive and both.label.text() == "inconclusive"


@pytest.mark.parametrize(
    ("tokens", "speedup", "share", "english", "japanese"),
    [
        (
            144,
            STEADY,
            0.02,
            "firm: 144 tokens a run; 3 repeats within 0%; other programs took 2% of the CPU.",
            "確か：1 回あたり 144 トークン；3 回の反復が 0% 以内；他のプログラムの CPU 使用は 2%。",
        ),
        (
            64,
            Spread(2.0, 2.0, 2.0, 1),
            None,
            "indicative: 64 tokens a run (firm from 128); one raced run: no spread; "
            "CPU load not measured.",
            "目安：1 回あたり 64 トークン（128 以上で確か）；レースは 1 回のみ：ばらつき不明；"
            "CPU 負荷は未計測。",
        ),
        (
            128,
            Spread(2.0, 1.847, 2.153, 2),
            0.4,
            "indicative: 128 tokens a run; only 2 repeats (firm from 3); the repeats' ratios "
            "spread 15.3% (firm within 15%); other programs took 40% of the CPU during the race "
            "(firm up to 25%).",
            "目安：1 回あたり 128 トークン；反復は 2 回のみ（3 回以上で確か）；反復ごとの比のばらつき "
            "15.3%（15% 以内で確か）；レース中、他のプログラムが CPU の 40% を使用（25% までなら確か）。",
        ),
    ],
)
def test_the_line_says_the_level_and_every_fact(
    tokens: int, speedup: Spread, share: float | None, english: str, japanese: str
) -> None:
    judgement = judge(tokens, speedup, share)
    assert judgement.line.text() == english
    assert judgement.line.text("ja") == japanese
    assert judgement.refusal is None


# --- the same rule for the labs and the advisor ---------------------------------------------------


@pytest.mark.parametrize(
    ("tokens", "speedup", "share"),
    [
        (MIN_TOKENS - 1, STEADY, QUIET),
        (MIN_TOKENS, STEADY, QUIET),
        (FIRM_TOKENS, STEADY, QUIET),
        (FIRM_TOKENS, STEADY, 0.4),
        (FIRM_TOKENS, Spread(1.0, 0.99, 1.01, 3), QUIET),
        (FIRM_TOKENS, Spread(2.0, 2.0, 2.0, 1), None),
    ],
)
def test_a_lab_is_judged_by_the_races_rule(tokens: int, speedup: Spread, share: float) -> None:
    lab, race = judge_lab(tokens, speedup, share), judge(tokens, speedup, share)
    assert (lab.level, lab.busy) == (race.level, race.busy)


def test_a_lab_is_worded_as_a_measurement_not_a_race() -> None:
    busy = judge_lab(64, Spread(2.0, 2.0, 2.0, 1), 0.4)
    assert busy.line.text() == (
        "indicative: 64 tokens a run (firm from 128); one run, so no spread (firm from 3 "
        "repeats); other programs took 40% of the CPU while this was measured (firm up to 25%)."
    )
    assert busy.line.text("ja") == (
        "目安：1 回あたり 64 トークン（128 以上で確か）；実行は 1 回のみでばらつき不明（反復 3 回以上で"
        "確か）；計測中、他のプログラムが CPU の 40% を使用（25% までなら確か）。"
    )
    crossing = judge_lab(FIRM_TOKENS, Spread(1.0, 0.99, 1.01, 3), QUIET)
    assert crossing.refusal is not None and crossing.refusal.text().startswith(
        "too close to call: the repeats disagree on whether speculation beats plain decoding"
    )


def test_a_ranking_by_alpha_is_not_refused_by_speedups_on_both_sides_of_one() -> None:
    crossing = Spread(1.0, 0.99, 1.01, 3)
    assert judge_lab(FIRM_TOKENS, crossing, QUIET, against_plain=False).level is Firmness.FIRM
    # The tokens still decide: a short ranking is refused all the same.
    short = judge_lab(MIN_TOKENS - 1, crossing, QUIET, against_plain=False)
    assert short.level is Firmness.INCONCLUSIVE and short.refusal is not None


def test_a_cost_curve_needs_two_sizes_tight_repeats_and_a_quiet_cpu() -> None:
    tight = Spread(0.1, 0.099, 0.101, 3)
    assert judge_forward_times(MIN_SIZES, tight, QUIET).level is Firmness.FIRM
    one = judge_forward_times(MIN_SIZES - 1, tight, QUIET)
    assert one.level is Firmness.INCONCLUSIVE and one.refusal is not None
    assert one.refusal.text().startswith("too few sizes to draw a curve: time at least 2 sizes")
    assert one.refusal.text("ja").startswith("サイズが少なすぎて曲線を引けません")
    wide = judge_forward_times(8, Spread(0.1, 0.08, 0.12, 3), QUIET)
    assert wide.level is Firmness.INDICATIVE
    assert "a size's repeated forwards spread 40% (firm within 15%)" in wide.line.text()
    busy = judge_forward_times(8, tight, 0.5)
    assert busy.level is Firmness.INDICATIVE and busy.busy
    assert "other programs took 50% of the CPU while this was measured" in busy.line.text()


def test_a_finding_from_several_measurements_is_as_firm_as_the_weakest() -> None:
    firm = judge_lab(FIRM_TOKENS, STEADY, QUIET)
    rough = judge_lab(MIN_TOKENS, STEADY, QUIET)
    short = judge_lab(MIN_TOKENS - 1, STEADY, QUIET)
    assert weakest([firm, rough]) is rough
    assert weakest([firm, short, rough]) is short
    assert weakest([firm]) is firm and weakest([]) is None
