"""Leaf-to-root verification of a drawn tree: block verification carried from chains to trees.

Recursive rejection sampling (specviz.core.tree) decides a tree token by token from the root:
once a node loses, everything under it is lost with it. Block verification (Sun et al., "Block
Verification Accelerates Speculative Decoding", 2024) decides a chain from its end: the weight
of the first i drafts, w_i = min(1, w_{i−1} · p(x_i) / q(x_i)), prices the whole prefix, so a
prefix whose first token alone would be rejected can still be kept with what follows it.
Traversal Verification (Weng et al., 2025) walks a tree that way, from its leaves to the root.
This module is that walk over a tree whose children were drawn from the draft's q one after
another without replacement, in the form checked exact here by enumeration
(tests/core/test_tree_traversal.py):

- every node u holds a weight w(u), a target law P(u) (at first p after u) and a draft law Q(u)
  (at first the q its children were drawn from); w(root) = 1, and a child c of u with token x
  weighs w(c) = min(1, w(u) · P(u)(x) / Q(u)(x));
- the first leaf in draft order (the first live child at every level) is tested with its weight:
  kept, the path down to it is accepted and the token after it is drawn from P(leaf) (p itself at
  a leaf of the tree as drafted, the bonus token);
- lost, it is deleted and its parent u updated: with r = Σ_x max(w(u) · P(u)(x) − Q(u)(x), 0),
  P(u) ← norm(max(w(u) · P(u) − Q(u), 0)), Q(u) ← Q(u) without x, renormalised, and
  w(u) ← r / (r + 1 − w(u)), block verification's chance of stopping at u; the weights under
  u's remaining children follow from the new ones. A node all of whose children were deleted is
  a leaf, tested in turn; the root's weight stays 1, so a root with no child left draws the token
  from its P.

On a chain this is block verification; under the root of a one-level tree it is recursive
rejection sampling. The recorded chance of a tested node is its weight when tested: the chance
that the whole path down to it is kept, not a per-token ratio; the nodes of the kept path share
the one test that kept them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from specviz.core.sampling import Sampler
from specviz.core.tree import ROOT, DraftTree, TreeVerdict, _row, without


@dataclass
class Traversal:
    """The walk's state after the deletions so far (module doc)."""

    tree: DraftTree
    target: dict[int, torch.Tensor]  # P(u), by node (ROOT included)
    draft: dict[int, torch.Tensor]  # Q(u)
    weight: dict[int, float] = field(default_factory=dict)
    deleted: set[int] = field(default_factory=set)

    @classmethod
    def start(cls, tree: DraftTree, q_rows: torch.Tensor, p_rows: torch.Tensor) -> Traversal:
        """Rows (M + 1, V) laid out as specviz.core.tree's: the root's first, then each node's."""
        nodes = (ROOT, *range(tree.size))
        state = cls(
            tree,
            {node: p_rows[_row(node)] for node in nodes},
            {node: q_rows[_row(node)] for node in nodes},
            {ROOT: 1.0},
        )
        state._weigh_below(ROOT)
        return state

    def live_children(self, node: int) -> list[int]:
        return [child for child in self.tree.children(node) if child not in self.deleted]

    def first_leaf(self) -> int:
        """The next node tested: down the first live child at every level (ROOT: none left)."""
        node = ROOT
        while live := self.live_children(node):
            node = live[0]
        return node

    def reject(self, leaf: int) -> None:
        """Delete a tested leaf that lost and update its parent (module doc)."""
        self.deleted.add(leaf)
        parent = self.tree.parents[leaf]
        held = self.weight[parent]
        excess = torch.clamp(held * self.target[parent] - self.draft[parent], min=0.0)
        rest = float(excess.sum())
        if rest > 0:
            self.target[parent] = excess / rest
        self.draft[parent] = without(self.draft[parent], self.tree.tokens[leaf])
        room = rest + 1.0 - held
        self.weight[parent] = rest / room if room > 0 else 1.0
        self._weigh_below(parent)

    def _weigh_below(self, node: int) -> None:
        for child in self.live_children(node):
            token = self.tree.tokens[child]
            q_at = float(self.draft[node][token])
            if q_at <= 0:
                raise ValueError(f"node {child}'s token could not have been drawn from q")
            ratio = float(self.target[node][token]) / q_at
            self.weight[child] = min(1.0, self.weight[node] * ratio)
            self._weigh_below(child)


def verify_tree_traversal(
    tree: DraftTree, q_rows: torch.Tensor | None, p_rows: torch.Tensor, sampler: Sampler
) -> TreeVerdict:
    """Leaf-to-root verification of a tree drawn from q without replacement (module doc); q_rows
    and p_rows (M + 1, V) as for specviz.core.tree.verify_tree_recursive, q_rows required. The
    kept path's nodes are recorded with the one test that kept them all: its chance and u."""
    if q_rows is None:
        raise ValueError("leaf-to-root verification needs the q the children were drawn from")
    state = Traversal.start(tree, q_rows, p_rows)
    tested, drawn = dict[int, float](), dict[int, float]()
    while True:
        leaf = state.first_leaf()
        if leaf == ROOT:
            dist = state.target[ROOT]
            token = int(sampler.draw(dist))
            return TreeVerdict((), token, dist, tree.size == 0, tested, drawn)
        chance = state.weight[leaf]
        u = float(sampler.uniforms(1, p_rows.device)[0])
        tested[leaf], drawn[leaf] = chance, u
        if u < chance:
            dist = state.target[leaf]
            token = int(sampler.draw(dist))
            path = tuple(tree.path_to(leaf))
            for node in path:
                tested[node], drawn[node] = chance, u
            return TreeVerdict(path, token, dist, not tree.children(leaf), tested, drawn)
        state.reject(leaf)
