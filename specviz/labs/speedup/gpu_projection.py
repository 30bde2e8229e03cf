"""What if: the speedup a GPU would give, from a roofline model of forward time. A projection.

The measured α from this machine is combined with modelled step times of both models on a chosen
GPU: at batch size 1 a forward reads every weight once (memory-bound) unless the arithmetic for
the fed tokens takes longer (compute-bound). Nothing here is measured, and every record says so.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import torch

from specviz.core.cost_model import check_alpha
from specviz.labs.speedup.theory import ALL_GAMMAS, SpeedupRow, best_speedup_row, speedup_rows
from specviz.text import UserError


@dataclass(frozen=True)
class GpuSpec:
    """A GPU as the roofline model sees it: memory bandwidth and dense tensor throughput."""

    name: str
    bandwidth_gb_s: float  # GB/s of device memory (10^9 bytes per second)
    tflops: float  # dense (no sparsity) bf16 tensor TFLOPS, fp32 accumulate


# Vendor spec sheets, dense figures (the sheets print 2x "with sparsity"): NVIDIA H200 and H100
# SXM product pages / datasheets; A100 80GB SXM datasheet; L4 and T4 datasheets (T4 has no bf16:
# its fp16 tensor figure); Ada Lovelace architecture whitepaper, appendix, for the GeForce
# RTX 4090 (bf16 with fp32 accumulate, which PyTorch uses).
GPU_PRESETS: Mapping[str, GpuSpec] = {
    spec.name: spec
    for spec in (
        GpuSpec("NVIDIA H200 SXM", 4800.0, 989.0),
        GpuSpec("NVIDIA H100 SXM", 3350.0, 989.0),
        GpuSpec("NVIDIA A100 80GB SXM", 2039.0, 312.0),
        GpuSpec("NVIDIA RTX 4090", 1008.0, 165.0),
        GpuSpec("NVIDIA L4", 300.0, 121.0),
        GpuSpec("NVIDIA T4 (fp16)", 320.0, 65.0),
    )
}


@dataclass(frozen=True)
class Footprint:
    """What one forward of a model streams: the weights of every layer but input embeddings."""

    params: int  # weights multiplied per token (2 FLOPs each)
    loaded_bytes: int  # those weights' bytes as loaded here (int8 packed weights at 1 byte)

    def bytes_at(self, bytes_per_param: float) -> float:
        """The bytes the same weights take at another width (2 for bf16 on a GPU)."""
        return self.params * bytes_per_param


def model_footprint(model: torch.nn.Module) -> Footprint:
    """Count the weights a forward reads, each tensor once (tied output layers included once).

    Input embeddings are a row lookup, not a read of the whole table, so they are left out unless
    the output layer shares them. Dynamically quantized Linear layers keep their int8 weights
    packed outside parameters(); their weight() and bias() methods unpack them, and are counted.
    """
    counted: dict[int, torch.Tensor] = {}  # holding each tensor keeps its id from being reused
    for module in model.modules():
        if isinstance(module, torch.nn.Embedding):
            continue
        tensors = list(module.parameters(recurse=False))
        weight, bias = getattr(module, "weight", None), getattr(module, "bias", None)
        if callable(weight) and callable(bias):  # torch.ao dynamic quantized Linear
            tensors += [t for t in (weight(), bias()) if t is not None]
        counted.update((id(tensor), tensor) for tensor in tensors)
    params = sum(tensor.numel() for tensor in counted.values())
    loaded = sum(tensor.numel() * tensor.element_size() for tensor in counted.values())
    return Footprint(params, loaded)


def roofline_forward_s(
    gpu: GpuSpec, weight_bytes: float, params: float, new_tokens: int, overhead_s: float = 0.0
) -> float:
    """t(k) = overhead + max(bytes / bandwidth, 2·params·k / FLOPS): read the weights once, or
    do the arithmetic, whichever takes longer (batch 1; attention and KV-cache reads ignored)."""
    memory_s = weight_bytes / (gpu.bandwidth_gb_s * 1e9)
    compute_s = 2.0 * params * new_tokens / (gpu.tflops * 1e12)
    return overhead_s + max(memory_s, compute_s)


@dataclass(frozen=True)
class Projection:
    """Predicted speedups on a GPU from a roofline model. A projection, NOT a measurement."""

    gpu: GpuSpec
    alpha: float  # measured on this machine, assumed unchanged on the GPU
    draft_cost: float  # c = t_draft(1) / t_target(1), modelled
    target_step_s: float  # modelled t_target(1)
    draft_step_s: float  # modelled t_draft(1)
    rows: tuple[SpeedupRow, ...]
    best_gamma: int
    best_speedup: float
    assumptions: tuple[str, ...]
    kind: str = field(default="projection", init=False)  # never "measurement"


def project_speedup(
    alpha: float,
    gpu: GpuSpec,
    target_bytes: float,
    draft_bytes: float,
    target_params: float,
    draft_params: float,
    gammas: Iterable[int] = ALL_GAMMAS,
    overhead_s: float = 0.0,
) -> Projection:
    """The speedup model with c and v(γ) from the roofline times of both models on `gpu`."""
    check_alpha(alpha)
    if min(target_bytes, draft_bytes, target_params, draft_params) <= 0 or overhead_s < 0:
        raise UserError("error.projection.sizes")

    def target_s(tokens: int) -> float:
        return roofline_forward_s(gpu, target_bytes, target_params, tokens, overhead_s)

    draft_step_s = roofline_forward_s(gpu, draft_bytes, draft_params, 1, overhead_s)
    draft_cost = draft_step_s / target_s(1)
    verify = {gamma: (target_s(gamma + 1) / target_s(1), False) for gamma in gammas}
    rows = speedup_rows(alpha, draft_cost, verify)
    best = best_speedup_row(rows)
    assumptions = (
        f"α = {alpha:.2f} (measured on this machine, or entered), assumed the same on the GPU",
        "batch size 1; each forward reads every weight once at the full rated bandwidth "
        f"({gpu.bandwidth_gb_s:.0f} GB/s)",
        f"arithmetic at the rated dense tensor throughput ({gpu.tflops:.0f} TFLOPS), "
        "2 FLOPs per weight per token",
        "attention over the context, KV-cache reads, sampling and the host are ignored",
        f"fixed cost per forward: {overhead_s * 1000:.2f} ms (kernel launches; eager PyTorch on "
        "small models is often launch-bound, which pushes c towards 1)",
    )
    return Projection(
        gpu=gpu,
        alpha=alpha,
        draft_cost=draft_cost,
        target_step_s=target_s(1),
        draft_step_s=draft_step_s,
        rows=rows,
        best_gamma=best.gamma,
        best_speedup=best.speedup,
        assumptions=assumptions,
    )
