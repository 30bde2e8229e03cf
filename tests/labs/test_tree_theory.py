"""The tree's expected tokens per pass: the chain's formula for a one-branch tree, alternatives
that can only add, and a prediction that a measured run of fixed-shape trees bears out."""

from __future__ import annotations

import pytest
import torch
from tiny_models import TinyPair

from specviz.core.cost_model import expected_tokens_per_pass
from specviz.core.engine import speculative_generate
from specviz.core.settings import GenerationSettings
from specviz.drafters.draft_tree import DraftTreeDrafter, TreeGrowth
from specviz.labs.speedup.tree_theory import (
    RankAcceptance,
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


def test_a_measured_run_of_trees_bears_the_prediction_out(tiny_pair: TinyPair) -> None:
    """Counts from sampled (2, 2, 1) trees predict the run's own tokens per pass."""
    widths = (2, 2, 1)
    cycles = []
    for seed in range(6):
        settings = GenerationSettings(
            temperature=1.0, seed=seed, max_new_tokens=64, stop_on_eos=False
        )
        drafter = DraftTreeDrafter(tiny_pair.draft, TreeGrowth(widths=widths))
        prompt = torch.tensor([list(b"def add(a, b):\n    return")])
        cycles += [
            c for c in speculative_generate(tiny_pair, prompt, settings, drafter) if not c.finished
        ]
    rates = RankAcceptance.measure(cycles)
    assert sum(rates.tested) > 100 and rates.rate(1) > 0
    measured = sum(len(c.emitted) for c in cycles) / len(cycles)
    assert expected_tokens(rates, widths) == pytest.approx(measured, rel=0.15)
