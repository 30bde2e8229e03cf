"""What a Medusa run's heads guessed, and how often they were right, read from its cycles' trees.

Head d guesses draft position d: its guesses are the tree's nodes at depth d (the drafter hangs
head d's top guesses under the nodes at depth d − 1; every head reads the same state, so each
parent gets the same ones). The run's agreement of head d counts the cycles whose kept path
reached depth d − 1 and that put a guess of head d under it: a hit when its first guess there
(rank 1) is the token the target wrote at position d, be that the guess it kept or the token it
drew after the path. That is the measure the training report takes on held-out text (the head's
first guess against the target's own choice), taken here on the run's own text.

Pure: cycles in, plain records out; ``heads_html`` draws them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from specviz.core.events import Cycle, EmittedToken, TreeNode, TreeRecord
from specviz.drafters.registry import Drafts, find_drafter

# A token's verdict over all its nodes at one depth: the best any of them got.
_STANDING = {"untested": 0, "rejected": 1, "accepted": 2}


def drafted_by_heads(cycle: Cycle) -> bool:
    """The cycle's tree was guessed by heads on the target's state (its drafter's entry says so)."""
    entry = find_drafter(cycle.drafter)
    return entry is not None and entry.drafts is Drafts.WITH_TARGET_HEADS


@dataclass(frozen=True)
class HeadScore:
    """One head's first guesses under the kept path in a run: how many matched the target."""

    head: int  # 1: the head that guesses draft position 1
    hits: int  # its first guess was the token the target wrote there
    chances: int  # cycles whose kept path reached its parent and held a guess of it

    @property
    def rate(self) -> float | None:
        """hits / chances; None before its first chance."""
        return self.hits / self.chances if self.chances else None


@dataclass(frozen=True)
class Guess:
    """One token a head guessed this cycle (several nodes may hold it, under different parents)."""

    node: int  # the node to open in the inspector: the kept one, else a tested one, else the first
    token_id: int
    text: str
    special: str
    rank: int  # the node's rank among its siblings (1: the head's first guess there)
    q_draft: float  # the head's probability of it
    verdict: str  # "accepted", "rejected" or "untested": the best any of its nodes got


@dataclass(frozen=True)
class HeadGuesses:
    """What one head guessed this cycle, and what the target wrote at its position."""

    head: int
    guesses: tuple[Guess, ...]  # the head's guesses in the tree, most probable first
    wrote: EmittedToken | None  # the target's token at position head; None: the cycle ended before

    @property
    def kept(self) -> Guess | None:
        """The guess on the kept path, if the target kept one of this head's."""
        return next((guess for guess in self.guesses if guess.verdict == "accepted"), None)


def first_guess(record: TreeRecord, depth: int) -> TreeNode | None:
    """Head *depth*'s first guess under the kept path: the rank-1 child of the path's node at
    depth − 1 (of the committed text for depth 1); None when the path stops short of that node
    or the tree holds no guess under it."""
    if len(record.path) < depth - 1:
        return None
    parent = record.path[depth - 2] if depth > 1 else -1
    firsts = (record.nodes[i] for i in record.children(parent) if record.nodes[i].rank == 1)
    return next(firsts, None)


def written(cycle: Cycle, depth: int) -> EmittedToken | None:
    """The token the target wrote at draft position *depth* this cycle (the kept guess there, or
    the token after the kept path), None past the cycle's last token."""
    return cycle.emitted[depth - 1] if 1 <= depth <= len(cycle.emitted) else None


def run_agreement(cycles: Iterable[Cycle], heads: int) -> tuple[HeadScore, ...]:
    """Heads 1..*heads*' agreement over the cycles the heads drafted (module doc)."""
    hits, chances = [0] * heads, [0] * heads
    for cycle in cycles:
        if cycle.tree is None or not drafted_by_heads(cycle):
            continue
        for depth in range(1, heads + 1):
            guess, token = first_guess(cycle.tree, depth), written(cycle, depth)
            if guess is None or token is None:
                continue
            chances[depth - 1] += 1
            hits[depth - 1] += guess.token_id == token.token_id
    return tuple(HeadScore(d + 1, hits[d], chances[d]) for d in range(heads))


def heads_used(cycles: Iterable[Cycle]) -> int:
    """The deepest depth any of the heads' trees reached: the heads the run guesses with."""
    return max(
        (
            node.depth
            for cycle in cycles
            if cycle.tree is not None and drafted_by_heads(cycle)
            for node in cycle.tree.nodes
        ),
        default=0,
    )


def head_guesses(cycle: Cycle, heads: int) -> tuple[HeadGuesses, ...]:
    """Heads 1..*heads*' guesses in the cycle's tree, each token once, most probable first."""
    nodes = cycle.tree.nodes if cycle.tree is not None else ()
    rows = []
    for depth in range(1, heads + 1):
        found: dict[int, Guess] = {}
        for index, node in enumerate(nodes):
            if node.depth != depth:
                continue
            known = found.get(node.token_id)
            if known is None or _STANDING[node.verdict] > _STANDING[known.verdict]:
                found[node.token_id] = Guess(
                    index,
                    node.token_id,
                    node.text,
                    node.special,
                    node.rank if known is None else min(node.rank, known.rank),
                    node.q_draft,
                    node.verdict,
                )
        # Stable: equal q keeps the tree's order (the head's own ranking).
        guesses = tuple(sorted(found.values(), key=lambda guess: -guess.q_draft))
        rows.append(HeadGuesses(depth, guesses, written(cycle, depth)))
    return tuple(rows)
