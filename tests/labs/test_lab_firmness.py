"""How firm each lab's findings are, from hand-built measurements: a short lab draws no
conclusion and says what would give one, a long quiet one with tight repeats is firm, and one
measured beside other busy programs is indicative and says so, in English and Japanese."""

from __future__ import annotations

import pytest

from specviz.core.events import Totals
from specviz.core.settings import GenerationSettings
from specviz.labs.advisor.advice import Advice, Candidate, Verdict
from specviz.labs.advisor.panel import advice_html
from specviz.labs.speedup.cost_curve import CostCurve, CostPoint
from specviz.labs.speedup.panel import speedup_html
from specviz.labs.speedup.theory import (
    MeasuredRun,
    SpeedupLab,
    curve_firmness,
    theory_from_measurements,
)
from specviz.labs.tasks.experiment import PromptRun, TaskReport, TaskResult
from specviz.labs.tasks.panel import tasks_html
from specviz.measure.firmness import FIRM_TOKENS, MIN_TOKENS, Firmness, judge_lab
from specviz.measure.spread import Spread

QUIET, BUSY = 0.02, 0.4
SHORT = 8  # new tokens a run: fewer than MIN_TOKENS
TOO_FEW = (
    f"too few tokens to rank: run with at least {MIN_TOKENS} new tokens ({FIRM_TOKENS} for a "
    f"firm result); the shortest run made {SHORT}"
)
BUSY_WORDS = "other programs took 40% of the CPU while this was measured (firm up to 25%)"
BUSY_JA = "計測中、他のプログラムが CPU の 40% を使用（25% までなら確か）"


# --- the speedup lab -----------------------------------------------------------------------------


def curve(relative: list[float], scatter: float = 0.01) -> CostCurve:
    """A cost curve whose repeats scatter by ± *scatter* around each point."""
    points = tuple(
        CostPoint(k, 0.1 * r, (0.1 * r * (1 - scatter), 0.1 * r, 0.1 * r * (1 + scatter)))
        for k, r in enumerate(relative, start=1)
    )
    return CostCurve("cpu", 10, points, True)


def speedup_lab(
    tokens: int, share: float | None, target: CostCurve | None = None, complete: bool = True
) -> SpeedupLab:
    """A lab of one run at γ = 3 and one at γ = 5, each and plain decoding making *tokens*."""
    target = target or curve([1.0, 1.1, 1.2, 1.3, 1.4, 1.5])
    draft = CostCurve("cpu", 10, (CostPoint(1, 0.02, (0.02, 0.02, 0.02)),), True)
    runs = tuple(
        MeasuredRun(gamma, 0.7, 2.4, 11.0, speedup, tokens, 30, 44, 0.004, 0.15, complete)
        for gamma, speedup in ((3, 1.3), (5, 1.2))
    )
    return SpeedupLab(
        plain_tokens_per_s=8.0,
        plain_new_tokens=tokens,
        plain_s_per_token=0.125,
        plain_complete=complete,
        runs=runs,
        target_curve=target,
        draft_curve=draft,
        theory=theory_from_measurements(0.7, target, 0.02),
        elapsed_s=30.0,
        complete=complete,
        others_share=share,
    )


def test_a_short_speedup_lab_draws_no_best_gamma_and_says_what_would() -> None:
    lab = speedup_lab(SHORT, QUIET, complete=False)
    assert lab.firmness.level is Firmness.INCONCLUSIVE
    html = speedup_html(lab)
    assert f"No best γ is drawn from this: {TOO_FEW}." in html
    assert "Predicted best γ" not in html and "the best γ is" not in html
    assert "The time budget cut runs short" in html  # a longer budget gives the runs their tokens
    assert html.count(">inconclusive<") == 2  # each γ's row
    ja = speedup_html(lab, lang="ja")
    assert "この測定から最適な γ は導けません：トークンが少なすぎて順位をつけられません" in ja
    assert "予測の最適 γ" not in ja


def test_a_long_quiet_speedup_lab_predicts_but_one_run_a_gamma_is_indicative() -> None:
    lab = speedup_lab(FIRM_TOKENS, QUIET)
    assert lab.firmness.level is Firmness.INDICATIVE  # one run per γ: no spread to judge
    html = speedup_html(lab)
    assert "Predicted best γ" in html
    assert (
        "How firm: indicative: 128 tokens a run; one run, so no spread (firm from 3 repeats); "
        "other programs took 2% of the CPU." in html
    )
    assert "確度：目安：1 回あたり 128 トークン；実行は 1 回のみでばらつき不明" in speedup_html(
        lab, lang="ja"
    )


def test_a_busy_speedup_lab_names_the_load() -> None:
    lab = speedup_lab(FIRM_TOKENS, BUSY)
    assert lab.firmness.level is Firmness.INDICATIVE and lab.firmness.busy
    assert BUSY_WORDS in speedup_html(lab)
    assert BUSY_JA in speedup_html(lab, lang="ja")


def test_the_cost_curve_is_judged_by_its_sizes_repeats_and_load() -> None:
    assert curve_firmness(curve([1.0, 1.1, 1.2]), QUIET).level is Firmness.FIRM
    assert curve_firmness(curve([1.0, 1.1, 1.2], scatter=0.2), QUIET).level is Firmness.INDICATIVE
    assert curve_firmness(curve([1.0, 1.1, 1.2]), BUSY).level is Firmness.INDICATIVE
    # One size is no curve: the speedup model would assume verification free, so no best γ.
    lab = speedup_lab(FIRM_TOKENS, QUIET, target=curve([1.0]))
    assert lab.firmness.level is Firmness.INCONCLUSIVE
    assert "No best γ is drawn from this: too few sizes to draw a curve" in speedup_html(lab)


# --- the task lab --------------------------------------------------------------------------------

SETTINGS = GenerationSettings(gamma=3, max_new_tokens=FIRM_TOKENS)


def task(name: str, accepted: int, ratios: tuple[float, ...], tokens: int) -> TaskResult:
    """A task measured once per ratio: plain decoding at 10 tok/s, speculation at ratio × that,
    α = accepted / 30."""
    runs = tuple(
        PromptRun(
            "p",
            Totals(tokens, tokens // 3, tokens, 30, accepted, tokens / (10 * ratio), 0.0),
            Totals(tokens, tokens, 0, 0, 0, tokens / 10, 0.0),
            "t",
            "t",
            repeat,
        )
        for repeat, ratio in enumerate(ratios)
    )
    return TaskResult(name, runs)


def tasks_report(tokens: int, share: float | None) -> TaskReport:
    # Story's repeats lie on both sides of plain decoding: its speedup is too close to call, but
    # the ranking by α stands.
    code = task("code", 24, (1.50, 1.52, 1.49), tokens)
    story = task("story", 9, (0.98, 1.01, 0.99), tokens)
    return TaskReport(SETTINGS, (code, story), True, share)


def test_short_task_runs_rank_nothing_and_say_what_would() -> None:
    report = tasks_report(SHORT, QUIET)
    sentence = report.narrative()
    assert sentence.startswith(f"No task is ranked from this: {TOO_FEW}. How firm: inconclusive")
    assert "guesses" not in sentence
    assert report.narrative("ja").startswith(
        "この測定からタスクの順位はつけられません：トークンが少なすぎて順位をつけられません"
    )
    assert "いちばん当たる" not in report.narrative("ja")
    assert report.to_dict()["firmness"] == "inconclusive"


def test_long_quiet_tight_task_runs_rank_firmly() -> None:
    report = tasks_report(FIRM_TOKENS, QUIET)
    sentence = report.narrative()
    assert sentence.startswith("The draft guesses code best (α 80%")
    assert sentence.endswith(
        "How firm: firm: 128 tokens a run; 3 repeats within 3%; other programs took 2% of the CPU."
    )
    assert "確度：確か" in report.narrative("ja")
    code, story = report.tasks
    assert report.task_firmness(code).level is Firmness.FIRM
    assert report.task_firmness(story).level is Firmness.INCONCLUSIVE  # 0.98–1.01 crosses 1
    html = tasks_html(report)
    assert ">how firm<" in html and ">firm<" in html and ">inconclusive<" in html


def test_busy_task_runs_rank_indicatively_and_name_the_load() -> None:
    report = tasks_report(FIRM_TOKENS, BUSY)
    sentence = report.narrative()
    assert sentence.startswith("The draft guesses code best")
    assert "How firm: indicative" in sentence and BUSY_WORDS in sentence
    assert BUSY_JA in report.narrative("ja")


# --- the advisor ---------------------------------------------------------------------------------


def verdict(gamma: int, proposer: str, speedup: float, tokens: int, share: float) -> Verdict:
    candidate = Candidate(proposer, gamma, False, "")
    totals = Totals(tokens, tokens // 3, tokens, 30, 20, 1.0, 0.0)
    repeats = Spread(speedup, 0.99 * speedup, 1.01 * speedup, 3)
    firmness = judge_lab(tokens, repeats, share)
    return Verdict(candidate, totals, 5.0 * speedup, speedup, 0.1, 0, True, firmness)


def advice(tokens: int, share: float, runner_tokens: int | None = None) -> Advice:
    winner = verdict(5, "layerskip", 1.9, tokens, share)
    runner = verdict(3, "lookup", 1.4, runner_tokens or tokens, share)
    return Advice(5.0, 0.1, (runner, winner), others_share=share)


def test_short_advisor_runs_recommend_nothing_and_say_what_would() -> None:
    short = advice(SHORT, QUIET)
    sentence = short.recommendation()
    assert sentence.startswith(f"No recommendation from this: {TOO_FEW}.")
    assert "Use " not in sentence and "layerskip" not in sentence
    assert short.recommendation("ja").startswith(
        "この測定からはおすすめできません：トークンが少なすぎて順位をつけられません"
    )
    html = advice_html(short)
    assert "No recommendation from this" in html and html.count(">inconclusive<") == 2


def test_a_recommendation_is_as_firm_as_the_weaker_of_winner_and_runner_up() -> None:
    mixed = advice(FIRM_TOKENS, QUIET, runner_tokens=SHORT)
    firmness = mixed.firmness()
    assert firmness is not None and firmness.level is Firmness.INCONCLUSIVE
    assert mixed.recommendation().startswith("No recommendation from this")


def test_long_quiet_tight_advisor_runs_recommend_firmly() -> None:
    sentence = advice(FIRM_TOKENS, QUIET).recommendation()
    assert sentence.startswith("Use layerskip γ=5: 1.90×")
    assert sentence.endswith(
        "How firm: firm: 128 tokens a run; 3 repeats within 2%; other programs took 2% of the CPU."
    )
    assert "確度：確か" in advice(FIRM_TOKENS, QUIET).recommendation("ja")


def test_busy_advisor_runs_recommend_indicatively_and_name_the_load() -> None:
    busy = advice(FIRM_TOKENS, BUSY)
    assert busy.recommendation().startswith("Use layerskip γ=5")
    assert "How firm: indicative" in busy.recommendation()
    assert BUSY_WORDS in busy.recommendation()
    assert BUSY_JA in busy.recommendation("ja")
    assert busy.to_dict()["ranked"][0]["firmness"] == "indicative"


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_a_winner_whose_repeats_straddle_plain_decoding_is_too_close_to_call(lang: str) -> None:
    candidate = Candidate("layerskip", 5, False, "")
    totals = Totals(FIRM_TOKENS, 40, FIRM_TOKENS, 30, 20, 1.0, 0.0)
    repeats = judge_lab(FIRM_TOKENS, Spread(1.0, 0.97, 1.03, 3), QUIET)
    straddling = Verdict(candidate, totals, 5.0, 1.0, 0.1, 0, True, repeats)
    sentence = Advice(5.0, 0.1, (straddling,), others_share=QUIET).recommendation(lang)
    expected = {"en": "too close to call", "ja": "差が小さすぎて判定できません"}[lang]
    assert expected in sentence and "layerskip" not in sentence
