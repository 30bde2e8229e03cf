"""Where the models work: in this process, or on ZeroGPU in the worker ``spaces.GPU`` forks.

ZeroGPU runs a decorated call in a forked worker process: its arguments are pickled in, each value
it yields is pickled back, and whatever it changes in place stays in the worker. So only the model
work crosses, as plain values: a run's validated ``Inputs`` (and how many cycles to skip and to
produce) go in; the engine's records (``Started``, ``Prefill``, ``Cycle``, the race's
``RaceProgress``, a lab's stages) come back, and the handler keeps its ``Session`` and draws the
page here. The models themselves never cross: the worker has them from the fork, or loads them.

A live generator and its KV caches cannot come back either, so on ZeroGPU a paused run goes on by
replaying it: the worker runs it again from its inputs, keeps quiet through the cycles the session
already has, and yields the next ones. The replay is the same run because every random draw comes
from a generator seeded by the settings (``Sampler.from_settings``; the seed is a setting,
0 unless chosen); the worker checks the tokens it replayed against the session's and refuses to
go on if they differ. Off ZeroGPU nothing is decorated, the session keeps its live generator and
nothing is replayed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from specviz.app import zerogpu
from specviz.app.request_checks import Inputs
from specviz.app.session import App, Session, Started
from specviz.core.events import Cycle, Prefill
from specviz.measure.race_records import RaceProgress

RunRecord = Started | Prefill | Cycle
# A lab's model work: (the lab's validated inputs, its own values, a Gradio progress bar or None)
# -> its records. It runs where the models are; its records must pickle (they cross on ZeroGPU).
LabWork = Callable[..., Iterator[Any]]


class Runs:
    """A session's runs, races and labs, worked in this process or in the ZeroGPU worker."""

    def __init__(self, app: App, remote: bool | None = None) -> None:
        self.app = app
        # None: ask the environment (ZeroGPU sets SPACES_ZERO_GPU and has `spaces`).
        self.remote = zerogpu.zero_gpu() if remote is None else remote
        self.labs: dict[str, LabWork] = {}  # registered at build time, so a forked worker has them
        # The worker_* methods as the handlers call them: in spaces' worker on ZeroGPU, else as is.
        self.gpu_run = zerogpu.on_gpu(self.worker_run, run_seconds, self.remote)
        self.gpu_race = zerogpu.on_gpu(self.worker_race, race_seconds, self.remote)
        self.gpu_lab = zerogpu.on_gpu(self.worker_lab, zerogpu.longest, self.remote)

    # --- what a handler calls, in the main process ----------------------------------------------

    def play(
        self, sess: Session, inputs: Inputs, progress: Any = None, take: int | None = None
    ) -> Iterator[RunRecord]:
        """The session's run for these inputs, continued (a paused one) or begun: ``Started``
        when one begins, a ``Prefill`` per chunk of a long prompt, then up to *take* cycles
        (None: to the end). The session keeps every cycle."""
        fresh = sess.key != inputs.key or not sess.paused
        if not self.remote:
            if fresh:
                started = self.begin(sess, inputs, progress)
                self.app.warn_started(started)
                yield started
            yield from taken(self.advancing(sess), take)
            return
        skip = 0 if fresh else len(sess.cycles)
        records = self.gpu_run(inputs, skip, take, emitted_ids(sess.cycles[:skip]))
        try:
            for record in self.from_worker(records, "app.doing.generating"):
                if isinstance(record, Started):
                    if not fresh:
                        continue  # the replay's own start: the session has begun already
                    sess.begin(inputs, record, replays=True)
                    self.app.warn_started(record)
                elif isinstance(record, Cycle):
                    sess.cycles.append(record)
                yield record
        except Exception:
            sess.replays = False  # a run that failed is over, as a live one is (App.advance)
            raise

    def race(self, sess: Session, inputs: Inputs) -> Iterator[RaceProgress]:
        """The race after the session's run (``App.race``); the session keeps its result."""
        updates = (
            self.from_worker(self.gpu_race(inputs), "app.doing.race")
            if self.remote
            else self.app.race(inputs)
        )
        for update in updates:
            sess.race = update.result
            yield update

    def lab(
        self, name: str, inputs: Inputs, values: Sequence[Any], progress: Any = None
    ) -> Iterator[Any]:
        """The records of the lab registered as *name*, run on these inputs and its own values;
        the progress bar moves off ZeroGPU (on ZeroGPU it is in this process, the work is not)."""
        if not self.remote:
            yield from self.labs[name](inputs, tuple(values), progress)
            return
        yield from self.from_worker(self.gpu_lab(name, inputs, tuple(values)), "app.doing.lab")

    def from_worker(self, records: Iterator[Any], doing: str) -> Iterator[Any]:
        """The worker's records, each awaited under the engine lock here (one generation at a
        time, as off ZeroGPU; a cancelled event leaves it free, for it is never held across a
        yield); closed when the handler stops early (Stop), which tells spaces to stop the
        worker. *doing* (an ``app.doing.*`` key) names the work in an unexpected failure."""
        try:
            yield from self.app.locked(records, doing)
        finally:
            close = getattr(records, "close", None)
            if close is not None:
                close()

    # --- what runs where the models are (decorated with spaces.GPU on ZeroGPU) -------------------

    def worker_run(
        self, inputs: Inputs, skip: int, take: int | None, known: tuple[int, ...]
    ) -> Iterator[RunRecord]:
        """A run from its start: ``Started``, then its records after the first *skip* cycles
        (whose tokens must be *known*: the replay of a paused run), at most *take* cycles."""
        sess = Session()
        yield self.begin(sess, inputs)
        records = self.advancing(sess)
        if skip:
            replayed: list[int] = []
            for record in records:  # the prompt's chunks and the cycles the session has
                if isinstance(record, Cycle):
                    replayed.extend(token.token_id for token in record.emitted)
                    if record.index == skip - 1:
                        break
            self.check_replay(tuple(replayed), known)
        yield from taken(records, take)

    def begin(self, sess: Session, inputs: Inputs, progress: Any = None) -> Started:
        """A new run for these inputs, its pair loaded (``App.start``), held by the session."""
        started, records = self.app.start(inputs, self.app.load(inputs.preset, progress))
        sess.begin(inputs, started, records)
        return started

    def advancing(self, sess: Session) -> Iterator[Prefill | Cycle]:
        """The session's run, one record at a time (``App.advance``), until it is over."""
        while (record := self.app.advance(sess)) is not None:
            yield record

    def check_replay(self, replayed: tuple[int, ...], known: tuple[int, ...]) -> None:
        """Refuse to go on from a replay whose tokens differ from the session's."""
        if replayed != known:
            raise self.app.error("error.app.replay_differs")

    def worker_race(self, inputs: Inputs) -> Iterator[RaceProgress]:
        """The race on these inputs (``App.race``), its progress as it grows."""
        yield from self.app.race(inputs)

    def worker_lab(self, name: str, inputs: Inputs, values: tuple[Any, ...]) -> Iterator[Any]:
        """The lab registered as *name*; no progress bar reaches here."""
        yield from self.labs[name](inputs, values, None)


def taken(records: Iterator[Prefill | Cycle], take: int | None) -> Iterator[RunRecord]:
    """The records up to and including the *take*-th cycle (None: all of them)."""
    produced = 0
    for record in records:
        yield record
        produced += isinstance(record, Cycle)
        if take is not None and produced >= take:
            return


def emitted_ids(cycles: Sequence[Cycle]) -> tuple[int, ...]:
    """Every token the cycles emitted, in order: what a replay must emit again."""
    return tuple(token.token_id for cycle in cycles for token in cycle.emitted)


def run_seconds(inputs: Inputs, *args: Any, **kwargs: Any) -> int:
    """A run's ZeroGPU duration, from its new tokens (a replay emits no more than the run)."""
    del args, kwargs
    return zerogpu.gpu_seconds(inputs.settings.max_new_tokens)


def race_seconds(inputs: Inputs) -> int:
    """A race's ZeroGPU duration: each lane, plain included, once per repeat."""
    runs = (len(inputs.race_drafters) + 1) * inputs.race_repeats
    return zerogpu.gpu_seconds(inputs.settings.max_new_tokens * runs)
