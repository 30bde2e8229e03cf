"""`python -m specviz loadtest --abuse`: hostile visitors beside honest ones, against a running app.

A wave of hostile trace uploads (each a recorded trace changed the way an attacker would: a
replay that would last 10¹² seconds, negative and huge numbers, NaN, JSON nested 100,000 deep,
a megabyte of token text, 19 MB of cycles, bytes that are no JSON) goes
to the replay upload as a browser sends it, each connection dropped after a few seconds as a
closing tab drops it. Beside them, honest visitors run ``/generate`` as the load test's do, and
requests for presets the server does not offer try to evict the shared pair. ``/health`` is
polled throughout. The report says whether every honest run completed, how long ``/health`` took
at worst, what each hostile upload was answered, and the server's memory before and after.
"""

from __future__ import annotations

import json
import math
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from specviz.cli.visitors import Visit, health, percentile, plan_visits, run_visit

UPLOAD_ELEM_ID = "sv-replay-upload"  # the replay upload's elem_id (specviz.app.export_panel)
# Presets a visitor may ask for by id that a hosted server does not offer by default: each would
# evict the room's pair for a larger one.
EVICTING_PRESETS = ("gpt2-to-gpt2-xl", "qwen2.5-0.5b-to-7b", "llama-3.2-1b-to-3.1-8b")


def _last_cycle_time(trace: dict[str, Any], seconds: float) -> dict[str, Any]:
    trace["cycles"][-1]["totals"]["elapsed_s"] = seconds
    return trace


def _negative(trace: dict[str, Any]) -> dict[str, Any]:
    trace["cycles"][0]["totals"]["elapsed_s"] = -5.0
    trace["cycles"][0]["totals"]["new_tokens"] = -3
    return trace


def _huge(trace: dict[str, Any]) -> dict[str, Any]:
    trace["cycles"][0]["totals"]["new_tokens"] = 10**30
    trace["settings"]["gamma"] = 10**12
    return trace


def _long_text(trace: dict[str, Any]) -> dict[str, Any]:
    trace["text"] = "x" * 1_000_000
    trace["prompt"]["text"] = "y" * 1_000_000
    return trace


def _many_cycles(trace: dict[str, Any], max_bytes: int) -> dict[str, Any]:
    """The trace's cycles repeated until the file nears *max_bytes*."""
    one = len(json.dumps(trace["cycles"][0]))
    copies = max(1, int(max_bytes * 0.95) // max(one, 1))
    trace["cycles"] = [trace["cycles"][i % len(trace["cycles"])] for i in range(copies)]
    return trace


def hostile_bodies(trace_text: str, max_bytes: int) -> dict[str, bytes]:
    """Each hostile upload's file, by name, made from a real trace's text."""

    def changed(change: Callable[[dict[str, Any]], dict[str, Any]]) -> bytes:
        return json.dumps(change(json.loads(trace_text))).encode()

    nan = json.loads(trace_text)
    nan["cycles"][-1]["totals"]["elapsed_s"] = math.nan  # json.dumps writes the NaN literal
    return {
        "endless": changed(lambda trace: _last_cycle_time(trace, 1e12)),
        "negative": changed(_negative),
        "huge": changed(_huge),
        "nan": json.dumps(nan).encode(),
        "nested": b"[" * 100_000 + b"]" * 100_000,
        "long_text": changed(_long_text),
        "largest": changed(lambda trace: _many_cycles(trace, max_bytes)),
        "not_json": b"\x00\xff not a trace {",
    }


@dataclass
class HostileUpload:
    """One hostile upload as the abuse test saw it."""

    body: str
    outcome: str = "lost"  # refused (a message), played, held (still going when dropped),
    # upload_refused (the upload route said no), failed (the connection broke), lost
    message: str = ""
    seconds: float | None = None


@dataclass
class HealthLog:
    """``/health`` polled every *every_s* while the wave runs: each answer's latency."""

    latencies: list[float] = field(default_factory=list)
    failures: int = 0
    errors: list[str] = field(default_factory=list)
    worst_at_s: float | None = None  # seconds into the wave when the slowest answer was asked

    @property
    def worst_s(self) -> float | None:
        return max(self.latencies) if self.latencies else None


@dataclass
class AbuseReport:
    url: str
    hostile: list[HostileUpload]
    honest: list[Visit]
    evictions: dict[str, str]  # preset id -> what the server answered
    health: HealthLog
    rss_before: int | None
    rss_after: int | None
    wall_s: float

    @property
    def rss_change(self) -> float | None:
        if not self.rss_before or not self.rss_after:
            return None
        return self.rss_after / self.rss_before - 1.0

    def counts(self, items: Sequence[Any]) -> dict[str, int]:
        counted: dict[str, int] = {}
        for item in items:
            counted[item.outcome] = counted.get(item.outcome, 0) + 1
        return counted


def upload_dependency(url: str) -> int:
    """The fn_index of the replay upload's event, read from the page's config."""
    import httpx

    config = httpx.get(url.rstrip("/") + "/config", timeout=120).json()
    upload_ids = {
        component["id"]
        for component in config["components"]
        if component.get("props", {}).get("elem_id") == UPLOAD_ELEM_ID
    }
    for dependency in config["dependencies"]:
        if any(
            target[0] in upload_ids and target[1] == "upload" for target in dependency["targets"]
        ):
            return int(dependency["id"])
    raise LookupError(f"no upload event on {UPLOAD_ELEM_ID!r} at {url}")


def hostile_upload(url: str, fn_index: int, name: str, body: bytes, hold_s: float) -> HostileUpload:
    """Upload *body* as a browser does, join the replay's queue with it, read the event stream for
    at most *hold_s* seconds, then drop the connection (a closed tab)."""
    import httpx

    visit = HostileUpload(name)
    start = time.perf_counter()
    base = url.rstrip("/") + "/gradio_api"
    session_hash = uuid.uuid4().hex[:11]
    try:
        with httpx.Client(timeout=60) as http:
            uploaded = http.post(
                base + "/upload", files={"files": (f"{name}.json", body, "application/json")}
            )
            if uploaded.status_code != 200:
                visit.outcome, visit.message = "upload_refused", uploaded.text[:200]
                return visit
            path = uploaded.json()[0]
            data = [
                {
                    "path": path,
                    "orig_name": f"{name}.json",
                    "size": len(body),
                    "mime_type": "application/json",
                    "meta": {"_type": "gradio.FileData"},
                },
                "",  # the prompt box, which the page sends beside the file
            ]
            joined = http.post(
                base + "/queue/join",
                json={"data": data, "fn_index": fn_index, "session_hash": session_hash},
            )
            if joined.status_code == 422:  # the replay's validator: refused before it queued
                refusals = joined.json().get("detail") or []
                words = [item.get("message", "") for item in refusals if isinstance(item, dict)]
                visit.outcome, visit.message = "refused", " ".join(filter(None, words))[:300]
                visit.seconds = time.perf_counter() - start
                return visit
            if joined.status_code != 200:
                visit.outcome, visit.message = "upload_refused", joined.text[:200]
                return visit
            visit.outcome = _read_until(http, base, session_hash, start + hold_s, visit)
    except Exception as error:  # counted and named, never raised
        visit.outcome, visit.message = "failed", str(error) or type(error).__name__
    visit.seconds = time.perf_counter() - start
    return visit


def _read_until(
    http: Any, base: str, session_hash: str, deadline: float, visit: HostileUpload
) -> str:
    """Read the event stream until the event completes ("refused" with its message, or "played")
    or *deadline* passes ("held": the tab closes with the replay still going)."""
    import httpx

    timeout = httpx.Timeout(5.0, read=max(0.5, deadline - time.perf_counter()))
    try:
        with http.stream(
            "GET", base + "/queue/data", params={"session_hash": session_hash}, timeout=timeout
        ) as stream:
            for line in stream.iter_lines():
                if time.perf_counter() > deadline:
                    return "held"
                if not line.startswith("data:"):
                    continue
                message = json.loads(line[5:])
                if message.get("msg") == "process_completed":
                    output = message.get("output") or {}
                    if message.get("success") is False or output.get("error"):
                        visit.message = str(output.get("error") or "")[:300]
                        return "refused"
                    return "played"
    except httpx.ReadTimeout:
        return "held"
    return "held" if time.perf_counter() >= deadline else "lost"


def poll_health(url: str, stop: threading.Event, log: HealthLog, every_s: float = 0.5) -> None:
    """``/health`` every *every_s* until *stop*, as a host's monitor calls it (``/run/health``,
    outside the queue): each answer's latency, or a failure with its words."""
    import httpx

    endpoint = url.rstrip("/") + "/gradio_api/run/health"
    began_all = time.perf_counter()
    while not stop.is_set():
        began = time.perf_counter()
        try:
            with httpx.Client(timeout=30) as http:
                answer = http.post(endpoint, json={"data": []})
                answer.raise_for_status()
            latency = time.perf_counter() - began
            log.latencies.append(latency)
            if latency >= max(log.latencies):
                log.worst_at_s = began - began_all
        except Exception as error:
            log.failures += 1
            log.errors.append(str(error)[:200] or type(error).__name__)
        stop.wait(every_s)


def try_evictions(url: str, presets: Sequence[str]) -> dict[str, str]:
    """Ask ``/generate`` for each preset in *presets*; what the server answered each."""
    from gradio_client import Client

    client = Client(url, verbose=False)
    answers = {}
    for preset in presets:
        try:
            client.predict("Hello", preset=preset, max_new_tokens=4, api_name="/generate")
            answers[preset] = "ran"
        except Exception as error:
            answers[preset] = str(error)[:200] or type(error).__name__
    return answers


def _rss(url: str) -> int | None:
    rss = health(url).get("rss_bytes")
    return int(rss) if rss else None


def abuse_test(
    url: str,
    trace_text: str,
    *,
    hostile: int = 100,
    honest: int = 10,
    max_new_tokens: int = 16,
    max_upload_bytes: int = 19 * 2**20,
    hold_s: float = 15.0,
    settle_s: float = 5.0,
) -> AbuseReport:
    """*hostile* uploads (the bodies in turn) and *honest* visitors at once, /health polled."""
    import httpx
    from gradio_client import Client

    bodies = hostile_bodies(trace_text, max_upload_bytes)
    names = list(bodies)
    fn_index = upload_dependency(url)

    def client_for() -> Any:
        return Client(url, verbose=False, httpx_kwargs={"timeout": httpx.Timeout(60.0, read=None)})

    # Memory is compared from a server that has served a run: a fresh one maps its weights in on
    # the first, which would read as the wave's growth.
    run_visit(client_for, Visit(-1, "run", 1, "Warm up."), max_new_tokens)
    rss_before = _rss(url)
    log, stop = HealthLog(), threading.Event()
    poller = threading.Thread(target=poll_health, args=(url, stop, log), daemon=True)
    poller.start()
    uploads = [HostileUpload(names[i % len(names)]) for i in range(hostile)]
    visits = [Visit(v.index, "run", v.seed, v.prompt) for v in plan_visits(honest)]
    started = time.perf_counter()

    def hostile_one(i: int) -> None:
        name = uploads[i].body
        uploads[i] = hostile_upload(url, fn_index, name, bodies[name], hold_s)

    threads = [threading.Thread(target=hostile_one, args=(i,), daemon=True) for i in range(hostile)]
    threads += [
        threading.Thread(target=run_visit, args=(client_for, visit, max_new_tokens), daemon=True)
        for visit in visits
    ]
    for thread in threads:
        thread.start()
    evictions = try_evictions(url, EVICTING_PRESETS)
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - started
    time.sleep(settle_s)  # dropped connections and ended replays release their memory
    stop.set()
    poller.join()
    return AbuseReport(url, uploads, visits, evictions, log, rss_before, _rss(url), wall)


def report_lines(report: AbuseReport) -> list[str]:
    """The report in plain lines (numbers and the server's own words; no catalogue needed)."""
    honest = report.counts(report.honest)
    hostile = report.counts(report.hostile)
    worst = report.health.worst_s
    p95 = percentile(report.health.latencies, 0.95)
    change = report.rss_change
    lines = [
        f"honest visitors: {len(report.honest)}: "
        + ", ".join(f"{name} {count}" for name, count in sorted(honest.items())),
        f"hostile uploads: {len(report.hostile)}: "
        + ", ".join(f"{name} {count}" for name, count in sorted(hostile.items())),
        f"/health: {len(report.health.latencies)} answers, {report.health.failures} failed, "
        f"p95 {_s(p95)}, worst {_s(worst)} (asked at {_s(report.health.worst_at_s)})"
        + "".join(f"; {error}" for error in sorted(set(report.health.errors))),
        f"server memory: {_mb(report.rss_before)} MB before, {_mb(report.rss_after)} MB after "
        f"({'—' if change is None else f'{change:+.1%}'}); wave {report.wall_s:.1f} s",
    ]
    by_body: dict[str, set[str]] = {}
    for upload in report.hostile:
        by_body.setdefault(upload.body, set()).add(f"{upload.outcome}: {upload.message[:160]}")
    lines += [f"  {body}: {' | '.join(sorted(seen))}" for body, seen in sorted(by_body.items())]
    lines += [f"  evict {preset}: {answer}" for preset, answer in report.evictions.items()]
    return lines


def abuse_failed(
    report: AbuseReport, health_within_s: float = 2.0, rss_within: float = 0.05
) -> list[str]:
    """What the goals say went wrong (empty: every goal held)."""
    problems = []
    bad = [v for v in report.honest if v.outcome != "completed"]
    if bad:
        problems.append(f"{len(bad)} honest runs did not complete")
    if report.health.failures or (report.health.worst_s or 0) > health_within_s:
        problems.append(f"/health failed or took over {health_within_s} s")
    played = [u for u in report.hostile if u.outcome in ("played", "held", "lost")]
    if played:
        problems.append(f"{len(played)} hostile uploads were not refused")
    if any(answer == "ran" for answer in report.evictions.values()):
        problems.append("a preset the server does not offer ran")
    if report.rss_change is not None and report.rss_change > rss_within:
        problems.append(f"server memory grew {report.rss_change:+.1%}")
    return problems


def _s(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f} s"


def _mb(value: int | None) -> str:
    return "—" if value is None else f"{value / 2**20:.0f}"


def read_trace_text(path: Path) -> str:
    """The base trace's text (a recorded run: ``python -m specviz generate --trace FILE``)."""
    return path.read_text(encoding="utf-8")
