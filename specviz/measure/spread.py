"""The median of repeated measurements with its spread, and when that spread says the machine
was noisy.

A single timed run on a shared machine can be off by a third either way; a number people can
trust is the median of a few interleaved repeats together with how far they scattered. With
three repeats an interquartile range is not defined in any useful way, so the spread is the
range, min to max, and its size is read relative to the median.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["DEFAULT_REPEATS", "NOISY_SPREAD", "Spread"]

DEFAULT_REPEATS = 3  # the race's and the task lab's repeats unless asked otherwise

# A relative range (max − min) / median above this says the machine was noisy: more than the
# differences between drafters the race and the task lab are there to show.
NOISY_SPREAD = 0.15


@dataclass(frozen=True)
class Spread:
    """The median of some repeated measurements and their range."""

    median: float
    low: float
    high: float
    count: int  # how many measurements

    @classmethod
    def of(cls, values: Sequence[float]) -> Spread:
        """The median and range of *values* (at least one)."""
        if not values:
            raise ValueError("a spread needs at least one value")
        return cls(statistics.median(values), min(values), max(values), len(values))

    @property
    def relative(self) -> float:
        """(max − min) / median: 0 for one value or identical ones."""
        return (self.high - self.low) / self.median if self.median > 0 else 0.0

    @property
    def noisy(self) -> bool:
        """The repeats scattered more than NOISY_SPREAD of their median."""
        return self.relative > NOISY_SPREAD
