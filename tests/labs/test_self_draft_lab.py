"""The self-drafting lab: its prediction against closed forms, the sizes it times, the drafters
it takes, and the lab on tiny models end to end with lookahead (its run, its model, its words)."""

from __future__ import annotations

import pytest
import torch
from exactness_checks import REPEATING_PROMPT
from tiny_models import TinyPair

from specviz.core.settings import GenerationSettings
from specviz.labs.speedup.cost_curve import CostCurve, CostPoint
from specviz.labs.speedup.self_draft_lab import (
    check_modelled,
    iter_self_draft_lab,
    modelled_kinds,
    predict,
    priced_sizes,
)
from specviz.labs.speedup.self_draft_panel import self_draft_html
from specviz.measure.harness import staged_result
from specviz.text import UserError


def curve(costs: dict[int, float], one_token_s: float = 0.1) -> CostCurve:
    points = tuple(
        CostPoint(size, one_token_s * costs[size], (one_token_s * costs[size],) * 3)
        for size in sorted(costs)
    )
    return CostCurve("cpu", 10, points, True)


def test_each_pass_is_priced_at_its_own_size_in_plain_decoding_s_steps() -> None:
    rising = curve({1: 1.0, 9: 2.0})  # 0.1 s for one token, 0.2 s for nine
    # passes of 5 and 9 tokens: 0.15 s and 0.2 s; plain decoding's step 0.1 s; heads 0.01 s
    prediction = predict(2.0, (5, 9), 0.01, rising, 0.1)
    assert prediction.verify_cost == pytest.approx(1.75)
    assert prediction.draft_cost == pytest.approx(0.1)
    assert prediction.speedup == pytest.approx(2.0 / 1.85)
    # a plain step twice as long makes every pass half as dear
    assert predict(2.0, (5, 9), 0.01, rising, 0.2).speedup == pytest.approx(2 * 2.0 / 1.85)
    # a flat curve and a free drafter: the speedup is τ itself, as on an idle GPU
    assert predict(2.5, (17,), 0.0, curve({1: 1.0, 17: 1.0}), 0.1).speedup == pytest.approx(2.5)


def test_the_sizes_timed_are_the_passes_thinned_to_a_few() -> None:
    assert priced_sizes((5, 9, 9, 1)) == [1, 5, 9]
    many = priced_sizes(range(2, 40))
    assert many[0] == 1 and many[1] == 2 and many[-1] == 39 and len(many) == 7
    assert priced_sizes(()) == [1]


def test_only_drafters_that_draft_with_the_target_itself_are_taken() -> None:
    assert modelled_kinds() == ("lookahead", "medusa")
    assert check_modelled("lookahead:ngram=4") == "lookahead:ngram=4"
    for other in ("draft-model", "tree:nodes=8", "lookup"):
        with pytest.raises(UserError) as refused:
            check_modelled(other)
        assert refused.value.key == "error.self_draft.drafter"
    with pytest.raises(UserError):
        check_modelled("lookahead:ngram=99")  # the drafter's own check


def test_the_lab_measures_lookahead_and_its_model(tiny_pair: TinyPair) -> None:
    settings = GenerationSettings(max_new_tokens=24, stop_on_eos=False)
    lab = staged_result(
        iter_self_draft_lab(tiny_pair, REPEATING_PROMPT, settings, cost_repeats=1, time_budget_s=90)
    )
    assert lab.complete and lab.heads is None and lab.ngrams is not None
    ngrams = lab.ngrams
    assert lab.new_tokens == 24 and lab.plain_new_tokens == 24
    # every cycle is one pass, and keeps its accepted tokens and the target's own but the last,
    # which the budget may cut
    kept = lab.model_tau * ngrams.cycles
    assert 0 <= kept - lab.new_tokens <= len(ngrams.lengths) - 1
    assert lab.tau == pytest.approx(lab.new_tokens / ngrams.cycles)
    assert ngrams.ngram == 3 and len(lab.pass_tokens) == ngrams.cycles
    assert max(lab.pass_tokens) <= lab.most_tokens == 16  # window 4, ngram 3, guesses 4
    # the target's tree forward was timed at the sizes the passes sent
    timed = [point.new_tokens for point in lab.tree_curve.points]
    assert timed == priced_sizes(lab.pass_tokens)
    assert lab.predicted.tau == lab.model_tau and lab.predicted.speedup > 0
    html = self_draft_html(lab)
    assert "Lookahead (lookahead)" in html and html.count("<tr>") == 1 + len(ngrams.lengths)
    assert "n-gram" in self_draft_html(lab, lang="ja") and "パス" in self_draft_html(lab, lang="ja")


def test_a_drafter_it_does_not_model_is_refused_before_any_run(tiny_pair: TinyPair) -> None:
    prompt = torch.tensor([list(b"def f(x):")])
    with pytest.raises(UserError) as refused:
        next(iter_self_draft_lab(tiny_pair, prompt, GenerationSettings(), "draft-model"))
    assert refused.value.key == "error.self_draft.drafter"
