"""torch's bfloat16 product against specviz's AVX2 kernel, side by side on the same model.

The model's layers already run the kernel (the loader swapped them in, specviz.models.bf16_rows);
torch_products() switches the same layers back to torch's product, so both paths multiply the same
weights in one process. Each round times a verify-shaped forward of 1..n new tokens after the same
cached context (step_costs.time_forward, the forward the engine runs) through both paths in turn;
the least of the rounds counts, so a busy moment on a shared machine does not.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from specviz.models.bf16_rows import torch_products
from specviz.models.runner import ModelRunner
from specviz.models.step_costs import time_forward
from specviz.text import UserError

__all__ = ["MOST_SIZES", "ProductsRow", "ProductsTiming", "time_products"]

MOST_SIZES = 64  # the longest forward timed: verification sizes, not prompts


@dataclass(frozen=True)
class ProductsRow:
    """One forward size through both paths: milliseconds, the least of the rounds."""

    tokens: int
    torch_ms: float
    kernel_ms: float


@dataclass(frozen=True)
class ProductsTiming:
    """Both paths over forward sizes 1..n, and how far apart their logits are."""

    context_tokens: int
    layers: int  # Linear layers running the kernel
    # Over the logits of the largest forward timed (`sizes` tokens after the context):
    largest_logit_difference: float  # max |torch − kernel|
    same_argmax: float  # fraction of its positions where both pick the same token
    rows: tuple[ProductsRow, ...]

    def verify_costs(self) -> tuple[tuple[float, ...], tuple[float, ...]]:
        """v(k) of each path: a forward of k tokens over the same path's one-token forward."""
        first = self.rows[0]
        torch_costs = tuple(row.torch_ms / first.torch_ms for row in self.rows)
        kernel_costs = tuple(row.kernel_ms / first.kernel_ms for row in self.rows)
        return torch_costs, kernel_costs


@torch.inference_mode()
def time_products(
    model: torch.nn.Module, context: torch.Tensor, sizes: int = 8, rounds: int = 3
) -> ProductsTiming:
    """Time forwards of 1..sizes new tokens after context (T,) ids, torch's product and the
    kernel's in turn, each the least of rounds runs."""
    if not 1 <= sizes <= min(MOST_SIZES, context.numel()) or rounds < 1:
        raise UserError("error.bf16_products.counts", most=MOST_SIZES)
    runner = ModelRunner(model)
    feed = context.view(1, -1).to(runner.device)
    runner.forward(feed, logits_to_keep=1)  # the context every timed forward follows
    pool = feed[0]
    drafts = pool[:sizes].view(1, -1)  # a verify-shaped forward of `sizes` tokens, both ways
    kernel_logits = runner.forward(drafts, logits_to_keep=sizes).float()
    runner.rollback(sizes)
    with torch_products(model) as layers:
        if layers == 0:
            raise UserError("error.bf16_products.not_running")
        torch_logits = runner.forward(drafts, logits_to_keep=sizes).float()
    runner.rollback(sizes)
    best = {path: [float("inf")] * sizes for path in ("torch", "kernel")}
    for _ in range(rounds):
        for size in range(1, sizes + 1):
            best["kernel"][size - 1] = min(
                best["kernel"][size - 1], time_forward(runner, pool, size)
            )
            with torch_products(model):
                seconds = time_forward(runner, pool, size)
            best["torch"][size - 1] = min(best["torch"][size - 1], seconds)
    same = (kernel_logits.argmax(-1) == torch_logits.argmax(-1)).float().mean().item()
    return ProductsTiming(
        context_tokens=int(feed.shape[1]),
        layers=layers,
        largest_logit_difference=(kernel_logits - torch_logits).abs().max().item(),
        same_argmax=same,
        rows=tuple(
            ProductsRow(size, best["torch"][size - 1] * 1000, best["kernel"][size - 1] * 1000)
            for size in range(1, sizes + 1)
        ),
    )
