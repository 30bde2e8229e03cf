"""How many tokens a draft tree is expected to give per target pass, from measured acceptance.

A tree keeps alternatives: when the draft's first guess for a position loses, its second may
win. Measured from tree cycles, ``a[r]`` is the chance that a node of rank r (its parent's r-th
child) is kept when it is tested, that is, given its parent was kept and its r − 1 earlier
siblings lost (the rule tests siblings in rank order; specviz.core.tree). A node with w children
then moves the kept path one deeper with probability

    A(w) = 1 − Π_{r=1..w} (1 − a[r]),

and a fixed shape with widths w_1..w_D gives, per target pass, the kept path plus the one token
the target adds after it:

    τ(w) = 1 + Σ_{d=1..D} Π_{k=1..d} A(w_k).

A chain of γ guesses is the shape (1, ..., 1), where this is the chain's
τ = (1 − α^(γ+1)) / (1 − α) with α = a[1] (Leviathan et al. 2023, eq. 1). The model takes
acceptance to depend on the rank alone (pooled over depths, as the counts per depth are small);
``RankAcceptance.by_depth`` says how far that holds in a run.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from specviz.core.events import Cycle


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
            for node in cycle.tree.nodes:
                if node.verdict == "untested":
                    continue
                won = node.verdict == "accepted"
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

    def rate(self, rank: int) -> float:
        """a[rank]: kept / tested at that rank; 0.0 where no node of that rank was tested."""
        if rank > len(self.tested) or self.tested[rank - 1] == 0:
            return 0.0
        return self.kept[rank - 1] / self.tested[rank - 1]


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
