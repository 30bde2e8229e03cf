"""On ZeroGPU the model work runs in a forked worker: only plain values may cross.

``fake_spaces`` stands in for the ``spaces`` package as ZeroGPU runs it: each decorated call in a
forked child, its arguments pickled in and each yield pickled back (a child that sends nothing
for two minutes is killed: a hang fails the test). On it the tiny-model app
(hosted_fixtures) must give the same tokens as off ZeroGPU for a seed: a Run, Steps that replay
the run in the worker up to the next cycle, /generate, a race and a lab; and the engine lock is
free again after a visitor's Stop.
"""

from __future__ import annotations

import dataclasses
import pickle
from collections.abc import Iterator
from typing import Any

import fake_spaces
import gradio as gr
import pytest
from hosted_fixtures import RUN, SlowCache, TinyCache, launch, wait_for

from specviz.app import zerogpu
from specviz.app.gpu_work import Runs, race_seconds, run_seconds
from specviz.app.limits import HOSTED
from specviz.app.session import App, Session, Started
from specviz.core.events import Cycle
from specviz.models.presets import load_presets

# Every test here forks the test process: conftest.py runs them in a process of their own.
pytestmark = pytest.mark.forks

PRESETS = load_presets()
PRESET = RUN[0]
SEED, TOKENS = 7, 12
# /run's inputs: sampled (temperature 0.9) with a seed, so equal tokens mean an equal random stream.
SAMPLED = [*RUN[:7], 0.9, 0, 1.0, SEED, TOKENS, *RUN[12:]]


def tokens(cycles: list[Cycle]) -> list[tuple[Any, ...]]:
    """What a cycle decided, without its timings: drafts, how many were kept, what it emitted."""
    return [
        (
            cycle.index,
            [token.token_id for token in cycle.drafted],
            cycle.accepted_len,
            [token.token_id for token in cycle.emitted],
            cycle.finished,
        )
        for cycle in cycles
    ]


def settings() -> dict[str, Any]:
    """The settings SAMPLED sends to /run, by name."""
    names = ["gamma", "adaptive_gamma", "cost_gamma", "temperature", "top_k", "top_p", "seed"]
    names += ["max_new_tokens", "draft_stop_below", "draft_stop_cumulative"]
    return dict(zip(names, SAMPLED[4:14], strict=True))


@pytest.fixture
def spaces(monkeypatch) -> list[tuple[str, int]]:
    """The forking stand-in installed as ``spaces``; the calls it made (name, duration)."""
    return fake_spaces.install(monkeypatch)


@pytest.fixture(scope="module")
def local_run() -> list[Cycle]:
    """The seeded run off ZeroGPU, in this process: the reference."""
    app = App(PRESETS, TinyCache(), limits=HOSTED)  # type: ignore[arg-type]
    inputs = app.checks.inputs(PRESET, "Hello", settings(), chat=False)
    sess = Session()
    records = list(Runs(app, remote=False).play(sess, inputs))
    assert isinstance(records[0], Started) and sess.cycles and sess.cycles[-1].finished
    assert len(sess.cycles) > 3  # enough cycles for three Steps to stop short of the end
    return sess.cycles


def remote_runs() -> Runs:
    runs = Runs(App(PRESETS, TinyCache(), limits=HOSTED), remote=True)  # type: ignore[arg-type]
    assert runs.gpu_run != runs.worker_run  # decorated: the work crosses
    return runs


# --- the stand-in itself ------------------------------------------------------------------------


def test_the_stand_in_pickles_each_yield_across_a_forked_process(spaces) -> None:
    import os

    @fake_spaces.GPU(duration=lambda count: count)
    def pids(count: int) -> Iterator[int]:
        yield from [os.getpid()] * count

    @fake_spaces.GPU(duration=5)
    def unpicklable() -> Iterator[Any]:
        yield lambda: None

    assert set(pids(2)) - {os.getpid()}  # the values came from another process
    with pytest.raises(gr.Error, match=r"ZeroGPU worker error: (PicklingError|AttributeError)"):
        list(unpicklable())
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        list(pids(lambda: 1))  # an argument that cannot cross is refused before the fork
    assert spaces[:2] == [("pids", 2), ("unpicklable", 5)]


def test_a_child_forked_after_a_parallel_region_on_two_threads_runs_torch(spaces, monkeypatch):
    """What hung the stand-in: the forking thread had run an OpenMP parallel region on two
    threads, and the child's first region waited for the pool's threads, which a fork leaves
    behind. The child runs torch on one thread; QUIET_S turns a relapse into a failure."""
    import torch

    monkeypatch.setattr(fake_spaces, "QUIET_S", 30.0)
    attend = torch.nn.functional.scaled_dot_product_attention
    x = torch.randn(64, 4, 128, 16)  # (batch, heads, positions, head width): work for two threads

    @fake_spaces.GPU(duration=5)
    def attention(x: torch.Tensor) -> torch.Tensor:
        return attend(x, x, x)

    threads = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        here = attend(x, x, x)  # a parallel region on this thread, the one that forks
        assert torch.allclose(attention(x), here)
    finally:
        torch.set_num_threads(threads)


def test_a_worker_that_sends_nothing_for_too_long_is_killed_and_says_where(spaces, monkeypatch):
    import multiprocessing
    import threading

    monkeypatch.setattr(fake_spaces, "QUIET_S", 1.0)
    held = threading.Lock()

    @fake_spaces.GPU(duration=5)
    def waits_on_a_lock_held_at_the_fork() -> Iterator[int]:
        yield 1
        with held:  # held here when the child was forked: never released there
            yield 2

    with held:
        values = waits_on_a_lock_held_at_the_fork()
        assert next(values) == 1
    with pytest.raises(gr.Error, match=r"(?s)sent nothing for 1 s.*in waits_on_a_lock_held_at"):
        next(values)
    assert not multiprocessing.active_children()  # the hung worker was killed


def test_off_zerogpu_nothing_is_decorated_and_spaces_is_never_imported(monkeypatch) -> None:
    import sys

    monkeypatch.delenv("SPACES_ZERO_GPU", raising=False)
    monkeypatch.setitem(sys.modules, "spaces", None)  # an import would raise
    runs = Runs(App(PRESETS, TinyCache()))  # type: ignore[arg-type]
    assert not runs.remote and runs.gpu_run == runs.worker_run  # the method itself


# --- runs, steps and races through the worker ---------------------------------------------------


def test_on_zerogpu_a_run_gives_the_same_cycles_as_off_it(spaces, local_run) -> None:
    runs = remote_runs()
    inputs = runs.app.checks.inputs(PRESET, "Hello", settings(), chat=False)
    sess = Session()
    records = list(runs.play(sess, inputs))
    assert isinstance(records[0], Started) and sess.setup is not None
    assert tokens(sess.cycles) == tokens(local_run)
    assert spaces == [("worker_run", zerogpu.gpu_seconds(TOKENS))]
    assert not runs.app.engine_lock.locked()


def test_on_zerogpu_each_step_replays_the_run_up_to_its_next_cycle(spaces, local_run) -> None:
    runs = remote_runs()
    inputs = runs.app.checks.inputs(PRESET, "Hello", settings(), chat=False)
    sess = Session()
    for count in (1, 2, 3):
        list(runs.play(sess, inputs, take=1))
        assert sess.paused and tokens(sess.cycles) == tokens(local_run[:count])
    list(runs.play(sess, inputs))  # Run plays the rest: the replay skips the three it has
    assert tokens(sess.cycles) == tokens(local_run)
    assert [name for name, _ in spaces] == ["worker_run"] * 4


def test_a_replay_that_differs_from_the_session_is_refused(spaces) -> None:
    runs = remote_runs()
    inputs = runs.app.checks.inputs(PRESET, "Hello", settings(), chat=False)
    sess = Session()
    list(runs.play(sess, inputs, take=1))
    emitted = sess.cycles[0].emitted
    sess.cycles[0] = dataclasses.replace(
        sess.cycles[0], emitted=(dataclasses.replace(emitted[0], token_id=-1), *emitted[1:])
    )
    with pytest.raises(gr.Error, match="replaying it on the GPU gave other tokens"):
        list(runs.play(sess, inputs, take=1))
    assert not sess.paused  # the run is over, as a failed live run is


def test_on_zerogpu_a_race_crosses_as_its_progress(spaces) -> None:
    runs = remote_runs()
    inputs = runs.app.checks.inputs(
        PRESET, "Hello", settings(), chat=False, race=True, race_repeats=1
    )
    assert inputs.race_drafters == (RUN[1],)
    sess = Session()
    list(runs.play(sess, inputs))
    updates = list(runs.race(sess, inputs))
    assert updates[-1].finished and sess.race_done
    assert spaces[-1] == ("worker_race", race_seconds(inputs))
    assert race_seconds(inputs) == zerogpu.gpu_seconds(TOKENS * 2)  # plain and the drafter
    assert run_seconds(inputs, 0, None, ()) == zerogpu.gpu_seconds(TOKENS)


# --- the app on the stand-in, driven as a visitor drives it -------------------------------------


def lab_handler(demo: gr.Blocks, index: int) -> Any:
    """The *index*-th lab's run handler, in the order LABS lists them."""
    handlers = [fn.fn for fn in demo.fns.values() if fn.fn is not None]
    return [handler for handler in handlers if handler.__name__ == "run_lab"][index]


def test_on_zerogpu_the_app_runs_steps_and_generates_the_same_tokens(spaces, local_run) -> None:
    from gradio_client import Client

    from specviz.app.builder import build_demo, launch_options, queue_options

    demo = build_demo(PRESETS, TinyCache(), limits=HOSTED)  # type: ignore[arg-type]
    demo.queue(**queue_options(HOSTED))
    _, url, _ = demo.launch(
        server_name="127.0.0.1", prevent_thread_lock=True, quiet=True, **launch_options(HOSTED)
    )
    text = "".join(token.text for cycle in local_run for token in cycle.emitted)
    try:
        client = Client(url, verbose=False)
        *_, run_text, run_stats = client.predict(*SAMPLED, api_name="/run")
        assert run_text == text and run_stats["cycles"] == len(local_run)
        stepper = Client(url, verbose=False)  # a visitor of their own, with their own session
        for count in (1, 2, 3):
            *_, step_text, step_stats = stepper.predict(*SAMPLED, api_name="/step")
            first = "".join(tok.text for cycle in local_run[:count] for tok in cycle.emitted)
            assert (step_text, step_stats["cycles"]) == (first, count)
        generated, stats = client.predict(
            "Hello", PRESET, chat_template=False, api_name="/generate", **settings()
        )
        assert generated == text and stats["cycles"] == len(local_run)
    finally:
        demo.close()
    assert [name for name, _ in spaces] == ["worker_run"] * (1 + 3 + 1)


# Each lab's own values, small: (its position among the labs, values, words its last update shows).
LABS = {
    "exactness (greedy)": (0, (100, 1, "exact"), "greedy"),
    "speedup": (1, ("1,2", 20, 1), "measured"),
    "trees": (2, ("4", 20, 1), "Prediction against the runs"),
    "self-draft": (3, ("lookahead", 20), "Predicted: "),
    "cost": (4, (2, 1), "Measured"),
    "tasks": (5, (1, 1), "inconclusive"),  # 4 tokens: too few to rank the tasks
    "advisor": (6, ("prompt", "code", ["draft-model"], [], [2], False, 4, 20), "decoding"),
}


@pytest.mark.parametrize("lab", LABS)
def test_on_zerogpu_every_lab_crosses_as_plain_records(spaces, lab: str) -> None:
    """Each lab's handler, as its event calls it: the work in the worker, the page drawn here."""
    from specviz.app.builder import build_demo

    index, values, words = LABS[lab]
    demo = build_demo(PRESETS, TinyCache(), limits=HOSTED)  # type: ignore[arg-type]
    app = App(PRESETS, TinyCache(), limits=HOSTED)  # type: ignore[arg-type]
    temperature = 0.0 if "greedy" in lab else 0.8
    asked = {"max_new_tokens": 4, "temperature": temperature}
    inputs = app.checks.inputs(PRESET, "Hello", asked, chat=False)
    updates = list(lab_handler(demo, index)(None, inputs, *values))
    assert updates and all(isinstance(update, dict) for update in updates)
    assert words in " ".join(str(value) for value in updates[-1].values())
    assert spaces == [("worker_lab", zerogpu.GPU_MAX_S)]


def test_on_zerogpu_a_stopped_run_leaves_the_engine_free(spaces) -> None:
    from gradio_client import Client

    cache = SlowCache(0.2)
    demo, url = launch(cache, HOSTED)
    try:
        client = Client(url, verbose=False)
        long_run = [*SAMPLED[:11], 64, *SAMPLED[12:]]
        job = client.submit(*long_run, api_name="/run")
        wait_for(lambda: len(job.outputs()) >= 2, what="the run's first cycles")
        job.cancel()
        health = Client(url, verbose=False)
        wait_for(lambda: not health.predict(api_name="/health")["busy"], what="the engine lock")
        *_, stats = client.predict(*SAMPLED, api_name="/run")  # the next run goes ahead
        assert stats["cycles"] > 0
    finally:
        demo.close()
