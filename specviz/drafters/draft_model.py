"""Drafters: whatever proposes the next few tokens for the target to verify.

The verifier needs only the proposed ids and the distribution q each was drawn from, so any
proposer fits behind this interface (a smaller model here; prompt lookup or early exit later), as
in transformers' CandidateGenerator: produce candidates, then learn how many were accepted.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Protocol

import torch

from specviz.core.events import scaled_confidence
from specviz.core.model_steps import device_of, sync
from specviz.core.sampling import Sampler
from specviz.core.settings import GAMMA_MAX, GAMMA_MIN, GenerationSettings
from specviz.models.runner import ModelRunner


@dataclass(frozen=True)
class Proposal:
    """The tokens a drafter proposes for one cycle."""

    token_ids: torch.Tensor  # (n,) long
    q_draft: torch.Tensor  # (n, V) float32: the distribution each token was drawn from
    forwards: int  # forward passes the drafter spent (0 for model-free drafters)
    seconds: float
    ended_by: str = "gamma"  # "gamma" | "budget" | "eos" | "confidence" | "cumulative" (see Cycle)
    doubt_scale: float = 1.0  # what the cumulative stop multiplied each doubt 1 - max q by


class Drafter(Protocol):
    """Proposes candidates for the verifier and adapts to how many were accepted."""

    @property
    def cache_len(self) -> int:
        """KV entries the drafter holds (0 if it has no cache)."""
        ...

    def start(
        self,
        prompt_ids: torch.Tensor,
        settings: GenerationSettings,
        stop_ids: frozenset[int] = frozenset(),
    ) -> float:
        """Reset for a new prompt (1, T) and settings; returns the seconds spent on prefill.

        stop_ids: tokens that end the run when emitted (end-of-sequence); nothing after one of
        them can be part of the output, so a drafter should not draft past one.
        """
        ...

    def propose(self, max_tokens: int, sampler: Sampler) -> Proposal:
        """Draft up to min(gamma, max_tokens) tokens following the committed context."""
        ...

    def commit(self, accepted_len: int, next_token: int) -> None:
        """Keep the first accepted_len proposed tokens, append next_token, adapt gamma."""
        ...


def doubt_scale(misses: int, doubts: float) -> float:
    """How far the cumulative stop trusts the draft's doubts, from its record in this run.

    doubts: the sum of 1 - max q over the draft positions tested so far, the number of wrong
    guesses the draft itself expected; misses: how many it actually got wrong. A draft that is
    right more often than it expects (on text it can copy, say) has its doubts scaled down by
    misses / doubts, so runs of middling-but-right guesses are not cut short; never scaled up,
    since the per-token stop and adaptive γ already curb a draft that is wrong too often. One
    pseudo-count on each side keeps the first cycles near the draft's own estimate.
    """
    return min(1.0, (misses + 1) / (doubts + 1))


def next_gamma(gamma: int, accepted_len: int, proposed: int) -> int:
    """transformers' "heuristic" schedule: +2 after a full accept, -1 after any rejection."""
    if proposed == 0:
        return gamma
    if accepted_len == proposed:
        return min(gamma + 2, GAMMA_MAX)
    return max(gamma - 1, GAMMA_MIN)


class ModelDrafter:
    """A small causal LM that drafts autoregressively from its own KV cache."""

    def __init__(self, model: torch.nn.Module) -> None:
        self.model = model
        self.device = device_of(model)
        self._runner = ModelRunner(model)  # its forward and KV cache, as the engine's target's
        self._gamma = 4
        self._adaptive = False
        self._stop_below = 0.0
        self._stop_cumulative = 0.0
        self._stop_ids: frozenset[int] = frozenset()
        # The cumulative stop's record of this run (see doubt_scale), and the draft's top
        # probability at each position of the current proposal.
        self._misses, self._doubts = 0, 0.0
        self._tops: list[float] = []
        # Tokens in the committed context that the draft model has not fed yet: the whole prompt
        # at the start, then the resampled/bonus token (plus the last draft after a full accept,
        # which was sampled but never fed).
        self._unseen: list[int] = []
        self._proposed: list[int] = []

    @property
    def cache_len(self) -> int:
        return self._runner.cache_len

    @property
    def runner(self) -> ModelRunner:
        """What each draft step calls: the draft model's forward and KV cache."""
        return self._runner

    def start(
        self,
        prompt_ids: torch.Tensor,
        settings: GenerationSettings,
        stop_ids: frozenset[int] = frozenset(),
    ) -> float:
        self._runner.reset()
        self._stop_ids = stop_ids
        self._gamma, self._adaptive = settings.gamma, settings.adaptive_gamma
        self._stop_below = settings.draft_stop_below
        self._stop_cumulative = settings.draft_stop_cumulative
        # No separate prefill: the first proposal reads the whole prompt in the forward that
        # drafts its first token, saving a full read of the draft's weights.
        self._unseen = prompt_ids[0].tolist()
        self._proposed = []
        self._misses, self._doubts, self._tops = 0, 0.0, []
        return 0.0

    @torch.inference_mode()
    def propose(self, max_tokens: int, sampler: Sampler) -> Proposal:
        began = time.perf_counter()
        count = min(self._gamma, max_tokens)
        feed = torch.tensor([self._unseen], device=self.device)  # (1, T), then (1, 1 or 2)
        tokens: list[torch.Tensor] = []
        dists: list[torch.Tensor] = []
        all_right = 1.0  # the draft's estimate that every guess so far this cycle is right
        scale = doubt_scale(self._misses, self._doubts)
        tops: list[float] = []
        ended_by = "gamma" if count == self._gamma else "budget"
        for _ in range(count):
            # logits_to_keep=1: the vocabulary projection is a large share of a small model's cost,
            # and only the last position's distribution is needed.
            logits = self._runner.forward(feed, logits_to_keep=1)[-1]  # (V,)
            dist = sampler.probs(logits)
            token = sampler.draw(dist)  # stays on the device: no host sync inside the loop
            tokens.append(token)
            dists.append(dist)
            feed = token.view(1, 1)
            if self._stop_cumulative > 0.0:
                # The top probability, not the sampled token's: in greedy mode they are the same
                # number; when sampling, q(x) of a drawn token says more about the dice than about
                # whether the target will agree, while a peaked q means the models likely agree.
                # Read for the last guess too: the record of doubts needs every tested position.
                tops.append(float(dist.max()))
            if len(tokens) == count:
                break  # the draft is complete; a stop now would change nothing
            # A drafted end-of-sequence ends the run if the target accepts it, and a rejection
            # ends the cycle there anyway: guesses after it can never be emitted. transformers'
            # assistant stops there too (its draft runs generate(), which ends at EOS). Reading the
            # id back costs a host sync per token, which the confidence stops pay anyway.
            if self._stop_ids and int(token) in self._stop_ids:
                ended_by = "eos"
                break
            # The confidence stops read a number back from the device per token; that is only
            # paid when a stop is on.
            if self._stop_below > 0.0 and float(dist[token]) < self._stop_below:
                ended_by = "confidence"
                break
            if self._stop_cumulative > 0.0:
                all_right *= scaled_confidence(tops[-1], scale)
                if all_right < self._stop_cumulative:
                    ended_by = "cumulative"
                    break
        token_ids = torch.stack(tokens) if tokens else torch.empty(0, dtype=torch.long)
        q_draft = torch.stack(dists) if dists else torch.empty(0, 0)
        self._proposed, self._tops = token_ids.tolist(), tops
        sync(self.device)
        seconds = time.perf_counter() - began
        return Proposal(token_ids, q_draft, len(tokens), seconds, ended_by, scale)

    def commit(self, accepted_len: int, next_token: int) -> None:
        proposed = len(self._proposed)
        if self._tops:
            tested = min(accepted_len + 1, proposed)  # up to and including the first rejection
            self._misses += int(accepted_len < proposed)
            self._doubts += sum(1.0 - top for top in self._tops[:tested])
        if proposed == 0:
            self._unseen = [*self._unseen, next_token]
        elif accepted_len == proposed:
            # The last draft token was sampled but never fed; feed it with the bonus next cycle.
            self._unseen = [self._proposed[-1], next_token]
        else:
            # The cache holds the unseen tokens plus drafts 1..n-1; keep drafts 1..accepted_len.
            self._runner.rollback(proposed - 1 - accepted_len)
            self._unseen = [next_token]
        if self._adaptive:
            self._gamma = next_gamma(self._gamma, accepted_len, proposed)
        self._proposed = []
