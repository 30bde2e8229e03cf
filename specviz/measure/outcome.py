"""What one measured run produced: a plain record, no tensors, so views can draw it.

The harness (specviz.measure.harness) returns one per run; the race's lanes keep them
(specviz.measure.race_records) and the race view replays their events.
"""

from __future__ import annotations

from dataclasses import dataclass

from specviz.core.events import Cycle, Step, Totals

__all__ = ["Event", "Outcome"]

Event = Cycle | Step


@dataclass(frozen=True)
class Outcome:
    """What one run produced."""

    new_tokens: int  # tokens generated (or steps taken): what the throughput divides
    totals: Totals | None = None  # the engine's counters; None for a method without them
    text: str = ""
    token_ids: tuple[int, ...] = ()  # the new tokens, when the method reports them
    complete: bool = True  # False when the run stopped at its deadline before its end
    events: tuple[Event, ...] = ()  # the engine's records, when the method has them
    # Seconds of work the run reused instead of doing (a prompt read once, before the runs, and
    # copied into each): its throughput counts them as if the run had done that work itself.
    reused_s: float = 0.0
