"""Medusa's model from a run's trees: each head's acceptance α_d from hand-built trees with known
counts, the τ = 1 + Σ_d α_1⋯α_d they give, and what is left out of the count."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch
from medusa_models import fitted_heads
from tiny_models import TinyPair
from ui_events import make_cycle

from specviz.core.engine import speculative_generate
from specviz.core.events import Cycle, Origin, Totals, TreeNode, TreeRecord
from specviz.core.settings import GenerationSettings
from specviz.drafters.medusa import MedusaDrafter, MedusaOptions
from specviz.labs.speedup.heads_theory import measure_heads
from specviz.views.head_scores import run_agreement

PROMPT = torch.tensor([list(b"def add(a, b):\n    return")])

# Two heads, two guesses each for head 1; head 2 guesses twice under head 1's first guess and
# once under its second: nodes (parent, rank).
FULL = ((-1, 1), (-1, 2), (0, 1), (0, 2), (1, 1))


def tree_cycle(shape: tuple[tuple[int, int], ...], path: tuple[int, ...], drafter: str) -> Cycle:
    """A cycle of a tree with *shape*, the nodes on *path* kept and the rest rejected."""
    nodes = []
    for index, (parent, rank) in enumerate(shape):
        depth = 1 if parent < 0 else nodes[parent].depth + 1
        kept = index in path
        nodes.append(
            TreeNode(parent, depth, rank, 10 + index, f"t{index}", 0.5, 0.5, float(kept), None,
                     "accepted" if kept else "rejected")
        )  # fmt: skip
    cycle = make_cycle(1, 0, [], ("x", Origin.RESAMPLED), Totals(1, 1, 0, 0, 0, 0.1, 0.0))
    return replace(
        cycle,
        drafter=drafter,
        accepted_len=len(path),
        tree=TreeRecord(tuple(nodes), path, "greedy", "nodes=5,topk=2"),
    )


def test_each_head_s_acceptance_is_counted_given_the_path_reached_it() -> None:
    cycles = [
        tree_cycle(FULL, (0, 2), "medusa"),  # both heads' first guesses kept
        tree_cycle(FULL, (1, 4), "medusa"),  # head 1's second guess, then head 2's first
        tree_cycle(FULL, (0,), "medusa"),  # head 2 had its chance and lost
        tree_cycle(FULL, (), "medusa"),  # head 1 lost
    ]
    theory = measure_heads(cycles)
    first, second = theory.heads
    assert (first.reached, first.kept, first.kept_by_rank) == (4, 3, (2, 1))
    assert (second.reached, second.kept, second.kept_by_rank) == (3, 2, (2,))
    assert first.rate == pytest.approx(3 / 4) and second.rate == pytest.approx(2 / 3)
    assert first.first_guess_rate == pytest.approx(2 / 4)
    assert theory.reach(2) == pytest.approx(3 / 4 * 2 / 3)
    assert theory.tau == pytest.approx(1 + 3 / 4 + 1 / 2)
    # Every tree reached every head: Π α telescopes to the run's own kept tokens per pass.
    assert theory.tau == pytest.approx(1 + sum(len(c.tree.path) for c in cycles) / 4)  # type: ignore[union-attr]
    assert theory.cycles == 4 and theory.pass_tokens == (6, 6, 6, 6)


def test_a_head_with_no_guess_under_the_path_had_no_chance() -> None:
    """Head 2 guessed nothing under head 1's second guess: that pass counts for head 1 only, so
    the model's τ is no longer the run's own mean."""
    short = ((-1, 1), (-1, 2), (0, 1))
    theory = measure_heads([tree_cycle(short, (1,), "medusa"), tree_cycle(short, (0,), "medusa")])
    first, second = theory.heads
    assert (first.reached, first.kept, first.kept_by_rank) == (2, 2, (1, 1))
    assert (second.reached, second.kept) == (1, 0)
    assert theory.tau == pytest.approx(2.0)
    assert theory.pass_tokens == (4, 4)


def test_only_trees_drafted_by_heads_count() -> None:
    theory = measure_heads(
        [
            tree_cycle(FULL, (0, 2), "tree"),  # a draft model's tree
            tree_cycle((), (), "medusa"),  # the first pass: nothing to guess from yet
            replace(tree_cycle(FULL, (0,), "medusa"), tree=None),
        ]
    )
    assert theory.heads == () and theory.cycles == 0 and theory.tau == 1.0


def test_a_greedy_medusa_run_s_first_guesses_are_its_head_agreement(tiny_pair: TinyPair) -> None:
    """On tiny Qwen2 models with heads fitted to the target's own text, greedy: a head's pass
    kept with its first guess is exactly a hit of the heads panel's agreement (a different
    count of the same cycles), and the heads' kept tokens are the run's accepted ones."""
    heads = fitted_heads(tiny_pair.target, count=3, steps=300)
    settings = GenerationSettings(max_new_tokens=40, stop_on_eos=False)
    drafter = MedusaDrafter(heads, MedusaOptions())
    cycles = list(speculative_generate(tiny_pair, PROMPT, settings, drafter))[:-1]  # whole ones
    theory = measure_heads(cycles)
    agreement = run_agreement(cycles, len(theory.heads))
    assert theory.cycles == len(cycles) - 1  # all but the first, which reads the prompt
    assert theory.heads[0].reached == theory.cycles
    for head, score in zip(theory.heads, agreement, strict=True):
        assert head.reached == score.chances
        assert (head.kept_by_rank or (0,))[0] == score.hits
    assert sum(head.kept for head in theory.heads) == sum(c.accepted_len for c in cycles) > 0
