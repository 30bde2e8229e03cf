"""Per-browser run state and the handlers' model work, kept apart from the Gradio layout.

A ``Session`` (held in ``gr.State``) owns the run in progress, so Step can advance it one cycle at a
time and Run can play the rest. ``App`` validates a run's inputs (the settings through the settings
schema), loads pairs through the shared model cache and advances generators under one lock,
turning failures into plain-worded ``gr.Error``s.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

import gradio as gr

from specviz.app import zerogpu
from specviz.app.limits import LOCAL, Limits
from specviz.core.engine import GenerationSettings, autoregressive_generate, speculative_generate
from specviz.core.events import Cycle, Step
from specviz.core.settings import SettingError, describe_value, settings_from_mapping
from specviz.drafters.registry import check_drafter_spec, make_drafter
from specviz.models.loader import ModelCache, ModelLoadError, ModelPair
from specviz.models.presets import Preset
from specviz.models.runner import ForwardChoice
from specviz.text import DEFAULT_LANGUAGE, Phrase, UserError, t
from specviz.views import run_html as render

if TYPE_CHECKING:
    import torch

T = TypeVar("T")
_DONE = object()  # the end of an iterator, distinct from any item it yields


@dataclass
class Session:
    """One browser tab's run: its identity, the records so far and the live generators."""

    key: tuple[Any, ...] | None = None
    cycles: list[Cycle] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    cycles_iter: Iterator[Cycle] | None = None
    race_done: bool = False
    # Which forward computes each model ("draft", "target"): the lean step or, with the reason,
    # transformers' forward (ModelRunner's first-use check), for the status line.
    forwards: dict[str, ForwardChoice] = field(default_factory=dict)
    # The pair's step costs on this machine and the draft format they chose, in words (None:
    # nothing measured), for the same line.
    costs: Phrase | None = None

    @property
    def paused(self) -> bool:
        return self.cycles_iter is not None and bool(self.cycles) and not self.cycles[-1].finished


@dataclass
class Inputs:
    """The controls' values, validated: what a run is started from."""

    preset: Preset
    prompt: str
    chat: bool
    settings: GenerationSettings
    race: bool
    drafter: str  # the drafter spec the run drafts with (the preset's unless the visitor chose)

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
    ) -> None:
        self.presets = dict(presets)
        self.cache = model_cache
        self.lang = lang  # the catalogue's language for every message this app shows
        self.limits = limits  # what one request may ask for (hosted mode tightens them)
        self.engine_lock = threading.Lock()

    def error(self, key: str, **values: object) -> gr.Error:
        """A gr.Error worded by the catalogue in the app's language."""
        return gr.Error(t(key, self.lang, **values))

    def requested_tokens(self, preset_id: object, settings: Mapping[str, Any]) -> int:
        """The new tokens a request asks for, read before it is checked (its own value, else its
        preset's, else the cap): what a ZeroGPU call's duration is computed from."""
        value = settings.get("max_new_tokens")
        if isinstance(value, int | float) and not isinstance(value, bool) and value == value:
            return int(min(value, 10**9))
        preset = self.presets.get(preset_id) if isinstance(preset_id, str) else None
        if preset is not None:
            return preset.settings.max_new_tokens
        return self.limits.cap("max_new_tokens") or 0

    def gpu_seconds(self, *args: Any, **values: Any) -> int:
        """A run handler's ZeroGPU duration, from its values by name (preset and settings) or
        an API call's ``preset`` and ``settings`` mapping."""
        settings = values.get("settings")
        asked = self.requested_tokens(
            values.get("preset"), settings if isinstance(settings, Mapping) else values
        )
        return zerogpu.gpu_seconds(asked)

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
        UserError in its own sentence, running out of memory with what to try, else the cause."""
        if isinstance(error, UserError):
            return gr.Error(error.message(self.lang))
        doing = t(doing_key, self.lang)
        text = str(error)
        # CUDA says "out of memory"; torch's CPU allocator "can't allocate memory".
        if isinstance(error, MemoryError) or any(
            words in text.lower() for words in ("out of memory", "allocate memory")
        ):
            return self.error("error.out_of_memory", doing=doing)
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
    ) -> Inputs:
        """Validate a run's inputs; a bad value becomes a gr.Error in plain words.

        *settings* is either a GenerationSettings or the controls' values by setting name, read
        through the schema over the preset's defaults (settings without a control keep those).
        *drafter* is a drafter spec ("lookup", "hybrid:max_ngram=3"); None or blank: the preset's.
        Every check here is cheap: a bad request is refused before any pair is loaded.
        """
        if not isinstance(preset_id, str) or preset_id not in self.presets:
            raise self.error("error.app.unknown_preset", name=repr(preset_id))
        self.check_prompt(prompt)
        for name, switch in (("chat_template", chat), ("race", race)):
            if not isinstance(switch, bool):
                got = describe_value(switch).text(self.lang)
                raise self.error("error.app.switch", name=name, got=got)
        preset = self.presets[preset_id]
        try:  # the caps first: a value far past the cap is told the cap, not the schema's range
            self.limits.check_settings(
                vars(settings) if isinstance(settings, GenerationSettings) else settings
            )
            if not isinstance(settings, GenerationSettings):
                settings = settings_from_mapping(settings, preset.settings, exact=False)
        except SettingError as error:
            raise self.error("error.app.settings", problems=error.message(self.lang)) from None
        spec = str(drafter or "").strip() or preset.drafter  # 5 is checked as the spec "5"
        try:
            spec = str(check_drafter_spec(spec))
        except UserError as error:
            raise self.error("error.app.drafter", problem=error.message(self.lang)) from None
        return Inputs(preset, prompt, chat, settings, race, spec)

    def check_prompt(self, prompt: object) -> None:
        """Refuse a prompt that is no text, blank, longer than the app's character cap, or that
        holds control characters (tab and line breaks aside), in plain words."""
        if not isinstance(prompt, str) or not prompt.strip():
            raise self.error("error.app.prompt_empty")
        if len(prompt) > self.limits.prompt_chars:
            raise self.error(
                "error.app.prompt_chars", chars=len(prompt), cap=self.limits.prompt_chars
            )
        control = next((char for char in prompt if is_control(char)), None)
        if control is not None:
            raise self.error("error.app.prompt_control", code=f"U+{ord(control):04X}")

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

    def start(self, session: Session, inputs: Inputs, pair: ModelPair) -> None:
        """Begin a new speculative run for these inputs (the old one, if any, is dropped)."""
        prompt_ids = self.prompt_ids(inputs, pair)
        if inputs.chat and not getattr(pair.tokenizer, "chat_template", None):
            gr.Warning(t("app.warning.no_chat_template", self.lang))
        session.key = inputs.key
        session.forwards = pair.forward_choices()
        session.costs = None if pair.cost_report is None else pair.cost_report.phrase()
        session.cycles, session.steps, session.race_done = [], [], False
        session.cycles_iter = speculative_generate(
            pair, prompt_ids, inputs.settings, make_drafter(inputs.drafter, pair)
        )

    def advance(self, session: Session) -> Cycle | None:
        """One more cycle of the session's run, or None when it is over."""
        cycles = session.cycles_iter
        if cycles is None:
            return None
        try:
            with self.engine_lock:
                cycle = next(cycles, None)
        except Exception as error:
            session.cycles_iter = None
            raise self.failure("app.doing.generating", error) from None
        if session.cycles_iter is not cycles:
            return None  # a handler cancelled by Stop finished its cycle after a new run began
        if cycle is None:
            session.cycles_iter = None
            return None
        session.cycles.append(cycle)
        return cycle

    def prepare(self, session: Session | None, inputs: Inputs, progress: Any) -> Session:
        """The session, with a run for these inputs ready to advance (a paused one is continued)."""
        session = session or Session()
        if session.key != inputs.key or not session.paused:
            pair = self.load(inputs.preset, progress)
            self.start(session, inputs, pair)
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

    def plain_steps(self, session: Session, inputs: Inputs) -> Iterator[Step]:
        """The race's baseline: plain decoding of the same target with the same settings and seed."""
        pair, prompt_ids = self.load_with_prompt(inputs)
        steps = autoregressive_generate(pair, prompt_ids, inputs.settings)
        session.steps = []
        while True:
            try:
                with self.engine_lock:
                    step = next(steps, None)
            except Exception as error:
                raise self.failure("app.doing.plain", error) from None
            if step is None:
                session.race_done = True
                return
            session.steps.append(step)
            yield step


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
        out["plain_totals"] = session.steps[-1].to_dict()["totals"]
        ratio = render.speedup(session.cycles, session.steps)
        out["speedup"] = ratio
    return out
