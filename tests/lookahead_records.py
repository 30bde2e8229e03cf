"""A hand-built lookahead cycle for the window panel's and the trace's tests: every slot, guess
and n-gram known in advance.

Not a test module; the tests import it (pytest puts tests/ on sys.path).

The window is W = 3, N = 3, full (two rows), after the committed token " the" (id 100):

    offset        +0     +1     +2     +3     +4
    t−2 (spine)   the    cat    sat
    t−1                  dog    on     the
    new                         sat    mat    rug     (the target's first choices)

and two pooled guesses under " the": (" cat", " sat"), which merges with the spine, and
(" big", " dog"). The target kept " cat sat" (guess 1, both tokens) then drew " mat".
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ui_events import draft, make_cycle

from specviz.core.events import Cycle, Origin, TokenProb, Totals, TreeNode, TreeRecord

ROOT_TOKEN = TokenProb(100, " the", 1.0)
NEXT_ROW = (TokenProb(12, " sat", 0.5), TokenProb(17, " mat", 0.6), TokenProb(18, " rug", 0.7))
# (parent, rank, token id, text, verdict) of each node, in the order the drafter laid them:
# the guesses first, then the window's slots that no guess already holds.
NODES = (
    (-1, 1, 11, " cat", "accepted"),  # 0: guess 1 and the spine's first slot
    (0, 1, 12, " sat", "accepted"),  # 1: guess 1's end and the spine's second slot
    (-1, 2, 13, " big", "rejected"),  # 2: guess 2
    (2, 1, 14, " dog", "untested"),  # 3: guess 2's end
    (-1, 3, 14, " dog", "rejected"),  # 4: row t−1, slot 0
    (0, 2, 15, " on", "rejected"),  # 5: row t−1, slot 1
    (1, 1, 16, " the", "rejected"),  # 6: row t−1, slot 2
)
WINDOW_ROWS = ((0, 1), (4, 5, 6))
GUESSES = (1, 3)


def _depth(parent: int) -> int:
    return 1 if parent < 0 else _depth(NODES[parent][0]) + 1


def tree_nodes() -> tuple[TreeNode, ...]:
    return tuple(
        TreeNode(
            parent=parent,
            depth=_depth(parent),
            rank=rank,
            token_id=token_id,
            text=text,
            q_draft=1.0,
            p_target=0.9 if verdict == "accepted" else 0.05,
            accept_prob=0.0 if verdict == "untested" else (0.9 if verdict == "accepted" else 0.05),
            uniform=None,
            verdict=verdict,
        )
        for parent, rank, token_id, text, verdict in NODES
    )


def lookahead_cycle(**tree_changes: Any) -> Cycle:
    """The cycle above; *tree_changes* replace fields of its TreeRecord."""
    cycle = make_cycle(
        1,
        4,
        [
            draft(1, 4, " cat", accepted=True, q=1.0, p=0.9),
            draft(2, 5, " sat", accepted=True, q=1.0, p=0.9),
            draft(3, 6, " the", accepted=False, q=1.0, p=0.05),
        ],
        (" mat", Origin.RESAMPLED),
        Totals(7, 2, 0, 5, 2, 0.2, 0.0),
        greedy=True,
    )
    tree = TreeRecord(
        tree_nodes(),
        (0, 1),
        "greedy",
        "window=3,ngram=3,guesses=4",
        WINDOW_ROWS,
        window_root=ROOT_TOKEN,
        window_next=NEXT_ROW,
        window_guesses=GUESSES,
        window_harvest=True,
    )
    return replace(cycle, drafter="lookahead", tree=replace(tree, **tree_changes))
