"""How much the lean decoding step saves: one new token after a cached context, both ways.

transformers' forward (with the model's attention, SDPA by default) and specviz's lean step take
turns in blocks of steps through the measurement harness, each against its own cache of the same
context; the record also holds how far apart their logits are (the lean step computes attention in
float32, see specviz.models.lean_forward).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from specviz.measure.harness import Method, Outcome, Trial, measure
from specviz.models.lean_forward import LeanDecoder, lean_support_problem
from specviz.models.model_steps import new_cache
from specviz.text import UserError

__all__ = ["LeanStepTiming", "StepTiming", "lean_step", "time_lean_step"]


def lean_step(model: torch.nn.Module) -> tuple[Callable[..., Any], Callable[[], Any]] | None:
    """The model's lean decoding step and a factory of its caches; None where it does not apply.

    The one place in measure/ that reaches the lean step (what ModelRunner runs once its
    first-use check accepts it).
    """
    if lean_support_problem(model) is not None:
        return None
    step = LeanDecoder(model)
    return step, step.new_cache


@dataclass(frozen=True)
class StepTiming:
    """One path's time per decoding step."""

    name: str  # "transformers" or "lean"
    ms_per_step: float  # median over blocks
    blocks_ms: tuple[float, ...]  # each block's mean time per step, in block order


@dataclass(frozen=True)
class LeanStepTiming:
    """Both paths at one context length, and how far their logits are apart."""

    context_length: int
    steps_per_block: int
    largest_logit_difference: float  # max |transformers − lean| over the context's last logits
    paths: tuple[StepTiming, ...]  # transformers, then lean


@torch.inference_mode()
def time_lean_step(
    model: torch.nn.Module, context_length: int = 60, blocks: int = 3, steps_per_block: int = 20
) -> LeanStepTiming:
    """Time one new token after `context_length` cached tokens, transformers' forward and lean.

    Each block feeds the same token `steps_per_block` times, rolling the cache back after each, so
    every step sees the same cache length; blocks alternate between the paths.
    """
    lean = lean_step(model)
    if lean is None:
        raise UserError("error.lean_step.not_applicable")
    if context_length < 1 or blocks < 1 or steps_per_block < 1:
        raise UserError("error.lean_step.counts")
    lean_forward, lean_cache_for = lean
    device = next(model.parameters()).device
    context = torch.arange(100, 100 + context_length, device=device).view(1, -1)
    token = torch.tensor([[9]], device=device)
    reference_cache, lean_cache = new_cache(model), lean_cache_for()
    expected = model(input_ids=context, past_key_values=reference_cache, logits_to_keep=1).logits
    got = lean_forward(input_ids=context, past_key_values=lean_cache, logits_to_keep=1).logits
    difference = (expected.float() - got.float()).abs().max().item()

    def steps_of(forward: Callable[..., Any], cache: Any) -> Callable[[Trial], Outcome]:
        def run(trial: Trial) -> Outcome:
            for _ in range(steps_per_block):
                forward(input_ids=token, past_key_values=cache, logits_to_keep=1)
                cache.crop(-1)
            return Outcome(steps_per_block)

        return run

    methods = [
        Method("transformers", steps_of(model, reference_cache)),
        Method("lean", steps_of(lean_forward, lean_cache)),
    ]
    measured = measure(methods, repeats=blocks, warm_up=methods)
    paths = tuple(
        StepTiming(
            result.name,
            1000.0 / result.tokens_per_s,
            tuple(1000.0 * sample.seconds / steps_per_block for sample in result.samples),
        )
        for result in measured.methods
    )
    return LeanStepTiming(context_length, steps_per_block, difference, paths)
