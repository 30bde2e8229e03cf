"""llama.cpp's verification cost v(k): what one llama-server forward of k tokens costs, in steps of
one token, on the bundled target.

specviz's cost lab measures v(k) for its own target (specviz.labs.speedup.cost_curve); this is the
same curve for llama.cpp, read from the server's own timings: a request whose prompt is k tokens
and which decodes one token makes one forward of k tokens (the prompt's), timed by the server as
``prompt_ms``, with the prompt cache off so every request reads its prompt again. v(k) is the
median of those over the median at k = 1. A speculative cycle of γ drafts checks γ + 1 tokens in
one such forward, so v(γ + 1) is the check's share of a cycle's cost.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from specviz.engines.llama_server import LlamaServer

__all__ = ["ForwardCost", "forward_costs"]


@dataclass(frozen=True)
class ForwardCost:
    """One size k: the server's median milliseconds for a forward of k tokens, and v(k)."""

    tokens: int
    median_ms: float
    runs_ms: tuple[float, ...]
    relative: float  # v(k): median_ms over the one-token forward's


def forward_costs(
    server: LlamaServer, prompt_ids: Sequence[int], sizes: Sequence[int], repeats: int
) -> list[ForwardCost]:
    """v(k) for each k in *sizes* (each at most len(prompt_ids)), sizes interleaved per repeat so
    drift hits them alike; one warm-up request first."""
    wanted = sorted(set([1, *sizes]))
    if wanted[-1] > len(prompt_ids):
        raise ValueError(f"the prompt has {len(prompt_ids)} tokens, fewer than {wanted[-1]}")
    server.complete(list(prompt_ids[: wanted[-1]]), 1, 0.0, 0)  # warm-up
    times: dict[int, list[float]] = {k: [] for k in wanted}
    for _ in range(repeats):
        for k in wanted:
            done = server.complete(list(prompt_ids[:k]), 1, 0.0, 0)
            times[k].append(done.prompt_ms)
    one = statistics.median(times[1])
    return [
        ForwardCost(
            k, statistics.median(times[k]), tuple(times[k]), statistics.median(times[k]) / one
        )
        for k in wanted
    ]
