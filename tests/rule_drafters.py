"""Deterministic proposers for the engine's tests: a rule names each drafted token, so what a
cycle drafts is known without a model.

Not a test module: tests import from here (pytest puts tests/ on sys.path).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from specviz.core.proposal import Proposal
from specviz.core.sampling import Sampler
from specviz.core.settings import GenerationSettings
from specviz.drafters.policy import DraftPolicy


class RuleDrafter:
    """A deterministic proposer, as prompt lookup is: each drafted token is next_token(text so
    far), its q one-hot (Proposal.q_draft None), the draft's length and stops DraftPolicy's.

    It keeps no copy of the text: it reads the context propose is handed, and records each one
    in contexts so a test can check what the engine handed it.
    """

    def __init__(self, next_token: Callable[[list[int]], int], kind: str = "rule") -> None:
        self.next_token = next_token
        self.kind = kind
        self.policy = DraftPolicy(GenerationSettings())
        self.contexts: list[list[int]] = []
        self._proposed = 0

    @property
    def cache_len(self) -> int:
        return 0

    def start(
        self, prompt_ids: torch.Tensor, settings: GenerationSettings, stop_ids: frozenset[int]
    ) -> float:
        self.policy = DraftPolicy(settings, stop_ids)
        self.contexts = []
        return 0.0

    def propose(self, context: torch.Tensor, max_tokens: int, sampler: Sampler) -> Proposal:
        text = context.tolist()
        self.contexts.append(list(text))
        drafted: list[int] = []
        for _ in range(self.policy.begin(max_tokens)):
            drafted.append(self.next_token(text + drafted))
            if not self.policy.goes_on(drafted[-1], None):
                break
        self._proposed = len(drafted)
        return Proposal(
            torch.tensor(drafted, dtype=torch.long),
            None,
            forwards=0,
            seconds=1e-6,
            drafter=self.kind,
            ended_by=self.policy.ended_by,
            doubt_scale=self.policy.doubt_scale,
        )

    def commit(self, accepted_len: int, next_token: int) -> None:
        self.policy.commit(accepted_len, self._proposed)


def record_proposals(drafter: Any) -> list[tuple[list[int], Proposal]]:
    """Wrap the drafter's propose so that every call's (context ids, proposal) is kept, in
    order, in the list returned."""
    seen: list[tuple[list[int], Proposal]] = []
    propose = drafter.propose

    def recording(context: torch.Tensor, max_tokens: int, sampler: Sampler) -> Proposal:
        proposal = propose(context, max_tokens, sampler)
        seen.append((context.tolist(), proposal))
        return proposal

    drafter.propose = recording
    return seen


def successor(vocab: int) -> Callable[[list[int]], int]:
    """The rule "the token after the last one, modulo vocab": right now and then on any chain."""
    return lambda text: (text[-1] + 1) % vocab


def copy_after_last_match(text: list[int]) -> int:
    """The rule "what followed the last token's previous occurrence" (a one-token prompt lookup;
    the last token itself when it never occurred before)."""
    last = text[-1]
    for index in range(len(text) - 2, -1, -1):
        if text[index] == last:
            return text[index + 1]
    return last
