"""The draft-model drafter: a small causal LM drafting autoregressively from its own KV cache.

Only what is specific to a model lives here: feed the tokens it has not seen, get a distribution,
draw, crop the cache after a rejection. When a draft ends and how γ moves is DraftPolicy's.
"""

from __future__ import annotations

import time

import torch

from specviz.core.cost_model import StepCosts, step_costs_of
from specviz.core.engine import ModelPairLike
from specviz.core.model_steps import device_of, sync
from specviz.core.proposal import Proposal
from specviz.core.sampling import Sampler
from specviz.core.settings import GenerationSettings
from specviz.drafters.base import DrafterSpec
from specviz.drafters.policy import DraftPolicy, draft_autoregressively
from specviz.models.runner import ModelRunner
from specviz.text import UserError


class ModelDrafter:
    """A small causal LM that drafts autoregressively from its own KV cache."""

    kind = "draft-model"
    uses_draft_model = True  # holds the pair's draft model (the advisor counts its weights)
    compared_at_every_format = True  # the advisor's rows per draft format are this drafter's
    samples_in_exactness_lab = True  # the lab's sampled arm draws from this very model

    @classmethod
    def check_spec(cls, spec: DrafterSpec) -> None:
        """No options to check but that there are none."""
        spec.check_options()

    def __init__(self, model: torch.nn.Module, costs: StepCosts | None = None) -> None:
        self.model = model
        self.costs = costs  # measured at load; the cost γ schedule reads them
        self.device = device_of(model)
        self._runner = ModelRunner(model)  # its forward and KV cache, as the engine's target's
        self.policy = DraftPolicy(GenerationSettings())
        self._proposed: list[int] = []

    @classmethod
    def from_spec(cls, spec: DrafterSpec, pair: ModelPairLike) -> ModelDrafter:
        """The registry's factory: the pair's draft model and step costs, no options."""
        cls.check_spec(spec)
        draft = getattr(pair, "draft", None)
        if not isinstance(draft, torch.nn.Module):
            raise UserError("error.drafter.needs_draft", kind=repr(cls.kind))
        return cls(draft, step_costs_of(pair))

    @property
    def cache_len(self) -> int:
        return self._runner.cache_len

    @property
    def runner(self) -> ModelRunner:
        """What each draft step calls: the draft model's forward and KV cache."""
        return self._runner

    def start(
        self, prompt_ids: torch.Tensor, settings: GenerationSettings, stop_ids: frozenset[int]
    ) -> float:
        self._runner.reset()
        self.policy = DraftPolicy(settings, stop_ids, self.costs)
        self._proposed = []
        # No separate prefill: the first proposal reads the prompt (a long prompt's last chunk,
        # after the engine's prefill() calls) in the forward that drafts its first token, saving
        # a full read of the draft's weights.
        return 0.0

    @torch.inference_mode()
    def prefill(self, prompt_part: torch.Tensor) -> None:
        """Read the next chunk of a long prompt (1, L) into the draft's cache (the engine's
        PrefillingDrafter capability)."""
        self._runner.forward(prompt_part.to(self.device), logits_to_keep=1)
        sync(self.device)

    @torch.inference_mode()
    def propose(self, context: torch.Tensor, max_tokens: int, sampler: Sampler) -> Proposal:
        began = time.perf_counter()
        count = self.policy.begin(max_tokens)
        # The committed tokens the cache has not seen: the whole prompt at first, then the
        # resampled/bonus token (plus the last draft after a full accept, sampled but never fed).
        feed = context[self.cache_len :].view(1, -1).to(self.device)  # (1, T), then (1, 1 or 2)
        token_ids, q_draft = draft_autoregressively(
            self._next_logits, feed, count, sampler, self.policy
        )
        self._proposed = token_ids.tolist()
        sync(self.device)
        return Proposal(
            token_ids,
            q_draft,
            forwards=token_ids.shape[0],
            seconds=time.perf_counter() - began,
            drafter=self.kind,
            ended_by=self.policy.ended_by,
            doubt_scale=self.policy.doubt_scale,
            gamma=self.policy.gamma,
        )

    def _next_logits(self, feed: torch.Tensor) -> torch.Tensor:
        # logits_to_keep=1: the vocabulary projection is a large share of a small model's cost,
        # and only the last position's distribution is needed.
        return self._runner.forward(feed, logits_to_keep=1)[-1]  # (V,)

    def commit(self, accepted_len: int, next_token: int) -> None:
        proposed = len(self._proposed)
        self.policy.commit(accepted_len, proposed)
        if accepted_len < proposed:
            # The cache holds the committed context before this cycle plus drafts 1..n-1 (the
            # last draft is never fed); keep drafts 1..accepted_len. After a full accept nothing
            # is cropped: the last draft and next_token are fed with the next proposal.
            self._runner.rollback(proposed - 1 - accepted_len)
        self._proposed = []
