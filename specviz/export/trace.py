"""A run as a JSON trace, and a trace read back for replay: every record the views draw from.

The file holds the run's settings, models, drafter, the machine and software it ran on, the
prompt, every cycle (tokens, ids, origins, q, p, u, verdicts, timings, drafter detail) as
``Cycle.to_dict`` writes it, the plain-decoding lane when the run raced one, and the summary in
vLLM's and llama.cpp's names (``specviz.export.summary``). ``read_trace`` checks a file from
outside (size, nesting, JSON, schema, each record's fields and their bounds, time order) and
answers a bad one with a ``UserError`` worded for the reader, never a traceback: a trace is data,
and a number past what a run of specviz can hold (a replay paced by 10¹² seconds, a negative
count, an id past any vocabulary, NaN) is refused where it is read, naming the field.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from specviz.core.events import Cycle, Step
from specviz.export import machine
from specviz.export.records import (
    MAX_COUNT,
    MAX_CYCLES,
    MAX_TEXT,
    MAX_TOKENS,
    RecordError,
    check_length,
    check_range,
    cycle_from_dict,
    step_from_dict,
    totals_from_dict,
)
from specviz.export.summary import run_summary
from specviz.measure.outcome import Outcome
from specviz.measure.race_records import PLAIN_LANE, Lane, LaneGain, LaneRun, RaceResult
from specviz.text import Phrase, UserError

SCHEMA = "specviz.trace"
# Version 2 names a cycle's count of drafted tokens draft_len; version 1 called it "gamma", and
# still reads (_upgrade_v1), the count landing in Cycle.draft_len.
SCHEMA_VERSION = 2
OLDEST_READ = 1
# Every drafted token carries the top 10 of q and of p (about 2.5 kB of this indented JSON), so a
# trace takes 3.5 to 23 kB a generated token, by γ and how many drafts are rejected: a run of 256
# tokens at γ 8 with a race of two drafters is 3.6 MB when 9 drafts in 10 pass, 20 MB when none
# does (measured on records shaped as the engine writes them). This cap is the CLI's and the
# local app's; a hosted app reads less (specviz.app.limits, Limits.trace_bytes).
MAX_TRACE_BYTES = 20 * 1024 * 1024
# Nesting: a trace nests 12 deep (race, lanes, runs, events, drafted, top_q, a bar). Refused
# before parsing, since the parser recurses once a level.
MAX_DEPTH = 32
# The app races at most 3 drafters (plain decoding one more) and 5 repeats (specviz.app.limits);
# twice that leaves room.
MAX_LANES = 8
MAX_REPEATS = 10
# A prompt's characters: eight times the app's own cap (a command-line prompt has the shell's).
MAX_PROMPT_CHARS = 2**18


@dataclass(frozen=True)
class RunSetup:
    """What a run was started from: the pair and how it ran, the drafter, the settings, the prompt."""

    preset: str  # the preset id
    label: str  # the preset's label, as the app lists it
    draft: str  # the draft model's source, "kind:ref" ("bundled:qwen2.5-coder-0.5b")
    target: str
    dtype: str  # "bfloat16", "float32", ...
    device: str  # "cpu", "cuda", "cuda:1"
    # What the draft ran as: "none" (the dtype), "int8", "int8wo", "int4wo", "int4head", "int4dual".
    draft_format: str
    drafter: str  # the drafter spec ("draft-model", "lookup:max_ngram=3")
    settings: Mapping[str, Any]  # the GenerationSettings as a dict
    prompt: str
    chat_template: bool
    prompt_tokens: int


def run_setup(
    preset: Any, pair: Any, settings: Any, drafter: str, prompt: str, chat: bool, prompt_tokens: int
) -> RunSetup:
    """The setup of a run of *preset* on the loaded *pair* (a ModelPair) with these settings."""
    draft_format = pair.cost_report.draft_format if pair.cost_report is not None else "none"
    return RunSetup(
        preset=preset.id,
        label=preset.label,
        draft=str(preset.draft),
        target=str(preset.target),
        dtype=str(pair.dtype).removeprefix("torch."),
        device=str(pair.device),
        draft_format=draft_format,
        drafter=drafter,
        settings=asdict(settings),
        prompt=prompt,
        chat_template=chat,
        prompt_tokens=prompt_tokens,
    )


def build_trace(
    setup: RunSetup,
    cycles: Sequence[Cycle],
    steps: Sequence[Step] = (),
    *,
    race: RaceResult | None = None,
    recorded_at: str | None = None,
    hardware: Mapping[str, Any] | None = None,
    versions: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The trace of a run as a JSON-ready dict; the machine and versions are read here unless
    given (a test passes its own)."""
    when = recorded_at or datetime.now(UTC).isoformat(timespec="seconds")
    gamma = int(setup.settings.get("gamma", 0))
    return {
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "recorded_at": when,
        "settings": dict(setup.settings),
        "models": {
            "preset": setup.preset,
            "label": setup.label,
            "draft": {
                "id": model_id(setup.draft),
                "source": setup.draft,
                "format": setup.draft_format,
            },
            "target": {"id": model_id(setup.target), "source": setup.target},
            "dtype": setup.dtype,
        },
        "drafter": setup.drafter,
        "hardware": dict(hardware if hardware is not None else machine.hardware(setup.device)),
        "versions": dict(versions if versions is not None else machine.versions()),
        "prompt": {
            "text": setup.prompt,
            "chat_template": setup.chat_template,
            "tokens": setup.prompt_tokens,
        },
        "text": "".join(token.text for cycle in cycles for token in cycle.emitted),
        "summary": run_summary(
            cycles, steps, gamma, _race_gain(race, setup.drafter, cycles, steps)
        ),
        "cycles": [cycle.to_dict() for cycle in cycles],
        "plain": [step.to_dict() for step in steps] if steps else None,
        "race": race_to_dict(race) if race is not None else None,
    }


def _race_gain(
    race: RaceResult | None, drafter: str, cycles: Sequence[Cycle], steps: Sequence[Step]
) -> LaneGain | None:
    """The drafter's gain in the race, or in the single race a run with a plain lane reads back
    as (so the summary and the report judge it alike)."""
    if race is None and cycles and steps:
        race = single_race(drafter, cycles, steps)
    return race.gain(drafter) if race is not None else None


def race_to_dict(race: RaceResult) -> dict[str, Any]:
    """The race as JSON: every lane's repeats with their counters (what the spreads and the
    headline are computed from), the records of each lane's shown run (what Replay plays), and
    the CPU share other programs took (null: not measured)."""

    def run_dict(lane: Lane, run: LaneRun) -> dict[str, Any]:
        shown = run is lane.shown
        return {
            "repeat": run.repeat,
            "new_tokens": run.outcome.new_tokens,
            "complete": run.outcome.complete,
            "totals": asdict(run.totals),
            "events": [event.to_dict() for event in run.outcome.events] if shown else None,
        }

    return {
        "repeats": race.repeats,
        "complete": race.complete,
        "others_share": race.others_share,
        "lanes": [
            {"name": lane.name, "runs": [run_dict(lane, run) for run in lane.runs]}
            for lane in race.lanes
        ],
    }


def race_from_dict(data: object, where: str = "race") -> RaceResult:
    """The race that ``race_to_dict`` wrote; RecordError for a damaged one (or one larger than
    the app races: MAX_LANES, MAX_REPEATS, MAX_CYCLES events a run)."""
    raw = _record_mapping(data, where)
    lanes_raw = _record_list(raw.get("lanes"), f"{where}.lanes", MAX_LANES)
    lanes = tuple(_lane_from_dict(lane, f"{where}.lanes[{i}]") for i, lane in enumerate(lanes_raw))
    if not lanes:
        raise RecordError(where, "no lanes")
    repeats = _whole(raw.get("repeats", 1), f"{where}.repeats", 1, MAX_REPEATS)
    complete = _flag(raw.get("complete", True), f"{where}.complete")
    return RaceResult(lanes, repeats, complete, _share(raw.get("others_share"), where))


def _share(value: object, where: str) -> float | None:
    """The race's CPU share of other programs: a fraction, or null (absent before it was
    recorded: not measured)."""
    if value is None:
        return None
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise RecordError(f"{where}.others_share", f"expected a number, got {value!r:.40}")
    check_range(value, f"{where}.others_share", 0.0, 1.0)
    return float(value)


def _lane_from_dict(data: object, where: str) -> Lane:
    lane = _record_mapping(data, where)
    name = _text(lane.get("name", ""), f"{where}.name", MAX_TEXT)
    convert = step_from_dict if name == PLAIN_LANE else cycle_from_dict
    runs = []
    for j, run_raw in enumerate(_record_list(lane.get("runs"), f"{where}.runs", MAX_REPEATS)):
        at = f"{where}.runs[{j}]"
        run = _record_mapping(run_raw, at)
        events_raw = _record_list(run.get("events") or [], f"{at}.events", MAX_CYCLES)
        events = tuple(convert(item, f"{at}.events[{k}]") for k, item in enumerate(events_raw))
        _in_time_order(events, f"{at}.events")
        outcome = Outcome(
            new_tokens=_whole(run.get("new_tokens", 0), f"{at}.new_tokens", 0, MAX_TOKENS),
            totals=totals_from_dict(run.get("totals"), f"{at}.totals"),
            complete=_flag(run.get("complete", True), f"{at}.complete"),
            events=events,
        )
        runs.append(LaneRun(_whole(run.get("repeat", j), f"{at}.repeat", 0, MAX_REPEATS), outcome))
    return Lane(name, tuple(runs))


def single_race(drafter: str, cycles: Sequence[Cycle], steps: Sequence[Step]) -> RaceResult:
    """A race of one repeat from a run and its plain-decoding lane (a trace written by the CLI's
    ``generate --plain``, which runs each once)."""

    def run(events: Sequence[Cycle] | Sequence[Step]) -> LaneRun:
        totals = events[-1].totals
        return LaneRun(0, Outcome(totals.new_tokens, totals, events=tuple(events)))

    return RaceResult((Lane(PLAIN_LANE, (run(steps),)), Lane(drafter, (run(cycles),))), 1, True)


def model_id(source: str) -> str:
    """The model's name in a ``"kind:ref"`` source: the hub id (without its "@revision"), the
    bundled name, the path or the file."""
    kind, _, ref = source.partition(":")
    return ref.partition("@")[0] if kind == "hub" else ref


def trace_text(trace: Mapping[str, Any]) -> str:
    """The trace as the file's text: indented JSON, non-ASCII text kept as it is."""
    return json.dumps(trace, ensure_ascii=False, indent=1) + "\n"


class TraceError(UserError):
    """A file that is no specviz trace, or a damaged one: a catalogue key and its values."""


@dataclass(frozen=True)
class Trace:
    """A trace read back: the records the views redraw, and what the screen says about them."""

    cycles: tuple[Cycle, ...]
    steps: tuple[Step, ...]  # the plain-decoding lane's shown run; empty when the run had none
    race: RaceResult | None  # the race (all lanes and repeats); None when the run had none
    recorded_at: str  # ISO 8601, UTC
    prompt: str
    settings: Mapping[str, Any]
    models: Mapping[str, Any]
    drafter: str
    hardware: Mapping[str, Any]
    versions: Mapping[str, Any]
    summary: Mapping[str, Any]

    def where(self) -> str:
        """The machine in a few words: the GPU's name, or the CPU's model, with the device."""
        gpu, cpu = self.hardware.get("gpu"), self.hardware.get("cpu")
        return str(gpu or cpu or self.hardware.get("device") or "?")


def read_trace_file(path: Path, max_bytes: int = MAX_TRACE_BYTES) -> Trace:
    """The trace in the file at *path*, its size checked against *max_bytes* (a hosted app's is
    smaller) before it is read; TraceError as ``read_trace`` (an unreadable file raises
    OSError)."""
    size = path.stat().st_size
    if size > max_bytes:
        raise _too_big(size, max_bytes)
    return read_trace(path.read_bytes(), max_bytes)


def _too_big(size: int, cap: int) -> TraceError:
    return TraceError("error.trace.too_big", size=f"{size / 2**20:.1f}", cap=f"{cap / 2**20:.0f}")


def read_trace(data: str | bytes, max_bytes: int = MAX_TRACE_BYTES) -> Trace:
    """A trace from a file's contents; TraceError when it is larger than *max_bytes*, nested
    deeper than MAX_DEPTH, not JSON, not a specviz trace, of another schema version, or has a
    damaged record or a number out of its bounds."""
    if len(data) > max_bytes:
        raise _too_big(len(data), max_bytes)
    depth = json_depth(data.encode(errors="replace") if isinstance(data, str) else data)
    if depth > MAX_DEPTH:
        raise TraceError("error.trace.too_deep", depth=f"{depth:,}", cap=MAX_DEPTH)
    try:
        raw = json.loads(data)  # NaN and Infinity parse: the bounds below refuse them by name
    except RecursionError:  # pragma: no cover - the scan above refuses such nesting first
        raise TraceError("error.trace.too_deep", depth=f"> {MAX_DEPTH}", cap=MAX_DEPTH) from None
    except (ValueError, UnicodeDecodeError) as error:
        raise TraceError("error.trace.not_json", problem=str(error)[:120]) from None
    return trace_from_dict(raw)


_NOT_STRUCTURE = bytes(sorted(set(range(256)) - set(b'[]{}"')))


def json_depth(data: bytes) -> int:
    """How deep JSON text nests its arrays and objects, counted on the brackets outside strings
    without parsing (bytes methods, then one loop over the quotes and brackets left): the parser
    recurses once a level, so a file nested 100,000 deep is refused by this count, not by a
    RecursionError."""
    # Escapes first (an escaped backslash, then an escaped quote), so every quote left opens or
    # closes a string; then only quotes and brackets. Two quotes side by side hold nothing:
    # dropping them leaves every other byte inside or outside a string as it was.
    text = data.replace(b"\\\\", b"").replace(b'\\"', b"").translate(None, _NOT_STRUCTURE)
    text = text.replace(b'""', b"")
    depth = deepest = 0
    inside = False
    for byte in text:
        if byte == ord('"'):
            inside = not inside
        elif not inside:
            depth += 1 if byte in b"[{" else -1
            deepest = max(deepest, depth)
    return deepest


def trace_from_dict(raw: object) -> Trace:
    """A trace from its parsed JSON (``build_trace``'s dict); TraceError as ``read_trace``."""
    if not isinstance(raw, dict) or raw.get("schema") != SCHEMA:
        raise TraceError("error.trace.not_trace", schema=SCHEMA)
    version = raw.get("schema_version")
    if isinstance(version, bool) or version not in range(OLDEST_READ, SCHEMA_VERSION + 1):
        raise TraceError(
            "error.trace.version",
            got=f"{version!r:.40}",
            supported=f"{OLDEST_READ}–{SCHEMA_VERSION}",
        )
    if version == 1:
        raw = _upgrade_v1(raw)
    try:
        for name in ("settings", "models", "hardware", "versions", "summary", "prompt"):
            _check_section(raw.get(name), name)
        cycles = tuple(
            cycle_from_dict(item, f"cycles[{i}]") for i, item in enumerate(_list(raw, "cycles"))
        )
        if not cycles:
            raise TraceError("error.trace.no_cycles")
        _in_time_order(cycles, "cycles")
        plain = raw.get("plain") or []
        steps = tuple(
            step_from_dict(item, f"plain[{i}]")
            for i, item in enumerate(_list({"plain": plain}, "plain"))
        )
        _in_time_order(steps, "plain")
        # The generated text is the cycles' emitted tokens (build_trace): it holds as many.
        emitted = sum(len(cycle.emitted) for cycle in cycles)
        _text(raw.get("text", ""), "text", emitted * MAX_TEXT)
        prompt = _mapping(raw, "prompt")
        drafter = _text(raw.get("drafter", ""), "drafter", MAX_TEXT)
        race = None
        if raw.get("race") is not None:
            race = race_from_dict(raw["race"])
        elif steps and cycles:
            race = single_race(drafter, cycles, steps)
        trace = Trace(
            cycles=cycles,
            steps=steps,
            race=race,
            recorded_at=_text(raw.get("recorded_at", ""), "recorded_at", MAX_TEXT),
            prompt=str(prompt.get("text", "")),
            settings=_mapping(raw, "settings"),
            models=_mapping(raw, "models"),
            drafter=drafter,
            hardware=_mapping(raw, "hardware"),
            versions=_mapping(raw, "versions"),
            summary=_mapping(raw, "summary"),
        )
    except RecordError as error:
        raise TraceError("error.trace.record", where=error.where, problem=error.problem) from None
    return trace


def _upgrade_v1(raw: dict[str, Any]) -> dict[str, Any]:
    """A version-1 trace as version 2 writes it: each cycle's "gamma" (how many tokens it
    drafted) under "draft_len". A copy: the caller's dict is left as it was; anything of the
    wrong shape is passed on as it is, for the checks that follow to name."""

    def cycle(record: object) -> object:
        if not isinstance(record, dict) or "gamma" not in record or "draft_len" in record:
            return record
        return {("draft_len" if key == "gamma" else key): value for key, value in record.items()}

    def records(items: object) -> object:
        return [cycle(item) for item in items] if isinstance(items, list) else items

    def lane(data: object) -> object:
        if not isinstance(data, dict) or not isinstance(data.get("runs"), list):
            return data
        runs = [
            {**run, "events": records(run.get("events"))} if isinstance(run, dict) else run
            for run in data["runs"]
        ]
        return {**data, "runs": runs}

    upgraded = {**raw, "schema_version": SCHEMA_VERSION, "cycles": records(raw.get("cycles"))}
    race = raw.get("race")
    if isinstance(race, dict) and isinstance(race.get("lanes"), list):
        upgraded["race"] = {**race, "lanes": [lane(data) for data in race["lanes"]]}
    return upgraded


def _list(raw: Mapping[str, Any], name: str) -> list[Any]:
    return _record_list(raw.get(name), name, MAX_CYCLES)


def _mapping(raw: Mapping[str, Any], name: str) -> dict[str, Any]:
    return _record_mapping(raw.get(name), name)


def _record_list(value: object, where: str, cap: int) -> list[Any]:
    if not isinstance(value, list):
        raise RecordError(where, f"expected a list, got {type(value).__name__}")
    check_length(value, where, cap)
    return value


def _whole(value: object, where: str, low: int, high: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise RecordError(where, f"expected an integer, got {value!r:.40}")
    check_range(value, where, low, high)
    return value


def _flag(value: object, where: str) -> bool:
    if not isinstance(value, bool):
        raise RecordError(where, f"expected true or false, got {value!r:.40}")
    return value


def _text(value: object, where: str, cap: int) -> str:
    if not isinstance(value, str):
        raise RecordError(where, f"expected a string, got {value!r:.40}")
    check_length(value, where, cap)
    return value


def _in_time_order(records: Sequence[Cycle | Step], where: str) -> None:
    """Refuse records whose engine time goes back: a run's elapsed_s only grows."""
    for i in range(1, len(records)):
        before, now = records[i - 1].totals.elapsed_s, records[i].totals.elapsed_s
        if now < before:
            phrase = Phrase("error.trace.goes_back", got=f"{now:g}", before=f"{before:g}")
            raise RecordError(f"{where}[{i}].totals.elapsed_s", phrase)


def _check_section(value: object, where: str, depth: int = 0) -> None:
    """A part of the trace the replay only shows (settings, models, machine, summary, prompt):
    every number finite, every string and list bounded (it is shown, or sent to the page)."""
    if depth > MAX_DEPTH:
        raise RecordError(where, Phrase("error.trace.nested", cap=MAX_DEPTH))
    if isinstance(value, float) and not math.isfinite(value):
        raise RecordError(where, Phrase("error.trace.not_finite", got=str(value)))
    if isinstance(value, str):
        check_length(value, where, MAX_PROMPT_CHARS)
    elif isinstance(value, list):
        check_length(value, where, MAX_COUNT)
        for i, item in enumerate(value):
            _check_section(item, f"{where}[{i}]", depth + 1)
    elif isinstance(value, dict):
        check_length(list(value), where, MAX_COUNT)
        for key, item in value.items():
            check_length(key, f"{where}.{key:.40}", MAX_TEXT)
            _check_section(item, f"{where}.{key}", depth + 1)


def _record_mapping(value: object, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise RecordError(where, f"expected an object, got {type(value).__name__}")
    return value
