"""Tree decoding end to end: a draft model's fixed-shape trees through the tree engine.

Greedy tree decoding emits plain greedy decoding's tokens; sampled tree decoding on the Markov
chain pair passes the chi-square test against the target chain's law, and a wrong rule fails it.
"""

from __future__ import annotations

from collections import Counter

import pytest
import torch
from exactness_checks import CHAIN_TOKENS, chain_pair, chi_square_p_value
from tiny_models import TinyPair

from specviz.core.engine import autoregressive_generate
from specviz.core.settings import GenerationSettings
from specviz.core.tree import ROOT, DraftTree, TreeVerdict
from specviz.core.tree_engine import tree_stream
from specviz.drafters.tree_shape import ShapeTreeDrafter

PROMPT = torch.tensor([list(b"def add(a, b):\n    return")])


@pytest.mark.parametrize("widths", [(2, 2, 1), (3, 1), (1, 1, 1, 1)])
def test_greedy_trees_emit_plain_greedy_decoding(
    tiny_pair: TinyPair, widths: tuple[int, ...]
) -> None:
    settings = GenerationSettings(max_new_tokens=24, stop_on_eos=False)
    plain = [step.token.token_id for step in autoregressive_generate(tiny_pair, PROMPT, settings)]
    drafter = ShapeTreeDrafter(tiny_pair.draft, widths)
    cycles = list(tree_stream(tiny_pair, PROMPT, settings, drafter))
    assert [token for cycle in cycles for token in cycle.emitted] == plain
    assert cycles[-1].new_tokens == 24 and cycles[-1].stop_reason == "max_new_tokens"
    size = (
        sum(width ** (depth + 1) for depth, width in enumerate(widths))
        if len(set(widths)) == 1
        else None
    )
    for cycle in cycles:
        assert cycle.tree.size == (size or cycle.tree.size)
        assert len(cycle.emitted) == len(cycle.verdict.path) + 1 or cycle.finished
        assert cycle.verdicts().count("accepted") == len(cycle.verdict.path)


def test_a_draft_that_is_the_target_keeps_a_whole_branch(tiny_pair: TinyPair) -> None:
    """The target as its own draft: greedy, its first child at every depth is the target's
    choice, so each cycle keeps a full-depth path and adds the bonus."""
    same = TinyPair(tiny_pair.target, tiny_pair.target, tiny_pair.tokenizer, frozenset())
    settings = GenerationSettings(max_new_tokens=12, stop_on_eos=False)
    cycles = list(tree_stream(same, PROMPT, settings, ShapeTreeDrafter(same.draft, (2, 1, 1))))
    assert all(len(cycle.verdict.path) == 3 and cycle.verdict.bonus for cycle in cycles[:-1])


def first_child_always(tree: DraftTree, q_rows, p_rows, sampler) -> TreeVerdict:  # type: ignore[no-untyped-def]
    """The wrong rule: keep the first child at every depth, then draw from p."""
    node, path = ROOT, []
    while tree.children(node):
        node = tree.children(node)[0]
        path.append(node)
    return TreeVerdict(
        tuple(path), int(sampler.draw(p_rows[node + 1])), p_rows[node + 1], True, {}, {}
    )


def sample_joint(widths: tuple[int, ...], samples: int, rule=None) -> Counter[tuple[int, ...]]:  # type: ignore[no-untyped-def]
    pair = chain_pair()
    prompt = torch.tensor([[0, 1]])  # ends with token 1, as chi_square_p_value expects
    counts: Counter[tuple[int, ...]] = Counter()
    for seed in range(samples):
        settings = GenerationSettings(
            temperature=1.0, max_new_tokens=CHAIN_TOKENS, seed=seed, stop_on_eos=False
        )
        drafter = ShapeTreeDrafter(pair.draft, widths)
        cycles = tree_stream(pair, prompt, settings, drafter, rule)
        counts[tuple(token for cycle in cycles for token in cycle.emitted)] += 1
    return counts


@pytest.mark.slow
@pytest.mark.parametrize("widths", [(2, 2), (3, 1, 1)])
def test_sampled_trees_emit_the_target_chain(widths: tuple[int, ...]) -> None:
    pair = chain_pair()
    assert chi_square_p_value(pair, sample_joint(widths, 3000)) > 0.001


def test_the_wrong_rule_fails_through_the_engine() -> None:
    pair = chain_pair()
    assert chi_square_p_value(pair, sample_joint((2, 2), 1500, first_child_always)) < 1e-6
