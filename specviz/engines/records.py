"""What watching a server yields: plain records of its speculation counts and speeds, with the
measures computed from them the way the engines define them.

α = accepted / drafted: the share of proposed draft tokens the target accepted.
τ = 1 + accepted / drafts: the mean acceptance length, tokens per verification step counting
the one the target adds (vLLM's definition, ``vllm/v1/spec_decode/metrics.py``; llama-server
logs the same ``mean_acc_len``).
Acceptance at draft position i = accepted_at[i] / drafts: how often a step got that far.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import zip_longest


def _ratio(top: float | None, bottom: float | None) -> float | None:
    return None if top is None or not bottom else top / bottom


def _plus(first: int | None, second: int | None) -> int | None:
    return None if first is None or second is None else first + second


@dataclass(frozen=True)
class SpecCounts:
    """Speculation counts of one request, or of several summed; None where not reported."""

    drafts: int | None = None  # verification steps: each drafts once and is verified once
    drafted: int | None = None  # draft tokens proposed
    accepted: int | None = None  # of those, accepted by the target
    accepted_at: tuple[int, ...] = ()  # accepted at draft position 1, 2, ... (() if unknown)

    @property
    def alpha(self) -> float | None:
        """Accepted over drafted tokens."""
        return _ratio(self.accepted, self.drafted)

    @property
    def mean_acceptance_length(self) -> float | None:
        """1 + accepted per verification step (the target's own token counted)."""
        rate = _ratio(self.accepted, self.drafts)
        return None if rate is None else 1.0 + rate

    @property
    def position_rates(self) -> tuple[float, ...]:
        """Accepted at each draft position over verification steps."""
        if not self.drafts:
            return ()
        return tuple(count / self.drafts for count in self.accepted_at)

    @property
    def speculated(self) -> bool:
        """Whether anything was drafted (as far as the counts tell)."""
        return bool(self.drafted) or bool(self.drafts)

    def __add__(self, other: SpecCounts) -> SpecCounts:
        positions: tuple[int, ...] = ()
        if self.accepted_at and other.accepted_at:
            pairs = zip_longest(self.accepted_at, other.accepted_at, fillvalue=0)
            positions = tuple(first + second for first, second in pairs)
        return SpecCounts(
            _plus(self.drafts, other.drafts),
            _plus(self.drafted, other.drafted),
            _plus(self.accepted, other.accepted),
            positions,
        )


@dataclass(frozen=True)
class Reply:
    """One completion as the client saw it, with what the server said about it."""

    new_tokens: int
    wall_s: float  # the request's wall clock, from sending to the whole answer
    server_tps: float | None  # the server's own decoding speed for it, where it reports one
    reported: SpecCounts | None  # counts the answer itself carried (llama-server's timings)
    text: str

    @property
    def wall_tps(self) -> float:
        """New tokens per wall-clock second (the prompt's reading included)."""
        return self.new_tokens / self.wall_s if self.wall_s > 0 else 0.0


@dataclass(frozen=True)
class RequestResult:
    """One prompt sent to the watched server (and to the baseline, if there is one)."""

    index: int  # 1-based, in the order sent
    task: str
    prompt: str
    reply: Reply
    counts: SpecCounts  # from /metrics before and after, or from the answer where none
    baseline: Reply | None = None
    # Requests the server finished meanwhile besides this one (its counters include theirs);
    # None where the server does not count requests.
    other_requests: int | None = None

    @property
    def speedup(self) -> float | None:
        """Wall-clock tokens/s here over the baseline's for the same prompt."""
        if self.baseline is None or not self.baseline.wall_tps:
            return None
        return self.reply.wall_tps / self.baseline.wall_tps


@dataclass(frozen=True)
class Speeds:
    """Tokens and seconds summed over requests: the pooled speeds."""

    tokens: int
    wall_s: float
    server_tps: float | None  # tokens over the server's own decoding seconds, where known

    @property
    def wall_tps(self) -> float:
        return self.tokens / self.wall_s if self.wall_s > 0 else 0.0

    @classmethod
    def of(cls, replies: Sequence[Reply]) -> Speeds:
        """The pooled speeds of *replies* (server tokens/s only if every reply has one)."""
        tokens = sum(reply.new_tokens for reply in replies)
        wall_s = sum(reply.wall_s for reply in replies)
        rates = [reply.server_tps for reply in replies]
        server_tps = None
        if replies and all(rates):
            decode_s = sum(
                r.new_tokens / rate for r, rate in zip(replies, rates, strict=True) if rate
            )
            server_tps = tokens / decode_s if decode_s > 0 else None
        return cls(tokens, wall_s, server_tps)


@dataclass(frozen=True)
class WatchTotals:
    """Every request so far, pooled: counts summed, speeds over summed tokens and seconds."""

    requests: int
    counts: SpecCounts
    speeds: Speeds
    baseline: Speeds | None

    @property
    def speedup(self) -> float | None:
        if self.baseline is None or not self.baseline.wall_tps:
            return None
        return self.speeds.wall_tps / self.baseline.wall_tps

    @classmethod
    def of(cls, results: Iterable[RequestResult]) -> WatchTotals:
        """The totals of *results*."""
        chosen = list(results)
        counts = _sum_counts([result.counts for result in chosen])
        baselines = [result.baseline for result in chosen]
        baseline = (
            Speeds.of([b for b in baselines if b is not None])
            if chosen and all(b is not None for b in baselines)
            else None
        )
        return cls(len(chosen), counts, Speeds.of([r.reply for r in chosen]), baseline)


def _sum_counts(counts: Sequence[SpecCounts]) -> SpecCounts:
    """The counts summed (a field unknown for any request is unknown in the sum)."""
    if not counts:
        return SpecCounts()
    total = counts[0]
    for more in counts[1:]:
        total = total + more
    return total
