"""Prompt lookup as a tree (lookup:branches=N): what it lays into the tree, and that decoding
stays exact (greedy equality, the target's law at temperature 1, and a control that must fail)."""

from __future__ import annotations

import pytest
import torch
from exactness_checks import (
    assert_greedy_equals_plain,
    chain_pair,
    chi_square_p_value,
    sample_joint,
)
from tiny_models import TinyPair

import specviz.core.tree
from specviz.core.engine import GenerationSettings, speculative_generate
from specviz.core.sampling import Sampler
from specviz.core.tree import ROOT
from specviz.drafters.lookup_tree import LookupTreeDrafter
from specviz.drafters.prompt_lookup import LookupOptions, PromptLookupDrafter
from specviz.drafters.registry import check_drafter_spec, make_drafter
from specviz.text import UserError

SAMPLER = Sampler(0.0, 0, 1.0, torch.Generator())
CHAIN_PROMPT = (0, 1, 2, 3, 3, 1, 0, 2, 2, 1, 3, 0, 1)  # every chain token recurs with followers


def tree_of(context: list[int], branches: int, gamma: int = 3, **options: object):  # type: ignore[no-untyped-def]
    drafter = LookupTreeDrafter(LookupOptions(**options), branches)  # type: ignore[arg-type]
    drafter.start(torch.tensor([context]), GenerationSettings(gamma=gamma), frozenset({99}))
    return drafter.propose_tree(torch.tensor(context), 16, SAMPLER)


def paths(tree) -> set[tuple[int, ...]]:  # type: ignore[no-untyped-def]
    """Every root-to-leaf branch of a DraftTree, as its tokens."""
    leaves = [i for i in range(tree.size) if not tree.children(i)]
    found = set()
    for leaf in leaves:
        tokens, node = [], leaf
        while node != ROOT:
            tokens.append(tree.tokens[node])
            node = tree.parents[node]
        found.add(tuple(reversed(tokens)))
    return found


def test_each_earlier_match_offers_its_continuation() -> None:
    # The suffix "5" occurred three times before, followed by 6 7 8, by 6 9 1 and by 2 3 4.
    context = [5, 6, 7, 8, 0, 5, 6, 9, 1, 0, 5, 2, 3, 4, 0, 5]
    proposal = tree_of(context, branches=3)
    assert paths(proposal.tree) == {(6, 7, 8), (6, 9, 1), (2, 3, 4)}
    # Shared prefixes share nodes: 6 once, with two children; 8 nodes in all.
    assert proposal.tree.size == 8 and proposal.drawn is False and proposal.forwards == 0
    # The earliest occurrence first: its branch is the root's first child, the first tested.
    first = proposal.tree.children(ROOT)[0]
    assert proposal.tree.tokens[first] == 6
    # q is one at each proposal (a copy is certain), as the chain lookup records it.
    for node, (token, parent) in enumerate(
        zip(proposal.tree.tokens, proposal.tree.parents, strict=True)
    ):
        assert float(proposal.q_rows[parent + 1, token]) == 1.0, node


def test_longer_matches_come_first_and_branches_cap_the_tree() -> None:
    # "4 5" occurred once (followed by 1 1); "5" alone also before 2 2 and 3 3.
    context = [5, 2, 2, 0, 4, 5, 1, 1, 0, 5, 3, 3, 0, 4, 5]
    assert paths(tree_of(context, branches=2, gamma=2).tree) == {(1, 1), (2, 2)}
    latest = tree_of(context, branches=2, gamma=2, occurrence="latest")
    assert paths(latest.tree) == {(1, 1), (3, 3)}
    assert paths(tree_of(context, branches=8, gamma=2).tree) == {(1, 1), (2, 2), (3, 3)}


def test_a_branch_ends_after_a_stop_token_and_at_gamma() -> None:
    context = [5, 6, 99, 7, 0, 5, 8, 9, 4, 4, 0, 5]
    assert paths(tree_of(context, branches=2, gamma=3).tree) == {(6, 99), (8, 9, 4)}


def test_no_match_is_an_empty_tree() -> None:
    assert tree_of([1, 2, 3, 4], branches=3).tree.size == 0


def test_the_spec_makes_the_chain_or_the_tree(tiny_pair: TinyPair) -> None:
    assert isinstance(make_drafter("lookup", tiny_pair), PromptLookupDrafter)
    assert isinstance(make_drafter("lookup:branches=1", tiny_pair), PromptLookupDrafter)
    tree = make_drafter("lookup:branches=4,max_ngram=3", tiny_pair)
    assert isinstance(tree, LookupTreeDrafter) and tree.branches == 4
    assert tree.options.max_ngram == 3
    for bad in ("lookup:branches=0", "lookup:branches=9", "lookup:branches=x", "hybrid:branches=2"):
        with pytest.raises(UserError):
            check_drafter_spec(bad)


@pytest.mark.parametrize(("gamma", "branches"), [(1, 3), (4, 3), (3, 8)])
def test_greedy_equals_plain_decoding(tiny_pair: TinyPair, gamma: int, branches: int) -> None:
    assert_greedy_equals_plain(tiny_pair, f"lookup:branches={branches}", gamma, False)


def test_tree_cycles_are_recorded_as_lookup(tiny_pair: TinyPair) -> None:
    settings = GenerationSettings(temperature=1.0, seed=2, max_new_tokens=24, stop_on_eos=False)
    prompt = torch.tensor([list(b"abcabdabeabcabdab")])
    cycles = list(
        speculative_generate(
            tiny_pair, prompt, settings, make_drafter("lookup:branches=3", tiny_pair)
        )
    )
    assert any(cycle.tree is not None and len(cycle.tree.nodes) > 1 for cycle in cycles)
    for cycle in cycles:
        assert cycle.drafter == "lookup" and cycle.totals.draft_forwards == 0
        assert cycle.tree is not None and cycle.tree.rule == "recursive_one_hot"
        assert cycle.tree.shape == "branches=3"


def lookup_tree_chi_square(samples: int) -> float:
    pair = chain_pair()
    counts = sample_joint(
        pair,
        3,
        samples=samples,
        drafter_for=lambda pair: make_drafter("lookup:branches=3", pair),
        prompt_ids=CHAIN_PROMPT,
    )
    return chi_square_p_value(pair, counts)


@pytest.mark.slow
def test_lookup_trees_reproduce_the_target_distribution() -> None:
    """Several copies at a node, each a one-hot proposal: accepted with p'(x), x removed from p'
    on rejection; the first three tokens follow the target chain's law."""
    assert lookup_tree_chi_square(samples=3_000) > 1e-3


def test_negative_control_keeping_a_rejected_copy_is_caught(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The one-hot rule's classic bug, leaving a rejected copy in p' for its siblings and the
    resample, is caught through the lookup tree."""
    monkeypatch.setattr(specviz.core.tree, "without", lambda dist, token: dist)
    assert lookup_tree_chi_square(samples=2_000) < 1e-6
