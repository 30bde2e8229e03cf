"""JSON dicts back into the engine's frozen records: what a trace's replay renders from.

``Cycle.to_dict`` and ``Step.to_dict`` (``specviz.core.events``) write a record as plain JSON (with the derived rates added
to the totals); ``cycle_from_dict`` and ``step_from_dict`` read one back, equal field for field,
so the views render a replayed run exactly as they rendered the live one. A file is data from
outside: every field is checked for its type and its range, every list for its length, and a
wrong one is a ``RecordError`` naming where. The bounds are what the engine can write, with room:
a number outside them is no run of specviz, and could index past a list or pace a replay for
years.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from specviz.core import events
from specviz.core.settings import GAMMA_MAX, settings_schema
from specviz.text import Phrase

R = TypeVar("R")


def _schema_high(name: str) -> int:
    """The top of setting *name*'s range in the settings schema."""
    spec = next(item.spec for item in settings_schema() if item.name == name)
    if spec.high is None:  # pragma: no cover - the schema bounds every count
        raise ValueError(f"setting {name!r} has no top")
    return int(spec.high)


# The most new tokens a run may ask for (the schema's top of max_new_tokens: the CLI's range).
MAX_TOKENS = _schema_high("max_new_tokens")
# A cycle emits at least one token, so a run has at most MAX_TOKENS cycles (plain steps alike);
# the slack is for a last cycle cut at a stop.
MAX_CYCLES = MAX_TOKENS + 64
# Forwards, tested drafts and indices: every cycle drafts at most γ's top and verifies once.
MAX_COUNT = MAX_CYCLES * (GAMMA_MAX + 1)
MAX_SECONDS = 24 * 3600.0  # engine seconds in one run: a day (a run takes minutes)
MAX_TOKEN_ID = 2**31 - 1  # ids fit an int32 (vocabularies hold about 150,000)
MAX_CONTEXT = 2**24  # tokens in a cache or context, prompt included (models hold ~128k)
MAX_TEXT = 1000  # characters in one string of a record: a token's text holds a few, rarely 100
MAX_BARS = 64  # bars in one chart of q, p or the residual (the engine writes 10)
MAX_TREE_NODES = 64  # nodes in one draft tree (the tree drafter's cap)
TREE_VERDICTS = ("accepted", "rejected", "untested")
TREE_RULES = ("greedy", "traversal", "recursive", "recursive_one_hot")

_TIMES = ("elapsed_s", "prefill_s", "draft_s", "verify_s", "overhead_s", "time_s")
_PROBABILITIES = ("prob", "q_draft", "p_target", "accept_prob", "uniform")
_FRACTIONS = ("draft_doubt_scale", "draft_stop_below", "draft_stop_cumulative")
_COUNTS = (
    "index",
    "seq_index",
    "target_forwards",
    "draft_forwards",
    "tested_positions",
    "accepted_positions",
)
_LENGTHS = ("target_cache_len", "draft_cache_len", "context_len")
# The range of every number in a record, by field name (the records share their names).
RANGES: dict[str, tuple[float, float]] = {
    **dict.fromkeys(_TIMES, (0.0, MAX_SECONDS)),
    **dict.fromkeys(_PROBABILITIES + _FRACTIONS, (0.0, 1.0)),
    **dict.fromkeys(_COUNTS, (0, MAX_COUNT)),
    **dict.fromkeys(_LENGTHS, (0, MAX_CONTEXT)),
    "new_tokens": (0, MAX_TOKENS),
    "token_id": (0, MAX_TOKEN_ID),
    "draft_len": (0, GAMMA_MAX),
    "draft_gamma": (0, GAMMA_MAX),
    "accepted_len": (0, GAMMA_MAX),
    "position": (1, GAMMA_MAX),  # a draft position, 1..γ
    "parent": (-1, MAX_TREE_NODES - 1),  # a tree node's parent; -1: the committed text
    "depth": (1, GAMMA_MAX),
    "rank": (1, MAX_TREE_NODES),
}


class RecordError(ValueError):
    """A record in a file is not what the engine writes: where, and what is wrong (in words, or
    a catalogue Phrase worded in the reader's language)."""

    def __init__(self, where: str, problem: str | Phrase) -> None:
        super().__init__(f"{where}: {problem}")
        self.where = where
        self.problem = problem


def check_range(value: float, where: str, low: float, high: float) -> None:
    """Refuse a number outside [low, high]; NaN is outside every range."""
    if not low <= value <= high:
        words = {"got": _number(value), "low": _number(low), "high": _number(high)}
        raise RecordError(where, Phrase("error.trace.range", **words))


def _number(value: float) -> str:
    """A number as a reader writes it: "86,400", "0.5", "1e+12", "nan"."""
    whole = isinstance(value, int) or (math.isfinite(value) and value.is_integer())
    return f"{int(value):,}" if whole and abs(value) < 1e15 else f"{value:.6g}"


def check_length(value: str | list[Any], where: str, cap: int) -> None:
    """Refuse a string (characters) or a list (items) longer than *cap*, before anything is
    built from it."""
    if len(value) > cap:
        key = "error.trace.too_long" if isinstance(value, str) else "error.trace.too_many"
        raise RecordError(where, Phrase(key, count=f"{len(value):,}", cap=f"{cap:,}"))


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
    """An instance of the dataclass *cls* from *data*, its plain fields type- and range-checked
    (RANGES, MAX_TEXT) and the fields named in *nested* converted by their function; keys the
    class lacks (derived rates) are ignored, a missing field without a default is an error."""
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
            _check_plain(value, f"{where}.{name}", name)
            values[name] = float(value) if field.type == "float" else value
    for name, value in data.items():  # the keys read back as derived (rates): finite, too
        if name not in values and isinstance(value, float) and not math.isfinite(value):
            raise RecordError(f"{where}.{name}", Phrase("error.trace.not_finite", got=str(value)))
    return cls(**values)


def _check_plain(value: object, where: str, name: str) -> None:
    """A plain field's value within its bounds: a number in its range, a string of MAX_TEXT."""
    if isinstance(value, str):
        check_length(value, where, MAX_TEXT)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        check_range(value, where, *RANGES[name])


def _items(convert: Callable[[object, str], R], cap: int) -> Callable[[object, str], tuple[R, ...]]:
    """A converter of a JSON list of at most *cap* items into a tuple, each item by *convert*."""

    def items(data: object, where: str) -> tuple[R, ...]:
        if not isinstance(data, list):
            raise RecordError(where, f"expected a list, got {type(data).__name__}")
        check_length(data, where, cap)
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


def _context_index(data: object, where: str) -> int:
    """A token's index in the committed context (a copy source)."""
    if not isinstance(data, int) or isinstance(data, bool):
        raise RecordError(where, f"expected an integer, got {data!r:.40}")
    check_range(data, where, 0, MAX_CONTEXT)
    return data


_TOKEN_PROBS = _items(_token_prob, MAX_BARS)


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


def _one_of(value: str, where: str, known: tuple[str, ...]) -> None:
    if value not in known:
        raise RecordError(where, f"expected one of {', '.join(known)}, got {value!r:.40}")


def _tree_node(data: object, where: str) -> events.TreeNode:
    node = _build(events.TreeNode, data, where)
    _one_of(node.verdict, f"{where}.verdict", TREE_VERDICTS)
    return node


def _node_index(data: object, where: str) -> int:
    if not isinstance(data, int) or isinstance(data, bool):
        raise RecordError(where, f"expected an integer, got {data!r:.40}")
    check_range(data, where, 0, MAX_TREE_NODES - 1)
    return data


def _window_slot(data: object, where: str) -> int:
    """A lookahead window slot's node, -1 for a slot the tree left out."""
    if not isinstance(data, int) or isinstance(data, bool):
        raise RecordError(where, f"expected an integer, got {data!r:.40}")
    check_range(data, where, -1, MAX_TREE_NODES - 1)
    return data


def _tree(data: object, where: str) -> events.TreeRecord:
    """A draft tree, its parents before their children and its path a branch of it."""
    tree = _build(
        events.TreeRecord,
        data,
        where,
        {
            "nodes": _items(_tree_node, MAX_TREE_NODES),
            "path": _items(_node_index, GAMMA_MAX),
            "window_rows": _items(_items(_window_slot, MAX_TREE_NODES), GAMMA_MAX),
            "window_root": _optional(_token_prob),
            "window_next": _items(_token_prob, MAX_TREE_NODES),
            "window_guesses": _items(_node_index, MAX_TREE_NODES),
        },
    )
    _one_of(tree.rule, f"{where}.rule", TREE_RULES)
    for i, node in enumerate(tree.nodes):
        check_range(node.parent, f"{where}.nodes[{i}].parent", -1, i - 1)
        above = 0 if node.parent < 0 else tree.nodes[node.parent].depth
        check_range(node.depth, f"{where}.nodes[{i}].depth", above + 1, above + 1)
    parent = -1
    for i, kept in enumerate(tree.path):
        check_range(kept, f"{where}.path[{i}]", 0, len(tree.nodes) - 1)
        check_range(tree.nodes[kept].parent, f"{where}.path[{i}]'s parent", parent, parent)
        parent = kept
    for r, row in enumerate(tree.window_rows):
        for i, slot in enumerate(row):
            check_range(slot, f"{where}.window_rows[{r}][{i}]", -1, len(tree.nodes) - 1)
    for i, end in enumerate(tree.window_guesses):
        check_range(end, f"{where}.window_guesses[{i}]", 0, len(tree.nodes) - 1)
    return tree


def _timing(data: object, where: str) -> events.Timing:
    return _build(events.Timing, data, where)


def _totals(data: object, where: str) -> events.Totals:
    return _build(events.Totals, data, where)


def totals_from_dict(data: object, where: str = "totals") -> events.Totals:
    """Totals from ``Totals.to_dict()``'s JSON; a field of the wrong type is a RecordError."""
    return _totals(data, where)


def cycle_from_dict(data: object, where: str = "cycle") -> events.Cycle:
    """A Cycle from ``Cycle.to_dict()``'s JSON; a field of the wrong type or out of its range, or
    counts that disagree (a draft position past γ, more accepted than drafted, more emitted than
    drafted + 1), is a RecordError."""
    cycle = _build(
        events.Cycle,
        data,
        where,
        {
            "drafted": _items(_draft_token, GAMMA_MAX),
            # The accepted drafts then one resampled or bonus token.
            "emitted": _items(_emitted, GAMMA_MAX + 1),
            "rejection": _optional(_rejection),
            "timing": _timing,
            "totals": _totals,
            "copied_from": _optional(_items(_context_index, GAMMA_MAX)),
            "tree": _optional(_tree),
        },
    )
    drafted = len(cycle.drafted)
    for i, token in enumerate(cycle.drafted):  # the views count by position, up to γ
        check_range(token.position, f"{where}.drafted[{i}].position", 1, cycle.draft_len)
    check_range(cycle.accepted_len, f"{where}.accepted_len", 0, drafted)
    check_length(list(cycle.emitted), f"{where}.emitted", drafted + 1)
    if cycle.rejection is not None:
        check_range(cycle.rejection.position, f"{where}.rejection.position", 1, max(drafted, 1))
    return cycle


def step_from_dict(data: object, where: str = "step") -> events.Step:
    """A Step from ``Step.to_dict()``'s JSON; a field of the wrong type is a RecordError."""
    return _build(events.Step, data, where, {"token": _emitted, "totals": _totals})
