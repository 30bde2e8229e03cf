"""What a GPU forward costs besides its weight reads and arithmetic: the per-step fixed cost.

At batch size 1 a forward launches a few dozen small kernels per decoder layer. In eager PyTorch
each one costs host time (Python, the dispatcher, the launch) that the GPU waits on; a replayed
CUDA graph launches them all at once. That cost grows with the number of layers, not with the
weights' bytes, so it dominates small models: it is why a 0.5B draft is not 3× cheaper than a
1.5B target on a GPU run eagerly. The projection adds it to the roofline time,

    t(k) = fixed(mode, layers) + max(bytes / bandwidth, 2·params·k / FLOPS),
    fixed(mode, layers) = per_forward + layers · per_layer,

with published figures until ``gpu-check`` has measured this machine's (the calibration file).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch

from specviz.models.bundled import cache_root
from specviz.text import Phrase, UserError

EAGER, CUDA_GRAPHS, NO_FIXED_COST = "eager", "cuda_graphs", "none"
MODES = (EAGER, CUDA_GRAPHS, NO_FIXED_COST)  # the first is what specviz itself runs
MEASURED_MODES = (EAGER, CUDA_GRAPHS)

# --- Published figures (until gpu-check measures this machine) -----------------------------------
# Eager: the PyTorch blog "Accelerating Generative AI with PyTorch II: GPT, Fast" (2023,
# pytorch.org/blog/accelerating-generative-ai-2/), Llama-2-7B (32 layers), batch 1, one A100-80GB:
# 25.5 tok/s eager, "heavily CPU overhead bound", against 107.0 tok/s with torch.compile
# (mode="reduce-overhead", i.e. CUDA graphs) and a static KV cache. The gap, 29.9 ms a token, is
# read as launch and framework cost spread over the 32 layers: 0.93 ms a layer. Cross-check: a
# CPU-side kernel launch takes 5–20 µs (HolisticTraceAnalysis docs, "CUDA kernel launch stats"),
# and by our count transformers' Qwen2 decoder layer runs 40–50 small ops at batch 1 (two RMSNorms
# of ~7 ops, four projections, rotary embedding, cache update, attention, the gated MLP, two adds):
# 0.2–1.0 ms a layer. The blog does not split a per-forward part off, so all of it is per layer.
EAGER_PER_LAYER_S = (1 / 25.5 - 1 / 107.0) / 32
# CUDA graphs: gpt-fast's README (github.com/pytorch-labs/gpt-fast), Llama-2-7B compiled, batch 1,
# A100-80GB: 104.9 tok/s at 1397.31 GB/s, i.e. 13.3 GB read a token, on a GPU whose "empirical peak
# bandwidth is about 1700 GB/s" (same README): 9.53 ms a token against 7.84 ms of weight reads at
# that peak. The rest, 1.7 ms over 32 layers, 53 µs a layer, bounds what a replayed graph adds
# from above (kernels running below peak bandwidth are in it too). vLLM's own notes agree in
# direction: CUDA graphs are "particularly effective for small models" (vllm-project/vllm#1926),
# and one graph over the whole forward instead of one per piece cut Qwen2.5-1.5B's time per output
# token by 7 % (#16072).
GRAPHS_PER_LAYER_S = (1 / 104.9 - (1397.31 / 104.9) / 1700) / 32

CALIBRATION_KIND = "specviz.gpu-fixed-cost"
CALIBRATION_VERSION = 1


@dataclass(frozen=True)
class FixedCost:
    """The per-forward fixed cost of one execution mode, and where its figures come from."""

    mode: str  # one of MODES
    per_forward_s: float  # paid once a forward (embedding, final norm, output layer launches)
    per_layer_s: float  # paid once per decoder layer (its kernel launches and framework work)
    source: str  # "published", "measured" (gpu-check on `device`), "custom" (typed in) or "none"
    device: str = ""  # the GPU it was measured on ("" unless measured)

    @property
    def published(self) -> bool:
        """The figures are the published ones, not measured on a GPU yet."""
        return self.source == "published"

    def seconds(self, layers: int) -> float:
        """fixed = per_forward + layers · per_layer."""
        return self.per_forward_s + layers * self.per_layer_s

    def words(self) -> Phrase:
        """The mode and the figures' origin, for a sentence: "eager PyTorch, published figures"."""
        return Phrase(
            "speedup.projection.fixed_words", mode=mode_words(self.mode), source=self.source_words()
        )

    def source_words(self) -> Phrase:
        """Where the figures come from, worded."""
        if self.source == "measured":
            return Phrase("speedup.projection.source.measured", device=self.device)
        if self.source == "custom":
            return Phrase("speedup.projection.source.custom")
        if self.source == "none":
            return Phrase("speedup.projection.source.none")
        return Phrase("speedup.projection.source.published")


def mode_words(mode: str) -> Phrase:
    """An execution mode's name in the reader's language."""
    if mode == EAGER:
        return Phrase("speedup.projection.mode.eager")
    if mode == CUDA_GRAPHS:
        return Phrase("speedup.projection.mode.cuda_graphs")
    return Phrase("speedup.projection.mode.none")


PUBLISHED: Mapping[str, FixedCost] = {
    EAGER: FixedCost(EAGER, 0.0, EAGER_PER_LAYER_S, "published"),
    CUDA_GRAPHS: FixedCost(CUDA_GRAPHS, 0.0, GRAPHS_PER_LAYER_S, "published"),
    NO_FIXED_COST: FixedCost(NO_FIXED_COST, 0.0, 0.0, "none"),
}


# --- The calibration: gpu-check's measurement, fitted ---------------------------------------------


@dataclass(frozen=True)
class ForwardPoint:
    """One timed forward: a model of `layers` layers reading `weight_bytes`, `tokens` fed."""

    layers: int
    weight_bytes: float
    tokens: int
    seconds: float  # median of the repeats


@dataclass(frozen=True)
class FixedCostFit:
    """t = per_forward + layers · per_layer + bytes / bandwidth, fitted to one-token forwards with
    every coefficient at least 0 (a launch-bound mode hides the bytes: bandwidth is then None)."""

    mode: str
    per_forward_s: float
    per_layer_s: float
    bandwidth_gb_s: float | None  # the effective bandwidth the fit implies; None: not resolved
    rms_error_s: float  # of the fit over the one-token points
    points: tuple[ForwardPoint, ...]

    def fixed_cost(self, device: str) -> FixedCost:
        """The fit's fixed cost, marked as measured on `device`."""
        return FixedCost(self.mode, self.per_forward_s, self.per_layer_s, "measured", device)


def fit_fixed_cost(mode: str, points: Sequence[ForwardPoint]) -> FixedCostFit:
    """Least squares over the one-token points with non-negative coefficients: every subset of
    {per_forward, per_layer, per_byte} is solved unconstrained and the best fit whose
    coefficients are all ≥ 0 wins (that is the non-negative optimum; three columns, eight tries)."""
    ones = [point for point in points if point.tokens == 1]
    if len(ones) < 2:
        raise UserError("error.fixed_cost.points", count=len(ones))
    columns = torch.tensor(
        [[1.0, float(p.layers), p.weight_bytes / 1e9] for p in ones], dtype=torch.float64
    )  # (points, 3): bytes in GB keep the columns of like size
    seconds = torch.tensor([p.seconds for p in ones], dtype=torch.float64)
    best: tuple[float, list[float]] = (float(seconds.pow(2).mean().sqrt()), [0.0, 0.0, 0.0])
    for mask in range(1, 8):
        chosen = [column for column in range(3) if mask >> column & 1]
        solution = torch.linalg.lstsq(columns[:, chosen], seconds.unsqueeze(1)).solution
        if bool((solution < 0).any()):
            continue
        coefficients = [0.0, 0.0, 0.0]
        for column, value in zip(chosen, solution.squeeze(1).tolist(), strict=True):
            coefficients[column] = value
        fitted = columns @ torch.tensor(coefficients, dtype=torch.float64)
        error = float((fitted - seconds).pow(2).mean().sqrt())
        if error < best[0] - 1e-15:
            best = (error, coefficients)
    error, (per_forward, per_layer, per_gb) = best
    bandwidth = 1.0 / per_gb if per_gb > 0 else None  # seconds per GB -> GB/s
    return FixedCostFit(mode, per_forward, per_layer, bandwidth, error, tuple(points))


@dataclass(frozen=True)
class Calibration:
    """gpu-check's fixed-cost measurement on one GPU: a fit per mode, or why a mode has none."""

    device: str
    torch_version: str
    fits: Mapping[str, FixedCostFit]
    unavailable: Mapping[str, str]  # mode -> why it was not measured (e.g. no CUDA here)
    kind: str = CALIBRATION_KIND
    version: int = CALIBRATION_VERSION

    def to_dict(self) -> dict[str, Any]:
        """The calibration as plain JSON values."""
        return {
            "kind": self.kind,
            "version": self.version,
            "device": self.device,
            "torch_version": self.torch_version,
            "fits": {
                mode: {**asdict(fit), "points": [asdict(point) for point in fit.points]}
                for mode, fit in self.fits.items()
            },
            "unavailable": dict(self.unavailable),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Calibration:
        """The record to_dict wrote; KeyError, TypeError or ValueError when it is not one."""
        if data.get("kind") != CALIBRATION_KIND or data.get("version") != CALIBRATION_VERSION:
            raise ValueError("not a specviz fixed-cost calibration of this version")
        fits = {}
        for mode, fit in data["fits"].items():
            if mode not in MEASURED_MODES:
                raise ValueError(f"unknown mode {mode!r}")
            points = tuple(ForwardPoint(**point) for point in fit["points"])
            bandwidth = fit["bandwidth_gb_s"]
            fits[mode] = FixedCostFit(
                mode,
                float(fit["per_forward_s"]),
                float(fit["per_layer_s"]),
                None if bandwidth is None else float(bandwidth),
                float(fit["rms_error_s"]),
                points,
            )
            if min(fits[mode].per_forward_s, fits[mode].per_layer_s) < 0:
                raise ValueError("a fixed cost below zero")
        return cls(
            str(data["device"]),
            str(data["torch_version"]),
            fits,
            {str(mode): str(why) for mode, why in data["unavailable"].items()},
        )


def calibration_file() -> Path:
    """Where gpu-check leaves its calibration and the projection looks for it by default."""
    return cache_root() / "gpu-fixed-cost.json"


def write_calibration(calibration: Calibration, path: Path) -> None:
    """Write the calibration as JSON (folders made as needed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(calibration.to_dict(), indent=2) + "\n", encoding="utf-8")


def read_calibration(path: Path) -> Calibration:
    """The calibration in `path`; a UserError naming the file when it is missing or malformed."""
    try:
        return Calibration.from_dict(json.loads(path.read_text(encoding="utf-8")))
    except OSError:
        raise UserError("error.fixed_cost.unreadable", path=str(path)) from None
    except (KeyError, TypeError, ValueError, AttributeError):
        raise UserError("error.fixed_cost.malformed", path=str(path)) from None


def fixed_costs(calibration: Calibration | None = None) -> dict[str, FixedCost]:
    """Each mode's fixed cost: measured where the calibration has it, published otherwise."""
    costs = dict(PUBLISHED)
    if calibration is not None:
        for mode, fit in calibration.fits.items():
            costs[mode] = fit.fixed_cost(calibration.device)
    return costs


def load_fixed_costs(path: Path | None = None) -> dict[str, FixedCost]:
    """fixed_costs from the calibration at `path` (which must read), or else from the default
    calibration file when a valid one is there, or else the published figures."""
    if path is not None:
        return fixed_costs(read_calibration(path))
    default = calibration_file()
    if not default.is_file():
        return fixed_costs()
    try:
        return fixed_costs(read_calibration(default))
    except UserError:  # a stale or broken cache file is not the user's input: published figures
        return fixed_costs()
