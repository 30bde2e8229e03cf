"""Draft trees and their exact verification, as pure functions over tensors.

A chain of γ guesses dies at its first wrong token; a tree keeps alternatives (the draft's
second and third choices), and the target scores every node in one forward, each node attending
to the committed text and its own ancestors only (Miao et al., "SpecInfer", ASPLOS 2024, §4).

Layout of one verification forward: the *root* is the last committed token (its KV entry not yet
written, as in the chain engine), then the tree's M nodes in draft order, each after its parent.
Row 0 of the target's probabilities is p after the root (the law of the root's children), row
1 + i is p after node i. Node i sits at position ``past_len + depth(i)``, the root at ``past_len``.

Two exact rules choose the path that survives and the one token after it:

- ``verify_tree_walk``, the target-only walk (Svirschevski et al., "SpecExec", 2024; SGLang's tree
  verification): at each node draw x ~ p; descend if x is a child, otherwise emit x. Each emitted
  token is a draw from the target's own law, so it is exact for any tree, however it was built
  (top-k children included); the draft's q plays no part.
- ``verify_tree_recursive``, recursive rejection sampling (Jeon et al., "Recursive Speculative
  Decoding", 2024; SpecInfer's multi-step rule with its proposals drawn without replacement): the
  children of a node were drawn one after another from the draft's q, each without the ones
  before. Child x is accepted with min(1, p'(x) / q'(x)); on rejection p' ← norm(max(p' − q', 0))
  and q' ← q' without x, renormalised; if every child is rejected the token is drawn from p'.
  Each step is Leviathan et al.'s Theorem 1 with target p' and proposal q', so the token at each
  depth has law p. A node whose children were chosen rather than drawn (top-k) passes q None:
  each child is then a one-hot proposal, accepted with p'(x), and a rejection removes x from p'.

Greedy decoding descends while the target's argmax is a child (``verify_tree_greedy``), which is
what plain greedy decoding of the target emits.

A third exact rule for drawn trees, tested from the leaves up (specviz.core.tree_traversal), keeps
at least as much on the shapes checked; the tree drafter's trees use it unless their spec asks
for ``rule=recursive``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import torch

from specviz.core.sampling import Sampler

ROOT = -1  # the parent of the root's children: the last committed token


@dataclass(frozen=True)
class DraftTree:
    """Drafted tokens as a tree under the last committed token.

    Nodes are in draft order: ``parents[i]`` is an earlier node's index, or ROOT. Siblings keep
    the order they were drafted in, which the recursive rule tests them in.
    """

    tokens: tuple[int, ...]
    parents: tuple[int, ...]
    depths: tuple[int, ...] = field(init=False)  # 1 for the root's children

    def __post_init__(self) -> None:
        if len(self.tokens) != len(self.parents):
            raise ValueError("a tree needs one parent per token")
        depths: list[int] = []
        for index, parent in enumerate(self.parents):
            if not ROOT <= parent < index:
                raise ValueError(f"node {index}'s parent {parent} is not an earlier node")
            depths.append(1 if parent == ROOT else depths[parent] + 1)
        object.__setattr__(self, "depths", tuple(depths))

    @classmethod
    def chain(cls, tokens: tuple[int, ...] | list[int]) -> DraftTree:
        """γ drafted tokens one after another: the one-branch tree."""
        return cls(tuple(tokens), tuple(range(ROOT, len(tokens) - 1)))

    @property
    def size(self) -> int:
        return len(self.tokens)

    def children(self, node: int) -> list[int]:
        """The children of *node* (ROOT: of the root), in draft order."""
        return [index for index, parent in enumerate(self.parents) if parent == node]

    def path_to(self, node: int) -> list[int]:
        """The nodes from the root's child down to *node*, both included."""
        path = []
        while node != ROOT:
            path.append(node)
            node = self.parents[node]
        return path[::-1]


def tree_position_ids(
    tree: DraftTree, past_len: int, device: torch.device | None = None
) -> torch.Tensor:
    """Positions of the root and the nodes, (1, M + 1): the root at past_len, a node at its depth
    after it, so siblings share a position as alternatives for the same place in the text."""
    return torch.tensor([[past_len, *(past_len + depth for depth in tree.depths)]], device=device)


def tree_visibility(tree: DraftTree) -> torch.Tensor:
    """(M + 1, M + 1) bool over the root and the nodes: row r may attend to column c when c is r
    itself or one of its ancestors (the root is every node's ancestor)."""
    size = tree.size + 1
    sees = torch.eye(size, dtype=torch.bool)
    sees[:, 0] = True
    for index, parent in enumerate(tree.parents):
        row = index + 1
        if parent != ROOT:
            sees[row] |= sees[parent + 1]
    return sees


def tree_attention_mask(
    tree: DraftTree,
    past_len: int,
    dtype: torch.dtype = torch.float32,
    device: torch.device | None = None,
    read: int = 0,
) -> torch.Tensor:
    """The additive mask of one tree forward, (1, 1, M + 1 - read, past_len + M + 1): 0 where a
    query may attend (the committed text, its ancestors, itself), the dtype's lowest value
    elsewhere. read: how many of the tree's first entries (the root, then nodes) the cache holds
    already, so only the rest are queries. An additive float mask is what both eager and SDPA
    attention take."""
    visible = tree_visibility(tree)[read:]
    sees = torch.cat([torch.ones(visible.shape[0], past_len, dtype=torch.bool), visible], dim=1)
    mask = torch.zeros(sees.shape, dtype=dtype)
    mask.masked_fill_(~sees, torch.finfo(dtype).min)
    return mask[None, None].to(device)


@dataclass(frozen=True)
class TreeVerdict:
    """What the target decided about one tree: tensors and indices, turned into records later."""

    path: tuple[int, ...]  # the accepted nodes, from the root's child down
    next_token: int  # the token after the path: drawn at the first node none of whose children won
    next_dist: torch.Tensor  # (V,) the law next_token was drawn from
    bonus: bool  # the path ends at a leaf, so next_token is the bonus token
    accept_probs: dict[int, float]  # each tested node: its chance of being kept when tested
    uniforms: dict[int, float]  # each tested node: the u it was tested with (recursive rule)

    def verdict_of(self, node: int) -> str:
        """ "accepted", "rejected" (tested and lost) or "untested" (an ancestor or an earlier
        sibling decided first)."""
        if node in self.path:
            return "accepted"
        return "rejected" if node in self.accept_probs else "untested"


def _row(node: int) -> int:
    """A node's row in the target's and the draft's probabilities (the root's is 0)."""
    return node + 1


def first_choices(p_rows: torch.Tensor, nodes: Sequence[int]) -> list[tuple[int, float]]:
    """The target's first choice after each of *nodes* and its probability, from p_rows
    (M + 1, V) laid out as above; of equal maxima the first, as argmax takes it."""
    rows = torch.tensor([_row(node) for node in nodes], device=p_rows.device)
    values, indices = p_rows[rows].max(dim=-1)  # (len(nodes),) each
    return list(zip(indices.tolist(), values.tolist(), strict=True))


def verify_tree_walk(tree: DraftTree, p_rows: torch.Tensor, sampler: Sampler) -> TreeVerdict:
    """The target-only walk over a tree; p_rows (M + 1, V). Exact for any tree (module doc)."""
    node, path, tested = ROOT, list[int](), dict[int, float]()
    while True:
        dist = p_rows[_row(node)]
        token = int(sampler.draw(dist))
        children = tree.children(node)
        for child in children:
            tested[child] = float(dist[tree.tokens[child]])
        match = next((child for child in children if tree.tokens[child] == token), None)
        if match is None:
            return TreeVerdict(tuple(path), token, dist, not children, tested, {})
        path.append(match)
        node = match


def verify_tree_greedy(tree: DraftTree, p_rows: torch.Tensor) -> TreeVerdict:
    """Descend while the target's argmax is a child; the token after is that argmax."""
    node, path, tested = ROOT, list[int](), dict[int, float]()
    while True:
        dist = p_rows[_row(node)]
        choice = int(dist.argmax())
        children = tree.children(node)
        for child in children:
            tested[child] = 1.0 if tree.tokens[child] == choice else 0.0
        match = next((child for child in children if tree.tokens[child] == choice), None)
        if match is None:
            return TreeVerdict(tuple(path), choice, dist, not children, tested, {})
        path.append(match)
        node = match


def without(dist: torch.Tensor, token: int) -> torch.Tensor:
    """*dist* with *token*'s mass removed, renormalised (unchanged if nothing else is left)."""
    rest = dist.clone()
    rest[token] = 0.0
    total = rest.sum()
    return rest / total if total > 0 else dist


def positive_residual(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """norm(max(p − q, 0)); p itself when p ≤ q everywhere (then no rejection can happen)."""
    rest = torch.clamp(p - q, min=0.0)
    total = rest.sum()
    return rest / total if total > 0 else p


def verify_tree_recursive(
    tree: DraftTree,
    q_rows: torch.Tensor | None,
    p_rows: torch.Tensor,
    sampler: Sampler,
) -> TreeVerdict:
    """Recursive rejection sampling over a tree (module doc). q_rows (M + 1, V): the draft's law
    at the root and at each node, the one each node's children were drawn from without
    replacement; None when every node's children were chosen, not drawn (one-hot proposals)."""
    node, path = ROOT, list[int]()
    tested, drawn = dict[int, float](), dict[int, float]()
    while True:
        p_now = p_rows[_row(node)]
        q_now = None if q_rows is None else q_rows[_row(node)]
        children = tree.children(node)
        kept = None
        for child in children:
            token = tree.tokens[child]
            if q_now is None:  # a one-hot proposal: q'(x) = 1
                chance = float(p_now[token])
            else:
                q_at = float(q_now[token])
                if q_at <= 0:
                    raise ValueError(f"node {child}'s token could not have been drawn from q")
                chance = min(1.0, float(p_now[token]) / q_at)
            u = float(sampler.uniforms(1, p_rows.device)[0])
            tested[child], drawn[child] = chance, u
            if u < chance:
                kept = child
                break
            if q_now is None:
                p_now = without(p_now, token)
            else:
                p_now = positive_residual(p_now, q_now)
                q_now = without(q_now, token)
        if kept is None:
            token = int(sampler.draw(p_now))
            return TreeVerdict(tuple(path), token, p_now, not children, tested, drawn)
        path.append(kept)
        node = kept
