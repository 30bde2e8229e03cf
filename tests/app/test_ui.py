"""The real app on the bundled pair, driven over Gradio's API with gradio_client.

One server and one loaded pair for the whole session (ui_fixtures.live_app); generations are short.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.slow

PROMPT = "Write a Python function add(a, b) that returns a + b."
# Positional inputs of /run and /step, in the order the API lists them: preset, drafter, prompt,
# chat_template, the settings the page has controls for (schema order, the two draft stops last),
# race, the race's drafter lanes and its repeats per lane.
CONTROLS = (
    "qwen2.5-coder-bundled", "draft-model", PROMPT, True, 4, False, False, 0.0, 0, 1.0, 0, 12,
    0.3, 0.2, False, [], 3,
)  # fmt: skip


@pytest.fixture(scope="module")
def client():
    from gradio_client import Client
    from ui_fixtures import live_app

    return Client(live_app(), verbose=False)


def _stream(job) -> list:
    """All outputs a streaming job produced, in order (the final one last)."""
    outputs = list(job)
    final = job.outputs()[-1] if job.outputs() else None
    if final is not None and (not outputs or outputs[-1] != final):
        outputs.append(final)
    return outputs


def test_generate_api_streams_per_cycle_and_returns_text_and_stats(client):
    job = client.submit(PROMPT, max_new_tokens=16, gamma=4, api_name="/generate")
    outputs = _stream(job)
    assert len(outputs) >= 3, "expected one update per cycle, then the final one"
    text, stats = outputs[-1]
    totals = stats["totals"]
    assert text.strip()
    assert totals["new_tokens"] == 16 or stats["stop_reason"] == "eos"
    # Each cycle is one target pass and emits at least one token.
    assert stats["cycles"] == totals["target_forwards"] <= totals["new_tokens"]
    assert 0.0 <= totals["acceptance_rate"] <= 1.0
    assert totals["tokens_per_s"] > 0
    # Updates grow monotonically: the stream really is per cycle.
    counts = [update[1]["totals"]["new_tokens"] for update in outputs]
    assert counts == sorted(counts) and counts[0] < counts[-1]


def test_run_endpoint_streams_coloured_tokens_and_final_stats(client):
    job = client.submit(*CONTROLS, api_name="/run")
    outputs = _stream(job)
    assert len(outputs) >= 3
    status, stream, cards, counters = outputs[-1][:4]
    final_text, stats = outputs[-1][-2:]
    assert "Finished" in status
    assert 'class="sv-tok sv-accepted"' in stream
    assert 'class="sv-card' in cards
    assert 'data-stat="tau"' in counters
    assert stats["totals"]["new_tokens"] == 12 or stats["stop_reason"] == "eos"
    assert final_text.strip()
    # Every emitted token has exactly one span in the stream (rejected drafts add their own).
    emitted = stream.count("sv-accepted") + stream.count("sv-resampled") + stream.count("sv-bonus")
    assert emitted == stats["totals"]["new_tokens"]


def test_step_advances_one_cycle_per_press(client):
    first = client.predict(*CONTROLS, api_name="/step")
    second = client.predict(*CONTROLS, api_name="/step")
    assert "Paused after cycle 1" in first[0]
    assert "Paused after cycle 2" in second[0]
    assert second[1].count('class="sv-cut"') == 2


def test_race_reports_plain_decoding_and_speedup(client):
    job = client.submit(PROMPT, max_new_tokens=8, race=True, api_name="/generate")
    _text, stats = _stream(job)[-1]
    assert stats["plain_totals"]["target_forwards"] == stats["plain_totals"]["new_tokens"]
    assert stats["speedup"] > 0
    assert [lane["lane"] for lane in stats["race"]["lanes"]] == ["plain", "draft-model"]
    assert stats["race"]["repeats"] == 3 and stats["race"]["complete"]


def test_bad_input_is_a_plain_error_and_the_app_keeps_working(client):
    # Refused by /generate's validator before the queue: gradio_client raises ValidationError.
    from gradio_client.exceptions import ValidationError

    with pytest.raises(ValidationError, match="prompt is empty"):
        client.predict("   ", max_new_tokens=4, api_name="/generate")
    with pytest.raises(ValidationError, match="γ must be between"):
        client.predict(PROMPT, gamma=99, max_new_tokens=4, api_name="/generate")
    # Every setting of the schema is a parameter, the ones the page has no control for included.
    with pytest.raises(
        ValidationError, match="Cumulative draft stop must be at least 0 and below 1"
    ):
        client.predict(PROMPT, draft_stop_cumulative=1.5, api_name="/generate")
    _text, stats = client.predict(PROMPT, max_new_tokens=4, api_name="/generate")
    assert stats["totals"]["new_tokens"] >= 1
