"""Why the lean step computes attention its own way: speed of one call, and faithfulness.

`time_attention_kernels` times one attention call of a decoding step (one query against a cache)
three ways at the bundled target's shapes: PyTorch's scaled_dot_product_attention (transformers'
default), transformers' eager form (the cache repeated per head, product in the model dtype) and
the lean step's float32 grouped form. `attention_fidelity` compares each path's next-token
distributions, for a low-precision model, with the same weights run in float32.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
from transformers.models.qwen2.modeling_qwen2 import eager_attention_forward

from specviz.measure.harness import Method, Outcome, Trial, measure
from specviz.measure.lean_step import lean_step
from specviz.models.lean_forward import grouped_attention
from specviz.models.model_steps import new_cache

__all__ = [
    "AttentionShape",
    "FidelityRow",
    "KernelTiming",
    "attention_fidelity",
    "time_attention_kernels",
]

KERNELS = ("sdpa", "eager", "lean")


@dataclass(frozen=True)
class AttentionShape:
    """Heads and head size of one attention layer; the default is the bundled target's."""

    heads: int = 12
    kv_heads: int = 2
    head_dim: int = 128

    @property
    def scaling(self) -> float:
        return float(self.head_dim**-0.5)


@dataclass(frozen=True)
class KernelTiming:
    """Median µs per call of each kernel, for one query against `cached` positions."""

    cached: int
    sdpa_us: float
    eager_us: float
    lean_us: float


class _GroupedHeads(torch.nn.Module):
    """What transformers' eager attention reads of its attention module."""

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.num_key_value_groups = groups
        self.eval()


def time_attention_kernels(
    cached_sizes: Sequence[int],
    shape: AttentionShape | None = None,
    calls: int = 100,
    repeats: int = 5,
    dtype: torch.dtype = torch.bfloat16,
) -> list[KernelTiming]:
    """Median µs per attention call at each cache length, the three kernels interleaved."""
    shape = shape or AttentionShape()
    if shape.heads % shape.kv_heads:
        raise ValueError("the query heads must be a multiple of the key/value heads")
    torch.manual_seed(0)
    return [_time_one(cached, shape, calls, repeats, dtype) for cached in cached_sizes]


@torch.inference_mode()
def _time_one(
    cached: int, shape: AttentionShape, calls: int, repeats: int, dtype: torch.dtype
) -> KernelTiming:
    if cached < 1:
        raise ValueError(f"the cache must hold at least one position, got {cached}")
    heads, kv_heads, dim, scaling = shape.heads, shape.kv_heads, shape.head_dim, shape.scaling
    query = torch.randn(1, heads, 1, dim).to(dtype)
    key, value = (torch.randn(1, kv_heads, cached, dim).to(dtype) for _ in range(2))
    key32, value32 = key[0].float(), value[0].float()  # the lean cache is float32, batch-free
    module = _GroupedHeads(heads // kv_heads)

    kernels: dict[str, Callable[[], object]] = {
        "sdpa": lambda: torch.nn.functional.scaled_dot_product_attention(
            query, key, value, scale=scaling, enable_gqa=True
        ),
        "eager": lambda: eager_attention_forward(module, query, key, value, None, scaling),
        "lean": lambda: grouped_attention(query[0], key32, value32, scaling, None),
    }

    def calls_of(kernel: Callable[[], object]) -> Callable[[Trial], Outcome]:
        def run(trial: Trial) -> Outcome:
            for _ in range(calls):
                kernel()
            return Outcome(calls)

        return run

    methods = [Method(name, calls_of(kernel)) for name, kernel in kernels.items()]
    measured = measure(methods, repeats=repeats, warm_up=methods)
    micros = {result.name: 1e6 / result.tokens_per_s for result in measured.methods}
    return KernelTiming(cached, micros["sdpa"], micros["eager"], micros["lean"])


@dataclass(frozen=True)
class FidelityRow:
    """One path's next-token distributions against the float32 reference, over every position."""

    path: str
    mean_kl: float  # mean over positions of KL(float32 || path)
    largest_kl: float
    argmax_agreement: float  # fraction of positions whose most likely token is the reference's


@torch.inference_mode()
def attention_fidelity(
    model: torch.nn.Module, reference: torch.nn.Module, ids: torch.Tensor
) -> list[FidelityRow]:
    """Each attention path of `model` against `reference` (the same weights in float32, SDPA).

    Paths: transformers' forward with SDPA, with eager attention, and specviz's lean step where it
    applies. The model's attention implementation is restored afterwards.
    """
    positions = ids.shape[1]
    if positions < 1:
        raise ValueError("there are no positions to compare")
    reference.set_attn_implementation("sdpa")  # type: ignore[operator]
    out = reference(input_ids=ids, past_key_values=new_cache(reference), logits_to_keep=positions)
    expected = out.logits[0].float().log_softmax(-1)  # (T, V)
    rows: list[FidelityRow] = []
    # transformers keeps the active implementation on the config (no public getter).
    loaded = model.config._attn_implementation  # type: ignore[union-attr]
    try:
        for attention in ("sdpa", "eager"):
            model.set_attn_implementation(attention)  # type: ignore[operator]
            out = model(input_ids=ids, past_key_values=new_cache(model), logits_to_keep=positions)
            rows.append(_fidelity(f"transformers, {attention}", expected, out.logits[0]))
    finally:
        model.set_attn_implementation(loaded)  # type: ignore[operator]
    lean = lean_step(model)
    if lean is not None:
        forward, cache_for = lean
        out = forward(input_ids=ids, past_key_values=cache_for(), logits_to_keep=positions)
        rows.append(_fidelity("specviz lean step", expected, out.logits[0]))
    return rows


def _fidelity(path: str, expected: torch.Tensor, logits: torch.Tensor) -> FidelityRow:
    log_q = logits.float().log_softmax(-1)
    kl = (expected.exp() * (expected - log_q)).sum(-1)  # (T,)
    agree = (log_q.argmax(-1) == expected.argmax(-1)).float().mean().item()
    return FidelityRow(path, kl.mean().item(), kl.max().item(), agree)
