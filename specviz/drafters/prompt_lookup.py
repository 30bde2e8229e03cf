"""Prompt lookup: draft by copying what followed the last few tokens where they occurred before.

Saxena's prompt lookup decoding (transformers' `prompt_lookup_num_tokens`, vLLM's `ngram`): take
the longest suffix n-gram of the committed text (n from max_ngram down to min_ngram) that occurred
earlier, and propose the tokens that followed that occurrence. Editing, summarising and
code-changing prompts repeat long spans of their input, so the copies are often right. No model, no
forward, no cache: the proposal is deterministic, its q one-hot at the copied ids (q_draft None),
so at temperature > 0 a copied x is accepted with probability p(x) and a rejection draws from p
without x (Leviathan et al., Theorem 1 holds for any q, a point mass included).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass

import torch

from specviz.core.cost_model import StepCosts, step_costs_of
from specviz.core.device import device_of
from specviz.core.engine import ModelPairLike
from specviz.core.proposal import Proposal
from specviz.core.sampling import Sampler
from specviz.core.settings import GenerationSettings
from specviz.drafters.base import DrafterSpec
from specviz.drafters.policy import DraftPolicy
from specviz.text import UserError

# Why a lookup draft ended, beyond the policy's reasons (Cycle.draft_end): the copied span ran
# into the end of the committed text before γ tokens; no suffix occurred before (nothing drafted).
ENDED_AT_TEXT_END = "text_end"
NO_MATCH = "no_match"

OCCURRENCES = ("earliest", "latest")
# The longest n-gram the index keeps: longer suffixes rarely match where a 16-gram does not, and
# the index costs (max_ngram - min_ngram + 1) dict entries per committed token.
MAX_NGRAM_LIMIT = 16


@dataclass(frozen=True)
class LookupOptions:
    """The options of a prompt-lookup spec ("lookup:max_ngram=4,min_ngram=1,occurrence=latest")."""

    max_ngram: int = 4  # the longest suffix tried first: a longer match predicts a longer copy
    # The shortest suffix that still counts as a match. 1 (copy after any repeated token) gave
    # more tokens per target forward than 2 on every editing prompt of the bundled pair
    # (docs/performance.md#prompt-lookups-options).
    min_ngram: int = 1
    # Which earlier occurrence of the suffix to copy from when there are several: "earliest"
    # copies from the prompt's text, which an edit repeats, rather than from what was just
    # written; it gave as many or more tokens per target forward than "latest" on every editing
    # prompt (same section). transformers' prompt lookup copies from the earliest too.
    occurrence: str = "earliest"

    @classmethod
    def from_spec(
        cls, spec: DrafterSpec, default: LookupOptions | None = None, also: tuple[str, ...] = ()
    ) -> LookupOptions:
        """The options spec sets (the rest from *default*, else the class's), checked: a
        UserError for a bad name or value (names in *also* are another part's to check)."""
        spec.check_options("max_ngram", "min_ngram", "occurrence", *also)
        default = default or cls()
        options = cls(
            max_ngram=_whole_number(spec, "max_ngram", default.max_ngram),
            min_ngram=_whole_number(spec, "min_ngram", default.min_ngram),
            occurrence=spec.option("occurrence", default.occurrence),
        )
        if not 1 <= options.min_ngram <= options.max_ngram <= MAX_NGRAM_LIMIT:
            raise UserError(
                "error.drafter.ngram_range",
                kind=repr(spec.kind),
                limit=MAX_NGRAM_LIMIT,
                low=options.min_ngram,
                high=options.max_ngram,
            )
        if options.occurrence not in OCCURRENCES:
            raise UserError(
                "error.drafter.occurrence",
                kind=repr(spec.kind),
                known=", ".join(OCCURRENCES),
                got=repr(options.occurrence),
            )
        return options


def _whole_number(spec: DrafterSpec, name: str, default: int) -> int:
    text = spec.option(name, str(default))
    try:
        return int(text)
    except ValueError:
        raise UserError(
            "error.drafter.whole_number", kind=repr(spec.kind), name=name, got=repr(text)
        ) from None


class NgramIndex:
    """Where each n-gram of the committed text occurred, kept up to date as the text grows.

    An n-gram is indexed once a token follows it (so a match always has something to copy), keyed
    by its token tuple, with its earliest or latest start. Each committed token adds one n-gram per
    length: O(γ · max_ngram) work per cycle however long the prompt, and one pass over the prompt
    at the first proposal.
    """

    def __init__(self, options: LookupOptions, every: bool = False) -> None:
        """*every*: keep every occurrence's start too (the lookup tree's), not only one."""
        self.options = options
        self.tokens: list[int] = []  # the committed text indexed so far
        self._starts: dict[tuple[int, ...], int] = {}
        self._every: dict[tuple[int, ...], list[int]] | None = {} if every else None

    def extend(self, context: torch.Tensor) -> None:
        """Index the tokens of context (T,) past the ones already seen (context only grows)."""
        indexed = len(self.tokens)
        self.tokens.extend(context[indexed:].tolist())
        lengths = range(self.options.min_ngram, self.options.max_ngram + 1)
        keep_first = self.options.occurrence == "earliest"
        # The token at `follower` makes every n-gram ending just before it copyable.
        for follower in range(max(indexed, 1), len(self.tokens)):
            for n in lengths:
                start = follower - n
                if start < 0:
                    break
                key = tuple(self.tokens[start:follower])
                if self._every is not None:
                    self._every.setdefault(key, []).append(start)
                if keep_first:
                    self._starts.setdefault(key, start)
                else:
                    self._starts[key] = start

    def occurrences(self) -> Iterator[tuple[int, int]]:
        """(start, n) of every earlier occurrence of a suffix n-gram (an index built with
        *every*): the longest suffix's first, each length's in ``occurrence`` order, and each
        continuation once (an occurrence of a shorter suffix inside a longer one's is skipped)."""
        if self._every is None:
            raise ValueError("an index built without every=True keeps one start per n-gram")
        end, seen = len(self.tokens), set[int]()
        for n in range(min(self.options.max_ngram, end), self.options.min_ngram - 1, -1):
            starts = self._every.get(tuple(self.tokens[end - n :]), [])
            if self.options.occurrence == "latest":
                starts = starts[::-1]
            for start in starts:
                if start + n not in seen:
                    seen.add(start + n)
                    yield start, n

    def match(self) -> tuple[int, int] | None:
        """(n, start) of the longest suffix n-gram that occurred before, or None without one."""
        end = len(self.tokens)
        for n in range(min(self.options.max_ngram, end), self.options.min_ngram - 1, -1):
            start = self._starts.get(tuple(self.tokens[end - n :]))
            if start is not None:
                return n, start
        return None


class PromptLookupDrafter:
    """Proposes the tokens that followed the longest earlier occurrence of the text's suffix."""

    kind = "lookup"

    @classmethod
    def check_spec(cls, spec: DrafterSpec) -> None:
        """The lookup options checked without a model."""
        LookupOptions.from_spec(spec)

    def __init__(
        self,
        options: LookupOptions,
        device: torch.device | None = None,
        costs: StepCosts | None = None,
    ) -> None:
        self.options = options
        self.device = device or torch.device("cpu")  # where the verifier reads the proposal
        # The target's measured costs with a free draft (no forward): the cost γ schedule's input.
        self.costs = None if costs is None else costs.without_draft_cost()
        self.policy = DraftPolicy(GenerationSettings())
        self.index = NgramIndex(options)
        self._proposed = 0

    @classmethod
    def from_spec(
        cls, spec: DrafterSpec, pair: ModelPairLike, default: LookupOptions | None = None
    ) -> PromptLookupDrafter:
        """The registry's factory: the options the spec sets (the rest from *default*), proposals
        on the target's device."""
        options = LookupOptions.from_spec(spec, default)
        return cls(options, device_of(pair.target), step_costs_of(pair))

    @property
    def cache_len(self) -> int:
        return 0  # no model, no KV cache

    def start(
        self, prompt_ids: torch.Tensor, settings: GenerationSettings, stop_ids: frozenset[int]
    ) -> float:
        self.policy = DraftPolicy(settings, stop_ids, self.costs)
        self.index = NgramIndex(self.options)
        self._proposed = 0
        return 0.0  # the prompt is indexed by the first proposal, inside its timing

    def propose(self, context: torch.Tensor, max_tokens: int, sampler: Sampler) -> Proposal:
        began = time.perf_counter()
        limit = self.policy.begin(max_tokens)
        self.index.extend(context)
        found = self.index.match() if limit > 0 else None
        copied: list[int] = []
        ended_by = self.policy.ended_by if limit == 0 else NO_MATCH
        if found is not None:
            n, start = found
            source = range(start + n, min(start + n + limit, len(self.index.tokens)))
            # The shared policy's stops: the EOS stop ends the draft after a copied end-of-
            # sequence, as it does for the draft model. Its confidence stops never trip: q is
            # one-hot, sure of every copy (q(x) = max q = 1).
            for position in source:
                copied.append(position)
                if not self.policy.goes_on(self.index.tokens[position], None):
                    break
            ended_by = self.policy.ended_by
            if len(copied) < limit and ended_by in ("gamma", "budget"):
                ended_by = ENDED_AT_TEXT_END
        # No match: an empty proposal, and the engine's cycle is a plain decoding step.
        self._proposed = len(copied)
        token_ids = torch.tensor(
            [self.index.tokens[position] for position in copied], dtype=torch.long
        )
        return Proposal(
            token_ids.to(self.device),
            None,
            forwards=0,
            seconds=time.perf_counter() - began,
            drafter=self.kind,
            ended_by=ended_by,
            doubt_scale=self.policy.doubt_scale,
            gamma=self.policy.gamma,
            copied_from=tuple(copied),
        )

    def commit(self, accepted_len: int, next_token: int) -> None:
        # The committed tokens reach the index through the next proposal's context.
        self.policy.commit(accepted_len, self._proposed)
        self._proposed = 0
