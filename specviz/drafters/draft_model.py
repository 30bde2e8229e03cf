"""The draft-model drafter: a small causal LM drafting autoregressively from its own KV cache.

Only what is specific to a model lives here: feed the tokens it has not seen, get a distribution,
draw, crop the cache after a rejection. When a draft ends and how γ moves is DraftPolicy's.
"""

from __future__ import annotations

import time

import torch

from specviz.core.cost_model import StepCosts, step_costs_of
from specviz.core.device import device_of, sync
from specviz.core.engine import ModelPairLike
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

    @torch.inference_mode()
    def propose_checking(
        self, context: torch.Tensor, copies: torch.Tensor, max_tokens: int, sampler: Sampler
    ) -> tuple[Proposal, int]:
        """Draft up to γ tokens that start with as many of *copies* (ids copied from the text, by
        prompt lookup) as this model agrees with, then go on with its own draws.

        One forward reads the uncached committed tokens and every copy; wherever the model's most
        likely next token is the copy, the copy stays (q one-hot: it was copied, not drawn); at
        the first disagreement the model draws that position from its own distribution, which the
        same forward gave, and drafts on as propose() does. Each position is still a proposal
        made from its context alone, so Theorem 1 of Leviathan et al. holds: the output keeps the
        target's law. Returns the proposal and how many copies it kept.
        """
        began = time.perf_counter()
        count = self.policy.begin(max_tokens)
        copies = copies[:count].to(self.device)
        feed = torch.cat([context[self.cache_len :].to(self.device), copies]).view(1, -1)
        logits = self._runner.forward(feed, logits_to_keep=copies.shape[0] + 1)  # (L + 1, V)
        agrees = (logits[:-1].argmax(dim=-1) == copies).tolist()
        kept = agrees.index(False) if False in agrees else len(agrees)
        for position in range(kept):  # the policy's EOS stop: nothing follows a copied EOS
            if not self.policy.goes_on(copies[position], None) and position + 1 < count:
                kept, count = position + 1, position + 1
                break
        self._runner.rollback(copies.shape[0] - kept)  # the cache: committed + kept copies
        vocab = logits.shape[-1]
        rows = [torch.nn.functional.one_hot(copies[:kept], vocab).float()]
        tokens = [copies[:kept]]
        left = count - kept
        if left > 0:
            dist = sampler.probs(logits[kept])
            token = sampler.draw(dist)
            tokens.append(token.view(1))
            rows.append(dist.view(1, -1).float())
            if left > 1 and self.policy.goes_on(token, dist):
                more, more_q = draft_autoregressively(
                    self._next_logits, token.view(1, 1), left - 1, sampler, self.policy
                )
                tokens.append(more)
                rows.append(more_q.float())
        elif kept > 0:
            # γ copies kept and nothing drawn: as after any draft, the last one is not fed.
            self._runner.rollback(1)
        token_ids = torch.cat(tokens)
        self._proposed = token_ids.tolist()
        sync(self.device)
        proposal = Proposal(
            token_ids,
            torch.cat(rows),
            forwards=1 + max(0, token_ids.shape[0] - kept - 1),
            seconds=time.perf_counter() - began,
            drafter=self.kind,
            ended_by=self.policy.ended_by,
            doubt_scale=self.policy.doubt_scale,
            gamma=self.policy.gamma,
        )
        return proposal, kept

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
