"""Draft trees: the attention mask of one tree forward, and the two exact verification rules.

The rules are checked three ways: the law of the token a node emits, computed in closed form over
every way its children could have been drawn, equals the target's; on a Markov chain pair whose
law is known, sampled tokens pass a chi-square test for several tree shapes while a wrong rule
fails it; greedy descent emits plain greedy decoding's tokens.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable

import pytest
import torch
from scipy.stats import chisquare
from tiny_models import random_transition

from specviz.core.sampling import Sampler
from specviz.core.tree import (
    ROOT,
    DraftTree,
    TreeVerdict,
    positive_residual,
    tree_attention_mask,
    tree_position_ids,
    tree_visibility,
    verify_tree_greedy,
    verify_tree_recursive,
    verify_tree_walk,
    without,
)

# A tree: the root's two children, the first with two children, the second with one.
#        root
#       /    \
#      0      1
#     / \     |
#    2   3    4
SMALL = DraftTree(tokens=(5, 6, 7, 8, 9), parents=(ROOT, ROOT, 0, 0, 1))


def test_a_tree_knows_its_depths_children_and_paths() -> None:
    assert SMALL.depths == (1, 1, 2, 2, 2)
    assert SMALL.children(ROOT) == [0, 1] and SMALL.children(0) == [2, 3]
    assert SMALL.children(4) == [] and SMALL.path_to(3) == [0, 3]
    assert DraftTree.chain([4, 5, 6]).parents == (ROOT, 0, 1)
    with pytest.raises(ValueError):
        DraftTree(tokens=(1, 2), parents=(ROOT, 1))  # a node cannot be its own parent


def test_each_node_sees_the_committed_text_its_ancestors_and_itself() -> None:
    past = 3
    mask = tree_attention_mask(SMALL, past)
    assert mask.shape == (1, 1, 6, 9)
    sees = mask[0, 0] == 0
    assert sees[:, :past].all()  # everyone sees the committed text
    tree = sees[:, past:]
    # rows and columns: root, nodes 0..4
    expected = torch.tensor(
        [
            [1, 0, 0, 0, 0, 0],  # root
            [1, 1, 0, 0, 0, 0],  # node 0
            [1, 0, 1, 0, 0, 0],  # node 1: not its sibling
            [1, 1, 0, 1, 0, 0],  # node 2: root, 0, itself; not its sibling 3
            [1, 1, 0, 0, 1, 0],  # node 3
            [1, 0, 1, 0, 0, 1],  # node 4: root, 1, itself
        ],
        dtype=torch.bool,
    )
    assert torch.equal(tree, expected)
    assert torch.equal(tree_visibility(SMALL), expected)
    assert mask[0, 0][~sees].eq(torch.finfo(torch.float32).min).all()
    assert tree_position_ids(SMALL, past).tolist() == [[3, 4, 4, 5, 5, 5]]


def test_a_chain_is_a_causal_mask() -> None:
    chain = DraftTree.chain([1, 2, 3, 4])
    assert torch.equal(tree_visibility(chain), torch.ones(5, 5, dtype=torch.bool).tril())
    assert tree_position_ids(chain, 7).tolist() == [[7, 8, 9, 10, 11]]


# --- the law of one node's token, in closed form ----------------------------------------------


def ordered_draws(q: torch.Tensor, count: int) -> list[tuple[tuple[int, ...], float]]:
    """Every way to draw *count* distinct tokens one after another from q, each without the ones
    before, with its probability."""
    support = [int(token) for token in torch.nonzero(q > 0).flatten()]
    draws = []
    for tokens in itertools.permutations(support, count):
        prob, rest = 1.0, q.clone()
        for token in tokens:
            prob *= float(rest[token] / rest.sum())
            rest[token] = 0.0
        draws.append((tokens, prob))
    return draws


def emitted_law(
    p: torch.Tensor, q: torch.Tensor | None, children: tuple[int, ...], update_q: bool = True
) -> torch.Tensor:
    """The law of the token one node emits under the recursive rule, given its children in
    order: a kept child, or the draw from what is left of p after every child lost."""
    law = torch.zeros_like(p)
    reach, p_now, q_now = 1.0, p.clone(), None if q is None else q.clone()
    for token in children:
        if q_now is None:
            chance = float(p_now[token])
        else:
            chance = min(1.0, float(p_now[token] / q_now[token]))
        law[token] += reach * chance
        reach *= 1.0 - chance
        if q_now is None:
            p_now = without(p_now, token)
        else:
            p_now = positive_residual(p_now, q_now)
            q_now = without(q_now, token) if update_q else q_now
    return law + reach * p_now


def random_law(generator: torch.Generator, vocab: int, zeros: float) -> torch.Tensor:
    law = torch.rand(vocab, generator=generator, dtype=torch.float64)
    law[torch.rand(vocab, generator=generator) < zeros] = 0.0
    law[0] += 1e-3  # never empty
    return law / law.sum()


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("width", [1, 2, 3])
def test_children_drawn_without_replacement_emit_the_target_law(seed: int, width: int) -> None:
    generator = torch.Generator().manual_seed(seed)
    p, q = random_law(generator, 6, 0.3), random_law(generator, 6, 0.2)
    law = torch.zeros_like(p)
    for children, prob in ordered_draws(q, width):
        law += prob * emitted_law(p, q, children)
    assert torch.allclose(law, p, rtol=0, atol=1e-12)
    if width > 1:  # the check can fail: keeping q as it was after a rejection is biased
        biased = sum(
            prob * emitted_law(p, q, kids, update_q=False) for kids, prob in ordered_draws(q, width)
        )
        assert not torch.allclose(biased, p, rtol=0, atol=1e-6)  # type: ignore[arg-type]


@pytest.mark.parametrize("seed", range(4))
def test_chosen_children_emit_the_target_law(seed: int) -> None:
    """Children chosen, not drawn (the draft's top 3): one-hot proposals keep the law exact."""
    generator = torch.Generator().manual_seed(seed)
    p, q = random_law(generator, 6, 0.3), random_law(generator, 6, 0.0)
    top = tuple(int(token) for token in q.argsort(descending=True)[:3])
    assert torch.allclose(emitted_law(p, None, top), p, rtol=0, atol=1e-12)


# --- the implementation, step by step ---------------------------------------------------------


class Scripted(Sampler):
    """A sampler whose u values come from a list; draws take the argmax."""

    def __init__(self, uniforms: list[float]) -> None:
        super().__init__(1.0, 0, 1.0, torch.Generator())
        self.script = list(uniforms)

    def uniforms(self, count: int, device: torch.device) -> torch.Tensor:
        return torch.tensor([self.script.pop(0) for _ in range(count)])

    def draw(self, probs: torch.Tensor) -> torch.Tensor:
        return probs.argmax(dim=-1)


def rows(*laws: list[float]) -> torch.Tensor:
    return torch.tensor(laws, dtype=torch.float64)


def test_a_rejected_child_hands_the_residual_to_its_sibling() -> None:
    # root's children: node 0 (token 0), node 1 (token 1); node 1 has a child, node 2 (token 2).
    tree = DraftTree(tokens=(0, 1, 2), parents=(ROOT, ROOT, 1))
    p = rows([0.2, 0.5, 0.3], [1 / 3] * 3, [0.1, 0.1, 0.8], [0.6, 0.2, 0.2])
    q = rows([0.5, 0.3, 0.2], [1 / 3] * 3, [0.2, 0.2, 0.6], [1 / 3] * 3)
    verdict = verify_tree_recursive(tree, q, p, Scripted([0.9, 0.5, 0.99]))
    # node 0: min(1, 0.2/0.5) = 0.4 < u 0.9, rejected. Then p' = norm(max(p - q, 0)) = (0, 2/3, 1/3)
    # and q' = q without token 0 = (0, 0.6, 0.4): node 1 is kept with min(1, (2/3)/0.6) = 1.
    assert verdict.accept_probs[0] == pytest.approx(0.4)
    assert verdict.accept_probs[1] == pytest.approx(1.0)
    # node 2 under p and q after token 1: min(1, 0.3/0.2) = 1: kept whatever u; a leaf: bonus.
    assert verdict.path == (1, 2) and verdict.bonus
    assert verdict.next_token == 0 and torch.equal(verdict.next_dist, p[3])
    assert [verdict.verdict_of(node) for node in range(3)] == ["rejected", "accepted", "accepted"]


def test_when_every_child_loses_the_token_comes_from_what_is_left_of_p() -> None:
    tree = DraftTree(tokens=(0, 1), parents=(ROOT, ROOT))
    p = rows([0.1, 0.1, 0.8], [1, 0, 0], [1, 0, 0])
    verdict = verify_tree_recursive(tree, None, p, Scripted([0.5, 0.5]))
    assert verdict.path == () and not verdict.bonus
    assert verdict.accept_probs == pytest.approx({0: 0.1, 1: 0.1 / 0.9})
    assert verdict.next_token == 2
    assert torch.allclose(verdict.next_dist, torch.tensor([0.0, 0.0, 1.0], dtype=torch.float64))


def test_the_walk_descends_where_the_target_draws_a_child() -> None:
    p = rows([0.1, 0.9, 0.0, 0, 0, 0, 0, 0, 0, 0], *([[0.0] * 9 + [1.0]] * 5))
    verdict = verify_tree_walk(SMALL, p, Scripted([]))
    # the argmax after the root is token 1, no child's token: emitted at once
    assert verdict.path == () and verdict.next_token == 1
    p[0] = torch.zeros(10, dtype=torch.float64)
    p[0, 6] = 1.0  # now the target picks node 1's token, then node 4's (token 9), a leaf
    p[2, 9] = 1.0
    verdict = verify_tree_walk(SMALL, p, Scripted([]))
    assert verdict.path == (1, 4) and verdict.bonus and verdict.verdict_of(0) == "rejected"
    assert verdict.verdict_of(2) == "untested"


# --- exactness on a Markov chain pair ---------------------------------------------------------

VOCAB = 4
TOKENS = 3  # the joint law of the first three tokens is tested
SAMPLES = 6000
TARGET = random_transition(VOCAB, seed=11)
DRAFT = random_transition(VOCAB, seed=12)

# Tree shapes as children per node, level by level: 2 then 2 under each; 3 wide and 3 deep; a
# lopsided one (the first child has two children of its own, the second none).
SHAPES: dict[str, list[list[int]]] = {
    "2x2": [[2], [2, 2]],
    "3-wide depth 3": [[3], [1, 1, 1], [1, 1, 1]],
    "lopsided": [[2], [2, 0], [1, 0]],
}

Verify = Callable[[DraftTree, torch.Tensor | None, torch.Tensor, Sampler], TreeVerdict]


def grow(
    shape: list[list[int]], last: int, sampler: Sampler, drawn: bool
) -> tuple[DraftTree, torch.Tensor]:
    """A tree of *shape* after token *last*: each node's children drawn from the draft's law
    without replacement (drawn) or its most likely tokens (chosen); and the draft's rows."""
    tokens: list[int] = []
    parents: list[int] = []
    frontier = [(ROOT, last)]
    for widths in shape:
        next_frontier = []
        for (node, token), width in zip(frontier, widths, strict=True):
            law = DRAFT[token].clone()
            for _ in range(min(width, VOCAB)):
                child = int(sampler.draw(law)) if drawn else int(law.argmax())
                law = without(law, child)
                tokens.append(child)
                parents.append(node)
                next_frontier.append((len(tokens) - 1, child))
        frontier = next_frontier
    tree = DraftTree(tuple(tokens), tuple(parents))
    q_rows = torch.stack([DRAFT[last], *(DRAFT[token] for token in tokens)])
    return tree, q_rows


def sample_tokens(
    verify: Verify, shape: list[list[int]], drawn: bool, seed: int = 0
) -> Counter[tuple[int, ...]]:
    """How often each sequence of the first TOKENS tokens came out, cycle after cycle."""
    generator = torch.Generator().manual_seed(seed)
    sampler = Sampler(1.0, 0, 1.0, generator)
    counts: Counter[tuple[int, ...]] = Counter()
    for _ in range(SAMPLES):
        out: list[int] = []
        last = 1  # the prompt ends with token 1
        while len(out) < TOKENS:
            tree, q_rows = grow(shape, last, sampler, drawn)
            p_rows = torch.stack([TARGET[last], *(TARGET[token] for token in tree.tokens)])
            verdict = verify(tree, q_rows if drawn else None, p_rows, sampler)
            out += [tree.tokens[node] for node in verdict.path] + [verdict.next_token]
            last = out[-1]
        counts[tuple(out[:TOKENS])] += 1
    return counts


def p_value(counts: Counter[tuple[int, ...]]) -> float:
    cells = list(itertools.product(range(VOCAB), repeat=TOKENS))
    expected = []
    for cell in cells:
        prob, last = 1.0, 1
        for token in cell:
            prob *= float(TARGET[last, token])
            last = token
        expected.append(prob * SAMPLES)
    return float(chisquare([counts[cell] for cell in cells], expected).pvalue)


def walk(
    tree: DraftTree, q_rows: torch.Tensor | None, p_rows: torch.Tensor, sampler: Sampler
) -> TreeVerdict:
    return verify_tree_walk(tree, p_rows, sampler)


def first_child_always(
    tree: DraftTree, q_rows: torch.Tensor | None, p_rows: torch.Tensor, sampler: Sampler
) -> TreeVerdict:
    """The wrong rule: keep the first child at every level, then draw from p."""
    node, path = ROOT, []
    while tree.children(node):
        node = tree.children(node)[0]
        path.append(node)
    token = int(sampler.draw(p_rows[node + 1]))
    return TreeVerdict(tuple(path), token, p_rows[node + 1], True, {}, {})


@pytest.mark.slow
@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize(
    ("rule", "drawn"),
    [(verify_tree_recursive, True), (verify_tree_recursive, False), (walk, False), (walk, True)],
    ids=["recursive-drawn", "recursive-chosen", "walk-chosen", "walk-drawn"],
)
def test_tree_rules_emit_the_target_chain(shape: str, rule: Verify, drawn: bool) -> None:
    assert p_value(sample_tokens(rule, SHAPES[shape], drawn)) > 0.001


@pytest.mark.parametrize("shape", list(SHAPES))
def test_the_wrong_rule_fails_the_same_test(shape: str) -> None:
    assert p_value(sample_tokens(first_child_always, SHAPES[shape], drawn=True)) < 1e-6


def test_greedy_descent_emits_plain_greedy_decoding() -> None:
    plain, last = [], 1
    for _ in range(12):
        last = int(TARGET[last].argmax())
        plain.append(last)
    generator = torch.Generator().manual_seed(0)
    sampler = Sampler(0.0, 0, 1.0, generator)
    out, last = [], 1
    while len(out) < 12:
        tree, _ = grow(SHAPES["3-wide depth 3"], last, sampler, drawn=False)
        p_rows = torch.stack([TARGET[last], *(TARGET[token] for token in tree.tokens)])
        verdict = verify_tree_greedy(tree, p_rows)
        out += [tree.tokens[node] for node in verdict.path] + [verdict.next_token]
        last = out[-1]
    assert out[:12] == plain
