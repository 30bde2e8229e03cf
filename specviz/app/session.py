"""Per-browser run state and the engine's access, kept apart from the Gradio layout.

A ``Session`` (held in ``gr.State``) owns the run in progress, so Step can advance it one cycle at a
time and Run can play the rest. ``App`` is the engine's access: it loads pairs through the shared
model cache, starts runs and races and advances them under one lock, turning failures into
plain-worded ``gr.Error``s. Checking a request is not its work: its ``checks``
(``specviz.app.request_checks``) turn the controls' values into ``Inputs`` first.

The path of one setting, γ, from its slider to the verifier, each hop once and in one direction:

1. ``setting_controls`` draws the slider; ``RunControls.run_inputs`` names it ``gamma`` among the
   Run and Step events' inputs (``live_tab``; ``/generate`` takes it as a parameter: ``api``).
2. The event's validator checks the request before the queue (``RequestChecks.read_ahead``: the
   app's cap, then the settings schema over the preset's defaults) into ``Inputs.settings``; the
   handler takes those Inputs (``RequestChecks.read``) without checking them again.
3. ``Runs.play`` (``gpu_work``) hands the Inputs to ``App.start`` (on ZeroGPU in the worker), and
   the session keeps what it began with (``Session.begin``).
4. ``App.start`` gives ``Inputs.settings`` to ``speculative_stream`` (``core.engine``), which
   starts the drafter with them; the drafter's ``DraftPolicy`` (``drafters.policy``) sets each
   cycle's γ (fixed, adaptive or from the step costs), the drafter proposes at most that many
   tokens and the verifier (``core.sampling``) tests them. Each ``Cycle`` record carries the γ it
   drafted with back to the views, as data; nothing sends γ back up the path.
"""

from __future__ import annotations

import os
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

import gradio as gr

from specviz.app.limits import LOCAL, Limits
from specviz.app.llama_lanes import llama_race_servers, split_llama
from specviz.app.request_checks import Inputs, RequestChecks
from specviz.core.detok import IncrementalDetokenizer, TokenizerLike, control_ids
from specviz.core.engine import speculative_stream
from specviz.core.events import Cycle, Prefill, Step
from specviz.drafters.base import DrafterSpec
from specviz.drafters.registry import (
    drafter_entry,
    make_drafter,
    prepare_drafter,
    trained_agreement,
)
from specviz.export.trace import RunSetup, run_setup
from specviz.measure.race import iter_race
from specviz.measure.race_records import LaneGain, RaceProgress, RaceResult
from specviz.measure.spread import Spread
from specviz.models.allocator import return_freed_memory
from specviz.models.heads.report import HeadsAgreement
from specviz.models.loader import ModelCache, ModelLoadError, ModelPair
from specviz.models.presets import Preset
from specviz.models.runner import ForwardChoice
from specviz.text import DEFAULT_LANGUAGE, Phrase, UserError, t
from specviz.text.progress import Progress

if TYPE_CHECKING:
    import torch

T = TypeVar("T")
_DONE = object()  # the end of an iterator, distinct from any item it yields

# One prompt token as the live tab shows it: (its text, a control token's name or "").
PromptToken = tuple[str, str]


@dataclass(frozen=True)
class Started:
    """How a run began, read from its pair where the pair is (on ZeroGPU, the worker): plain
    values, so it crosses the process boundary and the session that shows the run keeps it."""

    setup: RunSetup  # pair, drafter, settings and prompt, for the run's exports
    forwards: dict[str, ForwardChoice]  # which forward computes each model (Session.forwards)
    costs: Phrase | None  # the pair's step costs and the draft format they chose, in words
    no_chat_template: bool  # the chat template was asked for, but the tokenizer has none
    # The prompt as the target reads it (chat template applied), one token each, for a drafter
    # that copies from it (its registry entry says copies_from_text); () for any other.
    prompt: tuple[PromptToken, ...] = ()
    # How the trained heads the drafter guesses with agreed with the target on held-out text
    # (Medusa's report); None for a drafter without heads, or heads not trained here.
    heads: HeadsAgreement | None = None


@dataclass
class Session:
    """One browser tab's run: its identity, the records so far and the live generators."""

    key: tuple[Any, ...] | None = None
    cycles: list[Cycle] = field(default_factory=list)
    # The live run: a Prefill after each chunk of a long prompt, then its cycles.
    cycles_iter: Iterator[Prefill | Cycle] | None = None
    drafter: str = ""  # the drafter spec the run drafts with
    race: RaceResult | None = None  # the race measured after the run, when Race was ticked
    # Which forward computes each model ("draft", "target"): the lean step or, with the reason,
    # transformers' forward (ModelRunner's first-use check), for the status line.
    forwards: dict[str, ForwardChoice] = field(default_factory=dict)
    # The pair's step costs on this machine and the draft format they chose, in words (None:
    # nothing measured), for the same line.
    costs: Phrase | None = None
    # What the run was started from (pair, drafter, settings, prompt), for its exports.
    setup: RunSetup | None = None
    engine_s: float = 0.0  # seconds the run has held the engine (the hosted limit's measure)
    # The prompt's tokens, where copies come from, for a copying drafter (Started.prompt).
    prompt: tuple[PromptToken, ...] = ()
    # The held-out agreement of the run's heads, drawn beside the run's own (Started.heads).
    heads: HeadsAgreement | None = None
    # ZeroGPU: no live generator can come back from the worker, so the run goes on by replaying
    # it there from its inputs (specviz.app.gpu_work); True while that is possible.
    replays: bool = False

    @property
    def paused(self) -> bool:
        """The run stopped after a cycle and can go on (Step, or Run to play the rest)."""
        resumable = self.cycles_iter is not None or self.replays
        return resumable and bool(self.cycles) and not self.cycles[-1].finished

    def begin(
        self,
        inputs: Inputs,
        started: Started,
        records: Iterator[Prefill | Cycle] | None = None,
        *,
        replays: bool = False,
    ) -> None:
        """Forget the last run and hold what this one began with: its live *records* here, or
        (ZeroGPU) none, the run going on by replay; its cycles come later."""
        self.key, self.setup, self.drafter = inputs.key, started.setup, str(inputs.drafter)
        self.forwards, self.costs = dict(started.forwards), started.costs
        self.prompt, self.heads = started.prompt, started.heads
        self.cycles, self.race, self.engine_s = [], None, 0.0
        self.cycles_iter, self.replays = records, replays

    @property
    def race_done(self) -> bool:
        """A race has been measured to its end: Replay has something to play."""
        return self.race is not None and self.race.complete

    @property
    def steps(self) -> list[Step]:
        """Plain decoding's steps in the race's shown plain run (none before a race)."""
        run = self.race.plain.shown if self.race is not None else None
        return [e for e in run.outcome.events if isinstance(e, Step)] if run is not None else []

    @property
    def gain(self) -> LaneGain | None:
        """What the run's own drafter gained over plain decoding in the race, if it raced."""
        return self.race.gain(self.drafter) if self.race is not None else None


class App:
    """The engine's access for the handlers: the model cache, the engine lock and the visitors'
    run slots, with the request checks for the app's presets, language and limits."""

    def __init__(
        self,
        presets: Mapping[str, Preset],
        model_cache: ModelCache,
        lang: str = DEFAULT_LANGUAGE,
        limits: Limits = LOCAL,
        lock: threading.Lock | None = None,
    ) -> None:
        self.checks = RequestChecks(presets, lang, limits)  # each request's, before the engine
        self.cache = model_cache
        self._engine_lock = lock or threading.Lock()
        self._lock_pid = os.getpid()
        self._running: set[str] = set()  # the visitor sessions with a run going
        self._running_lock = threading.Lock()

    @property
    def presets(self) -> dict[str, Preset]:
        """The presets a request may name, by id."""
        return self.checks.presets

    @property
    def lang(self) -> str:
        """The catalogue's language for every message this app shows."""
        return self.checks.lang

    @property
    def limits(self) -> Limits:
        """What one request may ask for (hosted mode tightens them)."""
        return self.checks.limits

    @property
    def engine_lock(self) -> threading.Lock:
        """One generation at a time on these models (shared by every language's page).

        A forked ZeroGPU worker takes a lock of its own: the one it inherits may have been held
        at the fork (the main process holds it around each call into the worker), and nothing
        in the worker would ever release it.
        """
        if os.getpid() != self._lock_pid:
            self._engine_lock, self._lock_pid = threading.Lock(), os.getpid()
        return self._engine_lock

    def error(self, key: str, **values: object) -> gr.Error:
        """A gr.Error worded by the catalogue in the app's language."""
        return self.checks.error(key, **values)

    def failure(self, doing_key: str, error: BaseException) -> gr.Error:
        """A gr.Error for an unexpected failure while doing ``doing_key``, in plain words: a
        UserError in its own sentence, running out of memory with what to try, else the cause;
        in hosted mode no cause is shown (an arbitrary exception's text is the server's
        internals): the visitor is told something went wrong and the cause goes to stderr."""
        if isinstance(error, UserError):
            return gr.Error(error.message(self.lang))
        doing = t(doing_key, self.lang)
        text = str(error)
        # CUDA says "out of memory"; torch's CPU allocator "can't allocate memory".
        if isinstance(error, MemoryError) or any(
            words in text.lower() for words in ("out of memory", "allocate memory")
        ):
            return self.error("error.out_of_memory", doing=doing)
        if self.limits.hosted:
            print(f"specviz: failed while {doing_key}:", file=sys.stderr)
            traceback.print_exception(error, file=sys.stderr)
            return self.error("error.failed_hosted", doing=doing)
        return self.error("error.failed", doing=doing, cause=text or type(error).__name__)

    # --- loading and running ------------------------------------------------------------------

    def progress_bar(self, progress: Callable[..., Any] | None) -> Progress:
        """A progress callback that moves a Gradio progress bar, its words in the app's
        language; nothing moves without a bar."""

        def report(fraction: float, message: Phrase) -> None:
            if progress is not None:
                progress(max(0.0, min(1.0, fraction)), desc=message.text(self.lang))

        return report

    def load(self, preset: Preset, progress: Callable[..., Any] | None = None) -> ModelPair:
        """The preset's pair from the cache (loaded on first use, with a progress bar)."""
        try:
            with self.engine_lock:
                return self.cache.load_pair(preset, progress=self.progress_bar(progress))
        except ModelLoadError as error:
            raise self.error("error.app.load", cause=error.message(self.lang)) from None
        except (MemoryError, RuntimeError) as error:
            raise self.failure("app.doing.loading", error) from None

    def prompt_ids(self, inputs: Inputs, pair: ModelPair) -> torch.Tensor:
        """The run's prompt as ids (1, T) for this pair; a prompt it refuses or one longer than
        the token cap becomes a gr.Error."""
        try:
            prompt_ids = pair.encode_prompt(inputs.prompt, chat=inputs.chat)
            self.limits.check_prompt_tokens(prompt_ids.shape[1])
            return prompt_ids
        except UserError as error:
            raise gr.Error(error.message(self.lang)) from None

    def load_with_prompt(
        self, inputs: Inputs, progress: Callable[..., Any] | None = None
    ) -> tuple[ModelPair, torch.Tensor]:
        """The inputs' pair (loaded on first use, with a progress bar) and their prompt's ids;
        what the drafter needs first (Medusa's heads, trained on first use) made ready too,
        except in hosted mode."""
        pair = self.load(inputs.preset, progress)
        prompt_ids = self.prompt_ids(inputs, pair)
        self.prepare(inputs.drafter, pair, self.progress_bar(progress))
        return pair, prompt_ids

    def prepare(self, drafter: str | DrafterSpec, pair: ModelPair, progress: Progress) -> None:
        """Make ready what *drafter* needs first (Medusa's heads, trained on first use), under
        the engine lock, except in hosted mode."""
        # A hosted app's visitor never starts minutes of training on the shared engine: there a
        # drafter that is not ready says so when it is built (the host prepares it beforehand).
        if not self.limits.hosted:
            with self.engine_lock:
                prepare_drafter(drafter, pair, progress)

    def start(self, inputs: Inputs, pair: ModelPair) -> tuple[Started, Iterator[Prefill | Cycle]]:
        """A new speculative run for these inputs on their pair: how it began (the caller warns
        of a missing chat template: ``warn_started``) and its records, a ``Prefill`` per chunk
        of a long prompt, then its cycles (``Session.begin`` holds them; ``advance`` steps)."""
        prompt_ids = self.prompt_ids(inputs, pair)
        started = Started(
            run_setup(
                inputs.preset, pair, inputs.settings, str(inputs.drafter), inputs.prompt, inputs.chat,
                int(prompt_ids.shape[1]),
            ),
            pair.forward_choices(),
            None if pair.cost_report is None else pair.cost_report.phrase(),
            inputs.chat and not getattr(pair.tokenizer, "chat_template", None),
            copy_source(inputs.drafter, pair.tokenizer, prompt_ids[0].tolist()),
            trained_agreement(inputs.drafter, pair),
        )  # fmt: skip
        records = speculative_stream(
            pair,
            prompt_ids,
            inputs.settings,
            make_drafter(inputs.drafter, pair),
            prefill_chunk=self.limits.prefill_chunk,
        )
        return started, records

    def warn_started(self, started: Started) -> None:
        """Tell the visitor what they should know of a run that began (shown as a toast)."""
        if started.no_chat_template:
            gr.Warning(t("app.warning.no_chat_template", self.lang))

    def advance(self, session: Session) -> Cycle | Prefill | None:
        """One more step of the session's run under the engine lock: a Prefill after each chunk
        of a long prompt (a handler yields between them, so Stop ends the run there), then one
        Cycle per call; None when it is over."""
        records = session.cycles_iter
        if records is None:
            return None
        try:
            with self.engine_lock:
                began = time.perf_counter()
                record = next(records, None)
                session.engine_s += time.perf_counter() - began
        except Exception as error:
            session.cycles_iter = None
            raise self.failure("app.doing.generating", error) from None
        if session.cycles_iter is not records:
            return None  # a handler cancelled by Stop finished its step after a new run began
        if record is None:
            session.cycles_iter = None
            return None
        limit = self.limits.run_seconds
        if limit is not None and session.engine_s > limit and not _finished(record):
            session.cycles_iter = None  # the run ends here: its records so far are kept
            raise self.error("error.app.run_time", seconds=f"{limit:g}")
        if isinstance(record, Cycle):
            session.cycles.append(record)
        return record

    @contextmanager
    def one_run(self, visitor: str | None) -> Iterator[None]:
        """Hold the visitor's one run slot while a run goes on; a second run from the same
        visitor (their browser session, or their API client) is refused in plain words. None:
        no visitor to tell apart (a direct call)."""
        if visitor is not None:
            with self._running_lock:
                if visitor in self._running:
                    raise self.error("error.app.one_run")
                self._running.add(visitor)
        try:
            yield
        finally:
            if visitor is not None:
                with self._running_lock:
                    self._running.discard(visitor)
            # The run's caches are freed; hand them back, or a server's memory creeps up with
            # every visitor (measured: docs/hosting.md, "Memory over many runs").
            return_freed_memory()

    def locked(self, items: Iterator[T], doing: str) -> Iterator[T]:
        """A model-running iterator advanced one item at a time under the engine lock (the labs
        stream through this); failures become plain-worded errors. *doing* is a catalogue key
        (``app.doing.*``) naming the work."""
        while True:
            item = self.run_locked(lambda: next(items, _DONE), doing)
            if item is _DONE:
                return
            yield item  # type: ignore[misc]

    def run_locked(self, work: Callable[[], T], doing: str) -> T:
        """work() under the engine lock; the labs' input checks (UserError, ValueError) are shown
        in their own words, anything else in plain words naming *doing* (an ``app.doing.*`` key)."""
        try:
            with self.engine_lock:
                return work()
        except gr.Error:
            raise
        except UserError as error:
            raise gr.Error(error.message(self.lang)) from None
        except ValueError as error:  # an input check not yet in the catalogue: shown as is
            raise gr.Error(str(error)) from None
        except Exception as error:
            raise self.failure(doing, error) from None

    def race(self, inputs: Inputs) -> Iterator[RaceProgress]:
        """The race on these inputs: plain decoding and each race drafter on the same prompt,
        settings and seed, repeated and interleaved, one run at a time under the engine lock;
        its progress as it grows (``Runs.race`` keeps it in the session)."""
        pair, prompt_ids = self.load_with_prompt(inputs)
        drafters, with_llama = split_llama(inputs.race_drafters)
        llama = []
        if with_llama:
            hosted = self.limits.hosted
            llama = self.run_locked(
                lambda: llama_race_servers(inputs.preset, inputs.settings, drafters, hosted),
                "app.doing.race",
            )
        progress = iter_race(
            pair, prompt_ids, inputs.settings, drafters, inputs.race_repeats, llama=llama
        )
        yield from self.locked(progress, "app.doing.race")


def copy_source(
    drafter: str | DrafterSpec, tokenizer: TokenizerLike, prompt_ids: list[int]
) -> tuple[PromptToken, ...]:
    """The prompt's tokens as text for a drafter that copies from it, () for any other."""
    if not drafter_entry(drafter).copies_from_text:
        return ()
    return prompt_tokens(tokenizer, prompt_ids)


def prompt_tokens(tokenizer: TokenizerLike, prompt_ids: list[int]) -> tuple[PromptToken, ...]:
    """Each prompt token's (text, control token name), decoded as the engine decodes generated
    tokens: in context, so a character written by several byte tokens comes out whole on the
    token that completes it (the others add ""). A control token adds no text."""
    detok = IncrementalDetokenizer(tokenizer, [])
    texts = detok.commit(prompt_ids)
    controls = control_ids(tokenizer)
    return tuple(
        ("", tokenizer.decode([id_], skip_special_tokens=False)) if id_ in controls else (text, "")
        for text, id_ in zip(texts, prompt_ids, strict=True)
    )


def _finished(record: Cycle | Prefill) -> bool:
    return isinstance(record, Cycle) and record.finished


def final_text(session: Session) -> str:
    return "".join(token.text for cycle in session.cycles for token in cycle.emitted)


def stats(session: Session) -> dict[str, Any]:
    """The run's numbers as plain JSON: what the API returns and the stats panel shows."""
    out: dict[str, Any] = {"cycles": len(session.cycles)}
    if session.cycles:
        last = session.cycles[-1]
        out.update(totals=last.to_dict()["totals"], stop_reason=last.stop_reason)
    if session.steps:
        out["plain_totals"] = session.steps[-1].to_dict()["totals"]  # the race's median plain run
    if session.race is not None:
        out["race"] = race_stats(session.race)
        gain = session.gain
        if gain is not None:
            out["speedup"] = gain.speedup.median
    return out


def race_stats(race: RaceResult) -> dict[str, Any]:
    """The race as plain JSON: each lane's median tokens/s with its range, and each drafter's
    speedup over plain decoding (median of the paired repeats, with its range)."""

    def spread(value: Spread | None) -> dict[str, float] | None:
        return (
            None
            if value is None
            else {"median": value.median, "low": value.low, "high": value.high}
        )

    lanes = []
    for lane in race.lanes:
        gain = race.gain(lane.name)
        lanes.append(
            {
                "lane": lane.name,
                "tokens_per_s": spread(lane.tokens_per_s),
                "runs": len(lane.runs),
                "speedup": spread(gain.speedup if gain else None),
                "seconds_saved": spread(gain.seconds_saved if gain else None),
            }
        )
    return {"repeats": race.repeats, "complete": race.complete, "noisy": race.noisy, "lanes": lanes}
