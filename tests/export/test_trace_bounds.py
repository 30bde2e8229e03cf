"""A trace is data from outside: every body a prober sent a hosted server is refused when read,
with a sentence naming the field, and no other exception escapes; a replay ends within its cap,
and when its tab closes. No model is loaded; the replays run on a fake clock."""

from __future__ import annotations

import copy
import dataclasses
import gc
import json
import re
import threading
import time
import types
import weakref
from pathlib import Path
from typing import Any

import pytest
from ui_events import make_cycle, plain_run, sample_run, trace_of

from specviz.app import export_panel, race_panel
from specviz.app.limits import HOSTED, LOCAL
from specviz.app.session import Session
from specviz.core import events
from specviz.core.events import Origin, Totals
from specviz.export.records import MAX_CYCLES, MAX_SECONDS, MAX_TEXT, MAX_TOKENS, RANGES
from specviz.export.trace import (
    MAX_DEPTH,
    MAX_TRACE_BYTES,
    Trace,
    TraceError,
    json_depth,
    read_trace,
    read_trace_file,
    trace_text,
)
from specviz.views import race_html as race_views


def base() -> dict[str, Any]:
    """A valid trace: three cycles (0.125, 0.30, 0.40 s) and a plain lane of four steps."""
    return trace_of(sample_run(), plain_run(n=4, per_token_s=0.05))


def refused(body: str | bytes, **read: Any) -> TraceError:
    """The TraceError *body* is refused with (any other exception fails the test)."""
    with pytest.raises(TraceError) as caught:
        read_trace(body, **read)
    return caught.value


def changed(path: str, value: Any) -> str:
    """The base trace as JSON with the value at *path* ("cycles.2.totals.elapsed_s") replaced;
    json.dumps writes NaN and Infinity as the literals Python's json reads back."""
    trace = base()
    *parents, last = [int(part) if part.isdigit() else part for part in path.split(".")]
    node = trace
    for part in parents:
        node = node[part]
    node[last] = value
    return json.dumps(trace)


# --- the prober's bodies, and their kin ---------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "value", "named"),
    [
        # A replay paced by 10¹² seconds: it held a worker thread for good.
        ("cycles.2.totals.elapsed_s", 1e12, "cycles[2].totals.elapsed_s"),
        ("cycles.2.totals.elapsed_s", MAX_SECONDS + 1, "cycles[2].totals.elapsed_s"),
        ("cycles.0.totals.elapsed_s", -5.0, "cycles[0].totals.elapsed_s"),
        ("cycles.0.totals.new_tokens", -3, "cycles[0].totals.new_tokens"),
        ("cycles.0.totals.new_tokens", 10**30, "cycles[0].totals.new_tokens"),
        ("cycles.0.timing.draft_s", float("nan"), "cycles[0].timing.draft_s"),
        ("cycles.1.drafted.0.q_draft", float("inf"), "cycles[1].drafted[0].q_draft"),
        ("cycles.1.drafted.0.p_target", -0.5, "cycles[1].drafted[0].p_target"),
        ("cycles.1.drafted.0.token_id", 2**40, "cycles[1].drafted[0].token_id"),
        ("cycles.1.drafted.0.token_id", -1, "cycles[1].drafted[0].token_id"),
        # Negative or huge indices were "list index out of range" in the views.
        ("cycles.0.drafted.1.position", 10**12, "cycles[0].drafted[1].position"),
        ("cycles.0.drafted.1.position", -1, "cycles[0].drafted[1].position"),
        ("cycles.0.drafted.1.position", 9, "cycles[0].drafted[1].position"),  # past γ = 4
        ("cycles.0.accepted_len", 10**9, "cycles[0].accepted_len"),
        ("cycles.0.accepted_len", 5, "cycles[0].accepted_len"),  # 4 drafted
        ("cycles.0.draft_len", 10**12, "cycles[0].draft_len"),
        ("cycles.0.rejection.position", 7, "cycles[0].rejection.position"),
        ("cycles.0.rejection.top_p.0.prob", 1e300, "cycles[0].rejection.top_p[0].prob"),
        ("cycles.0.context_len", -1, "cycles[0].context_len"),
        ("cycles.0.copied_from", [-4], "cycles[0].copied_from[0]"),
        ("cycles.0.totals.acceptance_rate", float("nan"), "cycles[0].totals.acceptance_rate"),
        ("cycles.1.totals.elapsed_s", 0.01, "cycles[1].totals.elapsed_s"),  # before cycle 0's
        ("cycles.0.emitted.0.text", "x" * 1_000_000, "cycles[0].emitted[0].text"),
        ("cycles.0.drafted.0.top_q", [{"token_id": 1, "text": "a", "prob": 0.1}] * 100, "top_q"),
        ("plain.3.totals.elapsed_s", 1e12, "plain[3].totals.elapsed_s"),
        ("plain.2.time_s", -1, "plain[2].time_s"),
        ("prompt.text", "y" * 1_000_000, "prompt.text"),
        ("text", "x" * 1_000_000, "text"),
        ("settings.temperature", float("nan"), "settings.temperature"),
        ("summary.specviz", {"speedup": float("-inf")}, "summary.specviz.speedup"),
        ("drafter", "d" * (MAX_TEXT + 1), "drafter"),
    ],
)
def test_a_bad_field_is_refused_naming_it(path: str, value: Any, named: str) -> None:
    error = refused(changed(path, value))
    assert error.key == "error.trace.record"
    assert named in error.message("en") and named in error.message("ja")


def test_a_race_is_held_to_the_same_bounds() -> None:
    race = {
        "repeats": 1,
        "complete": True,
        "lanes": [
            {
                "name": "draft-model",
                "runs": [
                    {
                        "repeat": 0,
                        "new_tokens": 9,
                        "complete": True,
                        "totals": dataclasses.asdict(sample_run()[-1].totals),
                        "events": [cycle.to_dict() for cycle in sample_run()],
                    }
                ],
            }
        ],
    }
    read_trace(changed("race", race))  # the race itself is fine
    for path, value, named in [
        ("lanes.0.runs.0.events.2.totals.elapsed_s", 1e12, "events[2].totals.elapsed_s"),
        ("lanes.0.runs.0.new_tokens", -1, "runs[0].new_tokens"),
        ("lanes.0.runs.0.new_tokens", "9", "runs[0].new_tokens"),
        ("lanes.0.runs.0.repeat", 10**9, "runs[0].repeat"),
        ("lanes.0.runs.0.complete", "no", "runs[0].complete"),
        ("lanes.0.runs.0.totals.elapsed_s", float("nan"), "runs[0].totals.elapsed_s"),
        ("lanes.0.runs", [race["lanes"][0]["runs"][0]] * 11, "race.lanes[0].runs"),
        ("lanes", race["lanes"] * 9, "race.lanes"),
        ("repeats", 0, "race.repeats"),
        ("repeats", 10**12, "race.repeats"),
        ("lanes.0.name", ["plain"], "race.lanes[0].name"),
    ]:
        bad = copy.deepcopy(race)
        *parents, last = [int(p) if p.isdigit() else p for p in path.split(".")]
        node: Any = bad
        for part in parents:
            node = node[part]
        node[last] = value
        assert named in refused(changed("race", bad)).message("en"), path


def minimal_cycle(index: int) -> dict[str, Any]:
    """A cycle with nothing drafted (a plain step of prompt lookup): about 700 bytes."""
    totals = Totals(index + 1, index + 1, 0, 0, 0, 0.01 * (index + 1), 0.0)
    return make_cycle(index, index, [], ("x", Origin.BONUS), totals).to_dict()


def test_more_cycles_than_any_run_holds_are_refused_before_they_are_built() -> None:
    # The prober's 19.8 MB of 22,161 cycles, each small: more than a run of the schema's largest
    # max_new_tokens can have (a cycle emits at least one token).
    trace = base()
    trace["cycles"] = [minimal_cycle(i) for i in range(22_161)]
    body = json.dumps(trace)
    assert len(body) < MAX_TRACE_BYTES
    error = refused(body)
    assert "cycles: 22,161 entries, more than the 4,160" in error.message("en")
    trace["cycles"] = trace["cycles"][:MAX_TOKENS]  # a run of the most tokens, one a cycle
    assert len(read_trace(json.dumps(trace)).cycles) == MAX_TOKENS < MAX_CYCLES


@pytest.mark.parametrize(
    "body",
    [
        b"[" * 100_000 + b"]" * 100_000,  # RecursionError in the parser, before
        b'{"schema": "specviz.trace", "settings": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
        b"{" + b'"a":{' * 5000 + b"}" * 5001,
    ],
)
def test_deep_nesting_is_refused_before_it_is_parsed(body: bytes) -> None:
    error = refused(body)
    assert error.key == "error.trace.too_deep"
    assert f"at most {MAX_DEPTH}" in error.message("en") and "階層" in error.message("ja")


def test_the_depth_is_counted_outside_strings() -> None:
    assert json_depth(b'{"a": "[[[{{{", "b": [1, {"c": "]]]\\"[["}]}') == 3
    assert json_depth(trace_text(base()).encode()) < MAX_DEPTH
    brackets = json.dumps({"text": "[" * 100_000, "more": ["]" * 10]})
    assert json_depth(brackets.encode()) == 2
    escapes = json.dumps(["\\", ['\\"[', '"', "{\\"], {"k": '\\"}'}])  # \ and \" in strings
    assert json_depth(escapes.encode()) == json_depth(json.dumps([[1], {}]).encode()) == 2


@pytest.mark.parametrize(
    "body",
    [
        b"\x00\xff not a trace {",
        b'{"schema": "specviz.trace", "n": ' + b"9" * 5000 + b"}",  # past int's digit limit
        "{'schema': 'specviz.trace'}",
        b"",
    ],
)
def test_what_is_no_json_is_refused_in_words(body: bytes | str) -> None:
    assert refused(body).key == "error.trace.not_json"


def test_odd_text_and_long_names_stay_trace_errors_of_bounded_length() -> None:
    assert refused("\ud800 [").key == "error.trace.not_json"  # a lone surrogate in a str
    version = json.dumps({"schema": "specviz.trace", "schema_version": "v" * 10**6})
    assert len(refused(version).message("en")) < 200
    error = refused(changed("hardware", {"k" * 10**6: 1}))
    assert "hardware.kkkk" in error.message("en") and len(error.message("en")) < 300


BAD_VALUES: list[Any] = [-1, 10**12, 1e12, float("nan"), float("-inf"), "x", None, [], {}, True]


def leaf_paths(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(node, dict):
        return [p for key, value in node.items() for p in leaf_paths(value, (*path, key))]
    if isinstance(node, list) and node:
        return [p for i, value in enumerate(node) for p in leaf_paths(value, (*path, i))]
    return [path]


def dotted(path: tuple[Any, ...]) -> str:
    """A path as a refusal names it: ("cycles", 0, "timing") -> "cycles[0].timing"."""
    return "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in path)[1:]


def test_no_exception_but_trace_error_escapes_a_damaged_record() -> None:
    trace = base()
    seen, paths = set(), []
    for path in leaf_paths({key: trace[key] for key in ("cycles", "plain")}):
        shape = re.sub(r"\d+", "*", ".".join(map(str, path)))
        if shape not in seen:
            seen.add(shape)
            paths.append(path)
    assert len(paths) > 40
    for path in paths:
        name = path[-1]
        for value in BAD_VALUES:
            bad = copy.deepcopy(trace)
            node = bad
            for part in path[:-1]:
                node = node[part]
            node[name] = value
            try:
                read_trace(json.dumps(bad))
            except TraceError as error:
                message = error.message("en")
                assert isinstance(name, int) or dotted(path[:-1]) in message, message
                assert isinstance(name, int) or repr(name) in message or name in message
                continue
            # Read back: only what the field may hold (None where it is optional, any value of a
            # rate the reader derives again or of a string).
            assert name not in RANGES or value is None, (path, value)


def test_every_number_of_every_record_has_a_range() -> None:
    classes = [events.TokenProb, events.DraftToken, events.EmittedToken, events.Rejection]
    classes += [events.Timing, events.Totals, events.Cycle, events.Step]
    numbers = {"int", "float", "float | None", "int | None"}
    unranged = [
        f"{cls.__name__}.{field.name}"
        for cls in classes
        for field in dataclasses.fields(cls)
        if str(field.type) in numbers and field.name not in RANGES
    ]
    assert unranged == []


def test_a_valid_trace_reads_as_before() -> None:
    trace = read_trace(trace_text(base()))
    assert list(trace.cycles) == sample_run()
    assert list(trace.steps) == plain_run(n=4, per_token_s=0.05)
    assert trace.race is not None and [lane.name for lane in trace.race.lanes] == [
        "plain",
        "draft-model",
    ]


# --- size ------------------------------------------------------------------------------------------


def test_a_hosted_app_reads_traces_up_to_its_own_cap(tmp_path: Path) -> None:
    assert HOSTED.trace_bytes < LOCAL.trace_bytes == MAX_TRACE_BYTES
    assert HOSTED.max_file_size == "12mb" and LOCAL.max_file_size == "20mb"  # Gradio's cap
    body = b" " * (HOSTED.trace_bytes + 1)
    error = refused(body, max_bytes=HOSTED.trace_bytes)
    assert error.key == "error.trace.too_big" and "at most 12 MB" in error.message("en")
    assert refused(body).key == "error.trace.not_json"  # locally that size is read
    big = tmp_path / "big.json"
    with big.open("wb") as file:
        file.truncate(HOSTED.trace_bytes + 1)  # sparse: nothing written
    with pytest.raises(TraceError, match="at most 12 MB"):
        read_trace_file(big, HOSTED.trace_bytes)


# --- replays: bounded in time, on a fake clock ----------------------------------------------------


class FakeClock:
    """perf_counter and sleep for a replay: time moves only when the replay sleeps."""

    def __init__(self) -> None:
        self.now = 0.0

    def perf_counter(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    fake = FakeClock()
    fake_time = types.SimpleNamespace(perf_counter=fake.perf_counter, sleep=fake.sleep)
    for module in (export_panel, race_panel):
        monkeypatch.setattr(module, "time", fake_time)
    return fake


def long_trace(last_s: float) -> Trace:
    """The base trace, its last cycle (and so its race's drafter lane) measured at *last_s*."""
    return read_trace(changed("cycles.2.totals.elapsed_s", last_s))


def test_a_replay_longer_than_its_cap_plays_faster_and_ends_in_time(clock: FakeClock) -> None:
    trace = long_trace(MAX_SECONDS)  # a day: the longest a trace may say a run took
    duration = export_panel.replay_duration(trace)
    assert duration >= MAX_SECONDS
    frames = list(export_panel.replay_frames(trace, "en", max_seconds=60))
    assert clock.now <= 60 + 1 / race_panel.REPLAY_FPS  # the visitor's seconds
    assert len(frames) <= 60 * race_panel.REPLAY_FPS + 2
    times = [at for _, _, at in frames]
    assert times == sorted(times) and times[-1] == duration
    counts = [len(sess.cycles) for sess, _, _ in frames]
    assert counts == sorted(counts) and counts[-1] == 3 and counts[len(counts) // 2] == 2
    assert "faster than measured" in frames[1][1]  # the race's status says so
    note = export_panel.replay_note(trace, 60, "en")
    assert "longer than the 60 s a replay may last here: it plays 1440.0× faster" in note
    assert "倍" in export_panel.replay_note(trace, 60, "ja")


def test_a_replay_within_its_cap_plays_at_measured_speed(clock: FakeClock) -> None:
    trace = long_trace(30.0)
    frames = list(export_panel.replay_frames(trace, "en", max_seconds=60))
    assert clock.now == pytest.approx(export_panel.replay_duration(trace), abs=0.1)
    assert export_panel.replay_note(trace, 60, "en") == ""
    assert "faster" not in frames[1][1]


def test_the_races_own_replay_is_capped_too(clock: FakeClock) -> None:
    trace = long_trace(3600.0)
    sess = Session(cycles=list(trace.cycles), race=trace.race)
    frames = list(race_panel.replay_frames(sess, "en"))  # the hosted cap unless told
    assert clock.now <= HOSTED.replay_seconds + 1 / race_panel.REPLAY_FPS
    assert trace.race is not None
    speed = race_views.replay_speed(race_views.replay_duration(trace.race), 60)
    assert frames[-1] == race_views.replay_frame(
        trace.race, race_views.replay_duration(trace.race), speed=speed
    )
    clock.now = 0.0
    list(race_panel.replay_frames(sess, "en", max_seconds=LOCAL.replay_seconds))
    assert HOSTED.replay_seconds < clock.now <= LOCAL.replay_seconds + 1


def test_a_finished_replay_keeps_the_records_not_the_trace(clock: FakeClock) -> None:
    trace = long_trace(2.0)
    kept = weakref.ref(trace)
    cycles = trace.cycles
    *_, (final, _, _) = export_panel.replay_frames(trace, "en")
    del trace
    gc.collect()
    assert kept() is None  # nothing of the replay's holds the Trace (its settings, summary, ...)
    assert final.cycles == list(cycles) and final.race_done  # what the inspector and Replay read


# --- a closed tab ends its replay (a real server) -------------------------------------------------


def test_a_closed_tab_ends_its_replay_and_one_plays_per_visitor(monkeypatch) -> None:
    """Gradio's queue closes a generator at its next yield once the client's stream has gone;
    the replay yields every frame, so a replay whose next cycle is minutes away still ends."""
    import httpx
    from hosted_fixtures import launch, replay_fn_index

    closed = threading.Event()
    real_frames = export_panel.replay_frames

    def watched(*args: Any, **kwargs: Any) -> Any:
        try:
            yield from real_frames(*args, **kwargs)
        finally:
            closed.set()

    monkeypatch.setattr(export_panel, "replay_frames", watched)
    demo, url = launch(None, LOCAL)
    try:
        fn_index = replay_fn_index(demo)
        api = url.rstrip("/") + "/gradio_api"
        # No race, its last cycle 600 s in: nothing changes on the page for minutes after 0.3 s.
        unraced = trace_of(sample_run())
        unraced["cycles"][2]["totals"]["elapsed_s"] = 600.0
        body = json.dumps(unraced).encode()
        with httpx.Client(timeout=30) as http:
            path = http.post(api + "/upload", files={"files": ("t.json", body)}).json()[0]
            data = [{"path": path, "orig_name": "t.json", "meta": {"_type": "gradio.FileData"}}, ""]
            join = {"data": data, "fn_index": fn_index, "session_hash": "visitor1"}
            assert http.post(api + "/queue/join", json=join).status_code == 200
            refusal = ""
            with http.stream("GET", api + "/queue/data", params={"session_hash": "visitor1"}) as s:
                generating = 0
                for line in s.iter_lines():
                    message = json.loads(line[5:]) if line.startswith("data:") else {}
                    if message.get("msg") == "process_generating":
                        generating += 1
                        if generating == 3:  # playing: a second upload from the same tab
                            assert http.post(api + "/queue/join", json=join).status_code == 200
                    if message.get("msg") == "process_completed":
                        refusal = str((message.get("output") or {}).get("error"))
                        # The replay is now past its last change for minutes: the tab closes.
                        time.sleep(1.0)
                        break
            # The stream is closed: the tab has gone.
            assert "already has a replay playing" in refusal
            assert closed.wait(10), "the replay went on after its tab closed"
            # The same tab again, a short replay played to its end: its frames with nothing new
            # (gr.skip()) are taken as no updates, not as one output value.
            unraced["cycles"][2]["totals"]["elapsed_s"] = 1.0
            body = json.dumps(unraced).encode()
            path = http.post(api + "/upload", files={"files": ("t.json", body)}).json()[0]
            join["data"] = [{"path": path, "meta": {"_type": "gradio.FileData"}}, ""]
            assert http.post(api + "/queue/join", json=join).status_code == 200
            generating, done = 0, {}
            with http.stream("GET", api + "/queue/data", params={"session_hash": "visitor1"}) as s:
                for line in s.iter_lines():
                    message = json.loads(line[5:]) if line.startswith("data:") else {}
                    generating += message.get("msg") == "process_generating"
                    if message.get("msg") == "process_completed":
                        done = message
                        break
            # Frames come about ten a second of replay, fewer on a busy machine: several of
            # them, each with nothing new after the first cycles, and the replay still succeeds.
            assert done["success"] and generating > 3, done
    finally:
        demo.close()
