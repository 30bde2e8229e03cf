"""JSON dicts back into the engine's frozen records: what a trace's replay renders from.

``Cycle.to_dict`` and ``Step.to_dict`` (``specviz.core.events``) write a record as plain JSON (with the derived rates added
to the totals); ``cycle_from_dict`` and ``step_from_dict`` read one back, equal field for field,
so the views render a replayed run exactly as they rendered the live one. A file is data from
outside: every field is checked for its type, and a wrong one is a ``RecordError`` naming where.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import TypeVar

from specviz.core import events

R = TypeVar("R")


class RecordError(ValueError):
    """A record in a file is not what the engine writes: where, and what is wrong."""

    def __init__(self, where: str, problem: str) -> None:
        super().__init__(f"{where}: {problem}")
        self.where = where
        self.problem = problem


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


# The plain field types the records use (annotations are strings under postponed evaluation),
# and the check a value of each must pass.
_PLAIN: dict[str, Callable[[object], bool]] = {
    "int": lambda value: isinstance(value, int) and not isinstance(value, bool),
    "float": _is_number,
    "str": lambda value: isinstance(value, str),
    "bool": lambda value: isinstance(value, bool),
    "float | None": lambda value: value is None or _is_number(value),
    "str | None": lambda value: value is None or isinstance(value, str),
}


def _build(
    cls: type[R],
    data: object,
    where: str,
    nested: Mapping[str, Callable[[object, str], object]] | None = None,
) -> R:
    """An instance of the dataclass *cls* from *data*, its plain fields type-checked and the
    fields named in *nested* converted by their function; keys the class lacks (derived rates)
    are ignored, a missing field without a default is an error."""
    if not isinstance(data, Mapping):
        raise RecordError(where, f"expected an object, got {type(data).__name__}")
    nested = nested or {}
    values: dict[str, object] = {}
    for field in dataclasses.fields(cls):  # type: ignore[arg-type]  # cls is a dataclass
        name = field.name
        if name not in data:
            if field.default is dataclasses.MISSING:
                raise RecordError(where, f"missing field {name!r}")
            continue
        value = data[name]
        if name in nested:
            values[name] = nested[name](value, f"{where}.{name}")
        elif not _PLAIN[str(field.type)](value):
            raise RecordError(where, f"{name!r} should be {field.type}, got {value!r:.40}")
        else:
            values[name] = float(value) if field.type == "float" else value
    return cls(**values)


def _items(convert: Callable[[object, str], R]) -> Callable[[object, str], tuple[R, ...]]:
    """A converter of a JSON list into a tuple, each item by *convert*."""

    def items(data: object, where: str) -> tuple[R, ...]:
        if not isinstance(data, list):
            raise RecordError(where, f"expected a list, got {type(data).__name__}")
        return tuple(convert(item, f"{where}[{i}]") for i, item in enumerate(data))

    return items


def _optional(convert: Callable[[object, str], R]) -> Callable[[object, str], R | None]:
    def optional(data: object, where: str) -> R | None:
        return None if data is None else convert(data, where)

    return optional


def _token_prob(data: object, where: str) -> events.TokenProb:
    return _build(events.TokenProb, data, where)


def _origin(data: object, where: str) -> events.Origin:
    try:
        return events.Origin(str(data))
    except ValueError:
        raise RecordError(where, f"unknown origin {data!r:.40}") from None


def _int(data: object, where: str) -> int:
    if not isinstance(data, int) or isinstance(data, bool):
        raise RecordError(where, f"expected an integer, got {data!r:.40}")
    return data


_TOKEN_PROBS = _items(_token_prob)


def _draft_token(data: object, where: str) -> events.DraftToken:
    return _build(events.DraftToken, data, where, {"top_q": _TOKEN_PROBS, "top_p": _TOKEN_PROBS})


def _emitted(data: object, where: str) -> events.EmittedToken:
    return _build(events.EmittedToken, data, where, {"origin": _origin})


def _rejection(data: object, where: str) -> events.Rejection:
    converters: dict[str, Callable[[object, str], object]] = {
        "rejected_token": _token_prob,
        "resampled_token": _token_prob,
        "top_p": _TOKEN_PROBS,
        "top_q": _TOKEN_PROBS,
        "top_residual": _TOKEN_PROBS,
    }
    return _build(events.Rejection, data, where, converters)


def _timing(data: object, where: str) -> events.Timing:
    return _build(events.Timing, data, where)


def _totals(data: object, where: str) -> events.Totals:
    return _build(events.Totals, data, where)


def totals_from_dict(data: object, where: str = "totals") -> events.Totals:
    """Totals from ``Totals.to_dict()``'s JSON; a field of the wrong type is a RecordError."""
    return _totals(data, where)


def cycle_from_dict(data: object, where: str = "cycle") -> events.Cycle:
    """A Cycle from ``Cycle.to_dict()``'s JSON; a field of the wrong type is a RecordError."""
    return _build(
        events.Cycle,
        data,
        where,
        {
            "drafted": _items(_draft_token),
            "emitted": _items(_emitted),
            "rejection": _optional(_rejection),
            "timing": _timing,
            "totals": _totals,
            "copied_from": _optional(_items(_int)),
        },
    )


def step_from_dict(data: object, where: str = "step") -> events.Step:
    """A Step from ``Step.to_dict()``'s JSON; a field of the wrong type is a RecordError."""
    return _build(events.Step, data, where, {"token": _emitted, "totals": _totals})
