"""The GPU path, checked without a download: random-weight models with real models' shapes.

Weights cannot reach a machine with no hub, but shapes can: Qwen2.5-0.5B and Qwen2.5-7B are built
from their configs (the numbers below are their published config.json values) with random
weights, in bf16 on the device. Timing does not depend on the weights' values, so a draft step,
the target's verification cost for 1…16 new tokens (v(k) of the speedup model) and the lean step
against transformers' forward are measured as they would be with the real models. Exactness is
checked on small random models: greedy speculative decoding must give plain decoding's tokens.
"""

from __future__ import annotations

import platform
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

import torch

from specviz.core.engine import autoregressive_generate, speculative_generate
from specviz.core.settings import GenerationSettings
from specviz.drafters.draft_model import ModelDrafter
from specviz.labs.speedup.cost_curve import measure_verification_cost
from specviz.labs.speedup.theory import best_speedup_row, speedup_rows
from specviz.measure.lean_step import time_lean_step
from specviz.models.runner import ModelRunner
from specviz.models.step_costs import machine_key

# Published config.json values (Qwen/Qwen2.5-0.5B and Qwen/Qwen2.5-7B on the hub; the Instruct
# and Coder variants of each size share them). Only what sets a forward's cost and shapes.
SHAPES: Mapping[str, Mapping[str, Any]] = {
    "qwen2.5-0.5b": {
        "hidden_size": 896,
        "intermediate_size": 4864,
        "num_hidden_layers": 24,
        "num_attention_heads": 14,
        "num_key_value_heads": 2,
        "vocab_size": 151936,
        "tie_word_embeddings": True,
    },
    "qwen2.5-1.5b": {  # the bundled pair's target (its draft is the 0.5B above)
        "hidden_size": 1536,
        "intermediate_size": 8960,
        "num_hidden_layers": 28,
        "num_attention_heads": 12,
        "num_key_value_heads": 2,
        "vocab_size": 151936,
        "tie_word_embeddings": True,
    },
    "qwen2.5-7b": {
        "hidden_size": 3584,
        "intermediate_size": 18944,
        "num_hidden_layers": 28,
        "num_attention_heads": 28,
        "num_key_value_heads": 4,
        "vocab_size": 152064,
        "tie_word_embeddings": False,
    },
    # For a check of this code itself on a CPU: the same architecture, a few thousand weights.
    "tiny-draft": {
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "vocab_size": 512,
        "tie_word_embeddings": True,
    },
    "tiny-target": {
        "hidden_size": 96,
        "intermediate_size": 192,
        "num_hidden_layers": 3,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "vocab_size": 512,
        "tie_word_embeddings": False,
    },
}
REAL_PAIR = ("qwen2.5-0.5b", "qwen2.5-7b")
TINY_PAIR = ("tiny-draft", "tiny-target")
ASSUMED_ALPHAS = (0.6, 0.7, 0.8)  # α is not measurable with random weights: rows for each


def random_model(
    shape: str, device: torch.device, dtype: torch.dtype, seed: int = 0, layers: int | None = None
) -> torch.nn.Module:
    """A Qwen2 causal LM with ``shape``'s config and random weights, built on the device; with
    ``layers``, only that many decoder layers (the fixed-cost fit varies them)."""
    from transformers import Qwen2Config, Qwen2ForCausalLM

    config = Qwen2Config(
        **{**SHAPES[shape], **({} if layers is None else {"num_hidden_layers": layers})},
        max_position_embeddings=32768,
        rope_parameters={"rope_type": "default", "rope_theta": 1_000_000.0},
        rms_norm_eps=1e-6,
    )
    torch.manual_seed(seed)
    default = torch.get_default_dtype()
    torch.set_default_dtype(dtype)  # built in bf16 directly: a 7B model never exists in fp32
    try:
        with device:
            model: torch.nn.Module = Qwen2ForCausalLM(config)
    finally:
        torch.set_default_dtype(default)
    model.train(False)
    return model


class CountingTokenizer:
    """Token ids as text ("<17>"): the engine's detokenizer needs a decode, nothing more."""

    @property
    def all_special_ids(self) -> list[int]:
        """No control tokens: every id is a plain token."""
        return []

    def decode(self, token_ids: list[int], skip_special_tokens: bool = False) -> str:
        """Each id as ``<id>``."""
        return "".join(f"<{token_id}>" for token_id in token_ids)


@dataclass
class RandomPair:
    """A draft and a target with random weights, as the engine sees a loaded pair."""

    draft: torch.nn.Module
    target: torch.nn.Module
    tokenizer: CountingTokenizer = field(default_factory=CountingTokenizer)
    eos_token_ids: frozenset[int] = frozenset()

    def target_runner(self) -> ModelRunner:
        """A fresh forward and empty cache for the target."""
        return ModelRunner(self.target)


@dataclass(frozen=True)
class ExactnessCheck:
    """Greedy speculative decoding against plain decoding on one prompt."""

    prompt_tokens: int
    new_tokens: int
    gamma: int
    equal: bool
    first_difference: int | None  # index of the first differing token (None: equal)


def check_greedy_exactness(
    device: torch.device, new_tokens: int = 48, gamma: int = 4
) -> ExactnessCheck:
    """Greedy speculative == plain on two small random models (float32, so that no rounding
    difference between a one-token and a several-token forward can flip an argmax)."""
    pair = RandomPair(
        random_model("tiny-draft", device, torch.float32, seed=1),
        random_model("tiny-target", device, torch.float32, seed=2),
    )
    with torch.no_grad():
        # Random weights give nearly flat logits; sharpened, no two tokens tie for the argmax
        # within float32 rounding, so any difference is the algorithm's, not the arithmetic's.
        head = pair.target.get_submodule("lm_head")
        assert isinstance(head, torch.nn.Linear)
        head.weight.mul_(8.0)
    generator = torch.Generator().manual_seed(3)
    prompt = torch.randint(0, 512, (1, 12), generator=generator).to(device)
    settings = GenerationSettings(
        gamma=gamma, temperature=0.0, max_new_tokens=new_tokens, stop_on_eos=False
    )
    plain = [step.token.token_id for step in autoregressive_generate(pair, prompt, settings)]
    spec = [
        token.token_id
        for cycle in speculative_generate(pair, prompt, settings, ModelDrafter(pair.draft))
        for token in cycle.emitted
    ]
    first = next((i for i, (a, b) in enumerate(zip(plain, spec, strict=False)) if a != b), None)
    if first is None and len(plain) != len(spec):
        first = min(len(plain), len(spec))
    return ExactnessCheck(prompt.shape[1], len(plain), gamma, first is None, first)


@dataclass(frozen=True)
class GpuCheck:
    """Everything ``gpu-check`` measured, as one JSON record."""

    device: str
    device_name: str
    torch_version: str
    cuda_version: str | None
    python_version: str
    shapes: tuple[str, str]
    dtype: str
    exactness: ExactnessCheck
    draft_step: dict[str, Any]  # lean vs transformers, ms per step
    target_step: dict[str, Any]
    verification: dict[str, Any]  # v(k) for k = 1..max: median seconds and relative to k = 1
    draft_cost: float  # c = draft step / target step, both on the lean path
    speedups: dict[str, Any]  # predicted speedup by γ for each assumed α, from measured c, v
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        """The record as plain JSON values."""
        return asdict(self)


def _lean_ms(timing: Any) -> float:
    return float(next(path.ms_per_step for path in timing.paths if path.name == "lean"))


def run_gpu_check(
    device: torch.device,
    shapes: tuple[str, str] = REAL_PAIR,
    max_new_tokens: int = 16,
    progress: Callable[[str], None] | None = None,
) -> GpuCheck:
    """Build the random-weight pair on ``device`` and measure it (see the module docstring)."""
    say = progress or (lambda message: None)
    began = time.perf_counter()
    dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    say("exactness: greedy speculative vs plain on small random models")
    exactness = check_greedy_exactness(device)
    say(f"building {shapes[0]} and {shapes[1]} with random weights ({dtype})")
    draft = random_model(shapes[0], device, dtype, seed=1)
    target = random_model(shapes[1], device, dtype, seed=2)
    say("timing one draft step (lean vs transformers)")
    draft_timing = time_lean_step(draft, context_length=128, blocks=3, steps_per_block=20)
    say("timing one target step (lean vs transformers)")
    target_timing = time_lean_step(target, context_length=128, blocks=3, steps_per_block=10)
    say(f"timing the target's verification of 1..{max_new_tokens} new tokens")
    vocab = int(SHAPES[shapes[1]]["vocab_size"])
    context = torch.randint(0, vocab, (1, 128), generator=torch.Generator().manual_seed(4))
    curve = measure_verification_cost(target, context, max_new_tokens, repeats=5)
    relative = curve.relative()
    draft_cost = _lean_ms(draft_timing) / _lean_ms(target_timing)
    # v(γ) from the curve's fitted line, as the speedup lab reads it (one noisy size cannot
    # make the predicted speedup zigzag in γ).
    verify = {gamma: (curve.fitted(gamma), False) for gamma in range(1, len(relative))}
    speedups = {}
    for alpha in ASSUMED_ALPHAS:
        rows = speedup_rows(alpha, draft_cost, verify)
        best = best_speedup_row(rows)
        speedups[f"alpha={alpha}"] = {
            "by_gamma": {str(row.gamma): round(row.speedup, 3) for row in rows},
            "best_gamma": best.gamma,
            "best_speedup": round(best.speedup, 3),
        }
    cuda = torch.version.cuda if device.type == "cuda" else None
    machine = machine_key(device)
    return GpuCheck(
        device=str(device),
        device_name=str(machine.get("gpu") or machine.get("cpu")),
        torch_version=torch.__version__,
        cuda_version=cuda,
        python_version=platform.python_version(),
        shapes=shapes,
        dtype=str(dtype).removeprefix("torch."),
        exactness=exactness,
        draft_step=asdict(draft_timing),
        target_step=asdict(target_timing),
        verification={
            "context_tokens": curve.context_len,
            "forward": curve.forward,
            "median_s": [point.median_s for point in curve.points],
            "relative": relative,
            "complete": curve.complete,
        },
        draft_cost=draft_cost,
        speedups=speedups,
        seconds=time.perf_counter() - began,
    )
