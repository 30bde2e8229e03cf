"""Probabilities as people read them: one formatter for every card, tooltip, table, hover and story.

The rule: two significant figures, and a probability that is not 0 never reads 0, one under 1
never reads 1.

- 0 reads ``0`` and 1 reads ``1.0``;
- from 0.0001 up, two significant figures in decimals: ``0.63``, ``0.50``, ``0.0031``, ``0.00012``;
- below 0.0001, the same two figures in e-notation: ``1.2e-5`` (a long row of zeros is misread);
- a value under 1 that two figures would round up to ``1.0`` gets a figure more until it does not
  (``0.996``, ``0.9996``); past four decimals it reads ``>0.9999``.

``prob_pair`` formats two probabilities that are compared (the die u against the chance
min(1, p/q) of keeping a draft) with enough figures that unequal values read unequal.
"""

from __future__ import annotations

import math

NO_VALUE = "—"  # a number that does not exist (no u drawn in greedy mode, a draft never tested)
FIGURES = 2
TINY = 1e-4  # below this, e-notation (Python's "g" format switches at the same place)
_MOST_FIGURES = 6  # prob_pair's limit: values closer than this are equal for any reader
_NEAR_ONE = ">0.9999"


def prob(value: float | None, figures: int = FIGURES) -> str:
    """A probability to ``figures`` significant figures: 0.63, 0.0031, 1.2e-5, 0, 1.0 (the
    module's docstring has the whole rule). None or NaN reads as a dash."""
    if value is None or math.isnan(value):
        return NO_VALUE
    if value <= 0.0:
        return "0"
    if value >= 1.0:
        return "1.0"
    if value < TINY:
        mantissa, exponent = f"{value:.{figures - 1}e}".split("e")
        return f"{mantissa}e{int(exponent)}"
    # "#" keeps trailing zeros (0.50, not 0.5): every value shows the same number of figures.
    for digits in range(figures, max(figures, 4) + 1):
        text = f"{value:#.{digits}g}"
        if not text.startswith("1"):  # under 1, only a round-up starts with 1
            return text
    return _NEAR_ONE


def prob_pair(first: float, second: float, figures: int = FIGURES) -> tuple[str, str]:
    """Two compared probabilities, each with the fewest figures (at least ``figures``) that make
    unequal values read unequal: u 0.6281 against 0.6279 reads "0.6281" and "0.6279"."""
    pair = prob(first, figures), prob(second, figures)
    for digits in range(figures + 1, _MOST_FIGURES + 1):
        if pair[0] != pair[1] or first == second:
            break
        pair = prob(first, digits), prob(second, digits)
    return pair


def ratio(value: float) -> str:
    """p/q, which may pass 1: under 1 as a probability, from 1 with two decimals, ∞ for q = 0."""
    if math.isinf(value):
        return "∞"
    return prob(value) if value < 1.0 else f"{value:.2f}"
