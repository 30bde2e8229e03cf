"""Watch a running server speculate: send it prompts, read what it reports, yield records.

``iter_watch(plan)`` finds which engine answers (``servers.detect_server``), warms it up with one
short request that also proves it drafts, then sends each prompt in turn. Around each request it
reads the server's /metrics counters, and their difference is that request's speculation counts
(``records.SpecCounts``); llama-server without --metrics is read from the ``timings`` its answer
carries instead. With a baseline URL (the same model, speculation off) each prompt is sent there
too, and the two wall-clock speeds make the speedup. Nothing here formats text or draws: the CLI
prints the records, the app's tab charts them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from specviz.engines.client import ServerClient, check_url
from specviz.engines.records import Reply, RequestResult, SpecCounts, WatchTotals
from specviz.engines.servers import (
    LLAMA_SERVER,
    SGLANG,
    Request,
    ServerInfo,
    complete,
    counts_between,
    detect_server,
    other_requests,
    read_snapshot,
    settled_snapshot,
)
from specviz.text import Phrase, UserError

DEFAULT_TOKENS = 64
DEFAULT_TIMEOUT_S = 120.0
WARM_UP_TOKENS = 16  # enough for any engine to draft at least once


@dataclass(frozen=True)
class WatchPlan:
    """What to send, where, and how."""

    url: str
    prompts: Sequence[tuple[str, str]]  # (task group, prompt), sent in this order
    max_tokens: int = DEFAULT_TOKENS
    temperature: float = 0.0
    seed: int = 0
    chat: bool = True  # through the server's chat template (raw: the prompt as it is)
    baseline_url: str | None = None  # the same model with speculation off, for the speedup
    timeout_s: float = DEFAULT_TIMEOUT_S  # per HTTP request
    warm_up: bool = True  # one unmeasured short request per server first


@dataclass(frozen=True)
class WatchUpdate:
    """The run so far: the servers, every finished request, and what happens next."""

    server: ServerInfo
    baseline: ServerInfo | None
    results: tuple[RequestResult, ...]
    planned: int
    message: Phrase
    warnings: tuple[Phrase, ...] = field(default=())

    @property
    def finished(self) -> bool:
        return len(self.results) == self.planned

    @property
    def fraction(self) -> float:
        return len(self.results) / self.planned if self.planned else 1.0

    @property
    def totals(self) -> WatchTotals:
        return WatchTotals.of(self.results)


def check_plan(plan: WatchPlan) -> None:
    """Refuse a plan that cannot run, before any request is sent."""
    url = check_url(plan.url)
    if plan.baseline_url is not None and check_url(plan.baseline_url) == url:
        raise UserError("error.watch.same_url", url=url)
    if not plan.prompts:
        raise UserError("error.watch.no_prompts")
    if not 1 <= plan.max_tokens <= 8192:
        raise UserError("error.watch.max_tokens", got=plan.max_tokens)
    if plan.temperature < 0 or plan.timeout_s <= 0:
        raise UserError("error.watch.numbers", temperature=plan.temperature, timeout=plan.timeout_s)


def iter_watch(plan: WatchPlan) -> Iterator[WatchUpdate]:
    """The watch as it goes: an update before the first request, then one per prompt."""
    check_plan(plan)
    client = ServerClient(plan.url, plan.timeout_s)
    server = detect_server(client)
    if server.speculative is False:
        reason = Phrase(
            "watch.reason.props" if server.kind == LLAMA_SERVER else "watch.reason.no_counters"
        )
        raise UserError(
            "error.watch.not_speculating", url=server.url, kind=server.kind_name, reason=reason
        )
    base_client = baseline = None
    if plan.baseline_url is not None:
        base_client = ServerClient(plan.baseline_url, plan.timeout_s)
        baseline = detect_server(base_client)
    warnings = _warnings(server, baseline)
    planned = len(plan.prompts)

    def update(results: Sequence[RequestResult], message: Phrase) -> WatchUpdate:
        return WatchUpdate(server, baseline, tuple(results), planned, message, warnings)

    results: list[RequestResult] = []
    if plan.warm_up:
        yield update(results, Phrase("watch.progress.warm_up", kind=server.kind_name))
        first = _request(plan, plan.prompts[0][1], min(WARM_UP_TOKENS, plan.max_tokens))
        counts, _, _ = _measured(client, server, first)
        _check_drafting(server, counts)
        if base_client is not None and baseline is not None:
            complete(base_client, baseline, first)
    for index, (task, prompt) in enumerate(plan.prompts, 1):
        yield update(results, Phrase("watch.progress.request", index=index, total=planned))
        request = _request(plan, prompt, plan.max_tokens)
        counts, reply, others = _measured(client, server, request)
        if index == 1 and not plan.warm_up:
            _check_drafting(server, counts)
        base_reply: Reply | None = None
        if base_client is not None and baseline is not None:
            base_reply = complete(base_client, baseline, request)
        results.append(RequestResult(index, task, prompt, reply, counts, base_reply, others))
    yield update(results, Phrase("watch.progress.done", total=planned))


def _request(plan: WatchPlan, prompt: str, max_tokens: int) -> Request:
    return Request(prompt, max_tokens, plan.temperature, plan.seed, plan.chat)


def _measured(
    client: ServerClient, server: ServerInfo, request: Request
) -> tuple[SpecCounts, Reply, int | None]:
    """One request with the server's counters read before and after: its counts, its reply
    and the other requests the server finished meanwhile (None where it does not count them)."""
    before = read_snapshot(client, server.kind) if server.metrics else None
    reply = complete(client, server, request)
    if before is None:
        return reply.reported or SpecCounts(), reply, None
    after = settled_snapshot(client, server.kind, before, reply.new_tokens)
    if after is None:
        return reply.reported or SpecCounts(), reply, None
    return counts_between(server.kind, before, after), reply, other_requests(before, after)


def _check_drafting(server: ServerInfo, counts: SpecCounts) -> None:
    if not counts.speculated:
        raise UserError(
            "error.watch.not_speculating",
            url=server.url,
            kind=server.kind_name,
            reason=Phrase("watch.reason.nothing_drafted"),
        )


def _warnings(server: ServerInfo, baseline: ServerInfo | None) -> tuple[Phrase, ...]:
    """What the reader should know before trusting the numbers."""
    found = []
    if server.kind == LLAMA_SERVER and not server.metrics:
        found.append(Phrase("watch.warning.no_metrics"))
    if server.kind == SGLANG:
        found.append(Phrase("watch.warning.sglang"))
    if baseline is not None and baseline.speculative:
        found.append(Phrase("watch.warning.baseline_speculates", url=baseline.url))
    if baseline is not None and baseline.model and server.model and baseline.model != server.model:
        found.append(
            Phrase("watch.warning.models_differ", model=server.model, baseline=baseline.model)
        )
    return tuple(found)


def task_prompts(
    table: Mapping[str, Sequence[str]], tasks: Sequence[str], per_task: int
) -> list[tuple[str, str]]:
    """The first *per_task* prompts (0: all) of each task group in *tasks*, as (task, prompt)
    pairs in the order given; refuses a task the table has no prompts for."""
    unknown = [task for task in tasks if not table.get(task)]
    if unknown or not tasks:
        raise UserError(
            "error.watch.tasks", tasks=", ".join(unknown) or "''", known=", ".join(table)
        )
    if per_task < 0:
        raise UserError("error.watch.per_task", got=per_task)
    chosen = []
    for task in tasks:
        prompts = list(table[task])
        chosen += [(task, prompt) for prompt in (prompts[:per_task] if per_task else prompts)]
    return chosen
