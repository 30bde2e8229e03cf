"""What a run generates and how: the settings shared by speculative and plain decoding."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from specviz.core.sampling import Sampler

GAMMA_MIN, GAMMA_MAX = 1, 16


@dataclass(frozen=True)
class GenerationSettings:
    """Everything that decides what a run generates; shared by speculative and plain decoding."""

    gamma: int = 5  # tokens drafted per cycle (the starting value when adaptive)
    adaptive_gamma: bool = False  # grow γ after a full accept, shrink after a rejection
    max_new_tokens: int = 128
    temperature: float = 0.0  # 0 = greedy
    top_k: int = 0  # 0 = off
    top_p: float = 1.0  # 1 = off
    seed: int = 0
    stop_on_eos: bool = True
    # Stop a draft early after a token the drafter gave less than this probability (0 = never):
    # later guesses would mostly be rejected, so drafting them wastes time. The output law is
    # unchanged whatever the drafter proposes. transformers' assisted generation uses 0.4.
    draft_stop_below: float = 0.0
    # Stop a draft once the product of the draft's top probabilities over this cycle's guesses
    # (each doubt 1 - top scaled down when the run shows the draft too doubtful, see doubt_scale)
    # falls below this (0 = never): the draft's own estimate that every guess so far is right.
    # A run of fairly sure guesses ends before the per-token stop would notice. specviz's own rule.
    draft_stop_cumulative: float = 0.0

    def __post_init__(self) -> None:
        problems = []
        if not GAMMA_MIN <= self.gamma <= GAMMA_MAX:
            problems.append(f"γ must be between {GAMMA_MIN} and {GAMMA_MAX}, got {self.gamma}")
        if self.max_new_tokens < 1:
            problems.append(f"max new tokens must be at least 1, got {self.max_new_tokens}")
        if not 0.0 <= self.temperature <= 10.0:
            problems.append(f"temperature must be between 0 and 10, got {self.temperature}")
        if self.top_k < 0:
            problems.append(f"top-k must be 0 (off) or positive, got {self.top_k}")
        if not 0.0 < self.top_p <= 1.0:
            problems.append(f"top-p must be in (0, 1], got {self.top_p}")
        if not 0.0 <= self.draft_stop_below < 1.0:
            problems.append(f"draft stop threshold must be in [0, 1), got {self.draft_stop_below}")
        if not 0.0 <= self.draft_stop_cumulative < 1.0:
            problems.append(
                f"cumulative draft stop must be in [0, 1), got {self.draft_stop_cumulative}"
            )
        if problems:
            raise ValueError("; ".join(problems))

    def sampler(self, device: torch.device) -> Sampler:
        """A sampler with a fresh random stream seeded from the settings."""
        generator = torch.Generator(device=device)
        generator.manual_seed(self.seed)
        return Sampler(self.temperature, self.top_k, self.top_p, generator)
