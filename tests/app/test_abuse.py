"""Hostile visitors beside honest ones on a hosted server (tiny models): every hostile trace upload
is refused with a message, every honest run completes, /health keeps answering, no preset outside
the host's list runs. ``python -m specviz loadtest --abuse`` runs the same wave at full size."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from specviz.cli.abuse import EVICTING_PRESETS, abuse_failed, abuse_test, hostile_bodies

ROOT = Path(__file__).resolve().parents[2]


def recorded_trace_text() -> str:
    """A real trace: a run of the hosted app's engine on the tiny pair, exported as the app does."""
    from hosted_fixtures import TinyCache

    from specviz.app.gpu_work import Runs
    from specviz.app.limits import HOSTED
    from specviz.app.session import App, Session
    from specviz.export.trace import build_trace, trace_text
    from specviz.models.presets import default_preset, load_presets

    presets = load_presets()
    app = App(presets, TinyCache(), limits=HOSTED)  # type: ignore[arg-type]
    sess = Session()
    inputs = app.checks.inputs(default_preset(presets).id, "Hello there", {"max_new_tokens": 16})
    for _ in Runs(app).play(sess, inputs):
        pass
    assert sess.setup is not None and sess.cycles
    return trace_text(build_trace(sess.setup, sess.cycles))


@pytest.fixture(scope="module")
def trace_text() -> str:
    return recorded_trace_text()


def test_every_hostile_body_is_refused_when_read(trace_text: str) -> None:
    from specviz.export.trace import TraceError, read_trace

    read_trace(trace_text)  # the base trace itself is fine
    for name, body in hostile_bodies(trace_text, 19 * 2**20).items():
        with pytest.raises(TraceError):
            read_trace(body)
        assert name


def test_a_hostile_wave_beside_honest_visitors_on_a_hosted_server(trace_text: str) -> None:
    from hosted_fixtures import tiny_app

    report = abuse_test(
        tiny_app(hosted=True),
        trace_text,
        hostile=16,
        honest=3,
        max_new_tokens=8,
        hold_s=8.0,
        settle_s=0.5,
    )
    outcomes = {upload.body: upload.outcome for upload in report.hostile}
    assert set(outcomes.values()) <= {"refused", "upload_refused"}, outcomes
    refused = [upload for upload in report.hostile if upload.outcome == "refused"]
    assert all(upload.message and "Traceback" not in upload.message for upload in refused)
    assert outcomes["largest"] == "upload_refused"  # past the hosted upload cap
    assert [visit.outcome for visit in report.honest] == ["completed"] * 3
    assert report.health.failures == 0 and report.health.latencies
    assert set(report.evictions) == set(EVICTING_PRESETS)
    assert all("Unknown preset" in answer for answer in report.evictions.values())
    # The RSS goal is measured against a server process of its own (the CLI); here the server
    # shares the test's process, so only the other goals are asserted.
    problems = [p for p in abuse_failed(report, health_within_s=60.0) if "memory" not in p]
    assert problems == []


def test_loadtest_abuse_needs_a_recorded_trace() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "specviz", "loadtest", "--url", "http://127.0.0.1:9", "--abuse"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and "--trace FILE" in done.stdout + done.stderr
    assert "Traceback" not in done.stderr


def test_the_hostile_bodies_are_what_their_names_say(trace_text: str) -> None:
    bodies = hostile_bodies(trace_text, 2**20)
    endless = json.loads(bodies["endless"])
    assert endless["cycles"][-1]["totals"]["elapsed_s"] == 1e12
    assert b"NaN" in bodies["nan"] and bodies["nested"].startswith(b"[" * 1000)
    assert 0.9 * 2**20 < len(bodies["largest"]) < 1.05 * 2**20


def test_the_wave_yields_the_cpu_only_to_a_server_on_this_machine() -> None:
    from specviz.cli.loadtest import on_this_machine

    assert on_this_machine("http://127.0.0.1:7860/") and on_this_machine("http://localhost:7860")
    assert on_this_machine("http://[::1]:7860/")
    assert not on_this_machine("https://someone-specviz.hf.space/")
    assert not on_this_machine("http://10.0.0.7:7860/")
