"""A run as a JSON trace, and a trace read back for replay: every record the views draw from.

The file holds the run's settings, models, drafter, the machine and software it ran on, the
prompt, every cycle (tokens, ids, origins, q, p, u, verdicts, timings, drafter detail) as
``Cycle.to_dict`` writes it, the plain-decoding lane when the run raced one, and the summary in
vLLM's and llama.cpp's names (``specviz.export.summary``). ``read_trace`` checks a file from
outside (size, JSON, schema, each record's fields) and answers a bad one with a ``UserError``
worded for the reader, never a traceback.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from specviz.core.events import Cycle, Step
from specviz.export import machine
from specviz.export.records import (
    RecordError,
    cycle_from_dict,
    step_from_dict,
    totals_from_dict,
)
from specviz.export.summary import run_summary
from specviz.measure.harness import Outcome
from specviz.measure.race import PLAIN_LANE, Lane, LaneRun, RaceResult
from specviz.text import UserError

SCHEMA = "specviz.trace"
SCHEMA_VERSION = 1
# A trace takes about 2.5 kB a generated token (draft tokens with their top-6 of q and p): 4096
# tokens, the most a run may ask for, is about 10 MB; anything far larger is not a trace.
MAX_TRACE_BYTES = 20 * 1024 * 1024


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
        "summary": run_summary(cycles, steps, gamma, _race_speedup(race, setup.drafter)),
        "cycles": [cycle.to_dict() for cycle in cycles],
        "plain": [step.to_dict() for step in steps] if steps else None,
        "race": race_to_dict(race) if race is not None else None,
    }


def _race_speedup(race: RaceResult | None, drafter: str) -> float | None:
    gain = race.gain(drafter) if race is not None else None
    return gain.speedup.median if gain is not None else None


def race_to_dict(race: RaceResult) -> dict[str, Any]:
    """The race as JSON: every lane's repeats with their counters (what the spreads and the
    headline are computed from), and the records of each lane's shown run (what Replay plays)."""

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
        "lanes": [
            {"name": lane.name, "runs": [run_dict(lane, run) for run in lane.runs]}
            for lane in race.lanes
        ],
    }


def race_from_dict(data: object, where: str = "race") -> RaceResult:
    """The race that ``race_to_dict`` wrote; RecordError for a damaged one."""
    raw = _record_mapping(data, where)
    lanes = []
    for i, lane_raw in enumerate(_record_list(raw.get("lanes"), f"{where}.lanes")):
        lane_at = f"{where}.lanes[{i}]"
        lane_map = _record_mapping(lane_raw, lane_at)
        name = str(lane_map.get("name", ""))
        runs = []
        for j, run_raw in enumerate(_record_list(lane_map.get("runs"), f"{lane_at}.runs")):
            run_at = f"{lane_at}.runs[{j}]"
            run_map = _record_mapping(run_raw, run_at)
            convert = step_from_dict if name == PLAIN_LANE else cycle_from_dict
            events = tuple(
                convert(item, f"{run_at}.events[{k}]")
                for k, item in enumerate(run_map.get("events") or [])
            )
            outcome = Outcome(
                new_tokens=int(run_map.get("new_tokens", 0)),
                totals=totals_from_dict(run_map.get("totals"), f"{run_at}.totals"),
                complete=bool(run_map.get("complete", True)),
                events=events,
            )
            runs.append(LaneRun(int(run_map.get("repeat", j)), outcome))
        lanes.append(Lane(name, tuple(runs)))
    if not lanes:
        raise RecordError(where, "no lanes")
    return RaceResult(tuple(lanes), int(raw.get("repeats", 1)), bool(raw.get("complete", True)))


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


def read_trace_file(path: Path) -> Trace:
    """The trace in the file at *path*, its size checked before it is read; TraceError as
    ``read_trace`` (an unreadable file raises OSError)."""
    size = path.stat().st_size
    if size > MAX_TRACE_BYTES:
        raise _too_big(size)
    return read_trace(path.read_bytes())


def _too_big(size: int) -> TraceError:
    return TraceError(
        "error.trace.too_big", size=f"{size / 2**20:.0f}", cap=f"{MAX_TRACE_BYTES / 2**20:.0f}"
    )


def read_trace(data: str | bytes) -> Trace:
    """A trace from a file's contents; TraceError when it is too big, not JSON, not a specviz
    trace, of another schema version, or has a damaged record."""
    if len(data) > MAX_TRACE_BYTES:
        raise _too_big(len(data))
    try:
        raw = json.loads(data)
    except (ValueError, UnicodeDecodeError) as error:
        raise TraceError("error.trace.not_json", problem=str(error)[:120]) from None
    return trace_from_dict(raw)


def trace_from_dict(raw: object) -> Trace:
    """A trace from its parsed JSON (``build_trace``'s dict); TraceError as ``read_trace``."""
    if not isinstance(raw, dict) or raw.get("schema") != SCHEMA:
        raise TraceError("error.trace.not_trace", schema=SCHEMA)
    if raw.get("schema_version") != SCHEMA_VERSION:
        raise TraceError(
            "error.trace.version", got=repr(raw.get("schema_version")), supported=SCHEMA_VERSION
        )
    try:
        cycles = tuple(
            cycle_from_dict(item, f"cycles[{i}]") for i, item in enumerate(_list(raw, "cycles"))
        )
        plain = raw.get("plain") or []
        steps = tuple(
            step_from_dict(item, f"plain[{i}]")
            for i, item in enumerate(_list({"plain": plain}, "plain"))
        )
        prompt = _mapping(raw, "prompt")
        drafter = str(raw.get("drafter", ""))
        race = None
        if raw.get("race") is not None:
            race = race_from_dict(raw["race"])
        elif steps and cycles:
            race = single_race(drafter, cycles, steps)
        trace = Trace(
            cycles=cycles,
            steps=steps,
            race=race,
            recorded_at=str(raw.get("recorded_at", "")),
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
    if not trace.cycles:
        raise TraceError("error.trace.no_cycles")
    return trace


def _list(raw: Mapping[str, Any], name: str) -> list[Any]:
    return _record_list(raw.get(name), name)


def _mapping(raw: Mapping[str, Any], name: str) -> dict[str, Any]:
    return _record_mapping(raw.get(name), name)


def _record_list(value: object, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise RecordError(where, f"expected a list, got {type(value).__name__}")
    return value


def _record_mapping(value: object, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise RecordError(where, f"expected an object, got {type(value).__name__}")
    return value
