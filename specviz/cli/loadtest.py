"""`python -m specviz loadtest`: a room of visitors against a running app, through its API.

N visitors press Run at once on ``/generate``, each with its own seed and prompt; some press Stop
after the first cycle and some close their connection mid-run (the browser tab closing). The
report counts completed, refused (queue full), cancelled and failed runs, the wait and the time to
the first cycle (p50, p95), the tokens per second the server delivered to the room, and the
server's memory and threads before and after (from its ``/health`` endpoint). Then every completed
run is repeated alone, one at a time: a seeded run must give the same tokens whether or not 29
other visitors shared the engine (no cross-talk between sessions).
"""

from __future__ import annotations

import argparse
import json
import os
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from specviz.cli.options import print_json, say
from specviz.cli.visitors import Visit, health, percentile, plan_visits, run_visit, visit_arguments


@dataclass
class Report:
    """What the load test measured, as the CLI prints it and ``--json`` writes it."""

    url: str
    sessions: int
    max_new_tokens: int
    waves: int
    counts: dict[str, int]
    wait_p50_s: float | None
    wait_p95_s: float | None
    first_cycle_p50_s: float | None
    first_cycle_p95_s: float | None
    tokens_per_s: float
    wall_s: float
    health_before: dict[str, Any]
    health_after_first_wave: dict[str, Any]
    health_after: dict[str, Any]
    cross_talk: list[int]  # indices of completed runs whose solo repeat differed
    visits: list[Visit] = field(default_factory=list)
    # Server RSS in bytes after each wave (None where the server did not say): whether memory
    # levels off or keeps growing shows only wave by wave.
    rss_per_wave: list[int | None] = field(default_factory=list)

    @property
    def rss_growth(self) -> float | None:
        """Server RSS after the last wave relative to after the first (0.02: 2 % more)."""
        first = self.health_after_first_wave.get("rss_bytes")
        last = self.health_after.get("rss_bytes")
        if not first or not last:
            return None
        return float(last) / float(first) - 1.0


@dataclass(frozen=True)
class GenerateEndpoint:
    """What a raw queue request to ``/generate`` needs, read once per load test."""

    fn_index: int
    names: tuple[str, ...]  # the parameters in the order the queue takes them
    defaults: dict[str, Any]

    def data(self, given: dict[str, Any]) -> list[Any]:
        """The positional inputs: *given* by name, every other parameter at its default."""
        return [given.get(name, self.defaults.get(name)) for name in self.names]


def read_generate_endpoint(url: str) -> GenerateEndpoint:
    """``/generate``'s parameters (from the API description) and its index (from ``/config``)."""
    import httpx
    from gradio_client import Client

    endpoint = Client(url, verbose=False).view_api(return_format="dict", print_info=False)[
        "named_endpoints"
    ]["/generate"]
    dependencies = httpx.get(url.rstrip("/") + "/config", timeout=120).json()["dependencies"]
    return GenerateEndpoint(
        fn_index=next(
            dependency["id"]
            for dependency in dependencies
            if dependency.get("api_name") == "generate"
        ),
        names=tuple(parameter["parameter_name"] for parameter in endpoint["parameters"]),
        defaults={
            parameter["parameter_name"]: parameter.get("parameter_default")
            for parameter in endpoint["parameters"]
        },
    )


def disconnect_visit(
    url: str, endpoint: GenerateEndpoint, visit: Visit, max_new_tokens: int
) -> Visit:
    """A visitor who closes the tab mid-run: joins the queue as a browser does, reads the event
    stream until the first cycle arrives, then drops the connection without a word."""
    import httpx

    start = time.perf_counter()
    session_hash = uuid.uuid4().hex[:11]
    try:
        data = endpoint.data(visit_arguments(visit, max_new_tokens))
        base = url.rstrip("/") + "/gradio_api"
        with httpx.Client(timeout=120) as http:
            joined = http.post(
                base + "/queue/join",
                json={"data": data, "fn_index": endpoint.fn_index, "session_hash": session_hash},
            )
            if joined.status_code == 503:
                visit.outcome = "refused"
                return visit
            joined.raise_for_status()
            with http.stream(
                "GET", base + "/queue/data", params={"session_hash": session_hash}
            ) as stream:
                for line in stream.iter_lines():
                    if not line.startswith("data:"):
                        continue
                    message = json.loads(line[5:])
                    kind = message.get("msg")
                    now = time.perf_counter() - start
                    if kind == "process_starts" and visit.wait_s is None:
                        visit.wait_s = now
                    if kind == "process_generating":
                        visit.first_cycle_s = now
                        break  # the tab closes here
                    if kind == "process_completed":
                        break
        visit.outcome = "cancelled"
    except Exception as error:
        visit.error = str(error) or type(error).__name__
        visit.outcome = "failed"
    visit.total_s = time.perf_counter() - start
    return visit


def run_wave(
    url: str, endpoint: GenerateEndpoint, visits: Sequence[Visit], max_new_tokens: int
) -> None:
    """All of a wave's visitors at once, each on its own thread and its own client session."""
    import httpx
    from gradio_client import Client

    def client_for() -> Any:
        # No read limit: gradio_client's Stop (a POST to /cancel) has a 5 s default, which a
        # busy server can take longer than to answer, and a visitor's Stop is not a failure.
        return Client(url, verbose=False, httpx_kwargs={"timeout": httpx.Timeout(60.0, read=None)})

    def one(visit: Visit) -> None:
        if visit.role == "disconnect":
            disconnect_visit(url, endpoint, visit, max_new_tokens)
        else:
            run_visit(client_for, visit, max_new_tokens)

    threads = [threading.Thread(target=one, args=(visit,), daemon=True) for visit in visits]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def check_alone(url: str, visits: Sequence[Visit], max_new_tokens: int) -> list[int]:
    """Repeat every completed run alone; the indices of those whose text differed."""
    from gradio_client import Client

    client = Client(url, verbose=False)
    differed = []
    for visit in visits:
        if visit.outcome != "completed":
            continue
        alone = Visit(visit.index, "run", visit.seed, visit.prompt)
        run_visit(lambda: client, alone, max_new_tokens)
        visit.alone_equal = alone.outcome == "completed" and alone.text == visit.text
        if not visit.alone_equal:
            differed.append(visit.index)
    return differed


def load_test(
    url: str, sessions: int, max_new_tokens: int, waves: int = 1, check: bool = True
) -> Report:
    """Drive ``waves`` waves of ``sessions`` concurrent visitors; the measured report."""
    before = health(url)
    endpoint = read_generate_endpoint(url)
    visits: list[Visit] = []
    after_waves: list[dict[str, Any]] = []
    start = time.perf_counter()
    for wave in range(waves):
        wave_visits = plan_visits(sessions, wave)
        run_wave(url, endpoint, wave_visits, max_new_tokens)
        visits.extend(wave_visits)
        after_waves.append(health(url))
    wall = time.perf_counter() - start
    after = after_waves[-1]
    differed = check_alone(url, visits, max_new_tokens) if check else []
    counts = {name: 0 for name in ("completed", "refused", "cancelled", "failed", "lost")}
    for visit in visits:
        counts[visit.outcome] += 1
    waits = [v.wait_s for v in visits if v.wait_s is not None and v.outcome != "refused"]
    firsts = [v.first_cycle_s for v in visits if v.first_cycle_s is not None]
    return Report(
        url=url,
        sessions=sessions,
        max_new_tokens=max_new_tokens,
        waves=waves,
        counts=counts,
        wait_p50_s=percentile(waits, 0.5),
        wait_p95_s=percentile(waits, 0.95),
        first_cycle_p50_s=percentile(firsts, 0.5),
        first_cycle_p95_s=percentile(firsts, 0.95),
        tokens_per_s=sum(v.tokens for v in visits) / wall if wall > 0 else 0.0,
        wall_s=wall,
        health_before=before,
        health_after_first_wave=after_waves[0],
        health_after=after,
        cross_talk=differed,
        visits=visits,
        rss_per_wave=[_rss(answer) for answer in after_waves],
    )


def add_loadtest_command(commands: Any) -> None:
    """Register ``loadtest`` on the CLI's subcommands."""
    parser = commands.add_parser(
        "loadtest", help="drive N concurrent visitors against a running app (its URL)"
    )
    parser.add_argument(
        "--url", required=True, help="the app's address, e.g. http://127.0.0.1:7860"
    )
    parser.add_argument("--sessions", type=int, default=6, help="visitors at once (default 6)")
    parser.add_argument("--max-new-tokens", type=int, default=8, help="tokens per run (default 8)")
    parser.add_argument(
        "--waves", type=int, default=1, help="times the room presses Run together (default 1)"
    )
    parser.add_argument(
        "--no-alone-check",
        action="store_true",
        help="skip repeating each completed run alone (the cross-talk check)",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--abuse",
        action="store_true",
        help="hostile trace uploads and eviction attempts beside --sessions honest visitors; "
        "exit 1 unless every honest run completes, /health answers within 2 s, every hostile "
        "upload is refused and memory ends within 5 %% of its start",
    )
    parser.add_argument(
        "--trace",
        type=Path,
        metavar="FILE",
        help="with --abuse: a recorded trace the hostile uploads are made from "
        "(python -m specviz generate --trace FILE)",
    )
    parser.add_argument(
        "--hostile", type=int, default=100, help="with --abuse: hostile uploads (default 100)"
    )
    parser.add_argument(
        "--hold",
        type=float,
        default=15.0,
        help="with --abuse: seconds each hostile upload reads before dropping (default 15)",
    )
    parser.add_argument(
        "--equal-priority",
        action="store_true",
        help="with --abuse on this machine's own server: keep the wave at the server's CPU "
        "priority (by default it yields, as a remote attacker's own machine would)",
    )
    parser.set_defaults(run=run_loadtest)


def run_loadtest(args: argparse.Namespace) -> int:
    """The ``loadtest`` command: run it, print the report; exit 1 if a run was lost or failed or
    a run differed from itself done alone."""
    if args.sessions < 1 or args.max_new_tokens < 1 or args.waves < 1:
        say("cli.loadtest.bad_size", args.lang)
        return 2
    if args.abuse:
        return run_abuse(args)
    report = load_test(
        args.url, args.sessions, args.max_new_tokens, args.waves, check=not args.no_alone_check
    )
    if args.json:
        out = asdict(report)
        out["rss_growth"] = report.rss_growth
        print_json(out)
    else:
        print_report(report, args.lang)
    bad = report.counts["failed"] + report.counts["lost"] + len(report.cross_talk)
    return 1 if bad else 0


def _rss(health_answer: dict[str, Any]) -> int | None:
    rss = health_answer.get("rss_bytes")
    return int(rss) if rss else None


def _seconds(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def _megabytes(health_answer: dict[str, Any]) -> str:
    rss = health_answer.get("rss_bytes")
    return "—" if not rss else f"{float(rss) / 2**20:.0f}"


def print_report(report: Report, lang: str) -> None:
    """The report as the CLI's lines, worded by the catalogue."""
    counts = report.counts
    say(
        "cli.loadtest.runs",
        lang,
        runs=len(report.visits),
        sessions=report.sessions,
        waves=report.waves,
        tokens=report.max_new_tokens,
        completed=counts["completed"],
        refused=counts["refused"],
        cancelled=counts["cancelled"],
        failed=counts["failed"],
        lost=counts["lost"],
    )
    say(
        "cli.loadtest.times",
        lang,
        wait50=_seconds(report.wait_p50_s),
        wait95=_seconds(report.wait_p95_s),
        first50=_seconds(report.first_cycle_p50_s),
        first95=_seconds(report.first_cycle_p95_s),
        rate=f"{report.tokens_per_s:.2f}",
        wall=f"{report.wall_s:.1f}",
    )
    growth = report.rss_growth
    say(
        "cli.loadtest.memory",
        lang,
        before=_megabytes(report.health_before),
        first=_megabytes(report.health_after_first_wave),
        after=_megabytes(report.health_after),
        growth="—" if growth is None else f"{growth:+.1%}",
        threads_first=report.health_after_first_wave.get("threads", "—"),
        threads=report.health_after.get("threads", "—"),
    )
    if len(report.rss_per_wave) > 2:
        say(
            "cli.loadtest.memory_waves",
            lang,
            megabytes=", ".join(
                "—" if rss is None else f"{rss / 2**20:.0f}" for rss in report.rss_per_wave
            ),
        )
    checked = sum(1 for visit in report.visits if visit.alone_equal is not None)
    say("cli.loadtest.alone", lang, checked=checked, differed=len(report.cross_talk))
    for visit in report.visits:
        if visit.outcome == "failed":
            say("cli.loadtest.failure", lang, index=visit.index, error=visit.error)


def run_abuse(args: argparse.Namespace) -> int:
    """``loadtest --abuse``: the hostile wave beside honest visitors; exit 1 if a goal failed."""
    from specviz.cli.abuse import abuse_failed, abuse_test, report_lines

    if args.trace is None or not args.trace.is_file() or args.hostile < 0 or args.hold <= 0:
        say("cli.loadtest.abuse_needs_trace", args.lang)
        return 2
    yielded = not args.equal_priority and on_this_machine(args.url)
    if yielded:
        # The hostile wave is 110 threads building and sending bodies; on the server's own cores
        # at equal priority it measures how the two share a CPU, not how the server holds up.
        os.nice(19)
    report = abuse_test(
        args.url,
        args.trace.read_text(encoding="utf-8"),
        hostile=args.hostile,
        honest=args.sessions,
        max_new_tokens=args.max_new_tokens,
        hold_s=args.hold,
    )
    problems = abuse_failed(report)
    if args.json:
        print_json(
            {
                "honest": report.counts(report.honest),
                "hostile": report.counts(report.hostile),
                "hostile_uploads": [asdict(upload) for upload in report.hostile],
                "evictions": report.evictions,
                "health_worst_s": report.health.worst_s,
                "health_failures": report.health.failures,
                "rss_before": report.rss_before,
                "rss_after": report.rss_after,
                "problems": problems,
                "yielded_cpu": yielded,
            }
        )
    else:
        if yielded:
            print("load generator: on the server's machine, at the lowest CPU priority (nice 19)")
        for line in report_lines(report):
            print(line)
        for problem in problems:
            print(f"FAILED: {problem}")
    return 1 if problems else 0


def on_this_machine(url: str) -> bool:
    """Whether *url* names this machine (a loopback address or localhost)."""
    import ipaddress
    from urllib.parse import urlsplit

    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
