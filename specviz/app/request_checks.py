"""Request checking: a run's values, as the controls or the API send them, become checked ``Inputs``.

Every check here is cheap and needs no model: a bad request is refused in plain words, each
refusal on the input it is about (``Refusal``), before any pair is loaded. A run is checked once
per request: the event's validator checks it before the queue (``read_ahead``) and keeps the
result, which its handler takes (``read``) instead of checking the same values again.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Any

import gradio as gr

from specviz.app.limits import LOCAL, Limits
from specviz.app.refusals import Refusal
from specviz.core.engine import GenerationSettings
from specviz.core.settings import SettingError, describe_value, settings_from_mapping
from specviz.drafters.base import DrafterSpec
from specviz.drafters.registry import check_drafter_spec
from specviz.measure.race_records import LLAMA_CHOICE
from specviz.measure.spread import DEFAULT_REPEATS
from specviz.models.presets import Preset
from specviz.text import DEFAULT_LANGUAGE, Phrase, UserError, t

# A run's values by name that are not settings (``RequestChecks.read``): every other name is one.
RUN_VALUES = (
    "preset",
    "prompt",
    "chat_template",
    "race",
    "drafter",
    "race_drafters",
    "race_repeats",
)
# Checked requests kept for their handlers at most; one whose handler never ran is dropped first.
KEPT_REQUESTS = 256


@dataclass(frozen=True)
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


class RequestChecks:
    """The checks every request passes, for one app's presets, language and limits."""

    def __init__(
        self,
        presets: Mapping[str, Preset],
        lang: str = DEFAULT_LANGUAGE,
        limits: Limits = LOCAL,
    ) -> None:
        self.presets = dict(presets)
        self.lang = lang  # the catalogue's language for every refusal
        self.limits = limits  # what one request may ask for (hosted mode tightens them)
        self._kept: OrderedDict[Hashable, Inputs] = OrderedDict()  # read_ahead's, for read
        self._kept_lock = threading.Lock()

    def error(self, key: str, **values: object) -> gr.Error:
        """A gr.Error worded by the catalogue in the app's language."""
        return gr.Error(t(key, self.lang, **values))

    # --- a request's values, read once ----------------------------------------------------------

    def read_ahead(self, values: Mapping[str, Any]) -> Inputs:
        """``read`` for an event's validator: the Inputs are also kept for the event's handler,
        whose ``read`` of the same values takes them instead of checking again."""
        inputs = self.check_values(values)
        key = request_key(values)
        if key is not None:
            with self._kept_lock:
                self._kept[key] = inputs
                self._kept.move_to_end(key)
                while len(self._kept) > KEPT_REQUESTS:
                    self._kept.popitem(last=False)
        return inputs

    def read(self, values: Mapping[str, Any]) -> Inputs:
        """A run's Inputs from its values by name: those its validator checked (``read_ahead``),
        else checked now (a request that reached its handler without one)."""
        key = request_key(values)
        if key is not None:
            with self._kept_lock:
                kept = self._kept.pop(key, None)
            if kept is not None:
                return kept
        return self.check_values(values)

    def check_values(self, values: Mapping[str, Any]) -> Inputs:
        """A run's Inputs from its values by name, as the controls (``RunControls.run_inputs``,
        with or without the race's) and ``/generate`` send them: every name not in
        ``RUN_VALUES`` is a setting."""
        given = dict(values)
        run = {name: given.pop(name) for name in RUN_VALUES if name in given}
        return self.inputs(
            run.get("preset"),  # type: ignore[arg-type]  # refused in words unless a preset's id
            run.get("prompt"),  # type: ignore[arg-type]  # refused in words unless text
            given,
            chat=run.get("chat_template", True),
            race=run.get("race", False),
            drafter=run.get("drafter"),
            race_drafters=run.get("race_drafters"),
            race_repeats=run.get("race_repeats"),
        )

    # --- the checks -----------------------------------------------------------------------------

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
        """Validate a run's inputs; a bad value becomes a Refusal in plain words.

        *settings* is either a GenerationSettings or the controls' values by setting name, read
        through the schema over the preset's defaults (settings without a control keep those).
        *drafter* is a drafter spec ("lookup", "hybrid:max_ngram=3"); None or blank: the preset's.
        *race_drafters* are the race's drafter specs (None or none: the run's drafter) and
        *race_repeats* its repeats per lane (None: DEFAULT_REPEATS), both within the limits.
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
        cap, each kind and options valid, no spec twice; "llama.cpp" (its two lanes) only
        where the app is not hosted."""
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
            if chosen.strip() == LLAMA_CHOICE:
                if self.limits.hosted:
                    raise self.error("error.app.race_llama_hosted")
                if LLAMA_CHOICE in lanes:
                    raise self.error("error.app.race_lane_twice", drafter=LLAMA_CHOICE)
                lanes.append(LLAMA_CHOICE)
                continue
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

    def check_lab_size(self, value: object, cap: int, label_key: str) -> None:
        """Refuse a lab size (its control worded by *label_key*) that is no number or is above
        its cap, in plain words: the lab endpoints are private but reachable with a hand-built
        request."""
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if not number or not value <= cap:  # type: ignore[operator]  # a number by now
            raise self.error(
                "error.app.lab_cap", control=t(label_key, self.lang), cap=cap, got=repr(value)
            )


def request_key(value: object) -> Hashable | None:
    """*value* (a request's values, or one of them) as a key that tells apart what Python counts
    equal across types (1, 1.0 and True: the schema takes one and refuses another); None for a
    value that cannot be a key (a request with one is checked each time)."""
    if isinstance(value, Mapping):
        items = [(str(name), request_key(item)) for name, item in value.items()]
        if any(item is None for _, item in items):
            return None
        return ("mapping", tuple(sorted(items, key=lambda pair: pair[0])))
    if isinstance(value, list | tuple):
        members = [request_key(item) for item in value]
        return None if any(item is None for item in members) else (type(value), tuple(members))
    try:
        hash(value)
    except TypeError:
        return None
    return (type(value), value)


def is_control(char: str) -> bool:
    """True for a control character a prompt has no use for: C0 and C1 controls and DEL, but
    not tab, line feed or carriage return."""
    code = ord(char)
    return char not in "\t\n\r" and (code < 0x20 or 0x7F <= code < 0xA0)
