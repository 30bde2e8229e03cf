"""Stop ends long work between forwards: a long prompt between its chunks, a lab between its runs.

The app runs on the tiny pair with its target slowed (hosted_fixtures.SlowCache), so a forward
takes long enough for a visitor's Stop (gradio_client's cancel, as the Stop button's) to land
between two of them. Each test counts the target's forwards after Stop and asks the engine lock.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from hosted_fixtures import RUN, SlowCache, launch, wait_for

from specviz.app.limits import HOSTED

FORWARD_S = 0.2
CHUNK = 2
PROMPT = "x" * 40  # 40 byte tokens: 19 chunks of 2 before the last


@pytest.fixture(scope="module")
def slow_app() -> Iterator[tuple[SlowCache, str]]:
    cache = SlowCache(FORWARD_S)
    demo, url = launch(cache, dataclasses.replace(HOSTED, prefill_chunk=CHUNK))
    yield cache, url
    demo.close()


def busy(url: str) -> bool:
    from gradio_client import Client

    return bool(Client(url, verbose=False).predict(api_name="/health")["busy"])


def stopped(cache: SlowCache, url: str) -> int:
    """The target's forwards once the engine is free and stays free for a few forwards' time
    (a stop that did not land would read on)."""
    wait_for(lambda: not busy(url), within_s=10 * FORWARD_S + 5, what="the engine lock")
    read = len(cache.forwards)
    time.sleep(5 * FORWARD_S)
    assert len(cache.forwards) == read, "the run went on after Stop"
    assert not busy(url)
    return read


def shown(job: Any, words: str) -> bool:
    return any(words in json.dumps(output) for output in job.outputs())


def test_stop_ends_a_long_prompt_between_its_chunks(slow_app: tuple[SlowCache, str]) -> None:
    from gradio_client import Client

    cache, url = slow_app
    cache.forwards.clear()
    job = Client(url, verbose=False).submit(*RUN[:2], PROMPT, *RUN[3:], api_name="/run")
    wait_for(lambda: shown(job, "Reading the prompt: 4 / 40 tokens"), what="the second chunk")
    job.cancel()
    read = stopped(cache, url)
    assert set(cache.forwards) == {CHUNK}  # chunks only: the first cycle never began
    assert read < len(PROMPT) // CHUNK - 1


def test_a_long_prompt_read_to_the_end_decodes(slow_app: tuple[SlowCache, str]) -> None:
    from gradio_client import Client

    cache, url = slow_app
    cache.forwards.clear()
    prompt = "x" * 9  # four chunks of 2, then the last token with the first drafts
    text, stats = Client(url, verbose=False).predict(
        prompt, max_new_tokens=2, gamma=1, api_name="/generate"
    )
    assert cache.forwards[:4] == [CHUNK] * 4
    assert stats["totals"]["new_tokens"] == 2 and text


# -- the labs: held to their budget, stopped between runs --------------------------------------

LAB_FORWARD_S = 0.03


@pytest.fixture
def slow_forwards(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every model forward (target, draft, cost curve) takes LAB_FORWARD_S longer; returns the
    list that counts them."""
    from specviz.models.runner import ModelRunner

    forwards: list[int] = []
    forward = ModelRunner.forward

    def slowed(self: ModelRunner, input_ids: Any, logits_to_keep: int = 1) -> Any:
        time.sleep(LAB_FORWARD_S)
        forwards.append(input_ids.shape[1])
        return forward(self, input_ids, logits_to_keep)

    monkeypatch.setattr(ModelRunner, "forward", slowed)
    return forwards


def test_the_speedup_lab_ends_within_its_budget_and_a_few_forwards(
    tiny_pair: Any, slow_forwards: list[int]
) -> None:
    """Unbudgeted, this lab takes over 300 forwards (several seconds); with a 1 s budget it
    ends within the budget plus the forwards it always spends: one cycle per γ past the
    deadline and one point of each cost curve."""
    import torch

    from specviz.core.settings import GenerationSettings
    from specviz.labs.speedup.theory import iter_speedup_lab
    from specviz.measure.harness import staged_result

    budget_s = 1.0
    began = time.perf_counter()
    lab = staged_result(
        iter_speedup_lab(
            tiny_pair,
            torch.tensor([list(b"def fib(n):")]),
            GenerationSettings(max_new_tokens=64, stop_on_eos=False),
            gammas=(1, 2, 4),
            cost_max_tokens=16,
            cost_repeats=3,
            time_budget_s=budget_s,
        )
    )
    elapsed = time.perf_counter() - began
    assert not lab.complete
    # The runs' minimum past the deadline is one cycle each (at most 5 forwards at γ 4), each
    # cost curve's one size is its prompt, 3 settling forwards and 1 + 3 timed ones: 26 in all.
    assert elapsed < budget_s + 40 * LAB_FORWARD_S + 1.0, (
        f"{elapsed:.2f} s for a {budget_s} s budget"
    )


def test_a_staged_lab_stops_between_its_stages(tiny_pair: Any, slow_forwards: list[int]) -> None:
    """Closing the stream (what Stop does to the handler, between two yields) ends the lab there:
    no forward runs after it."""
    import torch

    from specviz.core.settings import GenerationSettings
    from specviz.labs.exactness.experiment import iter_exactness_lab
    from specviz.labs.exactness.greedy import iter_greedy_equality
    from specviz.labs.speedup.cost_curve import iter_verification_cost
    from specviz.labs.speedup.theory import iter_speedup_lab

    prompt = torch.tensor([list(b"def fib(n):")])
    settings = GenerationSettings(max_new_tokens=16, temperature=1.0, stop_on_eos=False)
    for stages in (
        iter_speedup_lab(tiny_pair, prompt, settings, gammas=(1, 3), time_budget_s=60.0),
        iter_exactness_lab(tiny_pair, prompt, settings, samples=400, tokens=2, batch_size=4),
        iter_greedy_equality(tiny_pair, prompt, settings),
        iter_verification_cost(tiny_pair.target, prompt, max_new_tokens=16, repeats=3),
    ):
        for _ in range(3):
            assert not next(stages).finished
        read = len(slow_forwards)
        stages.close()
        time.sleep(3 * LAB_FORWARD_S)
        assert len(slow_forwards) == read
        slow_forwards.clear()


def lab_handler(demo: Any, status_id: str) -> Any:
    """The lab's event handler (LabWiring's run_lab) that writes to the status box *status_id*."""
    return next(
        fn.fn
        for fn in demo.fns.values()
        if fn.fn is not None
        and fn.fn.__name__ == "run_lab"
        and any(getattr(block, "elem_id", None) == status_id for block in fn.outputs)
    )


@pytest.mark.parametrize(
    ("status_id", "settings", "lab_values"),
    [
        ("sv-cost-status", {}, (4, 3)),  # sizes, repeats: 20 forwards after the context
        ("sv-exact-status", {"temperature": 0.0}, (100, 2, "exact")),  # greedy: two whole runs
    ],
)
def test_the_cost_and_greedy_labs_free_the_engine_between_forwards(
    slow_forwards: list[int], status_id: str, settings: dict[str, Any], lab_values: tuple
) -> None:
    """The app's handler streams these labs stage by stage: the engine lock is free between two
    updates, and closing the handler there (what Stop or a closed tab does) runs no forward
    more."""
    import threading

    from hosted_fixtures import TinyCache

    from specviz.app.builder import build_demo
    from specviz.app.session import App
    from specviz.models.presets import default_preset, load_presets

    presets, lock = load_presets(), threading.Lock()
    demo = build_demo(presets, TinyCache(), limits=HOSTED, engine_lock=lock)  # type: ignore[arg-type]
    app = App(presets, TinyCache(), limits=HOSTED)  # type: ignore[arg-type]
    inputs = app.checks.inputs(default_preset(presets).id, "def fib(n):", settings)
    updates = lab_handler(demo, status_id)(lambda fraction, desc: None, inputs, *lab_values)
    for _ in range(3):
        update = next(updates)
        assert len(update) == 1, "the lab ran to its end in one locked call"  # its status only
        assert not lock.locked()
    read = len(slow_forwards)
    updates.close()
    time.sleep(3 * LAB_FORWARD_S)
    assert len(slow_forwards) == read
    assert not lock.locked()


# -- refusals before the queue ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"prompt": "a" * 20_000}, "20000 characters long"),
        ({"prompt": "Hello", "preset": "no-such-pair"}, "Unknown preset 'no-such-pair'"),
        ({"prompt": "Hello", "gamma": 17}, "γ must be at most 8 here, got 17"),
    ],
)
def test_a_refused_request_never_waits_in_the_queue(
    slow_app: tuple[SlowCache, str], arguments: dict, message: str
) -> None:
    """While a slow run holds the engine (and the one queue slot it serves), a request the app
    refuses is answered at once by the validator, with the catalogue's words: it never queued
    behind the run (the handler's own check would answer only after it)."""
    from gradio_client import Client
    from gradio_client.exceptions import ValidationError

    cache, url = slow_app
    cache.forwards.clear()
    running = Client(url, verbose=False).submit("Hello", max_new_tokens=64, api_name="/generate")
    wait_for(lambda: len(cache.forwards) > 0, what="the slow run")
    try:
        began = time.perf_counter()
        with pytest.raises(ValidationError, match=message):
            Client(url, verbose=False).predict(api_name="/generate", **arguments)
        assert time.perf_counter() - began < 20 * FORWARD_S  # the run has ~60 forwards to go
        assert not running.done()
    finally:
        running.cancel()
    stopped(cache, url)


# -- one run per visitor, a time limit per run ---------------------------------------------------


def test_a_visitor_runs_one_run_at_a_time_and_stop_frees_their_slot() -> None:
    from hosted_fixtures import TinyCache

    from specviz.app.session import App
    from specviz.models.presets import load_presets

    app = App(load_presets(), TinyCache(), limits=HOSTED)  # type: ignore[arg-type]
    with app.one_run("visitor"):
        with pytest.raises(Exception, match="already has a run going"), app.one_run("visitor"):
            pass
        with app.one_run("another visitor"):
            pass
    with app.one_run("visitor"):  # the slot is free once the run is over
        pass

    def run() -> Iterator[int]:
        with app.one_run("visitor"):
            yield 1
            yield 2

    stream = run()
    next(stream)
    stream.close()  # a stopped handler, closed between two yields
    with app.one_run("visitor"):
        pass


def test_stop_frees_the_visitors_slot_on_the_server(slow_app: tuple[SlowCache, str]) -> None:
    """A visitor who stops a run can run again at once (the stopped handler let go of the
    visitor's one run)."""
    from gradio_client import Client

    cache, url = slow_app
    cache.forwards.clear()
    visitor = Client(url, verbose=False)
    first = visitor.submit("Hello", max_new_tokens=64, api_name="/generate")
    wait_for(lambda: len(cache.forwards) > 1, what="the first run")
    first.cancel()
    stopped(cache, url)
    _, stats = visitor.predict("Hello", max_new_tokens=1, api_name="/generate")
    assert stats["totals"]["new_tokens"] == 1


def test_a_run_past_the_time_limit_ends_with_a_message() -> None:
    from gradio_client import Client
    from gradio_client.exceptions import AppError

    cache = SlowCache(FORWARD_S)
    demo, url = launch(cache, dataclasses.replace(HOSTED, run_seconds=5 * FORWARD_S))
    try:
        began = time.perf_counter()
        with pytest.raises(AppError, match=r"limit of 1 s per run here and was ended"):
            Client(url, verbose=False).predict(
                "Hello", max_new_tokens=200, gamma=1, api_name="/generate"
            )
        assert time.perf_counter() - began < 10 * FORWARD_S + 5  # not the 200 tokens' 40 s
        assert 5 <= len(cache.forwards) <= 10
        assert not busy(url)
    finally:
        demo.close()


def test_the_apps_greedy_check_drafts_with_the_visitors_drafter() -> None:
    """Every drafter must equal plain decoding at temperature 0, so the exactness lab's greedy
    check runs the drafter the visitor chose, and its table names it."""
    import threading

    from hosted_fixtures import TinyCache

    from specviz.app.builder import build_demo
    from specviz.app.session import App
    from specviz.models.presets import default_preset, load_presets

    presets = load_presets()
    demo = build_demo(presets, TinyCache(), limits=HOSTED, engine_lock=threading.Lock())  # type: ignore[arg-type]
    app = App(presets, TinyCache(), limits=HOSTED)  # type: ignore[arg-type]
    inputs = app.checks.inputs(
        default_preset(presets).id, "def fib(n): fib(n)", {"temperature": 0.0}, drafter="lookup"
    )
    handler = lab_handler(demo, "sv-exact-status")
    *_, last = handler(lambda fraction, desc: None, inputs, 100, 2, "exact")
    summary = next(value for key, value in last.items() if key.elem_id == "sv-exact-summary")
    assert "speculative (lookup)" in summary
