"""The race's records: its lanes, their runs and what a drafter gained, as plain numbers.

No tensors and no torch, so the views draw them (specviz.views.race_html) and exports write them;
specviz.measure.race runs the race that fills them.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from specviz.core.events import Totals
from specviz.measure.firmness import Judgement, judge
from specviz.measure.outcome import Outcome
from specviz.measure.spread import Spread
from specviz.text import Phrase

__all__ = [
    "LLAMA_CHOICE",
    "LLAMA_LANES",
    "LLAMA_PLAIN_LANE",
    "LLAMA_SPEC_LANE",
    "PLAIN_LANE",
    "Lane",
    "LaneGain",
    "LaneRun",
    "RaceProgress",
    "RaceResult",
    "engine_seconds",
]

PLAIN_LANE = "plain"  # the baseline lane's name; a drafter's lane is named by its spec
# llama.cpp's llama-server on the same GGUF pair (specviz.measure.llama_cpp): its plain decoding,
# the baseline of its speculative decoding by the configs tab's command.
LLAMA_PLAIN_LANE = "llama.cpp plain"
LLAMA_SPEC_LANE = "llama.cpp speculative"
LLAMA_LANES = (LLAMA_PLAIN_LANE, LLAMA_SPEC_LANE)
LLAMA_CHOICE = "llama.cpp"  # what a race request names to add both llama.cpp lanes


def engine_seconds(totals: Totals) -> float:
    """A run's engine time: its compute time plus a drafter's own preparation."""
    return totals.elapsed_s + totals.prefill_s


@dataclass(frozen=True)
class LaneRun:
    """One repeat of one lane: the engine's records and counters."""

    repeat: int
    outcome: Outcome

    @property
    def totals(self) -> Totals:
        if self.outcome.totals is None:  # pragma: no cover - engine runs always count
            raise RuntimeError("an engine run reported no counters")
        return self.outcome.totals

    @property
    def seconds(self) -> float:
        return engine_seconds(self.totals)

    @property
    def tokens_per_s(self) -> float:
        return self.totals.new_tokens / self.seconds if self.seconds > 0 else 0.0


@dataclass(frozen=True)
class Lane:
    """One lane's runs, in repeat order."""

    name: str  # PLAIN_LANE, the drafter spec it drafts with, or one of LLAMA_LANES
    runs: tuple[LaneRun, ...]

    @property
    def is_plain(self) -> bool:
        """Plain decoding, specviz's or llama.cpp's: a baseline, not a drafter."""
        return self.name in (PLAIN_LANE, LLAMA_PLAIN_LANE)

    @property
    def is_llama(self) -> bool:
        """llama.cpp's lane: counters and text, no per-token records."""
        return self.name in LLAMA_LANES

    @property
    def baseline(self) -> str:
        """The lane a speedup divides by: the same engine's plain decoding."""
        return LLAMA_PLAIN_LANE if self.name == LLAMA_SPEC_LANE else PLAIN_LANE

    @property
    def tokens_per_s(self) -> Spread | None:
        """Median engine tokens/s over the repeats, with its range; None before any run."""
        return Spread.of([run.tokens_per_s for run in self.runs]) if self.runs else None

    @property
    def shown(self) -> LaneRun | None:
        """The run the race shows and replays: the median by speed (the upper middle of an even
        count), so the lane moves at its median measured speed."""
        order = sorted(self.runs, key=lambda run: run.tokens_per_s)
        return order[len(order) // 2] if order else None


@dataclass(frozen=True)
class LaneGain:
    """What a drafter's lane gained over plain decoding, and how firm that is."""

    # The lane's median tokens/s ÷ plain decoding's, so the headline is the ratio of the two
    # speeds the lanes show; low and high are the range of each repeat's own ratio, which always
    # holds it (the median is monotone: were every lane speed under c × plain's in its repeat,
    # the lane's median would be under c × plain's median).
    speedup: Spread
    seconds_saved: Spread  # plain's time for the lane's tokens minus the lane's own time
    firmness: Judgement  # from the fewest tokens of a paired run, the range and the CPU load
    tokens: int  # the fewest new tokens any paired run (the lane's or plain's) made


@dataclass(frozen=True)
class RaceResult:
    """Every lane (plain first, then the drafters in the order asked) and how far it got."""

    lanes: tuple[Lane, ...]
    repeats: int  # repeats planned per lane
    complete: bool  # every planned run finished
    # The share of the machine's CPU time other programs took during the race
    # (specviz.models.cpu_load.OthersShare), 0 to 1; None where it was not measured.
    others_share: float | None = None

    @property
    def plain(self) -> Lane:
        return self.lanes[0]

    @property
    def drafters(self) -> tuple[Lane, ...]:
        """The speculative lanes: each drafter's, then llama.cpp's when it ran."""
        return tuple(lane for lane in self.lanes if not lane.is_plain)

    def lane(self, name: str) -> Lane | None:
        """The lane named *name* (a drafter spec or PLAIN_LANE), if it ran in this race."""
        return next((lane for lane in self.lanes if lane.name == name), None)

    def gain(self, name: str) -> LaneGain | None:
        """The speculative lane's speedup over its engine's plain decoding, seconds saved and
        their firmness, over the repeats that ran both lanes; None for no such lane or before a
        repeat has both."""
        lane = self.lane(name)
        baseline = None if lane is None else self.lane(lane.baseline)
        if lane is None or lane.is_plain or baseline is None:
            return None
        plain_runs = {run.repeat: run for run in baseline.runs}
        pairs = [(run, plain_runs[run.repeat]) for run in lane.runs if run.repeat in plain_runs]
        pairs = [(run, plain) for run, plain in pairs if plain.tokens_per_s > 0]
        if not pairs:
            return None
        ratios = [run.tokens_per_s / plain.tokens_per_s for run, plain in pairs]
        lane_speed = statistics.median(run.tokens_per_s for run, _ in pairs)
        plain_speed = statistics.median(plain.tokens_per_s for _, plain in pairs)
        speedup = Spread(lane_speed / plain_speed, min(ratios), max(ratios), len(ratios))
        # The same tokens at plain decoding's pace, less the time the lane took for them.
        saved = [run.totals.new_tokens / plain.tokens_per_s - run.seconds for run, plain in pairs]
        tokens = min(min(run.totals.new_tokens, plain.totals.new_tokens) for run, plain in pairs)
        firmness = judge(tokens, speedup, self.others_share)
        return LaneGain(speedup, Spread.of(saved), firmness, tokens)

    @property
    def noisy(self) -> bool:
        """Some lane's speed, or some drafter's speedup, scattered past the noise threshold."""
        speeds = [lane.tokens_per_s for lane in self.lanes]
        gains = [self.gain(lane.name) for lane in self.drafters]
        spreads = [s for s in speeds if s is not None] + [g.speedup for g in gains if g is not None]
        return any(spread.noisy for spread in spreads)

    @property
    def widest_spread(self) -> float:
        """The largest relative range of any lane's tokens/s (0 before any run)."""
        speeds = [lane.tokens_per_s for lane in self.lanes]
        return max((s.relative for s in speeds if s is not None), default=0.0)


@dataclass(frozen=True)
class RaceProgress:
    """Where the race stands: before the warm-up, before each run and at the end."""

    fraction: float  # runs done / runs planned
    message: Phrase  # the run about to start, "done" or "stopped"
    result: RaceResult  # every run finished so far
    finished: bool = False
