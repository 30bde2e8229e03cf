"""The tree's expected tokens per pass: the chain's formula for a one-branch tree, alternatives
that can only add, and a prediction that a measured run of fixed-shape trees bears out."""

from __future__ import annotations

import pytest
import torch
from tiny_models import TinyPair

from specviz.core.cost_model import expected_tokens_per_pass
from specviz.core.engine import speculative_generate
from specviz.core.settings import GenerationSettings
from specviz.drafters.draft_tree import DraftTreeDrafter
from specviz.drafters.tree_growth import DRAWN_TREE_RULES, TreeGrowth
from specviz.labs.speedup.tree_theory import (
    RankAcceptance,
    best_tree,
    expected_tokens,
    step_chance,
    tree_nodes,
)


def acceptance(*rates: float) -> RankAcceptance:
    """Rates given exactly, as counts out of 1,000."""
    return RankAcceptance(tuple(round(rate * 1000) for rate in rates), (1000,) * len(rates))


@pytest.mark.parametrize(("alpha", "gamma"), [(0.6, 5), (0.9, 3), (0.3, 8)])
def test_a_chain_is_the_chain_formula(alpha: float, gamma: int) -> None:
    tau = expected_tokens(acceptance(alpha, 0.5), (1,) * gamma)
    assert tau == pytest.approx(expected_tokens_per_pass(alpha, gamma))


def test_alternatives_only_add_and_by_their_own_chance() -> None:
    rates = acceptance(0.6, 0.5, 0.25)
    assert step_chance(rates, 1) == pytest.approx(0.6)
    assert step_chance(rates, 2) == pytest.approx(1 - 0.4 * 0.5)
    assert step_chance(rates, 4) == step_chance(rates, 3)  # no rank-4 node ever tested
    assert expected_tokens(rates, (2, 2, 1)) > expected_tokens(rates, (1, 1, 1))
    assert expected_tokens(rates, (2, 2, 1)) == pytest.approx(1 + 0.8 + 0.8**2 + 0.8**2 * 0.6)
    assert tree_nodes((2, 2, 1)) == 2 + 4 + 4


@pytest.mark.parametrize("rule", DRAWN_TREE_RULES)
def test_a_measured_run_of_trees_bears_the_prediction_out(tiny_pair: TinyPair, rule: str) -> None:
    """Counts from sampled (2, 2, 1) trees predict the run's own tokens per pass, whichever
    rule tested them (from the leaves up, the counts are read from the kept path)."""
    widths = (2, 2, 1)
    cycles = []
    for seed in range(6):
        settings = GenerationSettings(
            temperature=1.0, seed=seed, max_new_tokens=64, stop_on_eos=False
        )
        drafter = DraftTreeDrafter(tiny_pair.draft, TreeGrowth(widths=widths), rule=rule)
        prompt = torch.tensor([list(b"def add(a, b):\n    return")])
        cycles += [
            c for c in speculative_generate(tiny_pair, prompt, settings, drafter) if not c.finished
        ]
    rates = RankAcceptance.measure(cycles)
    assert sum(rates.tested) > 100 and rates.rate(1) > 0
    measured = sum(len(c.emitted) for c in cycles) / len(cycles)
    assert expected_tokens(rates, widths) == pytest.approx(measured, rel=0.15)


def test_the_best_tree_is_the_chain_when_second_guesses_never_win() -> None:
    rates = acceptance(0.8, 0.0)
    tree = best_tree(rates, 5)
    assert tree.parents == (-1, 0, 1, 2, 3) and tree.depth == 5
    assert tree.tau == pytest.approx(expected_tokens_per_pass(0.8, 5))


def test_the_best_tree_takes_alternatives_where_they_beat_going_deeper() -> None:
    """a = (0.5, 0.5): the first child is kept with 0.5, the second with 0.25, a grandchild on
    the first line with 0.25; the fourth node (chance 0.125) may be any of three."""
    rates = acceptance(0.5, 0.5)
    tree = best_tree(rates, 3)
    assert tree.tau == pytest.approx(1 + 0.5 + 0.25 + 0.25)
    assert sorted(tree.parents) == [-1, -1, 0]
    # never better than the shape it equals, and it grows with its budget
    assert tree.tau == pytest.approx(expected_tokens(rates, (2, 1)) - 0.125)
    taus = [best_tree(rates, n).tau for n in (1, 2, 4, 8, 16, 32)]
    assert taus == sorted(taus) and taus[-1] < 1 / (1 - 0.75) + 1e-9


def test_a_best_tree_of_any_budget_is_a_tree_with_parents_first() -> None:
    rates = acceptance(0.7, 0.4, 0.2, 0.1)
    for nodes in (1, 3, 7, 16, 40):
        tree = best_tree(rates, nodes)
        assert tree.nodes == len(tree.parents) == nodes
        assert all(-1 <= parent < index for index, parent in enumerate(tree.parents))
    # where chances fall down and along the tree, the best N nodes beat any shape of N nodes
    rates = acceptance(0.5, 0.5)
    assert (
        best_tree(rates, 6).tau >= expected_tokens(rates, (2, 2)) > expected_tokens(rates, (1,) * 6)
    )


def test_the_rate_at_a_depth_leans_on_its_own_counts_as_they_grow() -> None:
    """a[1] pooled 0.5; at depth 3, 40 of 40 first guesses were kept."""
    rates = RankAcceptance((60, 1), (120, 10), by_depth=((1, 1, 20, 80), (3, 1, 40, 40)))
    assert rates.rate(1) == pytest.approx(0.5)
    assert rates.rate_at(2, 1) == pytest.approx(0.5)  # never tested there: the pooled rate
    assert rates.rate_at(3, 1) == pytest.approx((40 + 4 * 0.5) / 44)
    assert rates.rate_at(3, 1, shrink=0.0) == 1.0
    assert rates.rate_at(1, 1) == pytest.approx((20 + 4 * 0.5) / 84)


def test_the_best_tree_goes_deeper_where_deep_guesses_are_kept_more_often() -> None:
    """The same pooled rates, but deep first guesses measured as always kept: the best tree of
    4 nodes turns from a bush into a line, and expects more tokens."""
    pooled = RankAcceptance((50, 50), (100, 100))
    deep = RankAcceptance(
        (50, 50), (100, 100), by_depth=tuple((d, 1, 1000, 1000) for d in range(2, 6))
    )
    bush, line = best_tree(pooled, 4), best_tree(deep, 4)
    assert bush.depth < line.depth == 4
    assert line.tau > bush.tau
    # a line of four whose first step is 0.5 and the rest nearly certain
    step = deep.rate_at(2, 1)
    assert line.tau == pytest.approx(1 + 0.5 * (1 + step + step**2 + step**3))
