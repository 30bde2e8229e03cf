"""Plain words beside the maths: the probability formatter and each token's verdict sentence.

Hand-built cycles (ui_events) with known numbers pin the exact sentences, in English and Japanese;
the cards, the stream's tooltips and the inspector are checked to say the same sentence.
"""

from __future__ import annotations

from dataclasses import replace
from html import unescape

import pytest
from ui_events import draft, make_cycle, sample_run

from specviz.core.events import Cycle, Origin, TokenProb, Totals
from specviz.labs.inspector import inspector_html, inspector_lines
from specviz.views import run_html as render
from specviz.views.numbers import prob, prob_pair, ratio
from specviz.views.verdicts import draft_sentence, draft_verdict, extra_verdict

# --- the formatter ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (0.0, "0"),
        (1.0, "1.0"),
        (0.6281, "0.63"),
        (0.5, "0.50"),  # two figures always, trailing zero kept
        (0.0031, "0.0031"),  # never 0.00
        (0.00012, "0.00012"),
        (0.000012, "1.2e-5"),  # below 0.0001: e-notation
        (3.4e-9, "3.4e-9"),
        (0.996, "0.996"),  # under 1 never reads 1.0
        (0.9996, "0.9996"),
        (0.99996, ">0.9999"),
        (None, "—"),
        (float("nan"), "—"),
    ],
)
def test_a_probability_has_two_significant_figures_and_never_rounds_to_0_or_1(
    value: float | None, shown: str
) -> None:
    assert prob(value) == shown


def test_more_figures_on_request() -> None:
    assert (prob(0.28571), prob(0.28571, 3), prob(0.000012345, 3)) == ("0.29", "0.286", "1.23e-5")


def test_compared_probabilities_never_look_equal_unless_they_are() -> None:
    assert prob_pair(0.93, 0.2857) == ("0.93", "0.29")
    assert prob_pair(0.6281, 0.6279) == ("0.6281", "0.6279")
    assert prob_pair(0.5, 0.5) == ("0.50", "0.50")
    assert prob_pair(0.99999, 1.0) == (">0.9999", "1.0")


def test_p_over_q_may_pass_one() -> None:
    assert (ratio(0.2857), ratio(1.0), ratio(12.5), ratio(float("inf"))) == (
        "0.29",
        "1.00",
        "12.50",
        "∞",
    )


# --- the sentences ------------------------------------------------------------------------------


def _sentences(cycle: Cycle, lang: str) -> list[str]:
    drafts = [draft_sentence(cycle, token, lang) for token in cycle.drafted]
    extras = [extra_verdict(cycle, t).text(lang) for t in cycle.emitted[cycle.accepted_len :]]
    return drafts + extras


def test_a_sampled_cycle_in_english() -> None:
    assert _sentences(sample_run()[0], "en") == [
        "accepted: the die showed 0.10, below the 0.75 chance of keeping it",
        "accepted: the die showed 0.20, below the 0.75 chance of keeping it",
        "rejected: the die showed 0.93, above the 0.29 chance of keeping it",
        "never tested: an earlier draft was rejected",
        "resampled: drawn from what the target wanted beyond the draft, norm(max(0, p − q)), "
        "with chance 0.42",
    ]
    assert _sentences(sample_run()[1], "en")[-1] == (
        "bonus: every draft was kept, so the same target pass gives one more token free (p 0.42)"
    )
    # A tiny chance of keeping reads as itself, not 0.00.
    assert _sentences(sample_run()[2], "en")[0] == (
        "rejected: the die showed 0.40, above the 0.056 chance of keeping it"
    )


def test_a_sampled_cycle_in_japanese() -> None:
    assert _sentences(sample_run()[0], "ja") == [
        "受理：サイコロの目 0.10 が、残す確率 0.75 を下回りました",
        "受理：サイコロの目 0.20 が、残す確率 0.75 を下回りました",
        "棄却：サイコロの目 0.93 が、残す確率 0.29 を上回りました",
        "未検証：前のドラフトが棄却されたため、確かめられませんでした",
        "再サンプリング：ターゲットがドラフトより強く望んでいた分 norm(max(0, p − q)) から"
        "引きました（確率 0.42）",
    ]
    assert _sentences(sample_run()[1], "ja")[-1] == (
        "ボーナス：ドラフトがすべて受理されたので、同じターゲットのパスでもう1トークンが無償で"
        "得られました（p 0.42）"
    )


def test_a_draft_the_target_likes_at_least_as_much_is_kept_whatever_the_die_shows() -> None:
    cycle = make_cycle(
        0, 0, [draft(1, 0, "x", accepted=True, q=0.4, p=0.6, u=0.97)], ("y", Origin.BONUS),
        Totals(2, 1, 1, 1, 1, 0.1, 0.0),
    )  # fmt: skip
    assert _sentences(cycle, "en")[0] == (
        "accepted: the target rates it at least as high as the draft did (p 0.60 ≥ q 0.40), so it "
        "is kept whatever the die shows"
    )
    assert _sentences(cycle, "ja")[0] == (
        "受理：ターゲットはドラフト以上にこのトークンを推している（p 0.60 ≥ q 0.40）ので、"
        "サイコロの目にかかわらず残ります"
    )


def test_a_draft_chosen_by_rule_has_p_itself_as_its_chance() -> None:
    kept = draft(1, 0, " a", accepted=True, q=1.0, p=0.63, u=0.42)
    lost = draft(2, 1, " b", accepted=False, q=1.0, p=0.0031, u=0.86)
    cycle = replace(
        make_cycle(0, 0, [kept, lost], ("c", Origin.RESAMPLED), Totals(2, 1, 2, 2, 1, 0.1, 0.0)),
        drafter="lookup",
    )
    assert _sentences(cycle, "en")[:2] == [
        "accepted: the die showed 0.42, below the 0.63 chance of keeping it (p itself: chosen by "
        "rule, q = 1)",
        "rejected: the die showed 0.86, above the 0.0031 chance of keeping it (p itself: chosen "
        "by rule, q = 1)",
    ]
    assert _sentences(cycle, "ja")[1] == (
        "棄却：サイコロの目 0.86 が、残す確率 0.0031 を上回りました（規則で選んだトークンは "
        "q = 1 なので、この確率は p そのもの）"
    )


def test_lookahead_s_drafts_are_chosen_too_and_the_inspector_says_whose() -> None:
    lost = draft(1, 0, " b", accepted=False, q=1.0, p=0.0031, u=0.86)
    cycle = replace(
        make_cycle(0, 0, [lost], ("c", Origin.RESAMPLED), Totals(1, 1, 1, 1, 0, 0.1, 0.0)),
        drafter="lookahead",
    )
    assert "(p itself: chosen by rule, q = 1)" in _sentences(cycle, "en")[0]
    said = "\n".join(inspector_lines(cycle))
    assert "a row of future blanks the target refills" in said and "q(x) = 1" in said


def _greedy_cycle() -> Cycle:
    top = (TokenProb(5, " z", 0.7),)
    kept = replace(draft(1, 0, " x", accepted=True, u=None), accept_prob=1.0)
    lost = replace(draft(2, 1, " y", accepted=False, u=None), accept_prob=0.0, top_p=top)
    return make_cycle(
        0, 0, [kept, lost], (" z", Origin.RESAMPLED), Totals(2, 1, 2, 2, 1, 0.1, 0.0), greedy=True
    )


def test_greedy_has_no_die_only_the_targets_top_choice() -> None:
    assert _sentences(_greedy_cycle(), "en") == [
        "accepted: it is the target's top choice",
        "rejected: the target's top choice is “ z”",
        "resampled: the target's top choice in the rejected draft's place (p 0.42)",
    ]
    assert _sentences(_greedy_cycle(), "ja") == [
        "受理：ターゲットの第1候補です",
        "棄却：ターゲットの第1候補は “ z” です",
        "再サンプリング：棄却されたドラフトの代わりに入ったターゲットの第1候補です（p 0.42）",
    ]


def test_greedy_names_the_token_the_target_took_on_a_tie() -> None:
    """bfloat16 can round two tokens to the same p: the listed first of top_p need not be the
    argmax the engine took, so the sentence names the emitted token."""
    tie = (TokenProb(5, " z", 0.4), TokenProb(6, " w", 0.4))
    cycle = _greedy_cycle()
    lost = replace(cycle.drafted[1], top_p=tie)
    cycle = make_cycle(
        0,
        0,
        [cycle.drafted[0], lost],
        (" w", Origin.RESAMPLED),
        Totals(2, 1, 2, 2, 1, 0.1, 0.0),
        greedy=True,
    )
    assert _sentences(cycle, "en")[1] == "rejected: the target's top choice is “ w”"


def test_a_cycle_with_nothing_drafted_is_the_targets_token_alone() -> None:
    cycle = make_cycle(0, 0, [], ("a", Origin.BONUS), Totals(1, 1, 0, 0, 0, 0.1, 0.0))
    assert _sentences(cycle, "en") == [
        "bonus: nothing was drafted, so the target wrote it alone (p 0.42)"
    ]
    assert _sentences(cycle, "ja") == [
        "ボーナス：ドラフトがなかったので、ターゲットが単独で書きました（p 0.42）"
    ]


# --- one sentence everywhere ----------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_cards_tooltips_and_inspector_say_the_same_sentence(lang: str) -> None:
    cycle = sample_run()[0]
    stream = unescape(render.stream_html([cycle], lang=lang))
    cards = unescape(render.cycle_cards_html(cycle, lang=lang))
    table = unescape(inspector_html(cycle, lang=lang))
    lines = "\n".join(inspector_lines(cycle, lang))
    for token in cycle.drafted:
        verdict = draft_verdict(cycle, token)
        assert verdict.text(lang) in stream and verdict.text(lang) in table
        assert verdict.text(lang) in lines
        assert verdict.reason.text(lang) in cards  # under the card's own headline
    extra = extra_verdict(cycle, cycle.emitted[-1])
    assert extra.text(lang) in stream and extra.reason.text(lang) in cards


def test_token_text_in_a_sentence_is_escaped() -> None:
    cycle = _greedy_cycle()
    text = '<img src=x onerror="x">'
    evil = (TokenProb(5, text, 0.7),)
    cycle = replace(
        cycle,
        drafted=(cycle.drafted[0], replace(cycle.drafted[1], top_p=evil)),
        # The sentence names the token the target took in the rejected draft's place.
        emitted=tuple(
            replace(token, text=text) if token.origin is Origin.RESAMPLED else token
            for token in cycle.emitted
        ),
    )
    for markup in (
        render.cycle_cards_html(cycle),
        render.stream_html([cycle]),
        inspector_html(cycle),
    ):
        assert "<img" not in markup and "&lt;img src=x onerror=&quot;x&quot;&gt;" in markup
