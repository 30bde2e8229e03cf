"""Lookahead decoding measured as its paper measures it: how long an n-gram each target pass
accepts (Fu et al., "Break the Sequential Dependency of LLM Inference Using Lookahead Decoding",
ICML 2024, §4 and §5).

Each lookahead cycle offers the pooled n-grams that start with the last committed token (G of
them at most, N − 1 tokens each after their key) and the Jacobi window's own paths, all in one
target pass (specviz.drafters.lookahead). The cycle keeps the longest matching prefix the
target agrees with: its accepted length, 0 when no guess's first token matched, up to N − 1 from
a pooled n-gram; here a window path is a candidate too, and can carry a cycle further. A pass
then yields the accepted tokens and the target's own token after them, so

    τ = 1 + E[accepted length]

tokens per target pass (the paper's "compression ratio", its step compression over plain
decoding's one token a step). What the pass costs is the tokens it sends: the newest committed
token, the window's slots and every guess (specviz.drafters.registry.tokens_a_pass bounds it);
on a CPU those cost arithmetic, where on a GPU they ride on the weights read once (the paper's
FLOPs-for-steps trade, §4.3).

Pure: cycles in, plain numbers out. A lookahead cycle is told by its record's window rows, as
the window panel tells it (specviz.views.lookahead_html), no drafter name compared.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import dataclass

from specviz.core.events import Cycle
from specviz.views.lookahead_html import kept_guess


@dataclass(frozen=True)
class NgramTheory:
    """The accepted length of every lookahead cycle of a run, and what the pass sent."""

    ngram: int  # N: tokens per pooled n-gram, its key included (the window holds N − 1 rows)
    # lengths[k]: cycles that accepted k tokens (0 .. the longest seen, at least N − 1)
    lengths: tuple[int, ...]
    # from_guess[k]: of those, the cycles a pooled n-gram carried (the rest: the window's own
    # path, or nothing at k = 0)
    from_guess: tuple[int, ...]
    guesses: tuple[int, ...]  # per cycle: the pooled n-grams the pass verified
    pass_tokens: tuple[int, ...]  # per cycle: the tokens the pass read (1 + the tree's nodes)

    @property
    def cycles(self) -> int:
        return sum(self.lengths)

    @property
    def mean_accepted(self) -> float:
        """E[accepted length] over the run's lookahead cycles; 0.0 with none."""
        if not self.cycles:
            return 0.0
        return sum(k * count for k, count in enumerate(self.lengths)) / self.cycles

    @property
    def tau(self) -> float:
        """τ = 1 + E[accepted length]: tokens per target pass (module doc)."""
        return 1.0 + self.mean_accepted

    @property
    def mean_guesses(self) -> float:
        """Pooled n-grams verified per pass, on average."""
        return statistics.fmean(self.guesses) if self.guesses else 0.0

    def share(self, length: int) -> float:
        """The share of cycles that accepted *length* tokens."""
        return self.lengths[length] / self.cycles if self.cycles else 0.0


def measure_ngrams(cycles: Iterable[Cycle]) -> NgramTheory:
    """Tally the accepted length of every cycle with a lookahead window (module doc)."""
    lengths: list[int] = []
    from_guess: list[int] = []
    guesses: list[int] = []
    pass_tokens: list[int] = []
    rows = 0
    for cycle in cycles:
        record = cycle.tree
        if record is None or not record.window_rows:
            continue
        rows = max(rows, len(record.window_rows))
        accepted = len(record.path)
        grow = accepted + 1 - len(lengths)
        lengths.extend([0] * grow)
        from_guess.extend([0] * grow)
        lengths[accepted] += 1
        from_guess[accepted] += kept_guess(record) >= 0
        guesses.append(len(record.window_guesses))
        pass_tokens.append(1 + len(record.nodes))
    ngram = rows + 1 if rows else 0
    # Every length a pooled n-gram could give has a row, seen or not.
    pad = max(0, ngram - len(lengths))
    return NgramTheory(
        ngram,
        (*lengths, *[0] * pad),
        (*from_guess, *[0] * pad),
        tuple(guesses),
        tuple(pass_tokens),
    )
