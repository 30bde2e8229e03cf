"""The hybrid drafter: copy from the text when prompt lookup finds a match, else ask the draft model.

Decided per cycle. Lookup costs no forward and is right on long repeated spans (edits, quotes);
the draft model guesses where nothing repeats. Each Proposal names the part that made it, so
Cycle.drafter says "lookup" or "draft-model" cycle by cycle.

With "check=yes" a copy is first read by the draft model, in one forward with the tokens it has
not seen: the copy is kept as far as the model's own first choice agrees with it, and the model
drafts on from the first disagreement (ModelDrafter.propose_checking). An edit changes a few
tokens of the text it repeats (a renamed variable, a reformatted line), and a plain copy is then
rejected at the change; the checked copy hands that position to the model, which mostly guesses
it, so the cycle goes on instead of ending. Such a cycle is recorded as "lookup" when it kept at
least one copy (Cycle.copied_from covers the copied prefix), else "draft-model".

The draft model's KV cache stays a prefix of the committed text through lookup cycles: it is only
cropped after its own proposals, and every proposal it makes first feeds the committed tokens its
cache has not seen (ModelDrafter.propose), which after lookup cycles includes what they committed.
"""

from __future__ import annotations

from dataclasses import replace

import torch

from specviz.core.engine import ModelPairLike
from specviz.core.proposal import Proposal
from specviz.core.sampling import Sampler
from specviz.core.settings import GenerationSettings
from specviz.drafters.base import DrafterSpec
from specviz.drafters.draft_model import ModelDrafter
from specviz.drafters.prompt_lookup import LookupOptions, PromptLookupDrafter
from specviz.text import UserError

_YES, _NO = ("yes", "true", "1"), ("no", "false", "0")

# The hybrid copies only after a repeated 2-gram: a copy after a single repeated token is a weak
# guess where the draft model guesses well
# (docs/performance.md#why-the-hybrid-copies-after-a-repeated-2-gram). Plain lookup keeps
# min_ngram = 1: with no model to fall back on, a weak copy still beats a plain step.
HYBRID_LOOKUP = LookupOptions(min_ngram=2)


class HybridDrafter:
    """Prompt lookup when the text's suffix occurred before, the draft model otherwise."""

    kind = "hybrid"

    @classmethod
    def check_spec(cls, spec: DrafterSpec) -> None:
        """The hybrid takes the lookup's options (min_ngram 2 unless set) and check=yes|no."""
        cls._split(spec)

    @staticmethod
    def _split(spec: DrafterSpec) -> tuple[DrafterSpec, bool]:
        """The lookup's part of the spec, and whether copies are checked by the draft model."""
        check = spec.option("check", "no").lower()
        if check not in _YES + _NO:
            raise UserError("error.hybrid.check", kind=repr(spec.kind), got=repr(check))
        lookup = DrafterSpec(spec.kind, tuple(item for item in spec.options if item[0] != "check"))
        LookupOptions.from_spec(lookup, HYBRID_LOOKUP)
        return lookup, check in _YES

    def __init__(
        self, lookup: PromptLookupDrafter, model: ModelDrafter, check: bool = False
    ) -> None:
        self.lookup = lookup
        self.model = model
        self.check = check
        # The part that made the last proposal: it alone learns from the verdict (each keeps its
        # own γ schedule, since a copy and a guess are accepted at different rates).
        self._proposer: PromptLookupDrafter | ModelDrafter = lookup

    @classmethod
    def from_spec(cls, spec: DrafterSpec, pair: ModelPairLike) -> HybridDrafter:
        """The registry's factory: the lookup options the spec sets, the pair's draft model."""
        lookup_spec, check = cls._split(spec)
        lookup = PromptLookupDrafter.from_spec(lookup_spec, pair, HYBRID_LOOKUP)
        return cls(lookup, ModelDrafter.from_spec(DrafterSpec(ModelDrafter.kind), pair), check)

    @property
    def cache_len(self) -> int:
        return self.model.cache_len

    def start(
        self, prompt_ids: torch.Tensor, settings: GenerationSettings, stop_ids: frozenset[int]
    ) -> float:
        seconds = self.lookup.start(prompt_ids, settings, stop_ids)
        return seconds + self.model.start(prompt_ids, settings, stop_ids)

    def prefill(self, prompt_part: torch.Tensor) -> None:
        """Read the next chunk of a long prompt into the draft model's cache (the lookup index
        reads the whole prompt in start())."""
        self.model.prefill(prompt_part)

    def propose(self, context: torch.Tensor, max_tokens: int, sampler: Sampler) -> Proposal:
        if self.check:
            return self._propose_checked(context, max_tokens, sampler)
        copied = self.lookup.propose(context, max_tokens, sampler)
        if copied.token_ids.shape[0] > 0 or max_tokens <= 0:
            self._proposer = self.lookup
            return copied
        self._proposer = self.model
        guessed = self.model.propose(context, max_tokens, sampler)
        return replace(guessed, seconds=guessed.seconds + copied.seconds)

    def _propose_checked(
        self, context: torch.Tensor, max_tokens: int, sampler: Sampler
    ) -> Proposal:
        """The copy as far as the draft model agrees with it, then the model's own draws."""
        # The lookup only finds the copy here and learns nothing from the verdict: the model's
        # policy sets γ and stops for the whole draft, and the model commits it.
        copied = self.lookup.propose(context, max_tokens, sampler)
        self._proposer = self.model
        if copied.token_ids.shape[0] == 0:
            guessed = self.model.propose(context, max_tokens, sampler)
            return replace(guessed, seconds=guessed.seconds + copied.seconds)
        checked, kept = self.model.propose_checking(context, copied.token_ids, max_tokens, sampler)
        if kept == 0:
            return replace(checked, seconds=checked.seconds + copied.seconds)
        return replace(
            checked,
            seconds=checked.seconds + copied.seconds,
            drafter=self.lookup.kind,
            copied_from=(copied.copied_from or ())[:kept],
        )

    def commit(self, accepted_len: int, next_token: int) -> None:
        self._proposer.commit(accepted_len, next_token)
