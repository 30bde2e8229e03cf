"""Leaf-to-root verification of drawn trees: its output law, computed exactly over every way the
tree could be drawn and every test the walk could make, equals the target's on a Markov chain
pair; a wrong update fails the same check; it keeps at least as many tokens a pass as recursive
rejection sampling on the same trees; the sampling driver follows the exact law."""

from __future__ import annotations

import copy
import itertools
from collections import Counter

import pytest
import torch
from scipy.stats import chisquare

from specviz.core.sampling import Sampler
from specviz.core.tree import ROOT, DraftTree, positive_residual, without
from specviz.core.tree_traversal import Traversal, verify_tree_traversal

V = 4
START = 0  # the last committed token


def _chain_pair(seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Random transition matrices (V, V) in float64: the target's P and the draft's Q."""
    generator = torch.Generator().manual_seed(seed)
    rows = [torch.rand(V, V, generator=generator, dtype=torch.float64) ** 2 + 0.05 for _ in "pq"]
    return tuple(row / row.sum(dim=1, keepdim=True) for row in rows)  # type: ignore[return-value]


def _drawn_trees(
    q: torch.Tensor, widths: tuple[int, ...], uneven: bool = False
) -> list[tuple[DraftTree, float]]:
    """Every tree of the shape (each node at depth d gets widths[d] children, drawn from q after
    it without replacement), in draft order depth by depth, with its chance of being drawn.
    *uneven*: below the first depth, the last node of each depth gets one child more when the
    first node's token is 0 and one fewer otherwise, as a dynamic tree's budget, shared over a
    depth, depends on the tokens drawn before it (never on the tokens it is about to draw)."""
    layers: list[list[tuple[list[int], list[int], float]]] = [[([], [], 1.0)]]
    frontier_of = [[(ROOT, START)]]  # per partial tree: its newest depth's (node, token)
    for width in widths:
        grown, grown_frontiers = [], []
        for (tokens, parents, chance), frontier in zip(layers[-1], frontier_of, strict=True):
            choices = []
            for place, (node, token) in enumerate(frontier):
                count = width
                if uneven and node != ROOT and place == len(frontier) - 1:
                    count = max(0, width + (1 if frontier[0][1] == 0 else -1))
                options = []
                for picks in itertools.permutations(range(V), count):
                    law, pick_chance = q[token].clone(), 1.0
                    for pick in picks:
                        pick_chance *= float(law[pick] / law.sum())
                        law[pick] = 0.0
                    options.append((node, picks, pick_chance))
                choices.append(options)
            for combo in itertools.product(*choices):
                new_tokens, new_parents, new_chance = list(tokens), list(parents), chance
                newest = []
                for node, picks, pick_chance in combo:
                    new_chance *= pick_chance
                    for pick in picks:
                        newest.append((len(new_tokens), pick))
                        new_tokens.append(pick)
                        new_parents.append(node)
                grown.append((new_tokens, new_parents, new_chance))
                grown_frontiers.append(newest)
        layers.append(grown)
        frontier_of = grown_frontiers
    return [(DraftTree(tuple(t), tuple(p)), c) for t, p, c in layers[-1]]


def _rows(matrix: torch.Tensor, tree: DraftTree) -> torch.Tensor:
    """(M + 1, V): the law after the root, then after each node (a Markov chain's row)."""
    return torch.stack([matrix[START], *(matrix[token] for token in tree.tokens)])


def _traversal_law(state: Traversal, chance: float, law: Counter[tuple[int, ...]]) -> None:
    """Add to *law* every output of the walk from *state* (tokens kept, then the token after)."""
    leaf = state.first_leaf()
    if leaf == ROOT:
        for token, mass in enumerate(state.target[ROOT].tolist()):
            law[(token,)] += chance * mass
        return
    kept = state.weight[leaf]
    path = tuple(state.tree.tokens[node] for node in state.tree.path_to(leaf))
    for token, mass in enumerate(state.target[leaf].tolist()):
        law[(*path, token)] += chance * kept * mass
    if kept < 1.0:
        after = copy.deepcopy(state)
        after.reject(leaf)
        _traversal_law(after, chance * (1.0 - kept), law)


def _recursive_law(
    tree: DraftTree,
    q_rows: torch.Tensor,
    p_rows: torch.Tensor,
    node: int,
    chance: float,
    law: Counter,
) -> None:
    """The same for recursive rejection sampling (specviz.core.tree's updates)."""
    p_now, q_now = p_rows[node + 1], q_rows[node + 1]
    prefix = tuple(tree.tokens[n] for n in tree.path_to(node))
    for child in tree.children(node):
        token = tree.tokens[child]
        kept = min(1.0, float(p_now[token] / q_now[token]))
        _recursive_law(tree, q_rows, p_rows, child, chance * kept, law)
        chance *= 1.0 - kept
        p_now, q_now = positive_residual(p_now, q_now), without(q_now, token)
    for token, mass in enumerate(p_now.tolist()):
        law[(*prefix, token)] += chance * mass


def _gap(law: Counter[tuple[int, ...]], p: torch.Tensor, length: int) -> float:
    """The largest gap between the law of the first *length* tokens (a short output continued
    by the target) and the target's own law."""
    full: Counter[tuple[int, ...]] = Counter()
    for tokens, mass in law.items():
        tails = itertools.product(range(V), repeat=length - len(tokens))
        for tail in tails:
            sequence, weight = (*tokens, *tail), mass
            for before, token in zip(sequence[len(tokens) - 1 :], tail, strict=False):
                weight *= float(p[before, token])
            full[sequence] += weight
    worst = 0.0
    for sequence in itertools.product(range(V), repeat=length):
        want, before = 1.0, START
        for token in sequence:
            want, before = want * float(p[before, token]), token
        worst = max(worst, abs(full[sequence] - want))
    return worst


def _laws(
    widths: tuple[int, ...],
    seed: int,
    state_type: type[Traversal] = Traversal,
    uneven: bool = False,
) -> tuple:
    p, q = _chain_pair(seed)
    traversal: Counter[tuple[int, ...]] = Counter()
    recursive: Counter[tuple[int, ...]] = Counter()
    for tree, chance in _drawn_trees(q, widths, uneven):
        q_rows, p_rows = _rows(q, tree), _rows(p, tree)
        _traversal_law(state_type.start(tree, q_rows, p_rows), chance, traversal)
        _recursive_law(tree, q_rows, p_rows, ROOT, chance, recursive)
    return p, traversal, recursive


def _tokens_a_pass(law: Counter[tuple[int, ...]]) -> float:
    return sum(len(tokens) * mass for tokens, mass in law.items())


SHAPES = [(1, 1), (1, 1, 1), (2,), (2, 2), (3, 1), (2, 1, 1)]


@pytest.mark.parametrize("widths", SHAPES)
@pytest.mark.parametrize("seed", [0, 1])
def test_the_walk_emits_the_targets_law_and_keeps_at_least_as_much(
    widths: tuple[int, ...], seed: int
) -> None:
    p, traversal, recursive = _laws(widths, seed)
    assert sum(traversal.values()) == pytest.approx(1.0, abs=1e-12)
    assert _gap(traversal, p, len(widths) + 1) < 1e-12
    assert _gap(recursive, p, len(widths) + 1) < 1e-12  # the control rule, checked the same way
    assert _tokens_a_pass(traversal) >= _tokens_a_pass(recursive) - 1e-12
    if widths == (1, 1, 1):  # on a chain it is block verification: strictly more
        assert _tokens_a_pass(traversal) > _tokens_a_pass(recursive) + 0.01


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_shape_that_depends_on_tokens_drawn_before_keeps_the_law(seed: int) -> None:
    p, traversal, recursive = _laws((2, 1), seed, uneven=True)
    assert _gap(traversal, p, 3) < 1e-12 and _gap(recursive, p, 3) < 1e-12
    assert _tokens_a_pass(traversal) >= _tokens_a_pass(recursive) - 1e-12


class _WrongUpdate(Traversal):
    """A parent's weight set to min(1, r / (1 − q(x))) after a loss instead of r / (r + 1 − w)."""

    def reject(self, leaf: int) -> None:
        parent = self.tree.parents[leaf]
        held, q_at = self.weight[parent], float(self.draft[parent][self.tree.tokens[leaf]])
        rest = float(torch.clamp(held * self.target[parent] - self.draft[parent], min=0).sum())
        super().reject(leaf)
        self.weight[parent] = min(1.0, rest / (1.0 - q_at)) if q_at < 1 else 0.0
        self._weigh_below(parent)


def test_a_wrong_weight_update_misses_the_targets_law() -> None:
    p, traversal, _ = _laws((1, 1), 0, _WrongUpdate)
    assert _gap(traversal, p, 3) > 1e-3


def test_the_sampled_walk_draws_the_first_token_from_p() -> None:
    p, q = _chain_pair(3)
    generator = torch.Generator().manual_seed(1)
    sampler = Sampler(1.0, 0, 1.0, torch.Generator().manual_seed(0))
    draws = 6000
    firsts: Counter[int] = Counter()
    for _ in range(draws):
        # Two children of the root drawn from q without replacement, one child under each.
        pair = torch.multinomial(q[START], 2, replacement=False, generator=generator).tolist()
        under = [int(torch.multinomial(q[token], 1, generator=generator)) for token in pair]
        tree = DraftTree(tokens=(pair[0], under[0], pair[1], under[1]), parents=(ROOT, 0, ROOT, 2))
        verdict = verify_tree_traversal(tree, _rows(q, tree), _rows(p, tree), sampler)
        first = tree.tokens[verdict.path[0]] if verdict.path else verdict.next_token
        firsts[first] += 1
        assert all(verdict.verdict_of(node) == "accepted" for node in verdict.path)
    observed = [firsts[token] for token in range(V)]
    expected = [float(p[START, token]) * draws for token in range(V)]
    assert chisquare(observed, expected).pvalue > 1e-4
