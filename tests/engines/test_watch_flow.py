"""Watching a server, end to end over real HTTP against fake engines (tests/fake_engines.py):
each request's counts, the totals, the speedup, and every failure worded as a UserError."""

from __future__ import annotations

import socket
from typing import Any

import pytest
from fake_engines import Drafting, FakeEngine

from specviz.engines.records import SpecCounts
from specviz.engines.watch import WatchPlan, WatchUpdate, iter_watch, task_prompts
from specviz.text import UserError

PROMPTS = (("code", "Write a function."), ("story", "Tell a story."))


def watch(url: str, **options: Any) -> WatchUpdate:
    """The last update of a watch of *url* (the whole run)."""
    updates = list(
        iter_watch(WatchPlan(url=url, prompts=options.pop("prompts", PROMPTS), **options))
    )
    assert updates[-1].finished
    return updates[-1]


def refusal(url: str, **options: Any) -> UserError:
    with pytest.raises(UserError) as caught:
        watch(url, **options)
    return caught.value


def test_vllm_counts_are_each_requests_difference() -> None:
    with FakeEngine("vllm") as url:
        last = watch(url)
    assert last.server.kind == "vllm" and last.server.model == "fake/model-7b"
    assert [r.counts for r in last.results] == [SpecCounts(4, 16, 10, (4, 3, 2, 1))] * 2
    first = last.results[0]
    assert first.counts.alpha == 10 / 16
    assert first.counts.mean_acceptance_length == 1 + 10 / 4  # vLLM's: 1 + accepted / drafts
    assert first.counts.position_rates == (1.0, 0.75, 0.5, 0.25)
    assert first.reply.new_tokens == 15 and first.reply.server_tps is None
    assert first.other_requests == 0
    totals = last.totals
    assert totals.counts == SpecCounts(8, 32, 20, (8, 6, 4, 2))
    assert totals.counts.alpha == 20 / 32 and totals.speeds.tokens == 30
    assert totals.baseline is None and totals.speedup is None


def test_each_request_is_sent_as_asked_after_one_warm_up() -> None:
    fake = FakeEngine("vllm")
    with fake as url:
        watch(url, max_tokens=32, temperature=0.5, seed=7)
    warm_up, *sent = fake.requests
    assert warm_up["max_tokens"] == 16 and len(sent) == 2
    assert sent[0]["messages"] == [{"role": "user", "content": "Write a function."}]
    assert (sent[0]["max_tokens"], sent[0]["temperature"], sent[0]["seed"]) == (32, 0.5, 7)
    assert sent[0]["model"] == "fake/model-7b" and "cache_prompt" not in sent[0]


def test_a_raw_prompt_goes_to_v1_completions_without_a_warm_up() -> None:
    fake = FakeEngine("llama-server")
    with fake as url:
        watch(url, chat=False, warm_up=False, prompts=PROMPTS[:1])
    (sent,) = fake.requests
    assert sent["path"] == "/v1/completions" and sent["prompt"] == "Write a function."
    assert sent["cache_prompt"] is False  # llama-server reads the whole prompt every time


def test_llama_server_with_metrics_agrees_with_its_own_timings() -> None:
    with FakeEngine("llama-server") as url:
        last = watch(url)
    assert last.server.kind == "llama-server" and last.server.speculative is None
    result = last.results[0]
    assert result.counts == SpecCounts(4, 16, 10, (4, 3, 2, 1))
    assert result.reply.reported == SpecCounts(drafted=16, accepted=10)
    assert result.reply.server_tps == 25.0 and last.totals.speeds.server_tps == 25.0
    assert last.warnings == ()


def test_llama_server_without_metrics_is_read_from_its_timings() -> None:
    with FakeEngine("llama-server", metrics=False) as url:
        last = watch(url)
    result = last.results[0]
    assert result.counts == SpecCounts(drafted=16, accepted=10)
    assert result.counts.alpha == 10 / 16 and result.counts.mean_acceptance_length is None
    assert [w.key for w in last.warnings] == ["watch.warning.no_metrics"]


def test_sglang_accepted_tokens_are_derived_from_its_counters() -> None:
    with FakeEngine("sglang") as url:
        last = watch(url)
    result = last.results[0]
    # 15 tokens = 1 from the prompt's reading + 4 steps × (accepted + 1): 10 accepted.
    assert result.counts == SpecCounts(drafts=4, accepted=10)
    assert result.counts.alpha is None and result.counts.mean_acceptance_length == 3.5
    assert [w.key for w in last.warnings] == ["watch.warning.sglang"]


def test_counters_that_land_after_the_answer_are_waited_for() -> None:
    with FakeEngine("vllm", lag_s=0.3) as url:
        last = watch(url, prompts=PROMPTS[:1])
    assert last.results[0].counts == SpecCounts(4, 16, 10, (4, 3, 2, 1))


def test_other_clients_requests_are_counted_as_such() -> None:
    with FakeEngine("vllm", others_per_request=2) as url:
        last = watch(url, prompts=PROMPTS[:1])
    assert last.results[0].other_requests == 2


def test_a_baseline_gives_the_speedup_of_wall_clock_speeds() -> None:
    with FakeEngine("vllm") as url, FakeEngine("vllm", speculative=False, delay_s=0.2) as base:
        last = watch(url, baseline_url=base)
    assert last.baseline is not None and last.baseline.speculative is False
    for result in last.results:
        assert result.baseline is not None and result.speedup is not None
        assert result.speedup == pytest.approx(result.reply.wall_tps / result.baseline.wall_tps)
        assert result.speedup > 1.0  # the baseline answers 0.2 s later with as many tokens
    totals = last.totals
    assert totals.baseline is not None and totals.speedup == pytest.approx(
        totals.speeds.wall_tps / totals.baseline.wall_tps
    )


def test_updates_say_what_runs_next() -> None:
    with FakeEngine("vllm") as url:
        updates = list(iter_watch(WatchPlan(url=url, prompts=PROMPTS)))
    keys = [update.message.key for update in updates]
    assert keys == [
        "watch.progress.warm_up",
        "watch.progress.request",
        "watch.progress.request",
        "watch.progress.done",
    ]
    assert [len(u.results) for u in updates] == [0, 0, 1, 2]
    assert updates[-1].fraction == 1.0


# --- failures, each a sentence ------------------------------------------------------------


def _closed_port() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}"


def test_an_unreachable_server() -> None:
    error = refusal(_closed_port())
    assert error.key == "error.watch.unreachable" and "Is the server running" in str(error)


def test_a_server_too_slow_to_answer() -> None:
    with FakeEngine("vllm", delay_s=1.0) as url:
        error = refusal(url, timeout_s=0.3)
    assert error.key == "error.watch.timeout" and "0.3 s" in str(error)


@pytest.mark.parametrize("kind", ["vllm", "llama-server", "sglang"])
def test_a_server_that_does_not_speculate(kind: str) -> None:
    with FakeEngine(kind, speculative=False) as url:
        error = refusal(url)
    assert error.key == "error.watch.not_speculating"
    expected = "watch.reason.no_counters" if kind == "vllm" else "watch.reason.nothing_drafted"
    assert error.values["reason"].key == expected


def test_a_server_watch_does_not_know() -> None:
    with FakeEngine("unknown") as url:
        assert refusal(url).key == "error.watch.unknown_server"


def test_sglang_without_metrics() -> None:
    with FakeEngine("sglang", metrics=False) as url:
        error = refusal(url)
    assert error.key == "error.watch.no_metrics" and "--enable-metrics" in str(error)


def test_an_error_status_is_quoted() -> None:
    with FakeEngine("vllm", completion_status=500) as url:
        error = refusal(url)
    assert error.key == "error.watch.http" and "500" in str(error) and "model crashed" in str(error)


@pytest.mark.parametrize(
    ("options", "key"),
    [
        ({"url": "localhost:8080"}, "error.watch.url"),
        ({"url": "ftp://host"}, "error.watch.url"),
        ({"url": "http://a:1", "baseline_url": "http://a:1/"}, "error.watch.same_url"),
        ({"url": "http://a:1", "prompts": ()}, "error.watch.no_prompts"),
        ({"url": "http://a:1", "max_tokens": 0}, "error.watch.max_tokens"),
        ({"url": "http://a:1", "timeout_s": 0}, "error.watch.numbers"),
    ],
)
def test_a_plan_that_cannot_run_is_refused_before_any_request(
    options: dict[str, Any], key: str
) -> None:
    assert refusal(**options).key == key


def test_task_prompts_picks_per_group_and_refuses_unknown_groups() -> None:
    table = {"code": ("a", "b", "c"), "story": ("s",)}
    assert task_prompts(table, ["code", "story"], 2) == [
        ("code", "a"),
        ("code", "b"),
        ("story", "s"),
    ]
    assert len(task_prompts(table, ["code"], 0)) == 3
    with pytest.raises(UserError) as caught:
        task_prompts(table, ["code", "poems"], 1)
    assert caught.value.key == "error.watch.tasks" and "poems" in str(caught.value)


def test_the_warm_up_is_short_and_counts_nothing() -> None:
    with FakeEngine("vllm", drafting=Drafting(2, 8, 8, (2, 2, 2, 2))) as url:
        last = watch(url, prompts=PROMPTS[:1])
    assert last.totals.counts == SpecCounts(2, 8, 8, (2, 2, 2, 2))  # the warm-up's left out
