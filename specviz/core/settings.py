"""What a run generates and how: one schema for every generation setting.

Each setting is written once, as a field of ``GenerationSettings`` declared with ``setting(...)``:
its name and type are the field's, its default the field's default, and its limits a
``SettingSpec`` in the field's metadata. Its label and help are the text catalogue's
``setting.<name>`` and ``setting.<name>.help`` (``specviz.text``), so each language words them in
its own table; validation errors are ``UserError``s worded the same way. Everything else is
derived from that field:

- validation (``GenerationSettings.__post_init__``, ``settings_from_mapping``), one set of limits;
- the command-line flags (``add_setting_arguments``, ``settings_from_args``: ``--gamma``, ...);
- preset parsing (``specviz.models.presets`` reads a preset's settings keys through
  ``settings_from_mapping``);
- the app's controls and API parameters (``specviz.app.setting_controls``).

So adding a setting is one new field here, plus its ``setting.<name>`` label and help in each text
table; the CLI, presets, the app and its API pick it up.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import typing
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from specviz.text import DEFAULT_LANGUAGE, Joined, Phrase, UserError, t

GAMMA_MIN, GAMMA_MAX = 1, 16  # γ's limits; the adaptive schedule also stays inside them
SEED_MAX = 2**64 - 1  # torch.Generator.manual_seed takes an unsigned 64-bit seed

T = TypeVar("T")
S = TypeVar("S", bound="GenerationSettings")
SettingValue = int | float | bool


@dataclass(frozen=True)
class SettingSpec:
    """How one setting is checked and shown; the field it annotates gives its name and type."""

    low: float | None = None  # smallest allowed value (None: unbounded)
    high: float | None = None  # largest allowed value (None: unbounded)
    low_open: bool = False  # True: ``low`` itself is not allowed
    high_open: bool = False  # True: ``high`` itself is not allowed
    # The app shows a slider with this step; without one it shows a number box.
    step: float | None = None
    # A narrower range for the app's slider where the full range would make it unusable; the
    # whole range stays open to the CLI, presets and the API.
    slider_low: float | None = None
    slider_high: float | None = None
    flag: str | None = None  # the CLI flag's name, when it is not the field name with dashes
    # False: the app has no control for it and uses the preset's value (a per-pair tuning).
    in_app: bool = True


def setting(default: T, **spec: Any) -> T:
    """A ``GenerationSettings`` field with its ``SettingSpec``: ``gamma: int = setting(5, ...)``."""
    return dataclasses.field(default=default, metadata={"spec": SettingSpec(**spec)})


@dataclass(frozen=True)
class Setting:
    """One setting as the schema describes it: the field's name, type and default, and its spec."""

    name: str
    type: type  # int, float or bool
    default: SettingValue
    spec: SettingSpec

    @property
    def label_key(self) -> str:
        """The catalogue key of the setting's name in words (the app's label, the subject of
        error messages): ``setting.<name>``, so every setting is worded under its own name."""
        return f"setting.{self.name}"

    @property
    def help_key(self) -> str:
        """The catalogue key of the setting's one-line help (the CLI's help, the app's info
        text): ``setting.<name>.help``."""
        return f"setting.{self.name}.help"

    def label(self, lang: str = DEFAULT_LANGUAGE) -> str:
        """The setting's name in words, in *lang*."""
        return t(self.label_key, lang)

    def help(self, lang: str = DEFAULT_LANGUAGE) -> str:
        """The setting's one-line help, in *lang*."""
        return t(self.help_key, lang)

    @property
    def flag(self) -> str:
        """The command-line flag, e.g. ``--max-new-tokens``."""
        return "--" + (self.spec.flag or self.name.replace("_", "-"))

    @property
    def slider_range(self) -> tuple[float, float] | None:
        """(min, max) of the app's slider, or None when the app shows a number box."""
        low = self.spec.low if self.spec.slider_low is None else self.spec.slider_low
        high = self.spec.high if self.spec.slider_high is None else self.spec.slider_high
        if self.spec.step is None or low is None or high is None:
            return None
        return low, high

    def requirement(self, *, with_type: bool = True) -> Phrase | None:
        """What a value must be, in words: "an integer between 1 and 16", "true or false"; None
        for an unbounded number when the type is left out."""
        if self.type is bool:
            return Phrase("setting.requirement.bool")
        limits = self._limits()
        if not with_type:
            return limits
        kind = Phrase("setting.type.integer" if self.type is int else "setting.type.number")
        return kind if limits is None else Phrase("setting.requirement", kind=kind, limits=limits)

    def _limits(self) -> Phrase | None:
        """The range in words ("between 1 and 16", "above 0 and at most 1"), None if unbounded."""
        spec = self.spec
        if spec.low is not None and spec.high is not None and not (spec.low_open or spec.high_open):
            return Phrase("setting.limit.between", low=_shown(spec.low), high=_shown(spec.high))
        low = high = None
        if spec.low is not None:
            key = "setting.limit.above" if spec.low_open else "setting.limit.at_least"
            low = Phrase(key, value=_shown(spec.low))
        if spec.high is not None:
            key = "setting.limit.below" if spec.high_open else "setting.limit.at_most"
            high = Phrase(key, value=_shown(spec.high))
        if low is not None and high is not None:
            return Phrase("setting.limit.both", low=low, high=high)
        return low or high

    def check(self, value: object, *, exact: bool = True) -> SettingValue:
        """The value, if it is valid for this setting (an int becomes a float for a float setting).

        exact=False also takes what a form or a JSON API sends: a whole float for an integer.
        Raises SettingError naming this setting otherwise.
        """
        if value is None:
            raise SettingError([self.problem(Phrase("error.setting.blank"))])
        if not exact and self.type is int and isinstance(value, float) and value.is_integer():
            value = int(value)
        # bool is an int in Python, but "gamma = true" is always a mistake.
        allowed = bool if self.type is bool else int if self.type is int else (int, float)
        if isinstance(value, bool) != (self.type is bool) or not isinstance(value, allowed):
            got = describe_value(value)
            reason = Phrase("error.setting.must_be", requirement=self.requirement(), got=got)
            raise SettingError([self.problem(reason)])
        if isinstance(value, bool):
            return value
        number = float(value) if self.type is float else value
        if not self._in_range(number):
            limits = self.requirement(with_type=False) or self.requirement()
            reason = Phrase("error.setting.must_be", requirement=limits, got=repr(number))
            raise SettingError([self.problem(reason)])
        return number

    def problem(self, reason: Phrase) -> SettingProblem:
        """A problem with this setting, for a SettingError."""
        return SettingProblem(self.name, Phrase(self.label_key), reason)

    def _in_range(self, number: float) -> bool:
        spec = self.spec
        if math.isnan(number):
            return False
        if spec.low is not None and (number <= spec.low if spec.low_open else number < spec.low):
            return False
        return spec.high is None or (number < spec.high if spec.high_open else number <= spec.high)


def _shown(limit: float) -> str:
    """A limit as written in messages: an integer in full (a seed's 2**64 - 1), else :g."""
    return str(limit) if isinstance(limit, int) else f"{limit:g}"


@dataclass(frozen=True)
class SettingProblem:
    """What is wrong with one setting: its field name, its label and the reason (both words)."""

    name: str
    label: Phrase  # the setting's label, or the name in quotes for a name that is no setting
    reason: Phrase  # "must be between 1 and 16, got 0"

    @property
    def phrase(self) -> Phrase:
        """The whole problem as words: "γ must be between 1 and 16, got 0"."""
        return Phrase("error.setting.problem", setting=self.label, reason=self.reason)


class SettingError(UserError):
    """One or more settings are invalid; each problem names its setting.

    The message reads "<label> <reason>; ..." ("γ must be between 1 and 16, got 0"), in the
    reader's language with ``message(lang)``; callers that place the error themselves (presets
    name the file and the field) read ``problems``.
    """

    def __init__(self, problems: Iterable[SettingProblem]) -> None:
        self.problems = tuple(problems)
        parts = tuple(problem.phrase for problem in self.problems)
        super().__init__("error.problems", problems=Joined("error.separator", parts))

    def __reduce__(self) -> tuple[object, ...]:
        return (SettingError, (self.problems,))


def _checked(
    schema: Mapping[str, Setting], values: Mapping[str, object], *, exact: bool
) -> dict[str, SettingValue]:
    """Every value checked by its setting; one SettingError lists every problem found."""
    checked: dict[str, SettingValue] = {}
    problems: list[SettingProblem] = []
    for name, value in values.items():
        if name not in schema:
            unknown = Phrase("error.setting.unknown", known=", ".join(schema))
            problems.append(SettingProblem(name, Phrase("setting.name", name=repr(name)), unknown))
            continue
        try:
            checked[name] = schema[name].check(value, exact=exact)
        except SettingError as error:
            problems.extend(error.problems)
    if problems:
        raise SettingError(problems)
    return checked


# A draft stop's threshold: a probability below 1 (at 1 every draft would stop at once). Tuned per
# pair, so a preset sets it; the app shows it as a control starting at the preset's value, since a
# cycle card that says "stopped below the 0.3 stop" should let the reader move the 0.3.
_DRAFT_STOP: dict[str, Any] = {
    "low": 0.0,
    "high": 1.0,
    "high_open": True,
    "step": 0.05,
    "slider_high": 0.95,
}


@dataclass(frozen=True)
class GenerationSettings:
    """Everything that decides what a run generates; shared by speculative and plain decoding."""

    gamma: int = setting(5, low=GAMMA_MIN, high=GAMMA_MAX, step=1)
    adaptive_gamma: bool = setting(False, flag="adaptive")
    # Choose γ each cycle, from 0 (a plain step) up to `gamma`, to maximise the expected tokens per
    # unit time given the step costs measured when the pair was loaded and the run's acceptance
    # rate so far (specviz.drafters.policy.cost_gamma); takes precedence over adaptive_gamma.
    # A pair loaded without measured costs keeps γ fixed.
    cost_gamma: bool = setting(False)
    temperature: float = setting(
        0.0,
        low=0.0,
        high=2.0,  # above 2 the output is noise; the sampler itself takes any value
        step=0.05,
    )
    top_k: int = setting(0, low=0)
    top_p: float = setting(
        1.0,
        low=0.0,
        low_open=True,  # top-p 0 would keep no token at all
        high=1.0,
        step=0.05,
        slider_low=0.05,
    )
    seed: int = setting(0, low=0, high=SEED_MAX)
    max_new_tokens: int = setting(
        128,
        low=1,
        high=4096,
        step=1,
        slider_high=512,  # a slider to 4096 would move in jumps too big to aim with
    )
    stop_on_eos: bool = setting(True, flag="stop", in_app=False)
    # Stop a draft early after a token the drafter gave less than this probability (0 = never):
    # later guesses would mostly be rejected, so drafting them wastes time. The output law is
    # unchanged whatever the drafter proposes. transformers' assisted generation uses 0.4.
    draft_stop_below: float = setting(0.0, **_DRAFT_STOP)
    # Stop a draft once the product of the draft's top probabilities over this cycle's guesses
    # (each doubt 1 - top scaled down when the run shows the draft too doubtful, see doubt_scale)
    # falls below this (0 = never): the draft's own estimate that every guess so far is right.
    # A run of fairly sure guesses ends before the per-token stop would notice. specviz's own rule.
    draft_stop_cumulative: float = setting(0.0, **_DRAFT_STOP)

    def __post_init__(self) -> None:
        schema = {item.name: item for item in settings_schema(type(self))}
        values = {name: getattr(self, name) for name in schema}
        for name, value in _checked(schema, values, exact=True).items():
            object.__setattr__(self, name, value)  # frozen: a float setting given 1 keeps 1.0


def settings_schema(
    settings_type: type[GenerationSettings] = GenerationSettings,
) -> tuple[Setting, ...]:
    """Every setting of *settings_type* (GenerationSettings or a subclass), in field order."""
    if settings_type not in _SCHEMAS:  # read once per class: settings are built per cycle
        types = typing.get_type_hints(settings_type)
        for item in dataclasses.fields(settings_type):
            if "spec" not in item.metadata:
                raise TypeError(f"{settings_type.__name__}.{item.name}: declare it with setting()")
        _SCHEMAS[settings_type] = tuple(
            Setting(item.name, types[item.name], item.default, item.metadata["spec"])  # type: ignore[arg-type]  # every setting() has a default
            for item in dataclasses.fields(settings_type)
        )
    return _SCHEMAS[settings_type]


_SCHEMAS: dict[type[GenerationSettings], tuple[Setting, ...]] = {}


def settings_from_mapping(values: Mapping[str, object], defaults: S, *, exact: bool = True) -> S:
    """*defaults* with the given settings replaced, every value checked by the schema.

    exact=False also takes what forms and JSON send (a whole float for an integer). Raises
    SettingError for an unknown name or a bad value, naming every setting at fault.
    """
    schema = {item.name: item for item in settings_schema(type(defaults))}
    checked: dict[str, Any] = _checked(schema, values, exact=exact)
    return dataclasses.replace(defaults, **checked)


def describe_value(value: object) -> Phrase:
    """A value with its type in TOML's words ("boolean true", "string '5'"), for messages."""
    if isinstance(value, bool):
        return Phrase("value.boolean", value=str(value).lower())
    if isinstance(value, str):
        return Phrase("value.string", value=repr(value))
    if isinstance(value, int):
        return Phrase("value.integer", value=value)
    if isinstance(value, float):
        return Phrase("value.float", value=repr(value))
    if isinstance(value, Mapping):
        return Phrase("value.table")
    if isinstance(value, list | tuple):
        return Phrase("value.array")
    return Phrase("value.other", type=type(value).__name__)


# --- the command line ------------------------------------------------------------------------


def add_setting_arguments(
    parser: argparse.ArgumentParser,
    *,
    exclude: Iterable[str] = (),
    settings_type: type[GenerationSettings] = GenerationSettings,
    lang: str = DEFAULT_LANGUAGE,
) -> None:
    """One flag per setting (``--gamma``, ``--adaptive/--no-adaptive``, ...), all defaulting to
    None so that ``settings_from_args`` keeps the preset's value for flags not given; the help
    is in *lang*."""
    skipped = set(exclude)
    group = parser.add_argument_group(t("setting.flags", lang))
    for item in settings_schema(settings_type):
        if item.name in skipped:
            continue
        if item.type is bool:
            group.add_argument(
                item.flag,
                dest=item.name,
                action=argparse.BooleanOptionalAction,
                default=None,
                help=item.help(lang),
            )
        else:
            limits = item.requirement(with_type=False)
            help_text = item.help(lang)
            if limits is not None:
                help_text = t("setting.help_with_limits", lang, help=help_text, limits=limits)
            group.add_argument(
                item.flag,
                dest=item.name,
                type=item.type,
                default=None,
                metavar="N" if item.type is int else "X",
                help=help_text,
            )


def settings_from_args(args: argparse.Namespace, defaults: S) -> S:
    """*defaults* (the preset's settings) overridden by the setting flags given on the command
    line; raises SettingError, in the schema's words, for a bad value."""
    given = {
        item.name: getattr(args, item.name)
        for item in settings_schema(type(defaults))
        if getattr(args, item.name, None) is not None
    }
    return settings_from_mapping(given, defaults)
