"""The race's last message, over the real Gradio server on the tiny models: the page gets the
finished race and the counters that show its speedup in one update, so no browser, however slow
its machine, sees a finished race beside counters that still wait for it."""

from __future__ import annotations

import pytest

# /run's positional inputs (see test_hosted_api.RUN), with the race on and two drafter lanes.
RUN = [
    "qwen2.5-coder-bundled", "draft-model", "def add(a, b):", False, 3, False, False, 0.0, 0, 1.0,
    0, 8, 0.3, 0.2, True, ["draft-model", "lookup"], 1,
]  # fmt: skip
STATUS, COUNTERS, RACE = 0, 3, 6  # their places among the run's outputs (LiveTab.outputs)


@pytest.fixture(scope="module")
def client():
    from gradio_client import Client
    from hosted_fixtures import tiny_app

    return Client(tiny_app(False), verbose=False)


def _pages(updates: list) -> list[list]:
    """What the page shows after each update: a component an update leaves out keeps its value
    (the client reports it as ``{"__type__": "update"}``, with a "value" only when it changed)."""
    shown: list = []
    pages = []
    for update in updates:
        shown = shown or [None] * len(update)
        for place, value in enumerate(update):
            if isinstance(value, dict) and value.get("__type__") == "update":
                value = value.get("value", shown[place])
            shown[place] = value
        pages.append([str(value) for value in shown])
    return pages


def test_the_update_that_finishes_the_race_carries_its_speedup_in_the_counters(client) -> None:
    job = client.submit(*RUN, api_name="/run")
    updates = _pages(list(job))
    finished = [u for u in updates if "sv-race-status" in u[RACE] and ">finished<" in u[RACE]]
    assert finished, [u[RACE][-300:] for u in updates]
    first = finished[0]
    assert 'data-stat="speedup"><div class="sv-stat-value">' in first[COUNTERS]
    speedup = first[COUNTERS].split('data-stat="speedup"><div class="sv-stat-value">')[1]
    assert speedup.split("<")[0].endswith("×"), speedup[:80]
    assert "sv-status-done" in first[STATUS]
    # Before the race finished, the counters showed no raced speedup.
    assert all(
        '<div class="sv-stat-value">—</div>' in u[COUNTERS] for u in updates[: updates.index(first)]
    )
