"""The generation settings' controls and API parameters, built from the settings schema.

Each control's kind, label, info text and range come from its setting's ``SettingSpec``
(``specviz.core.settings``): a checkbox for a bool, a slider where the spec gives a step, a
number box otherwise. A setting added to the schema shows up here without edits.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Iterator
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any, TypeVar

import gradio as gr

from specviz.app.limits import LOCAL, Limits, at_most
from specviz.core.settings import GenerationSettings, Setting, settings_schema
from specviz.text import DEFAULT_LANGUAGE, t

T = TypeVar("T")
POSITIONAL = inspect.Parameter.POSITIONAL_OR_KEYWORD  # API parameters: by position or by name
# Settings laid out side by side (short number boxes); every other setting gets a row of its own.
SIDE_BY_SIDE: tuple[tuple[str, ...], ...] = (("top_k", "top_p"), ("seed", "max_new_tokens"))


def shown_settings(settings_type: type[GenerationSettings]) -> tuple[Setting, ...]:
    """The settings the app has controls for; the others keep the preset's value."""
    return tuple(item for item in settings_schema(settings_type) if item.spec.in_app)


def elem_id(item: Setting) -> str:
    """The control's element id, e.g. ``sv-max-new-tokens`` (browser tests find controls by it)."""
    return "sv-" + item.name.replace("_", "-")


def setting_control(
    item: Setting, value: Any, lang: str, cap: int | None = None
) -> gr.components.Component:
    """One setting's control, showing *value*: label, info text (in *lang*) and range from the
    schema; an app *cap* (``specviz.app.limits``) lowers its top and is stated in its info."""
    info = item.help(lang)
    if cap is not None:
        info = t("app.limit.info", lang, help=info, cap=at_most(cap))
    common: dict[str, Any] = {
        "value": value,
        "label": item.label(lang),
        "info": info,
        "elem_id": elem_id(item),
    }
    if item.type is bool:
        return gr.Checkbox(**common)
    precision = 0 if item.type is int else None
    slider = item.slider_range
    if slider is not None:
        low, high = slider
        top = high if cap is None else min(high, cap)
        return gr.Slider(low, top, step=item.spec.step, precision=precision, **common)
    tops = [limit for limit in (item.spec.high, cap) if limit is not None]
    maximum = min(tops) if tops else None
    return gr.Number(precision=precision, minimum=item.spec.low, maximum=maximum, **common)


@dataclass
class SettingControls:
    """The controls of the shown settings, by setting name."""

    components: dict[str, gr.components.Component]

    def updates(self, settings: GenerationSettings) -> dict[Any, Any]:
        """Updates that show *settings* (a preset's defaults) in the controls."""
        return {control: getattr(settings, name) for name, control in self.components.items()}


def setting_controls(
    defaults: GenerationSettings,
    lang: str = DEFAULT_LANGUAGE,
    side_by_side: tuple[tuple[str, ...], ...] = SIDE_BY_SIDE,
    limits: Limits = LOCAL,
) -> SettingControls:
    """A control for every shown setting of *defaults*' schema, in schema order, laid out in the
    current Blocks context, each within *limits*' caps; the names in one *side_by_side* group
    share a row."""
    shown = {item.name: item for item in shown_settings(type(defaults))}
    components: dict[str, gr.components.Component] = {}
    for name in shown:
        if name in components:
            continue
        group = next((row for row in side_by_side if row[0] == name), (name,))
        group = tuple(member for member in group if member in shown)
        with gr.Row() if len(group) > 1 else nullcontext():
            for member in group:
                item = shown[member]
                value = getattr(defaults, member)
                cap = limits.cap(member)
                value = value if cap is None else min(value, cap)
                components[member] = setting_control(item, value, lang, cap)
    return SettingControls(components)


def with_setting_parameters(
    stream: Callable[..., Iterator[T]],
    before: list[inspect.Parameter],
    after: list[inspect.Parameter],
    settings_type: type[GenerationSettings] = GenerationSettings,
) -> Callable[..., Iterator[T]]:
    """*stream* as an API function whose parameters are *before*, one per setting, then *after*.

    An API built from type hints (``gr.api``) lists each setting as a typed parameter, defaulting
    to None: the preset's value. The call reaches *stream* with *before* and *after* by name and
    the settings given gathered into one mapping, ``settings``.
    """
    settings = [
        inspect.Parameter(item.name, POSITIONAL, default=None, annotation=item.type | None)
        for item in settings_schema(settings_type)
    ]
    parameters = [*before, *settings, *after]
    returns = typing.get_type_hints(stream).get("return", inspect.Signature.empty)
    signature = inspect.Signature(parameters, return_annotation=returns)

    def call(*args: Any, **kwargs: Any) -> Iterator[T]:  # a generator, so the API streams
        values = signature.bind(*args, **kwargs)
        values.apply_defaults()
        given = dict(values.arguments)
        chosen = {item.name: given.pop(item.name) for item in settings}
        yield from stream(**given, settings={k: v for k, v in chosen.items() if v is not None})

    call.__signature__ = signature  # type: ignore[attr-defined]
    call.__annotations__ = {p.name: p.annotation for p in parameters} | {"return": returns}
    call.__name__, call.__doc__ = stream.__name__, stream.__doc__
    return call
