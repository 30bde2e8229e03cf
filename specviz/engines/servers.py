"""The three serving engines watch knows: how to tell which one answers, where each keeps its
speculation counts, and one completion request to any of them.

The request is the same for all three: OpenAI's ``/v1/chat/completions`` (``/v1/completions``
for a raw prompt). For llama-server this was chosen over ``/completion`` after ``/apply-template``
because the server applies the model's own chat template, as it does for production clients, in
one round trip (so the wall clock times the request alone), and its answer carries the same
``timings`` object with ``draft_n`` and ``draft_n_accepted`` (``server_slot_stats::to_json`` in
llama.cpp's ``tools/server/server-common.cpp``); one request shape also makes the baseline's
speed comparable whatever engine serves it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from specviz.engines.client import Answer, ServerClient
from specviz.engines.prometheus import (
    MetricsFormatError,
    Sample,
    counter,
    counter_by_label,
    metric_names,
    parse_metrics,
)
from specviz.engines.records import Reply, SpecCounts
from specviz.text import UserError

LLAMA_SERVER = "llama-server"
VLLM = "vllm"
SGLANG = "sglang"
KIND_NAMES = {LLAMA_SERVER: "llama-server", VLLM: "vLLM", SGLANG: "SGLang"}


@dataclass(frozen=True)
class CounterNames:
    """Where one engine's /metrics keeps its counts (None: it keeps no such count)."""

    drafts: str | None  # verification steps
    drafted: str | None  # draft tokens proposed
    accepted: str | None  # draft tokens accepted
    accepted_at: str | None  # accepted per draft position (label "position", from 0)
    generated: str  # tokens generated: tells when a request's counts have landed
    requests: str | None  # requests finished


COUNTERS = {
    # vLLM: vllm/v1/spec_decode/metrics.py, SpecDecodingProm registers the prometheus_client
    # Counters vllm:spec_decode_num_drafts, _num_draft_tokens, _num_accepted_tokens and
    # _num_accepted_tokens_per_pos (label "position"), exposed with the suffix _total, one series
    # per engine (labels model_name, engine: summed here). Only when speculation is configured.
    VLLM: CounterNames(
        drafts="vllm:spec_decode_num_drafts",
        drafted="vllm:spec_decode_num_draft_tokens",
        accepted="vllm:spec_decode_num_accepted_tokens",
        accepted_at="vllm:spec_decode_num_accepted_tokens_per_pos",
        generated="vllm:generation_tokens",
        requests="vllm:request_success",
    ),
    # llama-server, started with --metrics: tools/server/server-task.cpp,
    # server_task_result_metrics::to_metrics writes the same four counts under llamacpp:.
    LLAMA_SERVER: CounterNames(
        drafts="llamacpp:spec_decode_num_drafts",
        drafted="llamacpp:spec_decode_num_draft_tokens",
        accepted="llamacpp:spec_decode_num_accepted_tokens",
        accepted_at="llamacpp:spec_decode_num_accepted_tokens_per_pos",
        generated="llamacpp:tokens_predicted",
        requests=None,
    ),
    # SGLang, started with --enable-metrics: python/sglang/srt/observability/metrics_collector.py
    # counts verification steps (sglang:spec_verify_calls_total, added when a request finishes)
    # and generated tokens, but no drafted tokens and nothing per position: its
    # sglang:spec_accept_rate and spec_accept_length are gauges over its last logging window,
    # which no difference turns into one request's. Accepted tokens are derived (see
    # counts_between).
    SGLANG: CounterNames(
        drafts="sglang:spec_verify_calls",
        drafted=None,
        accepted=None,
        accepted_at=None,
        generated="sglang:generation_tokens",
        requests="sglang:num_requests",
    ),
}


@dataclass(frozen=True)
class ServerInfo:
    """A server as watch found it."""

    url: str
    kind: str  # LLAMA_SERVER, VLLM or SGLANG
    model: str  # the model name the server reports, sent back in each request
    speculative: bool | None  # None: the server does not say until a request has run
    metrics: bool  # whether its /metrics answers

    @property
    def kind_name(self) -> str:
        return KIND_NAMES[self.kind]


def detect_server(client: ServerClient) -> ServerInfo:
    """Which engine answers at the client's URL, its model, and whether it speculates:
    llama-server by its /props, vLLM and SGLang by /v1/models' owner or their metric names."""
    props = client.get("/props")  # the first call: an unreachable server is reported here
    metrics = _metrics(client)
    model, owner = _first_model(client)
    data = _json_or_empty(client, props, "/props") if props.ok else {}
    if isinstance(settings := data.get("default_generation_settings"), dict):
        flag = settings.get("speculative")
        return ServerInfo(
            client.url,
            LLAMA_SERVER,
            model or str(data.get("model_path", "")).rsplit("/", 1)[-1],
            flag if isinstance(flag, bool) else None,
            metrics is not None,
        )
    names = metric_names(metrics or [])
    kind = next(
        (k for k in (VLLM, SGLANG) if owner == k or any(n.startswith(f"{k}:") for n in names)),
        None,
    )
    if kind is None:
        raise UserError("error.watch.unknown_server", url=client.url)
    if metrics is None:
        raise UserError("error.watch.no_metrics", url=client.url + "/metrics")
    speculative = None  # SGLang's counter appears with the first speculative request
    if kind == VLLM:
        speculative = counter(metrics, COUNTERS[VLLM].drafts or "") is not None
    return ServerInfo(client.url, kind, model, speculative, True)


def _json_or_empty(client: ServerClient, answer: Answer, path: str) -> dict[str, Any]:
    """The JSON object of *answer*, or {} where it is none (an engine without *path*)."""
    try:
        return client.json_of(answer, path)
    except UserError:
        return {}


def _first_model(client: ServerClient) -> tuple[str, str]:
    """The first model /v1/models lists and its owner ("" where it lists none)."""
    answer = client.get("/v1/models")
    if not answer.ok:
        return "", ""
    data = _json_or_empty(client, answer, "/v1/models").get("data")
    if not isinstance(data, list) or not data or not isinstance(data[0], dict):
        return "", ""
    return str(data[0].get("id", "")), str(data[0].get("owned_by", ""))


def _metrics(client: ServerClient) -> list[Sample] | None:
    """The server's /metrics samples, None where it serves none (llama-server without
    --metrics, SGLang without --enable-metrics)."""
    answer = client.get("/metrics")
    if not answer.ok:
        return None
    try:
        return parse_metrics(answer.text)
    except MetricsFormatError as error:
        raise UserError(
            "error.watch.metrics_format", url=client.url + "/metrics", cause=str(error)
        ) from None


@dataclass(frozen=True)
class Snapshot:
    """The counters one engine keeps, read once."""

    drafts: float | None
    drafted: float | None
    accepted: float | None
    accepted_at: dict[int, float]
    generated: float | None
    requests: float | None


def read_snapshot(client: ServerClient, kind: str) -> Snapshot | None:
    """The server's counters now; None where it serves no /metrics."""
    samples = _metrics(client)
    if samples is None:
        return None
    names = COUNTERS[kind]

    def read(name: str | None) -> float | None:
        return None if name is None else counter(samples, name)

    positions = (
        counter_by_label(samples, names.accepted_at, "position") if names.accepted_at else {}
    )
    return Snapshot(
        read(names.drafts),
        read(names.drafted),
        read(names.accepted),
        {int(key): value for key, value in positions.items() if key.isdigit()},
        read(names.generated),
        read(names.requests),
    )


def settled_snapshot(
    client: ServerClient, kind: str, before: Snapshot, new_tokens: int, wait_s: float = 2.0
) -> Snapshot | None:
    """The counters after a request, read again until its *new_tokens* show in the generated
    count (an engine may count a request just after answering it), for at most *wait_s*."""
    deadline = time.monotonic() + wait_s
    while True:
        after = read_snapshot(client, kind)
        landed = (
            after is None
            or after.generated is None
            or before.generated is None
            or after.generated - before.generated >= new_tokens
        )
        if landed or time.monotonic() >= deadline:
            return after
        time.sleep(0.05)


def counts_between(kind: str, before: Snapshot, after: Snapshot) -> SpecCounts:
    """One request's counts: the counters' differences. SGLang counts no accepted tokens, but
    each verification step emits its accepted drafts plus one token of the target's, after the
    one token the prompt's reading emits: accepted = generated − requests − steps (a step cut
    by the token limit makes this an underestimate by what it cut)."""

    def delta(first: float | None, second: float | None) -> int | None:
        return None if first is None or second is None else round(second - first)

    drafts = delta(before.drafts, after.drafts)
    if drafts is None and after.drafts is not None:
        drafts = round(after.drafts)  # SGLang's counter appears with its first count
    accepted = delta(before.accepted, after.accepted)
    if kind == SGLANG and drafts is not None:
        generated = delta(before.generated, after.generated)
        requests = delta(before.requests, after.requests)
        if generated is not None and requests is not None:
            accepted = max(generated - requests - drafts, 0)
    positions = sorted(after.accepted_at)
    accepted_at = tuple(
        round(after.accepted_at[p] - before.accepted_at.get(p, 0.0)) for p in positions
    )
    return SpecCounts(drafts, delta(before.drafted, after.drafted), accepted, accepted_at)


def other_requests(before: Snapshot | None, after: Snapshot | None) -> int | None:
    """Requests the server finished between two snapshots besides the one sent."""
    if before is None or after is None or before.requests is None or after.requests is None:
        return None
    return max(round(after.requests - before.requests) - 1, 0)


@dataclass(frozen=True)
class Request:
    """What to ask for: one prompt's completion."""

    prompt: str
    max_tokens: int
    temperature: float
    seed: int
    chat: bool  # through the server's chat template, or the prompt as it is


def complete(client: ServerClient, server: ServerInfo, request: Request) -> Reply:
    """Send one completion request and time it."""
    path = "/v1/chat/completions" if request.chat else "/v1/completions"
    payload: dict[str, Any] = {
        "model": server.model,
        "max_tokens": request.max_tokens,
        "temperature": request.temperature,
        "seed": request.seed,
        "stream": False,
    }
    if request.chat:
        payload["messages"] = [{"role": "user", "content": request.prompt}]
    else:
        payload["prompt"] = request.prompt
    if server.kind == LLAMA_SERVER:
        # Read the whole prompt every time, as the first request did: each request's wall
        # clock then counts the same work.
        payload["cache_prompt"] = False
    started = time.perf_counter()
    answer = client.post_json(path, payload)
    wall_s = time.perf_counter() - started
    data = client.json_of(answer, path)
    return _reply(data, wall_s)


def _reply(data: dict[str, Any], wall_s: float) -> Reply:
    usage = _object(data.get("usage"))
    timings = _object(data.get("timings"))
    new_tokens = _number(usage.get("completion_tokens"), _number(timings.get("predicted_n"), 0))
    server_tps = _number(timings.get("predicted_per_second"), None)
    reported = None
    if "predicted_n" in timings:  # llama-server: draft_n only where it drafted anything
        reported = SpecCounts(
            drafted=int(_number(timings.get("draft_n"), 0)),
            accepted=int(_number(timings.get("draft_n_accepted"), 0)),
        )
    return Reply(int(new_tokens), wall_s, server_tps, reported, _text(data))


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _number(value: Any, default: Any) -> Any:
    return value if isinstance(value, int | float) and not isinstance(value, bool) else default


def _text(data: dict[str, Any]) -> str:
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return ""
    choice = choices[0]
    message = choice.get("message")
    if isinstance(message, dict) and isinstance(message.get("content"), str):
        return str(message["content"])
    return str(choice.get("text") or "")
