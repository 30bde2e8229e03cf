"""gpu-check's measurement of the fixed cost per forward, eager and as a replayed CUDA graph.

The fixed cost grows with the layers and the weight reads with the bytes; within one shape both
grow together with the layer count, so the bundled pair's two widths (Qwen2.5-0.5B and 1.5B,
random weights) are each built at their full depth and at a quarter of it. Each variant's forward
of 1, 4 and 16 new tokens after a 128-token context is timed, and the one-token times are fitted
with t = per_forward + layers · per_layer + bytes / bandwidth (fixed_cost.fit_fixed_cost).

Eager is the engine's own forward (ModelRunner, as the verification-cost lab times it). CUDA
graphs are captured with torch.cuda.graph around transformers' forward on a StaticCache, the
cache transformers itself offers for graph capture, and replayed: the same kernels as eager,
launched at once, so the difference between the two modes is the launch and framework cost
alone. torch.compile(mode="reduce-overhead") would also graph the forward, but it fuses kernels
too (a different forward, not the one specviz runs) and compiles for minutes per shape, longer
than a lent GPU's budget; a capture takes a second. A mode that cannot run records why.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

import torch

from specviz.labs.speedup.cost_curve import iter_verification_cost
from specviz.labs.speedup.fixed_cost import (
    CUDA_GRAPHS,
    EAGER,
    Calibration,
    ForwardPoint,
    fit_fixed_cost,
)
from specviz.labs.speedup.gpu_check import SHAPES, random_model
from specviz.labs.speedup.gpu_projection import model_footprint
from specviz.measure.harness import staged_result
from specviz.models.step_costs import machine_key

FIXED_COST_PAIR = ("qwen2.5-0.5b", "qwen2.5-1.5b")  # the bundled pair's shapes
TINY_FIXED_COST_PAIR = ("tiny-draft", "tiny-target")
SIZES = (1, 4, 16)  # new tokens per timed forward: one-token steps are fitted, the rest shown
CONTEXT = 128  # cached tokens before each timed forward


def depth_variants(shapes: Sequence[str]) -> list[tuple[str, int]]:
    """Each shape at its full depth and at a quarter of it (at least one layer)."""
    variants = []
    for shape in shapes:
        layers = int(SHAPES[shape]["num_hidden_layers"])
        variants += [(shape, layers), (shape, max(1, layers // 4))]
    return variants


@torch.no_grad()
def time_graphed_forward(
    model: torch.nn.Module, context_ids: torch.Tensor, sizes: Sequence[int], repeats: int
) -> list[float]:
    """Median seconds of a replayed CUDA graph of one forward of each size after the context
    (a StaticCache: each replay writes the same positions, so every replay is the same step)."""
    from transformers import StaticCache

    device = context_ids.device
    context = context_ids.shape[1]
    config: Any = model.config  # a transformers config (Module's attribute typing says less)
    cache = StaticCache(config=config, max_cache_len=context + max(sizes))
    positions = torch.arange(context, device=device)
    model(input_ids=context_ids, past_key_values=cache, cache_position=positions, use_cache=True)
    medians = []
    for size in sizes:
        feed = context_ids[:, :size].clone()
        position = torch.arange(context, context + size, device=device)

        def step(feed: torch.Tensor = feed, position: torch.Tensor = position) -> torch.Tensor:
            return model(  # type: ignore[no-any-return]
                input_ids=feed,
                past_key_values=cache,
                cache_position=position,
                use_cache=True,
                logits_to_keep=feed.shape[1],
            ).logits

        # Warm-up on a side stream before capture, as torch.cuda.graph's documentation asks.
        side = torch.cuda.Stream(device)  # type: ignore[no-untyped-call]
        side.wait_stream(torch.cuda.current_stream(device))
        with torch.cuda.stream(side):
            for _ in range(3):
                step()
        torch.cuda.current_stream(device).wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            step()
        runs = []
        for attempt in range(repeats + 1):  # the first replay is a warm-up
            torch.cuda.synchronize(device)
            began = time.perf_counter()
            graph.replay()
            torch.cuda.synchronize(device)
            if attempt:
                runs.append(time.perf_counter() - began)
        medians.append(statistics.median(runs))
        del graph
    return medians


def time_eager_forward(
    model: torch.nn.Module, context_ids: torch.Tensor, sizes: Sequence[int], repeats: int
) -> list[float]:
    """Median seconds of the engine's own forward of each size after the context."""
    curve = staged_result(
        iter_verification_cost(model, context_ids, repeats=repeats, sizes=sizes, time_budget_s=120)
    )
    return [point.median_s for point in curve.points]


def measure_fixed_costs(
    device: torch.device,
    shapes: Sequence[str] = FIXED_COST_PAIR,
    repeats: int = 10,
    progress: Callable[[str], None] | None = None,
) -> Calibration:
    """Time every depth variant of `shapes` eager and graphed on `device`, and fit each mode."""
    say = progress or (lambda message: None)
    dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    points: dict[str, list[ForwardPoint]] = {EAGER: [], CUDA_GRAPHS: []}
    unavailable: dict[str, str] = {}
    if device.type != "cuda":
        unavailable[CUDA_GRAPHS] = "CUDA graphs need a CUDA device"
    for seed, (shape, layers) in enumerate(depth_variants(shapes), start=10):
        say(f"fixed cost: {shape} with {layers} layers")
        model = random_model(shape, device, dtype, seed=seed, layers=layers)
        weight_bytes = float(model_footprint(model).loaded_bytes)
        vocab = int(SHAPES[shape]["vocab_size"])
        context = torch.randint(0, vocab, (1, CONTEXT), generator=torch.Generator().manual_seed(6))
        context = context.to(device)
        timers = {EAGER: time_eager_forward, CUDA_GRAPHS: time_graphed_forward}
        for mode, timer in timers.items():
            if mode in unavailable:
                continue
            try:
                seconds = timer(model, context, SIZES, repeats)
            except Exception as error:  # a mode that cannot run here says why, the rest go on
                unavailable[mode] = f"{type(error).__name__}: {error}"[:300]
                continue
            points[mode] += [
                ForwardPoint(layers, weight_bytes, size, median)
                for size, median in zip(SIZES, seconds, strict=False)
            ]
        del model
        if device.type == "cuda":
            torch.cuda.empty_cache()
    fits = {
        mode: fit_fixed_cost(mode, mode_points)
        for mode, mode_points in points.items()
        if mode not in unavailable
    }
    machine = machine_key(device)
    return Calibration(
        device=str(machine.get("gpu") or machine.get("cpu")),
        torch_version=torch.__version__,
        fits=fits,
        unavailable=unavailable,
    )
