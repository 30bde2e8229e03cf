"""Trees against the chain: the prediction's costs and verdicts against closed forms, and the lab
on tiny models end to end (its runs, its forward timings, its bad input)."""

from __future__ import annotations

import pytest
import torch
from tiny_models import TinyPair

from specviz.core.cost_model import tokens_per_pass_over
from specviz.core.settings import GAMMA_MAX, GenerationSettings
from specviz.labs.speedup.charts import tree_chart
from specviz.labs.speedup.cost_curve import CostCurve, CostPoint
from specviz.labs.speedup.panel import tree_lab_html
from specviz.labs.speedup.tree_lab import (
    PREDICTED_NODES,
    best_tree_for,
    forward_s,
    iter_tree_lab,
    median_error,
    merged_curve,
    predict_chain,
    predict_tree,
    reach,
    read_between,
    tree_specs,
)
from specviz.labs.speedup.tree_theory import RankAcceptance, best_tree
from specviz.measure.harness import staged_result
from specviz.text import Phrase, UserError

PROMPT = torch.tensor([list(b"def fibonacci(n):")])


def curve(costs: dict[int, float], one_token_s: float = 0.1) -> CostCurve:
    points = tuple(
        CostPoint(size, one_token_s * costs[size], (one_token_s * costs[size],) * 3)
        for size in sorted(costs)
    )
    return CostCurve("cpu", 10, points, True)


def rates(*values: float) -> RankAcceptance:
    return RankAcceptance(tuple(round(v * 1000) for v in values), (1000,) * len(values))


def test_forward_times_are_read_interpolated_and_extended() -> None:
    costs = curve({1: 1.0, 5: 1.0, 9: 2.0, 17: 4.0})  # in tenths of a second
    assert forward_s(costs, 5) == pytest.approx(0.1)
    assert forward_s(costs, 7) == pytest.approx(0.15)
    assert forward_s(costs, 13) == pytest.approx(0.3)
    assert forward_s(costs, 34) == pytest.approx(0.8)  # in proportion past the largest


def test_a_free_verification_makes_the_biggest_tree_best() -> None:
    """As on a GPU: v flat, the draft free; more nodes can only add kept tokens."""
    flat = curve({size: 1.0 for size in range(1, 66)})
    free_draft = curve({size: 1.0 for size in range(1, 9)}, one_token_s=1e-12)
    acceptance = rates(0.7, 0.4, 0.2)
    speedups = [
        predict_tree(acceptance, n, 6, 4, flat, free_draft, 0.1).speedup for n in PREDICTED_NODES
    ]
    assert speedups == sorted(speedups)
    # a[1] = 0.7: a line of first guesses stays above 0.3 for 3 tokens, so the spec's 6 holds.
    assert speedups[-1] == pytest.approx(best_tree(acceptance, 64, max_depth=6).tau)


def test_the_predicted_tree_goes_deeper_only_where_first_guesses_are_likely() -> None:
    assert reach(rates(0.7, 0.4, 0.2), 6) == 6
    assert reach(rates(0.91, 0.2), 6) == 12  # 0.91^12 = 0.32, 0.91^13 = 0.29
    assert reach(rates(0.99, 0.2), 6) == GAMMA_MAX
    assert reach(rates(0.0), 6) == 6


def test_a_verification_paid_per_node_makes_the_chain_win() -> None:
    """As on a small CPU past its flat part: every node costs a tenth of a forward."""
    rising = curve({size: 1.0 + 0.1 * (size - 1) for size in range(1, 66)})
    draft = curve({size: 1.0 for size in range(1, 9)}, one_token_s=0.005)
    acceptance = rates(0.8, 0.3, 0.1)
    chain = predict_chain(0.8, 5, rising, draft, 0.1)
    assert chain.tau == pytest.approx((1 - 0.8**6) / (1 - 0.8))
    assert chain.verify_cost == pytest.approx(1.5)
    assert chain.draft_cost == pytest.approx(5 * 0.05)
    big = predict_tree(acceptance, 64, 6, 4, rising, draft, 0.1)
    assert big.verify_cost == pytest.approx(7.4)
    assert big.speedup < chain.speedup
    small = predict_tree(acceptance, 4, 6, 4, rising, draft, 0.1)
    # in plain decoding's steps: a plain step twice as long makes every pass half as dear
    slower_plain = predict_chain(0.8, 5, rising, draft, 0.2)
    assert slower_plain.speedup == pytest.approx(2 * chain.speedup)
    assert slower_plain.verify_cost == pytest.approx(chain.verify_cost / 2)
    assert small.speedup > big.speedup


def test_the_lab_measures_the_chain_and_each_tree_and_predicts_them(tiny_pair: TinyPair) -> None:
    settings = GenerationSettings(max_new_tokens=24, stop_on_eos=False)
    lab = staged_result(
        iter_tree_lab(
            tiny_pair, PROMPT, settings, gamma=3, budgets=(4, 8), cost_repeats=1, time_budget_s=60
        )
    )
    assert lab.chain.nodes == 3 and [run.nodes for run in lab.trees] == [4, 8]
    assert all(run.new_tokens == 24 and run.tau >= 1.0 for run in (lab.chain, *lab.trees))
    assert sum(lab.acceptance.tested) > 0  # counted from the tree runs' own cycles
    assert {row.nodes for row in lab.predicted} >= {*PREDICTED_NODES, 4, 8}
    assert lab.best in lab.predicted
    assert lab.best.speedup == max(row.speedup for row in lab.predicted)
    # the parts the chart's hover shows make the speedup: N tokens in N/τ passes and one read
    # of the prompt, against plain decoding's N steps
    n, row = lab.plain_new_tokens, lab.best
    cycles = n / row.tau * (row.draft_cost + row.verify_cost)
    assert row.prompt_cost > 0 and row.speedup == pytest.approx(n / (row.prompt_cost + cycles))
    # at a budget run, τ is the share of the best tree's that the runs' trees gave
    assert [nodes for nodes, _ in lab.reached] == [4, 8]
    for nodes, share in lab.reached:
        best = best_tree_for(lab.acceptance, nodes, 6).tau
        assert share > 0 and lab.predicted_at(nodes).tau == pytest.approx(
            tokens_per_pass_over(share * best, 24)
        )
    # past the largest budget run, the target's pass reads as many more nodes as the budget grows
    # (the sizes it is priced at; their measured times need not rise on a busy machine)
    assert lab.predicted_at(64).read > lab.predicted_at(8).read > 1
    assert lab.chain_predicted.read == 3 + 1
    # the target's tree forward was timed at every predicted size, the draft's at 1 to 8 tokens
    sizes = [point.new_tokens for point in lab.target_tree_curve.points]
    assert sizes == sorted({1, *(n + 1 for n in (*PREDICTED_NODES, 4, 8))})
    assert [point.new_tokens for point in lab.draft_curve.points] == list(range(1, 9))
    assert lab.complete and median_error(lab) >= 0.0
    # shown: the verdict, a row per run (no "cut" column when none was cut), in both languages
    html = tree_lab_html(lab)
    assert "Predicted for this machine" in html and "tree, ≤ 8 nodes" in html
    assert "of the tokens a pass that the best tree of the same budget would give" in html
    assert html.count("<th>") == 6
    assert "ツリー、8 ノード以下" in tree_lab_html(lab, lang="ja")
    # and projected onto a GPU, labelled as a projection: there a pass reads the weights once
    assert lab.gpu is not None and lab.gpu.kind == "projection"
    assert lab.gpu.best.verify_cost == pytest.approx(1.0) and lab.gpu.chain.verify_cost == 1.0
    assert "PROJECTION, not a measurement" in html
    names = [trace.name for trace in tree_chart(lab).data]
    assert names[:2] == ["tree, predicted", "tree, measured"] and "best tree here" in names[-1]


def test_timings_of_several_repeats_pool_into_one_curve() -> None:
    early = CostCurve("cpu", 9, (CostPoint(1, 1.0, (1.0,)), CostPoint(2, 2.0, (2.0,))), True)
    late = CostCurve("cpu", 9, (CostPoint(1, 3.0, (3.0, 5.0)),), False)
    pooled = merged_curve([early, late])
    assert [(p.new_tokens, p.median_s, p.runs_s) for p in pooled.points] == [
        (1, 3.0, (1.0, 3.0, 5.0))
    ]
    assert not pooled.complete


def test_a_run_pays_its_prompt_once_and_its_trees_the_depths_it_grew() -> None:
    flat, draft = curve({1: 1.0, 6: 1.0, 17: 1.0}), curve({n: 0.1 for n in range(1, 33)})
    # 64 tokens in 8 passes of 0.1 s against 64 plain steps of 0.1 s: 8×; a prompt read of
    # 0.8 s more doubles the run's time and halves that
    free = curve({n: 0.0 for n in range(1, 9)})
    assert predict_chain(1.0, 7, flat, free, 0.1, 64).speedup == pytest.approx(64 / 8.5)
    paid = predict_chain(1.0, 7, flat, free, 0.1, 64, prompt_s=0.85)
    assert paid.speedup == pytest.approx(64 * 0.1 / (0.85 + 8.5 * 0.1))
    # the draft's depth forwards: as many as the runs grew, not as deep as the best tree goes
    deep = predict_tree(rates(0.99, 0.3), 16, 6, 4, flat, draft, 0.1)
    grown = predict_tree(rates(0.99, 0.3), 16, 6, 4, flat, draft, 0.1, depths=3.0)
    assert grown.draft_cost == pytest.approx((0.01 + 0.01 + 2 * 0.01) / 0.1)
    assert deep.draft_cost > grown.draft_cost and deep.tau == grown.tau
    # and the target's pass reads as many nodes as the runs' trees held
    rising = curve({1: 1.0, 6: 1.0, 9: 2.0, 17: 3.0})
    full = predict_tree(rates(0.99, 0.3), 16, 6, 4, rising, draft, 0.1)
    held = predict_tree(rates(0.99, 0.3), 16, 6, 4, rising, draft, 0.1, sent=8.0)
    assert full.verify_cost == pytest.approx(3.0) and held.verify_cost == pytest.approx(2.0)
    assert (full.read, held.read) == (16 + 1, 8 + 1)
    # and it gives the share of the best tree's tokens a pass that the runs' trees gave
    half = predict_tree(rates(0.99, 0.3), 16, 6, 4, flat, draft, 0.1, reached=0.5)
    assert half.tau == pytest.approx(deep.tau / 2) and half.draft_cost == deep.draft_cost


def test_what_the_runs_showed_is_read_between_the_measured_budgets() -> None:
    measured = {8: 7.0, 16: 9.0, 32: None}
    assert read_between(8, measured) == 7.0 and read_between(12, measured) == pytest.approx(8.0)
    assert read_between(64, measured) == 9.0  # the largest measured, past it
    assert read_between(4, measured) is None  # below the budgets run: the model's own count
    assert read_between(16, {}) is None


def test_a_run_of_n_tokens_pays_for_its_cut_last_pass() -> None:
    """τ = 8 over 64 tokens: 8.5 passes on average, not 8; the chain and a tree alike."""
    flat, draft = curve({1: 1.0, 6: 1.0, 17: 1.0}), curve({n: 0.0 for n in range(1, 9)})
    chain = predict_chain(1.0, 7, flat, draft, 0.1, new_tokens=64)
    assert chain.tau == pytest.approx(64 / 8.5) and chain.speedup == pytest.approx(64 / 8.5)
    assert predict_chain(1.0, 7, flat, draft, 0.1).tau == pytest.approx(8.0)
    assert tokens_per_pass_over(8.0, None) == 8.0
    tree = predict_tree(rates(0.9, 0.3), 16, 6, 4, flat, draft, 0.1)
    cut = predict_tree(rates(0.9, 0.3), 16, 6, 4, flat, draft, 0.1, new_tokens=32)
    assert cut.tau == pytest.approx(32 / (32 / tree.tau + 0.5)) and cut.tau < tree.tau


def test_repeats_give_each_method_the_median_of_its_runs(tiny_pair: TinyPair) -> None:
    settings = GenerationSettings(max_new_tokens=8, stop_on_eos=False)
    stages = list(
        iter_tree_lab(tiny_pair, PROMPT, settings, gamma=2, budgets=(4,), cost_repeats=1, repeats=3)
    )
    lab = stages[-1].result
    assert lab is not None
    # the forwards are timed in every repeat, after its runs, and pooled into one curve
    runs = [  # what each run was, in order: "progress.method_repeat" names it
        stage.message.values["name"].key
        for stage in stages
        if isinstance(stage.message, Phrase) and stage.message.key == "progress.method_repeat"
    ]
    assert runs.count("tree_lab.progress.forwards") == 3
    assert runs[:4] == [
        "speedup.progress.plain",
        "speedup.progress.gamma",
        "tree_lab.progress.tree",
        "tree_lab.progress.forwards",
    ]
    assert all(len(point.runs_s) == 3 for point in lab.target_tree_curve.points)
    for run in (lab.chain, *lab.trees):
        assert len(run.speedups) == 3
        assert run.speedup == pytest.approx(sorted(run.speedups)[1])
    # the rank counts pool every repeat's trees: three identical greedy runs, three times one's
    one = staged_result(
        iter_tree_lab(tiny_pair, PROMPT, settings, gamma=2, budgets=(4,), cost_repeats=1)
    )
    assert lab.acceptance.tested == tuple(3 * n for n in one.acceptance.tested)


def test_the_lab_runs_each_budget_with_the_specs_other_options() -> None:
    """The rule and growth of --tree reach every tree run; nodes is the budget's."""
    growth, specs = tree_specs("tree:depth=4,topk=3,rule=recursive", (8, 16))
    assert (growth.depth, growth.topk) == (4, 3)
    assert specs == [
        "tree:nodes=8,depth=4,topk=3,rule=recursive",
        "tree:nodes=16,depth=4,topk=3,rule=recursive",
    ]
    assert tree_specs("tree", (8,))[1] == ["tree:nodes=8,depth=6,topk=4"]  # the default rule
    with pytest.raises(UserError):
        tree_specs("tree:rule=sideways", (8,))


@pytest.mark.parametrize(
    ("kwargs", "key"),
    [
        ({"budgets": (0,)}, "error.tree_lab.nodes"),
        ({"budgets": (65,)}, "error.tree_lab.nodes"),
        ({"tree_spec": "tree:shape=2x2"}, "error.tree_lab.spec"),
        ({"tree_spec": "draft-model"}, "error.tree_lab.spec"),
        ({"gamma": 0}, "error.speedup.gammas"),
        ({"repeats": 0}, "error.harness.repeats"),
    ],
)
def test_bad_lab_settings_are_refused_before_any_run(
    tiny_pair: TinyPair, kwargs: dict[str, object], key: str
) -> None:
    with pytest.raises(UserError) as refused:
        next(iter_tree_lab(tiny_pair, PROMPT, GenerationSettings(), **kwargs))  # type: ignore[arg-type]
    assert refused.value.key == key


def test_predictions_within_a_tenth_name_no_winner(tiny_pair: TinyPair) -> None:
    from dataclasses import replace

    settings = GenerationSettings(max_new_tokens=8, stop_on_eos=False)
    lab = staged_result(
        iter_tree_lab(tiny_pair, PROMPT, settings, gamma=2, budgets=(4,), cost_repeats=1)
    )
    near = replace(
        lab, best=replace(lab.chain_predicted, nodes=4, speedup=1.05 * lab.chain_predicted.speedup)
    )
    assert near.too_close and "the runs in the table decide" in tree_lab_html(near)
    far = replace(
        lab, best=replace(lab.chain_predicted, nodes=4, speedup=2 * lab.chain_predicted.speedup)
    )
    assert not far.too_close and not far.chain_wins
    assert "a tree of 4 nodes is fastest" in tree_lab_html(far)
