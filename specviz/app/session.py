"""Per-browser run state and the handlers' model work, kept apart from the Gradio layout.

A ``Session`` (held in ``gr.State``) owns the run in progress, so Step can advance it one cycle at a
time and Run can play the rest. ``App`` validates a run's inputs (the settings through the settings
schema), loads pairs through the shared model cache and advances generators under one lock,
turning failures into plain-worded ``gr.Error``s.
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
from specviz.app.refusals import Refusal
from specviz.core.detok import IncrementalDetokenizer, TokenizerLike, control_ids
from specviz.core.engine import GenerationSettings, speculative_stream
from specviz.core.events import Cycle, Prefill, Step
from specviz.core.settings import SettingError, describe_value, settings_from_mapping
from specviz.drafters.base import DrafterSpec
from specviz.drafters.registry import check_drafter_spec, drafter_entry, make_drafter
from specviz.export.trace import RunSetup, run_setup
from specviz.measure.race import iter_race
from specviz.measure.race_records import LaneGain, RaceProgress, RaceResult
from specviz.measure.spread import DEFAULT_REPEATS, Spread
from specviz.models.allocator import return_freed_memory
from specviz.models.loader import ModelCache, ModelLoadError, ModelPair
from specviz.models.presets import Preset
from specviz.models.runner import ForwardChoice
from specviz.text import DEFAULT_LANGUAGE, Phrase, UserError, t

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
    # ZeroGPU: no live generator can come back from the worker, so the run goes on by replaying
    # it there from its inputs (specviz.app.gpu_work); True while that is possible.
    replays: bool = False

    @property
    def paused(self) -> bool:
        """The run stopped after a cycle and can go on (Step, or Run to play the rest)."""
        resumable = self.cycles_iter is not None or self.replays
        return resumable and bool(self.cycles) and not self.cycles[-1].finished

    def begin(self, inputs: Inputs, started: Started) -> None:
        """Forget the last run and hold what this one began with (its cycles come later)."""
        self.key, self.setup, self.drafter = inputs.key, started.setup, str(inputs.drafter)
        self.forwards, self.costs = dict(started.forwards), started.costs
        self.prompt = started.prompt
        self.cycles, self.race, self.engine_s = [], None, 0.0
        self.cycles_iter, self.replays = None, False

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


@dataclass
class Inputs:
    """The controls' values, validated: what a run is started from."""

    preset: Preset
    prompt: str
    chat: bool
    settings: GenerationSettings
    race: bool
    drafter: DrafterSpec  # what the run drafts with (the preset's unless the visitor chose)
    race_drafters: tuple[str, ...] = ()  # the race's drafter lanes, checked specs
    race_repeats: int = DEFAULT_REPEATS  # the race's repeats per lane

    @property
    def key(self) -> tuple[Any, ...]:
        return (self.preset.id, self.prompt, self.chat, self.settings, self.drafter)


class App:
    """The handlers, closed over the presets, the model cache and the engine lock."""

    def __init__(
        self,
        presets: Mapping[str, Preset],
        model_cache: ModelCache,
        lang: str = DEFAULT_LANGUAGE,
        limits: Limits = LOCAL,
        lock: threading.Lock | None = None,
    ) -> None:
        self.presets = dict(presets)
        self.cache = model_cache
        self.lang = lang  # the catalogue's language for every message this app shows
        self.limits = limits  # what one request may ask for (hosted mode tightens them)
        self._engine_lock = lock or threading.Lock()
        self._lock_pid = os.getpid()
        self._running: set[str] = set()  # the visitor sessions with a run going
        self._running_lock = threading.Lock()

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
        return gr.Error(t(key, self.lang, **values))

    def check_lab_size(self, value: object, cap: int, label_key: str) -> None:
        """Refuse a lab size (its control worded by *label_key*) that is no number or is above
        its cap, in plain words: the lab endpoints are private but reachable with a hand-built
        request."""
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if not number or not value <= cap:  # type: ignore[operator]  # a number by now
            raise self.error(
                "error.app.lab_cap", control=t(label_key, self.lang), cap=cap, got=repr(value)
            )

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

    # --- inputs, loading, running ---------------------------------------------------------------

    def inputs(
        self,
        preset_id: str,
        prompt: str,
        settings: GenerationSettings | Mapping[str, Any],
        *,
        chat: bool = True,
        race: bool = False,
        drafter: str | None = None,
        race_drafters: object = None,
        race_repeats: object = None,
    ) -> Inputs:
        """Validate a run's inputs; a bad value becomes a gr.Error in plain words.

        *settings* is either a GenerationSettings or the controls' values by setting name, read
        through the schema over the preset's defaults (settings without a control keep those).
        *drafter* is a drafter spec ("lookup", "hybrid:max_ngram=3"); None or blank: the preset's.
        *race_drafters* are the race's drafter specs (None or none: the run's drafter) and
        *race_repeats* its repeats per lane (None: DEFAULT_REPEATS), both within the limits.
        Every check here is cheap: a bad request is refused before any pair is loaded.
        """
        if not isinstance(preset_id, str) or preset_id not in self.presets:
            refused = t("error.app.unknown_preset", self.lang, name=repr(preset_id))
            raise Refusal.about("preset", refused)
        self.check_prompt(prompt)
        for name, switch in (("chat_template", chat), ("race", race)):
            if not isinstance(switch, bool):
                got = describe_value(switch).text(self.lang)
                raise Refusal.about(name, t("error.app.switch", self.lang, name=name, got=got))
        preset = self.presets[preset_id]
        try:  # the caps first: a value far past the cap is told the cap, not the schema's range
            self.limits.check_settings(
                vars(settings) if isinstance(settings, GenerationSettings) else settings
            )
            if not isinstance(settings, GenerationSettings):
                settings = settings_from_mapping(settings, preset.settings, exact=False)
        except SettingError as error:  # each setting's problem on its own input
            fields = {
                problem.name: t("error.app.settings", self.lang, problems=problem.phrase)
                for problem in error.problems
            }
            whole = t("error.app.settings", self.lang, problems=error.message(self.lang))
            raise Refusal(whole, fields) from None
        chosen = str(drafter or "").strip() or preset.drafter  # 5 is checked as the spec "5"
        try:
            spec = check_drafter_spec(chosen)
        except UserError as error:
            problem = error.message(self.lang)
            refused = t("error.app.drafter", self.lang, problem=problem)
            raise Refusal.about("drafter", refused) from None
        try:
            lanes = self.race_lanes(race_drafters, str(spec))
        except gr.Error as error:
            raise Refusal.about("race_drafters", str(error.message)) from None
        try:
            repeats = self.race_repeat_count(race_repeats)
        except gr.Error as error:
            raise Refusal.about("race_repeats", str(error.message)) from None
        return Inputs(preset, prompt, chat, settings, race, spec, lanes, repeats)

    def race_lanes(self, drafters: object, run_drafter: str) -> tuple[str, ...]:
        """The race's drafter specs, checked: none given races the run's drafter; at most the
        cap, each kind and options valid, no spec twice."""
        if drafters is None or drafters == "" or drafters == []:
            return (run_drafter,)
        if isinstance(drafters, str):
            drafters = [drafters]
        if not isinstance(drafters, list | tuple) or not all(isinstance(d, str) for d in drafters):
            got = describe_value(drafters).text(self.lang)
            raise self.error("error.app.race_lanes", cap=self.limits.race_drafters, got=got)
        if not 1 <= len(drafters) <= self.limits.race_drafters:
            cap = self.limits.race_drafters
            raise self.error("error.app.race_lanes", cap=cap, got=len(drafters))
        lanes: list[str] = []
        for chosen in drafters:
            try:
                lane = str(check_drafter_spec(chosen.strip()))
            except UserError as error:
                raise self.error("error.app.drafter", problem=error.message(self.lang)) from None
            if lane in lanes:
                raise self.error("error.app.race_lane_twice", drafter=lane)
            lanes.append(lane)
        return tuple(lanes)

    def race_repeat_count(self, repeats: object) -> int:
        """The race's repeats per lane, checked: a whole number from 1 to the cap (None: the
        default, within the cap)."""
        cap = self.limits.race_repeats
        if repeats is None:
            return min(DEFAULT_REPEATS, cap)
        if (
            isinstance(repeats, bool)
            or not isinstance(repeats, int | float)
            or not float(repeats).is_integer()
            or not 1 <= repeats <= cap
        ):
            raise self.error("error.app.race_repeats", cap=cap, got=repr(repeats))
        return int(repeats)

    def check_prompt(self, prompt: object) -> None:
        """Refuse a prompt that is no text, blank, longer than the app's character cap, or that
        holds a character the tokenizer cannot take or a prompt has no use for, in plain words:
        a control character (tab and line breaks aside) or a lone surrogate (half of a UTF-16
        pair, which a JSON request can carry but no text encoding can; the tokenizer fails on
        it). Noncharacters such as U+FFFF are text like any other and pass."""
        if not isinstance(prompt, str):
            got = Phrase("value.null") if prompt is None else describe_value(prompt)
            raise Refusal.about("prompt", t("error.app.prompt_type", self.lang, got=got))
        if not prompt.strip():
            raise Refusal.about("prompt", t("error.app.prompt_empty", self.lang))
        cap = self.limits.prompt_chars
        if len(prompt) > cap:
            refused = t("error.app.prompt_chars", self.lang, chars=len(prompt), cap=cap)
            raise Refusal.about("prompt", refused)
        for char in prompt:
            if is_control(char):
                key = "error.app.prompt_control"
            elif "\ud800" <= char <= "\udfff":  # a lone one: a whole pair is one char in Python
                key = "error.app.prompt_surrogate"
            else:
                continue
            refused = t(key, self.lang, code=f"U+{ord(char):04X}")
            raise Refusal.about("prompt", refused)

    def progress_bar(self, progress: Callable[..., Any] | None) -> Callable[[float, Phrase], None]:
        """A (fraction, words) progress callback that moves a Gradio progress bar, its words in
        the app's language; nothing moves without a bar."""

        def report(fraction: float, message: Phrase) -> None:
            if progress is not None:
                progress(max(0.0, min(1.0, fraction)), desc=message.text(self.lang))

        return report

    def load(self, preset: Preset, progress: Callable[..., Any] | None = None) -> ModelPair:
        """The preset's pair from the cache (loaded on first use, with a progress bar)."""
        bar = self.progress_bar(progress)
        try:
            with self.engine_lock:
                return self.cache.load_pair(
                    preset, progress=lambda message, fraction: bar(fraction, message)
                )
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
        """The inputs' pair (loaded on first use, with a progress bar) and their prompt's ids."""
        pair = self.load(inputs.preset, progress)
        return pair, self.prompt_ids(inputs, pair)

    def start(self, session: Session, inputs: Inputs, pair: ModelPair) -> Started:
        """Begin a new speculative run for these inputs (the old one, if any, is dropped); returns
        how it began (the caller warns of a missing chat template: ``warn_started``)."""
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
        )  # fmt: skip
        session.begin(inputs, started)
        session.cycles_iter = speculative_stream(
            pair,
            prompt_ids,
            inputs.settings,
            make_drafter(inputs.drafter, pair),
            prefill_chunk=self.limits.prefill_chunk,
        )
        return started

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

    def prepare(self, session: Session | None, inputs: Inputs, progress: Any) -> Session:
        """The session, with a run for these inputs ready to advance (a paused one is continued)."""
        session = session or Session()
        if session.key != inputs.key or not session.paused:
            pair = self.load(inputs.preset, progress)
            self.warn_started(self.start(session, inputs, pair))
        return session

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

    def race(self, session: Session, inputs: Inputs) -> Iterator[RaceProgress]:
        """The race after the session's run: plain decoding and each race drafter on the same
        prompt, settings and seed, repeated and interleaved, one run at a time under the engine
        lock; the session keeps the result as it grows."""
        pair, prompt_ids = self.load_with_prompt(inputs)
        progress = iter_race(
            pair, prompt_ids, inputs.settings, inputs.race_drafters, inputs.race_repeats
        )
        for update in self.locked(progress, "app.doing.race"):
            session.race = update.result
            yield update


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


def is_control(char: str) -> bool:
    """True for a control character a prompt has no use for: C0 and C1 controls and DEL, but
    not tab, line feed or carriage return."""
    code = ord(char)
    return char not in "\t\n\r" and (code < 0x20 or 0x7F <= code < 0xA0)


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
