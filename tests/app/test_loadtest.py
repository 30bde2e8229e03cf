"""The load test at a small size: six visitors at once on the hosted app (two tiny models), one
pressing Stop and one closing the connection mid-run; every run is accounted for, the engine is
free afterwards, and every completed seeded run equals the same run done alone."""

from __future__ import annotations

import time

import pytest

from specviz.cli.loadtest import Visit, health, load_test, percentile, plan_visits


@pytest.fixture(scope="module")
def url() -> str:
    from hosted_fixtures import tiny_app

    return tiny_app(True)


def test_percentiles_interpolate_between_ranks() -> None:
    assert percentile([], 0.5) is None
    assert percentile([3.0], 0.95) == 3.0
    assert percentile([4.0, 1.0, 3.0, 2.0], 0.5) == 2.5
    assert percentile([float(v) for v in range(1, 101)], 0.95) == pytest.approx(95.05)


def test_a_wave_has_distinct_seeds_and_mixes_stop_and_disconnect() -> None:
    visits = plan_visits(12, wave=1)
    assert len({visit.seed for visit in visits}) == 12
    assert [visit.index for visit in visits] == list(range(12, 24))
    assert sum(visit.role == "stop" for visit in visits) == 2
    assert sum(visit.role == "disconnect" for visit in visits) == 2
    assert plan_visits(1)[0].role == "run"


def test_six_visitors_each_get_an_answer_and_no_cross_talk(url: str) -> None:
    report = load_test(url, sessions=6, max_new_tokens=8)
    assert report.counts["refused"] == report.counts["failed"] == report.counts["lost"] == 0

    def outcomes(role: str) -> list[str]:
        return [visit.outcome for visit in report.visits if visit.role == role]

    assert outcomes("run") == ["completed"] * 4
    assert outcomes("disconnect") == ["cancelled"]
    # Stop is pressed once the first cycle is seen; on a busy machine the tiny models' 8 tokens
    # can all have arrived by then, and the run is rightly counted as completed.
    assert outcomes("stop") in (["cancelled"], ["completed"])
    completed = [visit for visit in report.visits if visit.outcome == "completed"]
    assert all(visit.tokens == 8 and visit.text for visit in completed)
    assert all(visit.alone_equal for visit in completed)
    assert report.cross_talk == []
    # Different seeds and prompts gave different runs: the equality check above could fail.
    assert len({visit.text for visit in completed}) == len(completed)
    assert report.first_cycle_p50_s is not None and report.wait_p95_s is not None
    assert report.health_after["rss_bytes"] > 0
    assert report.rss_per_wave == [report.health_after["rss_bytes"]]  # read after every wave
    # The stopped and the disconnected runs do not keep the engine: it is free within a moment.
    deadline = time.monotonic() + 5
    while health(url)["busy"] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert health(url)["busy"] is False


def test_a_changed_run_is_reported_as_cross_talk(url: str, monkeypatch) -> None:
    """The check can fail: a run whose solo repeat gives other text is named."""
    import specviz.cli.loadtest as loadtest

    real = loadtest.run_visit
    seen: set[int] = set()

    def altered(client_for, visit: Visit, max_new_tokens: int) -> Visit:
        real(client_for, visit, max_new_tokens)
        if visit.index == 0 and visit.index not in seen:
            seen.add(visit.index)
            visit.text += "!"  # what the room saw for visitor 0 differs from its solo run
        return visit

    monkeypatch.setattr(loadtest, "run_visit", altered)
    report = load_test(url, sessions=2, max_new_tokens=4)
    assert 0 in report.cross_talk
