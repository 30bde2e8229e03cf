"""Bad input through the API: what a stranger can send past every slider, row by row.

The app runs on two tiny models in hosted mode (hosted_fixtures.tiny_app) and is driven with
gradio_client, as a visitor's script would. Every row is answered within a second with a message
from the text catalogue, and the server keeps serving. docs/hosting.md lists the rows.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request

import pytest
from hosted_fixtures import PRESET, PROMPT, RUN

ANSWER_WITHIN_S = 1.0

# (row, prompt, /generate keyword arguments, what the message says)
REFUSED = [
    ("empty prompt", "", {}, "The prompt is empty"),
    ("whitespace prompt", " \n\t ", {}, "The prompt is empty"),
    ("20,000-character prompt", "a" * 20_000, {}, "20000 characters long; this app takes at most"),
    ("max new tokens 0", PROMPT, {"max_new_tokens": 0}, "Max new tokens must be between 1 and"),
    ("max new tokens 100,000", PROMPT, {"max_new_tokens": 100_000}, "must be at most 256 here"),
    ("γ 0", PROMPT, {"gamma": 0}, "γ must be between 1 and 16, got 0"),
    ("γ 17", PROMPT, {"gamma": 17}, "γ must be at most 8 here, got 17"),
    ("γ −1", PROMPT, {"gamma": -1}, "γ must be between 1 and 16, got -1"),
    ("γ 2.5", PROMPT, {"gamma": 2.5}, "γ must be an integer between 1 and 16, got float 2.5"),
    ("temperature −1", PROMPT, {"temperature": -1}, "Temperature must be between 0 and 2"),
    ("temperature 1,000", PROMPT, {"temperature": 1000}, "Temperature must be between 0 and 2"),
    ("top-p 0", PROMPT, {"top_p": 0}, "Top-p must be above 0 and at most 1, got 0.0"),
    ("top-p 1.5", PROMPT, {"top_p": 1.5}, "Top-p must be above 0 and at most 1, got 1.5"),
    ("top-k −1", PROMPT, {"top_k": -1}, "Top-k must be at least 0, got -1"),
    ("top-k 10⁹", PROMPT, {"top_k": 10**9}, "Top-k must be at most 1000 here"),
    ("seed 'abc'", PROMPT, {"seed": "abc"}, "Seed must be an integer .* got string 'abc'"),
    ("seed 2⁶⁴", PROMPT, {"seed": 2**64}, "Seed must be between 0 and 18446744073709551615"),
    ("unknown preset", PROMPT, {"preset": "no-such-pair"}, "Unknown preset 'no-such-pair'"),
    ("chat switch None", PROMPT, {"chat_template": None}, "chat_template must be true or false"),
    ("race switch None", PROMPT, {"race": None}, "race must be true or false"),
    ("control characters", "a\x00b\x1b[2J", {}, r"control character \(U\+0000\)"),
]

# (row, prompt): text the app must run like any other, its output escaped in the page.
ACCEPTED = [
    ("right-to-left text", "مرحبا بالعالم \u202eabc"),
    ("emoji split across tokens", "👩‍👩‍👧‍👦 🇫🇷 ok"),
    ("HTML and script", '<script>alert(1)</script><img src=x onerror="alert(2)">'),
]


def _serves(client) -> None:
    """The server still answers a good request."""
    _text, stats = client.predict(PROMPT, max_new_tokens=4, api_name="/generate")
    assert stats["totals"]["new_tokens"] >= 1


@pytest.mark.parametrize(
    ("prompt", "arguments", "message"),
    [row[1:] for row in REFUSED],
    ids=[row[0] for row in REFUSED],
)
def test_bad_input(client, prompt: str, arguments: dict, message: str) -> None:
    from gradio_client.exceptions import ValidationError

    def refused() -> float:
        began = time.perf_counter()
        # Refused by the endpoint's validator, before the request takes a queue slot.
        with pytest.raises(ValidationError, match=message):
            client.predict(prompt, api_name="/generate", **arguments)
        return time.perf_counter() - began

    assert _quickest(refused) < ANSWER_WITHIN_S
    _serves(client)


def _quickest(call) -> float:
    """The quicker of two calls' seconds: a refusal does no model work, so one of two answers
    comes within the goal even while the shared test machine's other jobs delay the other."""
    first = call()
    return first if first < ANSWER_WITHIN_S else min(first, call())


@pytest.mark.parametrize("prompt", [row[1] for row in ACCEPTED], ids=[row[0] for row in ACCEPTED])
def test_unusual_text_runs_and_stays_text(client, prompt: str) -> None:
    began = time.perf_counter()
    outputs = client.predict(*RUN[:2], prompt, *RUN[3:], api_name="/run")
    assert time.perf_counter() - began < ANSWER_WITHIN_S * 5  # a whole run, not a refusal
    assert outputs[-1]["totals"]["new_tokens"] >= 1
    page = json.dumps(outputs)
    assert "<script" not in page and "onerror=" not in page


def _raw_call(url: str, data: list) -> str:
    """POST *data* to /generate as a hand-built request (no client checks) and read the answer:
    the event's stream, or the body of a request refused before the queue."""
    request = urllib.request.Request(
        url + "gradio_api/call/generate",
        data=json.dumps({"data": data}).encode(),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            event = json.load(answer)["event_id"]
    except urllib.error.HTTPError as refused:
        return f"refused {refused.code}: " + refused.read().decode()
    with urllib.request.urlopen(url + f"gradio_api/call/generate/{event}", timeout=10) as answer:
        return answer.read().decode()


@pytest.mark.parametrize(
    ("data", "got"),
    [([], 0), ([PROMPT], 1), ([PROMPT, PRESET, *[None] * 14, "extra"], 17)],
    ids=["no arguments", "missing arguments", "extra arguments"],
)
def test_wrong_argument_count_is_told(client, url: str, data: list, got: int) -> None:
    answers = []

    def refused() -> float:
        began = time.perf_counter()
        answers.append(_raw_call(url, data))
        return time.perf_counter() - began

    assert _quickest(refused) < ANSWER_WITHIN_S
    assert all(answer.startswith("refused 400") for answer in answers)  # before the queue
    assert all(f"This endpoint takes 16 values, got {got}" in answer for answer in answers)
    _serves(client)


def test_extra_arguments_from_the_client_are_refused(client) -> None:
    """Refused before the queue (HTTP 400), the words in the answer's body."""
    import httpx

    with pytest.raises(httpx.HTTPStatusError) as refused:
        client.predict(
            PROMPT, PRESET, *[None] * 11, True, False, None, "extra", api_name="/generate"
        )
    assert refused.value.response.status_code == 400
    assert "This endpoint takes 16 values, got 17" in refused.value.response.text


def test_the_local_app_holds_its_api_to_its_sliders() -> None:
    from gradio_client import Client
    from gradio_client.exceptions import ValidationError
    from hosted_fixtures import tiny_app

    local = Client(tiny_app(False), verbose=False)
    with pytest.raises(ValidationError, match="Max new tokens must be at most 512 here, got 10"):
        local.predict(PROMPT, max_new_tokens=100_000, api_name="/generate")
    with pytest.raises(ValidationError, match="Seed must be between 0 and 18446744073709551615"):
        local.predict(PROMPT, seed=2**64, api_name="/generate")
    _serves(local)


def test_a_full_queue_tells_the_visitor_to_try_again() -> None:
    import dataclasses

    from gradio_client import Client
    from hosted_fixtures import TinyCache

    from specviz.app.builder import build_demo, launch_options, queue_options
    from specviz.app.limits import HOSTED
    from specviz.models.presets import load_presets

    limits = dataclasses.replace(HOSTED, queue_size=1)  # one waiting request fills it
    demo = build_demo(load_presets(), TinyCache(), limits=limits)  # type: ignore[arg-type]
    demo.queue(**queue_options(limits))
    _, url, _ = demo.launch(
        server_name="127.0.0.1", prevent_thread_lock=True, quiet=True, **launch_options(limits)
    )
    try:
        running, waiting, refused = (Client(url, verbose=False) for _ in range(3))
        long_run = {"max_new_tokens": 256, "gamma": 1}
        first = running.submit(PROMPT, api_name="/generate", **long_run)
        _wait_for(first, "PROCESSING", "ITERATING")  # the engine is busy
        second = waiting.submit(PROMPT, api_name="/generate", **long_run)
        _wait_for(second, "IN_QUEUE")
        with pytest.raises(Exception, match="Queue is full! Please try again"):
            refused.predict(PROMPT, max_new_tokens=4, api_name="/generate")
        assert first.result()[1]["totals"]["new_tokens"] >= 1
        assert second.result()[1]["totals"]["new_tokens"] >= 1
        _serves(refused)  # a later request is served
    finally:
        demo.close()


def _wait_for(job, *states: str, within_s: float = 30.0) -> None:
    """Wait until the job's status is one of *states* (a test failure after *within_s*)."""
    deadline = time.perf_counter() + within_s
    while job.status().code.name not in states:
        assert time.perf_counter() < deadline, f"still {job.status().code.name}, not {states}"
        time.sleep(0.05)
