"""Tree decoding end to end: a draft model's fixed-shape trees through the tree engine.

Greedy tree decoding emits plain greedy decoding's tokens; sampled tree decoding on the Markov
chain pair passes the chi-square test against the target chain's law, and a wrong rule fails it.
"""

from __future__ import annotations

import math
from collections import Counter

import pytest
import torch
from exactness_checks import CHAIN_TOKENS, chain_pair, chi_square_p_value
from tiny_models import TinyPair

from specviz.core.engine import autoregressive_generate, speculative_generate
from specviz.core.sampling import Sampler
from specviz.core.settings import GenerationSettings
from specviz.core.tree import ROOT, DraftTree, TreeVerdict
from specviz.core.tree_engine import tree_stream
from specviz.drafters.draft_tree import DraftTreeDrafter, _Grower
from specviz.drafters.registry import make_drafter
from specviz.drafters.tree_growth import DRAWN_TREE_RULES, TreeGrowth
from specviz.text import UserError


def ShapeTreeDrafter(model: torch.nn.Module, widths: tuple[int, ...]) -> DraftTreeDrafter:
    return DraftTreeDrafter(model, TreeGrowth(widths=widths))


PROMPT = torch.tensor([list(b"def add(a, b):\n    return")])


@pytest.mark.parametrize("widths", [(2, 2, 1), (3, 1), (1, 1, 1, 1)])
def test_greedy_trees_emit_plain_greedy_decoding(
    tiny_pair: TinyPair, widths: tuple[int, ...]
) -> None:
    settings = GenerationSettings(max_new_tokens=24, stop_on_eos=False)
    plain = [step.token.token_id for step in autoregressive_generate(tiny_pair, PROMPT, settings)]
    drafter = ShapeTreeDrafter(tiny_pair.draft, widths)
    cycles = list(speculative_generate(tiny_pair, PROMPT, settings, drafter))
    assert [token.token_id for cycle in cycles for token in cycle.emitted] == plain
    assert cycles[-1].totals.new_tokens == 24 and cycles[-1].stop_reason == "max_new_tokens"
    size = (
        sum(width ** (depth + 1) for depth, width in enumerate(widths))
        if len(set(widths)) == 1
        else None
    )
    for cycle in cycles:
        assert cycle.tree is not None
        left = 24 - (cycle.totals.new_tokens - len(cycle.emitted))  # tokens left before it
        if size is not None and left > len(widths):  # a full tree fits the budget
            assert len(cycle.tree.nodes) == size
        assert max((node.depth for node in cycle.tree.nodes), default=0) <= min(
            len(widths), left - 1
        )
        assert len(cycle.emitted) == len(cycle.tree.path) + 1 or cycle.finished
        verdicts = [node.verdict for node in cycle.tree.nodes]
        assert verdicts.count("accepted") == len(cycle.tree.path) == cycle.accepted_len


def test_a_draft_that_is_the_target_keeps_a_whole_branch(tiny_pair: TinyPair) -> None:
    """The target as its own draft: greedy, its first child at every depth is the target's
    choice, so each cycle keeps a full-depth path and adds the bonus."""
    same = TinyPair(tiny_pair.target, tiny_pair.target, tiny_pair.tokenizer, frozenset())
    settings = GenerationSettings(max_new_tokens=12, stop_on_eos=False)
    cycles = list(tree_stream(same, PROMPT, settings, ShapeTreeDrafter(same.draft, (2, 1, 1))))
    for cycle in cycles[:-1]:
        assert cycle.tree is not None and len(cycle.tree.path) == 3
        assert cycle.emitted[-1].origin == "bonus"


def first_child_always(tree: DraftTree, q_rows, p_rows, sampler) -> TreeVerdict:  # type: ignore[no-untyped-def]
    """The wrong rule: keep the first child at every depth, then draw from p."""
    node, path = ROOT, []
    while tree.children(node):
        node = tree.children(node)[0]
        path.append(node)
    return TreeVerdict(
        tuple(path), int(sampler.draw(p_rows[node + 1])), p_rows[node + 1], True, {}, {}
    )


def sample_joint(
    widths: tuple[int, ...] | TreeGrowth, samples: int, rule=None, tree_rule: str = "traversal"
) -> Counter[tuple[int, ...]]:  # type: ignore[no-untyped-def]
    pair = chain_pair()
    prompt = torch.tensor([[0, 1]])  # ends with token 1, as chi_square_p_value expects
    counts: Counter[tuple[int, ...]] = Counter()
    for seed in range(samples):
        settings = GenerationSettings(
            temperature=1.0, max_new_tokens=CHAIN_TOKENS, seed=seed, stop_on_eos=False
        )
        growth = widths if isinstance(widths, TreeGrowth) else TreeGrowth(widths=widths)
        drafter = DraftTreeDrafter(pair.draft, growth, rule=tree_rule)
        cycles = tree_stream(pair, prompt, settings, drafter, rule)
        counts[tuple(token.token_id for cycle in cycles for token in cycle.emitted)] += 1
    return counts


@pytest.mark.slow
@pytest.mark.parametrize("tree_rule", DRAWN_TREE_RULES)
@pytest.mark.parametrize("widths", [(2, 2), (3, 1, 1)])
def test_sampled_trees_emit_the_target_chain(widths: tuple[int, ...], tree_rule: str) -> None:
    pair = chain_pair()
    assert chi_square_p_value(pair, sample_joint(widths, 3000, tree_rule=tree_rule)) > 0.001


def test_the_wrong_rule_fails_through_the_engine() -> None:
    pair = chain_pair()
    assert chi_square_p_value(pair, sample_joint((2, 2), 1500, first_child_always)) < 1e-6


@pytest.mark.slow
@pytest.mark.parametrize("tree_rule", DRAWN_TREE_RULES)
def test_dynamic_trees_emit_the_target_chain(tree_rule: str) -> None:
    """The dynamic tree at T > 0: child counts set per depth before drawing (from the tokens
    drawn at the depths before, siblings' included), none pruned."""
    pair = chain_pair()
    growth = TreeGrowth(nodes=5, depth=3, topk=2)
    assert chi_square_p_value(pair, sample_joint(growth, 3000, tree_rule=tree_rule)) > 0.001


def test_pruning_drawn_children_by_their_tokens_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    """The control: EAGLE-2's growth and final rerank on drawn children keeps a child for
    being likely under q, which biases what the recursive rule emits."""
    monkeypatch.setattr(_Grower, "_reranked", lambda self: True)
    monkeypatch.setattr(
        _Grower, "_drawn_counts", lambda self, depth: dict.fromkeys(self.frontier, 2)
    )
    pair = chain_pair()
    growth = TreeGrowth(nodes=3, depth=3, topk=2)
    assert chi_square_p_value(pair, sample_joint(growth, 1500)) < 1e-6


def test_a_drawn_dynamic_tree_stays_within_its_budget(tiny_pair: TinyPair) -> None:
    """At T > 0 every drawn child is kept, so the budget holds while the tree grows: at most
    *nodes* nodes, *depth* deep, *topk* children a node, siblings distinct."""
    settings = GenerationSettings(temperature=1.0, seed=3, max_new_tokens=24, stop_on_eos=False)
    drafter = DraftTreeDrafter(tiny_pair.draft, TreeGrowth(nodes=7, depth=4, topk=3))
    cycles = list(speculative_generate(tiny_pair, PROMPT, settings, drafter))
    assert cycles
    for cycle in cycles:
        assert cycle.tree is not None and cycle.tree.rule == "traversal"
        nodes = cycle.tree.nodes
        assert 1 <= len(nodes) <= 7 and all(node.depth <= 4 for node in nodes)
        for index in (-1, *range(len(nodes))):
            tokens = [nodes[child].token_id for child in cycle.tree.children(index)]
            assert len(tokens) <= 3 and len(set(tokens)) == len(tokens)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_tree_tested_from_its_leaves_records_one_test_for_its_path(
    tiny_pair: TinyPair, seed: int
) -> None:
    """From the leaves up: the kept path's nodes share the one test that kept them (u below
    its chance), every node tested and lost has u at or above its chance, a lost node's whole
    subtree was tested before it, and a node never reached has no tested descendant."""
    settings = GenerationSettings(temperature=1.0, seed=seed, max_new_tokens=24)
    drafter = make_drafter("tree:nodes=8,depth=4,topk=3", tiny_pair)
    for cycle in speculative_generate(tiny_pair, PROMPT, settings, drafter):
        record = cycle.tree
        assert record is not None and record.rule == "traversal"
        kept = [record.nodes[node] for node in record.path]
        assert len({(node.accept_prob, node.uniform) for node in kept}) <= 1
        for node in kept:
            assert node.uniform is not None and node.uniform < node.accept_prob
        for index, node in enumerate(record.nodes):
            below = [record.nodes[child].verdict for child in record.children(index)]
            if node.verdict == "rejected":
                assert node.uniform is not None and node.uniform >= node.accept_prob
                assert set(below) <= {"rejected"}
            if node.verdict == "untested":
                assert set(below) <= {"untested"}
        stop = record.path[-1] if record.path else ROOT
        assert {record.nodes[child].verdict for child in record.children(stop)} <= {"rejected"}


def test_the_spec_chooses_the_rule_and_refuses_an_unknown_one(tiny_pair: TinyPair) -> None:
    settings = GenerationSettings(temperature=1.0, seed=0, max_new_tokens=8)
    drafter = make_drafter("tree:shape=2x1,rule=recursive", tiny_pair)
    rules = {
        cycle.tree.rule for cycle in speculative_generate(tiny_pair, PROMPT, settings, drafter)
    }
    assert rules == {"recursive"}
    with pytest.raises(UserError) as refused:
        make_drafter("tree:rule=sideways", tiny_pair)
    assert "traversal" in str(refused.value) and "'sideways'" in str(refused.value)


def test_a_dynamic_tree_keeps_its_best_branches(tiny_pair: TinyPair) -> None:
    """At most *nodes* nodes, at most *depth* deep, at most *topk* children a node, every
    node's parent kept, and siblings in the draft's order of preference."""
    settings = GenerationSettings(max_new_tokens=16, stop_on_eos=False)
    growth = TreeGrowth(nodes=7, depth=4, topk=3)
    drafter = DraftTreeDrafter(tiny_pair.draft, growth)
    for cycle in speculative_generate(tiny_pair, PROMPT, settings, drafter):
        assert cycle.tree is not None and cycle.tree.rule == "greedy"
        nodes = cycle.tree.nodes
        assert len(nodes) <= 7 and all(node.depth <= 4 for node in nodes)
        for index in (-1, *range(len(nodes))):
            children = [nodes[child] for child in cycle.tree.children(index)]
            assert len(children) <= 3
            assert [child.rank for child in children] == list(range(1, len(children) + 1))
            qs = [child.q_draft for child in children]
            assert qs == sorted(qs, reverse=True)


def test_a_drawn_tree_plans_deeper_only_while_its_best_line_stays_likely() -> None:
    """The planned depth: where a line at the best branch's pace falls below LINE_FLOOR, at
    least the spec's depth, at most the engine's limit for the cycle."""
    sampler = Sampler(1.0, 0, 1.0, torch.Generator())
    grower = _Grower(TreeGrowth(nodes=16, depth=2, topk=2), sampler, frozenset(), 2, 10)
    grower._plan_depth(math.log(0.9), 1)  # 0.9 a token: 0.3 after 12 tokens, past the limit
    assert grower.last == 10
    grower._plan_depth(3 * math.log(0.7), 3)  # 0.7 a token: below 0.3 after 4 tokens
    assert grower.last == 4
    grower._plan_depth(math.log(0.2), 1)  # unsure: the spec's depth
    assert grower.last == 2
    shape = TreeGrowth(widths=(2, 1))
    assert _Grower(shape, sampler, frozenset(), 2, 10).most == 2  # a fixed shape keeps its own


@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_a_dynamic_tree_never_drafts_deeper_than_its_budget_could_keep(temperature: float) -> None:
    """N nodes hold a line N deep at most (a kept node's ancestors are kept), so a 4-node tree
    neither starts at depth 6 nor plans past 4, however sure its draft: each depth it does not
    draft is a draft forward saved."""
    sampler = Sampler(temperature, 0, 1.0, torch.Generator())
    grower = _Grower(TreeGrowth(nodes=4, depth=6, topk=2), sampler, frozenset(), 6, 16)
    assert (grower.last, grower.most) == (4, 4)
    grower._plan_depth(math.log(0.99), 1)  # a line that would stay likely for 100 tokens
    assert grower.last == 4
    wide = _Grower(TreeGrowth(nodes=32, depth=6, topk=2), sampler, frozenset(), 6, 16)
    assert (wide.last, wide.most) == (6, 16)  # a budget above the engine's limit: unchanged


@pytest.mark.slow
def test_trees_planned_past_their_depth_emit_the_target_chain() -> None:
    """Depth 1 in the spec, two tokens of room in the first cycle: the drawn tree plans its
    second depth only when its best first child is likely, which is decided before drawing it."""
    pair = chain_pair()
    assert (
        chi_square_p_value(pair, sample_joint(TreeGrowth(nodes=5, depth=1, topk=2), 3000)) > 0.001
    )


@pytest.mark.parametrize(("top", "goes_on"), [(0.95, True), (0.2, False)])
def test_a_greedy_tree_grows_past_its_depth_while_its_best_branch_is_likely(
    top: float, goes_on: bool
) -> None:
    """Spec depth 1: after the first depth the tree grows on only if its best child is likely
    (above LINE_FLOOR); a fixed number of depths would stop either way."""
    greedy = Sampler(0.0, 0, 1.0, torch.Generator())
    grower = _Grower(TreeGrowth(nodes=8, depth=1, topk=2), greedy, frozenset(), 1, 6)
    law = torch.full((1, 8), (1.0 - top) / 7)
    law[0, 3] = top
    assert grower.grow(1, law, 0) is goes_on
    assert grower.tokens[0] == 3 and grower.last == (2 if goes_on else 1)
