"""The Medusa heads: one residual block per head on the target's final hidden state, each sharing
the target's frozen output layer (Cai et al., "Medusa", 2024, §2.1.1, Medusa-1).

Head k reads h_t, the target's final normed hidden state at position t (what its output layer
reads to predict token t + 1), and guesses token t + k + 1:

    p_k(· | h_t) = softmax(E · (h_t + SiLU(W_k h_t + b_k)))

with E the target's output layer. W_k and b_k start at zero, so an untrained head is the output
layer itself (Medusa's initialisation: the head starts from the next-token guess and learns the
shift).
"""

from __future__ import annotations

import torch

from specviz.models.lean_forward import rows_of


class ResidualBlock(torch.nn.Module):
    """h + SiLU(W h + b), W and b zero at first: the identity until trained."""

    def __init__(self, hidden: int) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(hidden, hidden)
        torch.nn.init.zeros_(self.linear.weight)
        torch.nn.init.zeros_(self.linear.bias)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return hidden + torch.nn.functional.silu(self.linear(hidden))


class MedusaHeads(torch.nn.Module):
    """K heads over hidden states of width *hidden*; forward gives each head's state, which the
    target's output layer turns into logits."""

    def __init__(self, count: int, hidden: int) -> None:
        super().__init__()
        self.blocks = torch.nn.ModuleList(ResidualBlock(hidden) for _ in range(count))
        self.width = hidden

    @property
    def count(self) -> int:
        return len(self.blocks)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        """(rows, hidden) -> (rows, K, hidden): each head's state for the output layer."""
        return torch.stack([block(hidden) for block in self.blocks], dim=-2)

    @torch.inference_mode()
    def logits(self, hidden_row: torch.Tensor, output_layer: torch.nn.Module) -> torch.Tensor:
        """(K, V) logits of every head after one hidden row (hidden,) of the target. The blocks
        run in float32 (their products are small); the output layer in its own dtype, through
        the same row product the target's step uses, all K rows in one call."""
        own_dtype = next(self.parameters()).dtype
        states = self(hidden_row.to(own_dtype).view(1, -1))[0]  # (K, hidden)
        layer_dtype = next(output_layer.parameters()).dtype
        logits: torch.Tensor = rows_of(output_layer)(states.to(layer_dtype))
        return logits
