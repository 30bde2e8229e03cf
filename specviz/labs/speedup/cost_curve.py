"""How much a target forward costs as it checks more tokens at once (the verification-cost curve).

Speculation pays off because verifying γ + 1 tokens in one forward pass costs little more than
generating one: at batch size 1 a forward is bound by reading the weights from memory, and every
extra position reuses the weights already read. On a GPU the curve is nearly flat; on a small CPU it
rises sooner, since the arithmetic for each extra position is no longer hidden. This measures it on
the current device, against a warm KV cache, through the model's ModelRunner: the forward the engine
runs (the lean step where it applies), as speculative decoding uses the model.
"""

from __future__ import annotations

import itertools
import statistics
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import torch

from specviz.core.device import sync
from specviz.core.tree import DraftTree
from specviz.measure.harness import Staged, staged_result
from specviz.models.runner import ModelRunner, RunnerKind
from specviz.text import Phrase, UserError


@dataclass(frozen=True)
class CostPoint:
    """The forward time for `new_tokens` positions after the cached context."""

    new_tokens: int
    median_s: float
    runs_s: tuple[float, ...]


@dataclass(frozen=True)
class CostCurve:
    """Forward times for 1, 2, ... new tokens, measured on one device."""

    device: str
    context_len: int
    points: tuple[CostPoint, ...]
    complete: bool  # False when the time budget ran out before the last size
    forward: RunnerKind = "transformers"  # which forward was timed (the runner's kind)

    def relative(self) -> list[float]:
        """Each point's time divided by the one-token time (1.0 = as cheap as one token)."""
        base = self.points[0].median_s
        return [point.median_s / base for point in self.points]

    def line(self) -> tuple[float, float]:
        """(intercept, slope) of the line v(γ) = intercept + slope·γ through the relative costs
        of γ + 1 = 2, 3, ... tokens, never falling; (1, 0) with one point only.

        One point of a curve measured on a busy machine can be off by tens of percent; read point
        by point, such a spike makes the predicted speedup dip at one γ between higher
        neighbours. The line is Theil-Sen's (the median of the slopes between every two points,
        then the median intercept), so a few wild points barely move it, and a verification
        cost affine in γ keeps τ(γ) / (γ·c + v(γ)) rising to one best γ and then falling (a
        concave τ over a convex cost has no second peak). The one-token step is left out: on a
        CPU the second token often costs a step more than the later ones each add.
        """
        points = [(k - 1, v) for k, v in enumerate(self.relative(), start=1) if k > 1]
        if not points:
            return 1.0, 0.0
        slopes = [(v2 - v1) / (g2 - g1) for (g1, v1), (g2, v2) in itertools.combinations(points, 2)]
        slope = max(0.0, statistics.median(slopes)) if slopes else 0.0
        return statistics.median(v - slope * g for g, v in points), slope

    def fitted(self, gamma: int) -> float:
        """v(γ) on the fitted line, never below one one-token forward (v(0) = 1 by definition)."""
        intercept, slope = self.line()
        return max(1.0, intercept + slope * gamma) if gamma > 0 else 1.0


def four_wide(tokens: Sequence[int]) -> DraftTree:
    """A tree of these tokens, each node with up to four children, filled depth by depth: the
    kind of tree a dynamic draft tree verifies (its forward's cost depends on the node count,
    not on the shape)."""
    return DraftTree(tuple(tokens), tuple(index // 4 - 1 for index in range(len(tokens))))


def measure_verification_cost(
    model: torch.nn.Module,
    context_ids: torch.Tensor,
    max_new_tokens: int = 16,
    repeats: int = 5,
    time_budget_s: float = 60.0,
) -> CostCurve:
    """iter_verification_cost run to its end, for callers that wait (the CLI, other labs)."""
    return staged_result(
        iter_verification_cost(model, context_ids, max_new_tokens, repeats, time_budget_s)
    )


@torch.inference_mode()
def iter_verification_cost(
    model: torch.nn.Module,
    context_ids: torch.Tensor,
    max_new_tokens: int = 16,
    repeats: int = 5,
    time_budget_s: float = 60.0,
    sizes: Sequence[int] = (),
    tree: bool = False,
) -> Iterator[Staged[CostCurve]]:
    """Median forward time over `repeats` runs for 1..max_new_tokens new tokens after the context
    (or for *sizes*, which start at 1); a stage after every forward (so a caller can stop between
    two), the curve in the last.

    tree: time the tree verification forward instead (ModelRunner.tree_forward: the root and a
    four-wide tree of size − 1 nodes, positions by depth, the tree mask), which is what a tree
    cycle's target pass runs.

    context_ids (1, T) is prefilled once; each timed forward appends k tokens to the cache and the
    cache is cropped back, exactly the rollback speculative decoding does. One untimed warm-up
    forward per size (and three before the first size) comes first. The measurement stops at
    the first forward past time_budget_s (at least one size is always measured), so a slow device
    overruns the budget by one forward at most. The arguments are checked on the first next().
    """
    if context_ids.dim() != 2 or context_ids.shape[1] < 2:
        raise ValueError("context_ids must have shape (1, T) with T >= 2")
    sizes = tuple(sizes) or tuple(range(1, max_new_tokens + 1))
    if not sizes or sizes[0] != 1 or not all(1 <= s <= 65 for s in sizes) or repeats < 1:
        raise UserError("error.cost.sizes")
    max_new_tokens = max(sizes)
    # Every stage is yielded with the cache at the context: a stream closed there leaves the
    # runner (local to this call) whole, and nothing outside it was touched.
    runner = ModelRunner(model)
    device = runner.device
    context_ids = context_ids.to(device)
    runner.forward(context_ids[:, :-1])  # all but the last context token
    cached = runner.cache_len
    # New tokens to feed: the context's own tokens, cycled; their values do not change the cost.
    pool = context_ids[0].repeat(max_new_tokens // context_ids.shape[1] + 1)
    forwards = len(sizes) * (repeats + 1)  # timed and warm-up, when the budget allows all
    yield Staged(0.0, Phrase("progress.warming_up"))
    for _ in range(3):  # settle allocators and kernel choices before anything is timed
        runner.forward(pool[:1].view(1, 1))
        runner.rollback(1)
        yield Staged(0.0, Phrase("progress.warming_up"))
    began = time.perf_counter()
    points: list[CostPoint] = []
    for done_sizes, size in enumerate(sizes):
        feed = pool[:size].view(1, size)
        shape = four_wide(pool[1:size].tolist())
        runs: list[float] = []
        where = Phrase("speedup.cost.progress", size=size, sizes=max_new_tokens)
        for attempt in range(repeats + 1):
            if points and time.perf_counter() - began > time_budget_s:
                break
            sync(device)
            start = time.perf_counter()
            if tree:
                runner.tree_forward(shape, int(pool[0]))
            else:  # logits for every fed position, as a verify step of `size` tokens keeps them
                runner.forward(feed, logits_to_keep=size)
            sync(device)
            elapsed = time.perf_counter() - start
            runner.rollback(size)
            if attempt > 0:  # the first run is the warm-up
                runs.append(elapsed)
            done = done_sizes * (repeats + 1) + attempt + 1
            yield Staged(min(done / forwards, 0.99), where)
        if len(runs) < repeats:  # cut by the budget: a partial size is left out
            break
        points.append(CostPoint(size, statistics.median(runs), tuple(runs)))
    if runner.cache_len != cached:
        raise RuntimeError("the KV cache was not rolled back to the context")  # pragma: no cover
    complete = len(points) == len(sizes)
    curve = CostCurve(str(device), cached, tuple(points), complete, runner.kind)
    yield Staged(1.0, Phrase("progress.done"), curve)
