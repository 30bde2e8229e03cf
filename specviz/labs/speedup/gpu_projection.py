"""What if: the speedup a GPU would give, from a roofline model of forward time. A projection.

The measured α from this machine is combined with modelled step times of both models on a chosen
GPU: at batch size 1 a forward pays a fixed cost for its kernel launches (fixed_cost.py: eager
PyTorch or CUDA graphs, by the number of layers), then reads every weight once (memory-bound)
unless the arithmetic for the fed tokens takes longer (compute-bound). Nothing here is measured,
and every record says so; the fixed cost is a published figure until gpu-check has measured it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import torch

from specviz.core.cost_model import check_alpha
from specviz.labs.speedup.fixed_cost import EAGER, PUBLISHED, FixedCost
from specviz.labs.speedup.theory import ALL_GAMMAS, SpeedupRow, best_speedup_row, speedup_rows
from specviz.text import DEFAULT_LANGUAGE, Phrase, UserError


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
    layers: int = 0  # decoder layers: the fixed cost per forward grows with them (0: not known)

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
    return Footprint(params, loaded, decoder_layers(model))


def decoder_layers(model: torch.nn.Module) -> int:
    """The model's decoder layers: its config's num_hidden_layers (0 when it has no config)."""
    config = getattr(model, "config", None)
    return int(getattr(config, "num_hidden_layers", 0) or 0)


def roofline_forward_s(
    gpu: GpuSpec, weight_bytes: float, params: float, new_tokens: int, fixed_s: float = 0.0
) -> float:
    """t(k) = fixed + max(bytes / bandwidth, 2·params·k / FLOPS): the launches, then read the
    weights once or do the arithmetic, whichever takes longer (batch 1; attention and KV-cache
    reads ignored). The fixed cost is added, not overlapped: the published eager figure it is
    read from is an eager time minus a bandwidth-bound one (fixed_cost.py)."""
    memory_s = weight_bytes / (gpu.bandwidth_gb_s * 1e9)
    compute_s = 2.0 * params * new_tokens / (gpu.tflops * 1e12)
    return fixed_s + max(memory_s, compute_s)


@dataclass(frozen=True)
class Projection:
    """Predicted speedups on a GPU from a roofline model. A projection, NOT a measurement."""

    gpu: GpuSpec
    alpha: float  # measured on this machine, assumed unchanged on the GPU
    draft_cost: float  # c = t_draft(1) / t_target(1), modelled
    target_step_s: float  # modelled t_target(1), fixed cost included
    draft_step_s: float  # modelled t_draft(1), fixed cost included
    rows: tuple[SpeedupRow, ...]
    best_gamma: int
    best_speedup: float
    assumptions: tuple[Phrase, ...]
    fixed: FixedCost  # the execution mode's fixed cost and where its figures come from
    target_fixed_s: float  # the part of target_step_s that is fixed cost
    draft_fixed_s: float
    kind: str = field(default="projection", init=False)  # never "measurement"

    @property
    def target_fixed_share(self) -> float:
        """The fixed cost's share of the target's one-token step."""
        return self.target_fixed_s / self.target_step_s

    @property
    def draft_fixed_share(self) -> float:
        """The fixed cost's share of the draft's step."""
        return self.draft_fixed_s / self.draft_step_s

    def to_dict(self, lang: str = DEFAULT_LANGUAGE) -> dict[str, Any]:
        """The projection as plain JSON values, its assumptions worded in `lang`."""
        record = asdict(replace(self, assumptions=()))
        record["assumptions"] = [phrase.text(lang) for phrase in self.assumptions]
        record["target_fixed_share"] = self.target_fixed_share
        record["draft_fixed_share"] = self.draft_fixed_share
        return record


def project_speedup(
    alpha: float,
    gpu: GpuSpec,
    target_bytes: float,
    draft_bytes: float,
    target_params: float,
    draft_params: float,
    gammas: Iterable[int] = ALL_GAMMAS,
    *,
    target_layers: int,
    draft_layers: int,
    fixed: FixedCost = PUBLISHED[EAGER],
) -> Projection:
    """The speedup model with c and v(γ) from the roofline times of both models on `gpu`, each
    forward paying `fixed`'s cost for its layers (PUBLISHED["none"]: the bare roofline)."""
    check_alpha(alpha)
    sizes = (target_bytes, draft_bytes, target_params, draft_params)
    if min(sizes) <= 0 or min(fixed.per_forward_s, fixed.per_layer_s) < 0:
        raise UserError("error.projection.sizes")
    if min(target_layers, draft_layers) < 1:
        raise UserError("error.projection.layers")
    target_fixed_s, draft_fixed_s = fixed.seconds(target_layers), fixed.seconds(draft_layers)

    def target_s(tokens: int) -> float:
        return roofline_forward_s(gpu, target_bytes, target_params, tokens, target_fixed_s)

    draft_step_s = roofline_forward_s(gpu, draft_bytes, draft_params, 1, draft_fixed_s)
    draft_cost = draft_step_s / target_s(1)
    verify = {gamma: (target_s(gamma + 1) / target_s(1), False) for gamma in gammas}
    rows = speedup_rows(alpha, draft_cost, verify)
    best = best_speedup_row(rows)
    assumptions = (
        Phrase("speedup.projection.assume.alpha", alpha=f"{alpha:.2f}"),
        Phrase("speedup.projection.assume.bandwidth", bandwidth=f"{gpu.bandwidth_gb_s:.0f}"),
        Phrase("speedup.projection.assume.compute", tflops=f"{gpu.tflops:.0f}"),
        Phrase("speedup.projection.assume.ignored"),
        _fixed_assumption(fixed, target_layers, draft_layers),
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
        fixed=fixed,
        target_fixed_s=target_fixed_s,
        draft_fixed_s=draft_fixed_s,
    )


def _fixed_assumption(fixed: FixedCost, target_layers: int, draft_layers: int) -> Phrase:
    if fixed.seconds(max(target_layers, draft_layers)) == 0:
        return Phrase("speedup.projection.assume.no_fixed", fixed=fixed.words())
    return Phrase(
        "speedup.projection.assume.fixed",
        fixed=fixed.words(),
        per_layer_us=f"{fixed.per_layer_s * 1e6:.0f}",
        per_forward_us=f"{fixed.per_forward_s * 1e6:.0f}",
        target_layers=target_layers,
        draft_layers=draft_layers,
    )


def project_each_mode(
    alpha: float,
    gpu: GpuSpec,
    target: Footprint,
    draft: Footprint,
    costs: Mapping[str, FixedCost],
    shown: FixedCost,
) -> tuple[Projection, tuple[Projection, ...]]:
    """The projection in the `shown` execution mode, then in every other mode of `costs`, both
    models' weights in bf16 (2 bytes each; bytes_at(2))."""

    def project(fixed: FixedCost) -> Projection:
        return project_speedup(
            alpha,
            gpu,
            target.bytes_at(2),
            draft.bytes_at(2),
            target.params,
            draft.params,
            target_layers=target.layers,
            draft_layers=draft.layers,
            fixed=fixed,
        )

    others = tuple(project(fixed) for mode, fixed in costs.items() if mode != shown.mode)
    return project(shown), others
