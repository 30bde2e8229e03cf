"""Medusa's heads as the paper models them: an acceptance per head, and the tokens per pass those
give (Cai et al., "Medusa: Simple LLM Inference Acceleration Framework with Multiple Decoding
Heads", 2024, §2.1.2 and §3).

Head d guesses the token at draft position d: its guesses are the tree's nodes at depth d. The
kept path of a cycle reaches depth d when the target keeps one of head d's guesses under the
path's node at depth d − 1. Measured from a run's cycles, head d's acceptance is

    α_d = (cycles whose path reached depth d) / (cycles whose path reached depth d − 1 and
          whose tree held a guess of head d under it),

the chance the path goes one deeper at depth d given it came that far (a tree's top-k guesses
all count: a second guess kept where the first lost is head d's success too; ``kept_by_rank``
tells them apart). A cycle then keeps, on average,

    τ = 1 + Σ_{d=1..K} Π_{k=1..d} α_k

tokens per target pass: the kept path plus the one token the target adds after it, the
acceleration rate the Medusa paper writes as a sum of products of per-head acceptances. When
every cycle's tree reaches every head, Π_{k≤d} α_k telescopes to the share of cycles whose path
reached depth d, and τ is the run's own tokens per drafting pass; a run's measured tokens per
target pass also counts its first pass (which reads the prompt and keeps one token) and a last
one cut by the token budget.

Pure: cycles in, plain numbers out.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from specviz.core.events import Cycle, TreeRecord
from specviz.views.head_scores import drafted_by_heads


@dataclass(frozen=True)
class HeadAcceptance:
    """Head d's record in a run: how often the kept path came to it, and went one deeper."""

    head: int  # d: the head that guesses draft position d (the tree's depth d)
    reached: int  # cycles whose path reached depth d − 1 with a guess of head d under it
    kept: int  # of those, the cycles whose path went on to depth d
    # kept_by_rank[r − 1]: cycles whose kept node at depth d was its parent's r-th child (the
    # head's r-th most likely guess there); sums to kept.
    kept_by_rank: tuple[int, ...]

    @property
    def rate(self) -> float:
        """α_d = kept / reached; 0.0 before head d's first chance."""
        return self.kept / self.reached if self.reached else 0.0

    @property
    def first_guess_rate(self) -> float:
        """The share of head d's chances kept with its first guess (rank 1): what a chain of
        first guesses (vLLM's Medusa) would keep at this depth from the same start."""
        first = self.kept_by_rank[0] if self.kept_by_rank else 0
        return first / self.reached if self.reached else 0.0


@dataclass(frozen=True)
class HeadsTheory:
    """Every head's acceptance in a run, and what the Medusa paper's model makes of them."""

    heads: tuple[HeadAcceptance, ...]  # head 1 first, as deep as any tree of the run went
    cycles: int  # the cycles the heads drafted (a tree with at least one node)
    pass_tokens: tuple[int, ...]  # per such cycle: the tokens its target pass read (1 + nodes)

    def reach(self, head: int) -> float:
        """Π_{k≤d} α_k: the model's chance that a cycle's kept path reaches depth *head*."""
        return math.prod(item.rate for item in self.heads[:head])

    @property
    def tau(self) -> float:
        """τ = 1 + Σ_d Π_{k≤d} α_k: tokens per target pass (module doc)."""
        return 1.0 + sum(self.reach(d) for d in range(1, len(self.heads) + 1))

    @property
    def mean_accepted(self) -> float:
        """The kept tokens per drafting cycle the model gives: τ − 1."""
        return self.tau - 1.0


def _kept_rank(record: TreeRecord, depth: int) -> int:
    """The rank among its siblings of the kept path's node at *depth* (1-based)."""
    return record.nodes[record.path[depth - 1]].rank


def _has_guess(record: TreeRecord, depth: int) -> bool:
    """Whether the tree holds a node at *depth* under the kept path's node at depth − 1."""
    parent = record.path[depth - 2] if depth > 1 else -1
    return any(node.parent == parent for node in record.nodes)


def measure_heads(cycles: Iterable[Cycle]) -> HeadsTheory:
    """Count each head's chances and successes over the cycles the heads drafted (module doc)."""
    reached: list[int] = []
    kept: list[list[int]] = []  # per depth, per rank
    drafted = 0
    pass_tokens: list[int] = []
    for cycle in cycles:
        record = cycle.tree
        # The first cycle has no verified state to guess from: its tree is empty.
        if record is None or not record.nodes or not drafted_by_heads(cycle):
            continue
        drafted += 1
        pass_tokens.append(1 + len(record.nodes))
        deepest = max(node.depth for node in record.nodes)
        while len(reached) < deepest:
            reached.append(0)
            kept.append([])
        for depth in range(1, min(len(record.path) + 1, deepest) + 1):
            if not _has_guess(record, depth):
                break
            reached[depth - 1] += 1
            if depth > len(record.path):
                break
            rank = _kept_rank(record, depth)
            by_rank = kept[depth - 1]
            by_rank.extend([0] * (rank - len(by_rank)))
            by_rank[rank - 1] += 1
    heads = tuple(
        HeadAcceptance(depth + 1, reached[depth], sum(kept[depth]), tuple(kept[depth]))
        for depth in range(len(reached))
    )
    return HeadsTheory(heads, drafted, tuple(pass_tokens))
