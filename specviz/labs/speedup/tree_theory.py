"""How many tokens a draft tree is expected to give per target pass, from measured acceptance.

A tree keeps alternatives: when the draft's first guess for a position loses, its second may
win. Measured from tree cycles, ``a[r]`` is the chance that a node of rank r (its parent's r-th
child) is kept when it is tested, that is, given its parent was kept and its r − 1 earlier
siblings lost (the recursive rule tests siblings in rank order, specviz.core.tree; a tree tested
from its leaves up is read the same way from where its kept path went). A node with w children
then moves the kept path one deeper with probability

    A(w) = 1 − Π_{r=1..w} (1 − a[r]),

and a fixed shape with widths w_1..w_D gives, per target pass, the kept path plus the one token
the target adds after it:

    τ(w) = 1 + Σ_{d=1..D} Π_{k=1..d} A(w_k).

A chain of γ guesses is the shape (1, ..., 1), where this is the chain's
τ = (1 − α^(γ+1)) / (1 − α) with α = a[1] (Leviathan et al. 2023, eq. 1). These formulas take
acceptance to depend on the rank alone, pooled over depths.

A node at depth d is tested only where the kept path reached d − 1, so the text there has been
easy so far, and easy text tends to stay easy: measured, a first guess deep in a tree is kept
more often than the pooled a[1] says (greedy code on the bundled pair: 0.83 at depth 1, 0.95 at
depths 3 to 6). ``RankAcceptance.rate_at`` follows that: the rate at (depth, rank) measured
there, drawn towards the pooled a[rank] by SHRINK pseudo-counts where few nodes were tested.
``best_tree`` uses it, so a deep tree is not priced as if every depth were as hard as the first.

The same sum, node by node, gives any tree's τ: a node of rank r is on the kept path with the
chance its parent is, times Π_{j<r} (1 − a[j]) · a[r] (its elder siblings lost, it won), and τ is
1 plus those chances over all nodes. ``best_tree`` grows the N nodes with the highest chances,
one at a time (Chen et al., "Sequoia", 2024, §3.1 finds the optimum by dynamic programming over
the same positional acceptance; taking the best available node each time is what a dynamic
tree approximates, and it never takes a child before its parent or elder sibling).
"""

from __future__ import annotations

import heapq
import math
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from specviz.core.events import Cycle, TreeNode, TreeRecord
from specviz.core.tree import ROOT

# Pseudo-counts of the pooled rate added at each (depth, rank): at 4, a depth with 4 tested
# nodes weighs its own rate and the pooled one alike. On the bundled pair's 64-token runs this
# brought the best tree's τ within 10 % of the drafter's on greedy code and story trees of 8 to
# 32 nodes at either temperature, where the pooled rates missed the 8-node tree at T = 1 by 20 %
# (docs/performance.md, "Draft trees against the chain").
SHRINK = 4.0


def _tests(record: TreeRecord) -> Iterator[tuple[TreeNode, bool]]:
    """Each node the rank model counts as tested, and whether it won. A tree tested from its
    leaves up (rule "traversal") tests its nodes in another order, so its counts are read from
    where the kept path went: a node whose parent is on the path (or is the root) counts if no
    elder sibling was kept, and won if it is on the path, the events the siblings-in-turn rule
    records."""
    if not record.from_leaves:
        for node in record.nodes:
            if node.verdict != "untested":
                yield node, node.verdict == "accepted"
        return
    reached = {ROOT, *record.path}
    decided: set[int] = set()  # parents whose kept child has been passed
    for index, node in enumerate(record.nodes):
        if node.parent in reached and node.parent not in decided:
            won = index in record.path
            if won:
                decided.add(node.parent)
            yield node, won


@dataclass(frozen=True)
class RankAcceptance:
    """Kept / tested counts of tree nodes by their rank among siblings (1 = first guess)."""

    kept: tuple[int, ...]  # index r − 1
    tested: tuple[int, ...]
    # (depth, rank) -> (kept, tested), to see whether acceptance shifts with depth
    by_depth: tuple[tuple[int, int, int, int], ...] = ()

    @classmethod
    def measure(cls, cycles: Iterable[Cycle]) -> RankAcceptance:
        """Count every tested node of every tree cycle (chain cycles count nothing)."""
        kept: Counter[int] = Counter()
        tested: Counter[int] = Counter()
        kept_at: Counter[tuple[int, int]] = Counter()
        tested_at: Counter[tuple[int, int]] = Counter()
        for cycle in cycles:
            if cycle.tree is None:
                continue
            for node, won in _tests(cycle.tree):
                tested[node.rank] += 1
                kept[node.rank] += won
                tested_at[node.depth, node.rank] += 1
                kept_at[node.depth, node.rank] += won
        ranks = max(tested, default=0)
        return cls(
            kept=tuple(kept[r] for r in range(1, ranks + 1)),
            tested=tuple(tested[r] for r in range(1, ranks + 1)),
            by_depth=tuple(
                (depth, rank, kept_at[depth, rank], count)
                for (depth, rank), count in sorted(tested_at.items())
            ),
        )

    @classmethod
    def from_rates(cls, rates: Sequence[float], tested: int = 1_000_000) -> RankAcceptance:
        """Counts that give these rates a[1], a[2], ... (each rank tested *tested* times)."""
        return cls(tuple(round(rate * tested) for rate in rates), (tested,) * len(rates))

    def rate(self, rank: int) -> float:
        """a[rank]: kept / tested at that rank; 0.0 where no node of that rank was tested."""
        if rank > len(self.tested) or self.tested[rank - 1] == 0:
            return 0.0
        return self.kept[rank - 1] / self.tested[rank - 1]

    def rate_at(self, depth: int, rank: int, shrink: float = SHRINK) -> float:
        """The kept share of rank-*rank* nodes tested at *depth*, drawn towards the pooled
        a[rank] by *shrink* pseudo-counts (module doc); a[rank] where none was tested there."""
        pooled = self.rate(rank)
        kept, tested = next(
            ((k, n) for d, r, k, n in self.by_depth if d == depth and r == rank), (0, 0)
        )
        if tested + shrink <= 0:
            return pooled
        return (kept + shrink * pooled) / (tested + shrink)


def step_chance(acceptance: RankAcceptance, width: int) -> float:
    """A(w): the chance that one of a node's w children is kept."""
    missed = math.prod(1.0 - acceptance.rate(rank) for rank in range(1, width + 1))
    return 1.0 - missed


def expected_tokens(acceptance: RankAcceptance, widths: Sequence[int]) -> float:
    """τ(w): tokens per target pass expected from a tree of widths w_1..w_D (module doc)."""
    total, reach = 1.0, 1.0
    for width in widths:
        reach *= step_chance(acceptance, width)
        total += reach
    return total


def tree_nodes(widths: Sequence[int]) -> int:
    """How many nodes the shape has: w_1 + w_1·w_2 + ..."""
    return sum(math.prod(widths[: depth + 1]) for depth in range(len(widths)))


@dataclass(frozen=True)
class BestTree:
    """The N-node tree with the highest expected tokens per pass under the rank model."""

    nodes: int
    tau: float  # 1 + the nodes' chances of being on the kept path
    parents: tuple[int, ...]  # each node's parent's index (-1: the root), parents first
    depth: int


def best_tree(acceptance: RankAcceptance, nodes: int, max_depth: int = 64) -> BestTree:
    """Grow the tree of at most *nodes* nodes, *max_depth* deep, by adding, each time, the open
    node with the highest chance of being kept: the first child of a node in the tree, or the
    next sibling of one, each priced with the rate at its depth and rank (module doc). Stops
    early where no open node has a chance above zero."""
    ranks = len(acceptance.tested)
    # a heap of (−chance, order, parent, depth, rank, parent's chance, chance its elder
    # siblings all lost)
    opened: list[tuple[float, int, int, int, int, float, float]] = []
    order = 0

    def open_node(parent: int, depth: int, rank: int, reach: float, lost: float) -> None:
        nonlocal order
        if rank > ranks:
            return
        chance = reach * lost * acceptance.rate_at(depth, rank)
        if chance > 0:
            heapq.heappush(opened, (-chance, order, parent, depth, rank, reach, lost))
            order += 1

    parents: list[int] = []
    depths: list[int] = []
    total = 1.0
    open_node(-1, 1, 1, 1.0, 1.0)
    while opened and len(parents) < nodes:
        negative, _, parent, depth, rank, reach, lost = heapq.heappop(opened)
        chance = -negative
        parents.append(parent)
        depths.append(depth)
        total += chance
        if depth < max_depth:
            open_node(len(parents) - 1, depth + 1, 1, chance, 1.0)
        open_node(parent, depth, rank + 1, reach, lost * (1.0 - acceptance.rate_at(depth, rank)))
    return BestTree(len(parents), total, tuple(parents), max(depths, default=0))
