"""One measurement harness: warm-up, interleaved methods, repeats, a time budget, progress.

Every timing in specviz (the benchmark, the speedup and task labs, the measurement commands) runs
through `iter_measurements`, so they share one protocol:

- warm-up: each warm-up method runs once, untimed, so one-time costs (allocations, kernel choices)
  land there and not on the first measured run;
- interleaving: repeat r runs every method once, in order (A B C A B C ...), so drift on a shared
  machine hits every method alike and their ratios stay comparable;
- repeats: repeat r gets the method's settings with seed + r (`repeat_settings`), so a sampled
  result is not one random trajectory's luck; greedy runs are identical repeats;
- time budget: each run's deadline is its equal share of what is left; an engine run past it stops
  after its current event (kept, marked incomplete); a later repeat that would start after the
  budget is spent is skipped; both are reported as cut. The first repeat of every method always runs
  (at least one event), so every method has a sample, except a method measured only whole
  (`Method.only_whole`), which is skipped when the longest whole run so far no longer fits in what
  is left; such methods run last in each repeat, in the order of the throughput of the method
  each is ranked by (`Method.ranked_by`), best first;
- progress: (fraction of runs done, message) before the warm-up, before each run and at the end;
  the message is a ``Phrase`` (words from the text catalogue), so each front end words it in its
  reader's language.

A method is a name, the settings it runs with and a function of one `Trial`. It returns an `Outcome`
(new tokens, the engine's counters and events when it has them), or None when it abandoned the run
because `trial.should_stop()` said so; then nothing more runs and the result says it was stopped.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Generic, Protocol, TypeVar

import torch

from specviz.core.events import Cycle, Totals
from specviz.core.settings import GenerationSettings
from specviz.measure.outcome import Event, Outcome
from specviz.text import Phrase, UserError
from specviz.text.progress import Progress  # (fraction of runs done, what runs next in words)

__all__ = [
    "Measurements",
    "Method",
    "MethodResult",
    "Outcome",
    "Progress",
    "Sample",
    "Trial",
    "Update",
    "drain",
    "in_turn",
    "iter_measurements",
    "last_update",
    "measure",
    "never",
    "pooled",
    "repeat_settings",
]


def never() -> bool:
    """A should_stop that never asks to stop."""
    return False


# Tokens of a warm-up run: enough to run every code path of a cycle and of a plain step once, so
# one-time costs (allocations, kernel choices) land there and not on the first measured run.
WARM_UP_TOKENS = 4


def warm_up_settings(settings: GenerationSettings) -> GenerationSettings:
    """The settings of a warm-up run: these, for at most WARM_UP_TOKENS new tokens."""
    return replace(settings, max_new_tokens=min(WARM_UP_TOKENS, settings.max_new_tokens))


def repeat_settings(settings: GenerationSettings, repeat: int) -> GenerationSettings:
    """The settings of one repeat: greedy runs are identical; sampled runs draw seed + repeat."""
    if settings.temperature == 0.0:
        return settings
    return replace(settings, seed=settings.seed + repeat)


@dataclass(frozen=True)
class Trial:
    """One call of a method: its settings for this repeat, and when it has to end."""

    repeat: int
    settings: GenerationSettings  # the method's settings with seed + repeat when sampling
    deadline: float  # a time.perf_counter() value; inf without a budget
    should_stop: Callable[[], bool] = never  # the caller wants everything to stop: abandon the run


@dataclass(frozen=True)
class Method:
    """A named way to run: called once per repeat with a Trial."""

    name: str  # what results are found by, and tables print
    run: Callable[[Trial], Outcome | None]
    settings: GenerationSettings = field(default_factory=GenerationSettings)
    label: Phrase | None = None  # how progress messages name it in words; None: by its name
    # Worth measuring only whole (the advisor's extra γ rows): a run starts only while the budget
    # left holds the longest whole run measured so far, and may use all of it (no equal share);
    # otherwise it is skipped, first repeat included, and no run is cut short.
    only_whole: bool = False
    # For a method measured only whole: the method whose throughput orders it. Within a repeat the
    # only-whole methods run after the others, best-measured first (the advisor's γ rows follow
    # how well their drafter screened), so when the budget runs out it is the rows least likely
    # to win that are skipped. None: in the order given, after those ranked.
    ranked_by: str | None = None

    @property
    def words(self) -> Phrase:
        """The method as progress messages name it."""
        return self.label or Phrase("progress.method", name=self.name)


@dataclass(frozen=True)
class Sample:
    """One timed run of one method."""

    repeat: int
    seed: int
    seconds: float  # wall clock of the whole call (device work included)
    outcome: Outcome

    @property
    def tokens_per_s(self) -> float:
        """New tokens over the call's seconds plus the work it reused (Outcome.reused_s)."""
        seconds = self.seconds + self.outcome.reused_s
        return self.outcome.new_tokens / seconds if seconds > 0 else 0.0


@dataclass(frozen=True)
class MethodResult:
    """One method's samples in repeat order, and the repeats the budget skipped."""

    name: str
    samples: tuple[Sample, ...]
    skipped: tuple[int, ...] = ()  # repeats not run: the budget was spent

    @property
    def rates(self) -> list[float]:
        """Wall-clock tokens/s of each sample, in repeat order."""
        return [sample.tokens_per_s for sample in self.samples]

    @property
    def tokens_per_s(self) -> float:
        """The median wall-clock tokens/s over the samples."""
        return statistics.median(self.rates) if self.samples else 0.0

    @property
    def median_sample(self) -> Sample:
        """The sample at the middle of the throughput order (the upper middle of an even count)."""
        order = sorted(self.samples, key=lambda sample: sample.tokens_per_s)
        return order[len(order) // 2]

    @property
    def new_tokens(self) -> int:
        """New tokens of the median sample."""
        return self.median_sample.outcome.new_tokens

    @property
    def seconds(self) -> float:
        """Wall-clock seconds of all samples together."""
        return sum(sample.seconds for sample in self.samples)

    @property
    def totals(self) -> Totals | None:
        """The engine's counters of the median sample (None for a method without them)."""
        return self.median_sample.outcome.totals

    @property
    def complete(self) -> bool:
        """Every planned repeat ran to its end."""
        return not self.skipped and all(sample.outcome.complete for sample in self.samples)

    @property
    def cut(self) -> list[str]:
        """Which repeats the budget cut: 'name, repeat r: cut short' or '...: skipped'."""
        short = [s.repeat for s in self.samples if not s.outcome.complete]
        return [f"{self.name}, repeat {r + 1}: cut short" for r in short] + [
            f"{self.name}, repeat {r + 1}: skipped" for r in self.skipped
        ]


@dataclass(frozen=True)
class Measurements:
    """Every method's result, in the order the methods were given."""

    methods: tuple[MethodResult, ...]
    stopped: bool  # should_stop ended the measurement; the abandoned run has no sample
    elapsed_s: float

    @property
    def complete(self) -> bool:
        """Every run of every method ran to its end."""
        return not self.stopped and all(result.complete for result in self.methods)

    @property
    def cut(self) -> list[str]:
        """Every measurement the time budget cut short or skipped."""
        return [line for result in self.methods for line in result.cut]

    def __getitem__(self, name: str) -> MethodResult:
        for result in self.methods:
            if result.name == name:
                return result
        raise KeyError(name)


@dataclass(frozen=True)
class Update:
    """Where a measurement stands: sent before the warm-up, before each run and at the end."""

    fraction: float  # runs done / runs planned
    message: Phrase  # the run about to start ("warming up", a method), "done" or "stopped ..."
    measurements: Measurements  # everything measured so far
    finished: bool = False  # the last update: done, or stopped


def iter_measurements(
    methods: Sequence[Method],
    repeats: int = 1,
    warm_up: Sequence[Method] = (),
    time_budget_s: float | None = None,
    should_stop: Callable[[], bool] = never,
) -> Iterator[Update]:
    """Run every method `repeats` times, interleaved, after the warm-up; a stream of updates.

    The arguments are checked here, before the first run, not on the first next().
    """
    if not methods:
        raise ValueError("there is nothing to measure: no methods")
    if repeats < 1:
        raise UserError("error.harness.repeats", repeats=repeats)
    if len({method.name for method in methods}) != len(methods):
        raise ValueError("method names must be distinct")
    if time_budget_s is not None and time_budget_s < 0:
        raise UserError("error.harness.budget", seconds=time_budget_s)
    budget = float("inf") if time_budget_s is None else time_budget_s
    return _measurements(tuple(methods), repeats, tuple(warm_up), budget, should_stop)


def measure(
    methods: Sequence[Method],
    repeats: int = 1,
    warm_up: Sequence[Method] = (),
    time_budget_s: float | None = None,
    progress: Progress | None = None,
    should_stop: Callable[[], bool] = never,
) -> Measurements:
    """iter_measurements run to its end; progress(fraction, message) gets every update."""
    updates = iter_measurements(methods, repeats, warm_up, time_budget_s, should_stop)
    return last_update(updates, progress).measurements


class Streamed(Protocol):
    """An update of a measurement streamed to its end: where it stands, and whether it is over."""

    @property
    def fraction(self) -> float: ...

    @property
    def message(self) -> Phrase: ...

    @property
    def finished(self) -> bool: ...


U = TypeVar("U", bound=Streamed)
R = TypeVar("R")


@dataclass(frozen=True)
class Staged(Generic[R]):
    """Where a long lab computation stands, and its result once done (the last one). A lab that
    yields these between its forwards can be shown as it goes and stopped between two of them,
    and its time budget checked there."""

    fraction: float
    message: Phrase
    result: R | None = None

    @property
    def finished(self) -> bool:
        """The computation is over: result holds what it measured."""
        return self.result is not None


def staged_result(stages: Iterable[Staged[R]], progress: Progress | None = None) -> R:
    """A staged computation run to its end, for callers that wait (the CLI, tests)."""
    result = last_update(stages, progress).result
    assert result is not None  # a finished stage holds its result
    return result


def staged_part(
    stages: Iterable[Staged[R]], start: float, end: float, message: Phrase | None = None
) -> Generator[Staged[Any], None, R]:
    """A staged computation run as one part of a larger one: its stages, their fractions mapped
    into [start, end] (worded *message* when given), and its result returned, so the larger
    one still stops between the part's forwards: ``result = yield from staged_part(...)``."""
    for stage in stages:
        if stage.result is not None:
            return stage.result
        yield Staged(start + (end - start) * stage.fraction, message or stage.message)
    raise AssertionError("a staged computation always ends with its result")  # pragma: no cover


def staged_measurements(
    updates: Iterable[Update], end: float
) -> Generator[Staged[Any], None, Measurements]:
    """A measurement run as the first part of a lab, up to *end* of its progress: each update a
    stage, the measurements returned: ``measured = yield from staged_measurements(...)``."""
    for update in updates:
        if update.finished:
            return update.measurements
        yield Staged(end * update.fraction, update.message)
    raise AssertionError("a measurement always ends with a finished update")  # pragma: no cover


def last_update(updates: Iterable[U], progress: Progress | None = None) -> U:
    """Run a stream of updates to its finished one (returned); progress gets each on the way."""
    for update in updates:
        if progress is not None:
            progress(update.fraction, update.message)
        if update.finished:
            return update
    raise AssertionError("a measurement always ends with a finished update")  # pragma: no cover


def _measurements(
    methods: tuple[Method, ...],
    repeats: int,
    warm_up: tuple[Method, ...],
    budget_s: float,
    should_stop: Callable[[], bool],
) -> Iterator[Update]:
    began = time.perf_counter()
    deadline = began + budget_s
    samples: list[list[Sample]] = [[] for _ in methods]
    skipped: list[list[int]] = [[] for _ in methods]
    total = len(methods) * repeats
    done = 0
    # The runs the budget is shared among: those of methods that may be cut short.
    shared_left = repeats * sum(not method.only_whole for method in methods)
    longest_whole_s = 0.0  # the longest run so far that ran to its end

    def update(message: Phrase, stopped: bool = False, finished: bool = False) -> Update:
        results = tuple(
            MethodResult(method.name, tuple(own), tuple(cut))
            for method, own, cut in zip(methods, samples, skipped, strict=True)
        )
        measured = Measurements(results, stopped, time.perf_counter() - began)
        return Update(done / total, message, measured, finished)

    def stopped() -> Update:
        message = Phrase("progress.stopped", done=done, total=total)
        return update(message, stopped=True, finished=True)

    if warm_up:
        yield update(Phrase("progress.warming_up"))
        for method in warm_up:
            trial = Trial(0, method.settings, deadline, should_stop)
            if method.run(trial) is None:
                yield stopped()
                return
    for repeat in range(repeats):
        for index in _run_order(methods, samples):
            method = methods[index]
            now = time.perf_counter()
            fits = now + longest_whole_s <= deadline
            if (repeat > 0 and now > deadline) or (method.only_whole and not fits):
                skipped[index].append(repeat)
                done += 1
                shared_left -= not method.only_whole
                continue
            words = method.words
            if repeats > 1:
                words = Phrase(
                    "progress.method_repeat", name=words, repeat=repeat + 1, repeats=repeats
                )
            yield update(words)
            # An equal share of what is left: a run that ends early leaves its time to the rest.
            share = max(0.0, deadline - time.perf_counter()) / max(1, shared_left)
            settings = repeat_settings(method.settings, repeat)
            ends = deadline if method.only_whole else time.perf_counter() + share
            trial = Trial(repeat, settings, ends, should_stop)
            seconds, outcome = _timed(method.run, trial)
            if outcome is None:
                yield stopped()
                return
            samples[index].append(Sample(repeat, settings.seed, seconds, outcome))
            if outcome.complete:
                longest_whole_s = max(longest_whole_s, seconds)
            done += 1
            shared_left -= not method.only_whole
    yield update(Phrase("progress.done"), finished=True)


def _run_order(methods: tuple[Method, ...], samples: list[list[Sample]]) -> Iterator[int]:
    """The methods' indices in the order one repeat runs them: the given order for those that
    may be cut short, then those measured only whole, ranked by the throughput measured so far
    of the method each names in ranked_by (best first; unranked last, ties as given). The ranking
    is read when the first only-whole method is due, after the others of the repeat have run."""
    yield from (index for index, method in enumerate(methods) if not method.only_whole)
    names = {method.name: index for index, method in enumerate(methods)}

    def rate(index: int) -> float:
        ranked_by = methods[index].ranked_by
        own = samples[names[ranked_by]] if ranked_by in names else []
        return statistics.median(s.tokens_per_s for s in own) if own else -1.0

    whole = [index for index, method in enumerate(methods) if method.only_whole]
    yield from sorted(whole, key=rate, reverse=True)


def _timed(run: Callable[[Trial], Outcome | None], trial: Trial) -> tuple[float, Outcome | None]:
    """Wall-clock seconds of one run, queued GPU work included."""
    began = time.perf_counter()
    outcome = run(trial)
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    return time.perf_counter() - began, outcome


def drain(events: Iterator[Event], trial: Trial) -> Outcome | None:
    """Run an engine generator to its end or to the trial's deadline; None if asked to stop.

    Past the deadline the run stops after the event in hand (kept, incomplete); should_stop is
    polled between events, and a stop abandons the run.
    """
    kept: list[Event] = []
    for event in events:
        kept.append(event)
        if event.finished:
            break
        if trial.should_stop():
            return None
        if time.perf_counter() > trial.deadline:
            return _outcome(kept, complete=False)
    return _outcome(kept, complete=True)


def in_turn(name: str, methods: Sequence[Method], label: Phrase | None = None) -> Method:
    """One method that runs *methods* (the same decoder on several prompts) one after another
    with the same trial, so one timed run covers every prompt; its outcome pools theirs.

    A run cut short at the deadline ends the turn there (its outcome is incomplete); a run
    abandoned because should_stop said so abandons the whole turn.
    """
    if not methods:
        raise ValueError("in_turn needs at least one method")

    def run(trial: Trial) -> Outcome | None:
        outcomes: list[Outcome] = []
        for method in methods:
            outcome = method.run(trial)
            if outcome is None:
                return None
            outcomes.append(outcome)
            if not outcome.complete:
                break
        return pooled(outcomes)

    return Method(name, run, methods[0].settings, label)


def pooled(outcomes: Sequence[Outcome]) -> Outcome:
    """Several runs' outcomes as one: their tokens summed, the engine's counters pooled
    (Totals.pooled), texts and ids joined, complete only if every run was."""
    if not outcomes:
        raise ValueError("nothing to pool: no outcomes")
    totals = [outcome.totals for outcome in outcomes if outcome.totals is not None]
    return Outcome(
        new_tokens=sum(outcome.new_tokens for outcome in outcomes),
        totals=Totals.pooled(totals) if len(totals) == len(outcomes) else None,
        text="".join(outcome.text for outcome in outcomes),
        token_ids=tuple(token for outcome in outcomes for token in outcome.token_ids),
        complete=all(outcome.complete for outcome in outcomes),
        events=tuple(event for outcome in outcomes for event in outcome.events),
        reused_s=sum(outcome.reused_s for outcome in outcomes),
    )


def _outcome(events: list[Event], complete: bool) -> Outcome:
    if not events:  # pragma: no cover - every decoder emits at least one event
        raise RuntimeError("the decoder produced no events")
    tokens = [
        token
        for event in events
        for token in (event.emitted if isinstance(event, Cycle) else (event.token,))
    ]
    totals = events[-1].totals
    text = "".join(token.text for token in tokens)
    ids = tuple(token.token_id for token in tokens)
    return Outcome(totals.new_tokens, totals, text, ids, complete, tuple(events))
