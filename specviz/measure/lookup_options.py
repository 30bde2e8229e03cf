"""Prompt lookup's options compared by tokens per target pass (τ), counted on the target's answers.

At temperature 0 a copied token is accepted exactly when it matches the target's greedy
continuation, so each prompt's greedy answer is generated once (by lookup, which emits the same
text as plain decoding) and replayed through the real lookup drafter for every option and γ
schedule: exact pass counts, no timing noise. Lookup itself costs tens of microseconds a cycle,
so wall-clock speed follows these counts (docs/performance.md, "Prompt lookup's options").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import torch

from specviz.core.engine import ModelPairLike, speculative_generate
from specviz.core.sampling import Sampler
from specviz.core.settings import GenerationSettings
from specviz.drafters.base import DrafterSpec
from specviz.drafters.prompt_lookup import LookupOptions, PromptLookupDrafter
from specviz.drafters.registry import make_drafter

__all__ = [
    "OPTIONS",
    "SCHEDULES",
    "GreedyAnswer",
    "OptionsRow",
    "compare_lookup_options",
    "greedy_answers",
    "lookup_passes",
]

# The lookup specs' options compared: which occurrence, the shortest and longest n-gram.
OPTIONS = (
    "occurrence=earliest,min_ngram=1",
    "occurrence=latest,min_ngram=1",
    "occurrence=earliest,min_ngram=2",
    "occurrence=latest,min_ngram=2",
    "occurrence=latest,min_ngram=1,max_ngram=2",
    "occurrence=latest,min_ngram=1,max_ngram=8",
)
SCHEDULES = ((5, False), (8, False), (5, True))  # (γ, adaptive)


@dataclass(frozen=True)
class GreedyAnswer:
    """One prompt's ids and the target's greedy answer to it (token ids)."""

    prompt: list[int]
    answer: list[int]


@dataclass(frozen=True)
class OptionsRow:
    """One lookup option under one γ schedule: τ on each prompt, and their mean."""

    options: str
    gamma: int
    adaptive: bool
    taus: list[float]

    @property
    def mean_tau(self) -> float:
        return sum(self.taus) / max(len(self.taus), 1)


def greedy_answers(
    pair: ModelPairLike, prompts: Sequence[torch.Tensor], settings: GenerationSettings
) -> list[GreedyAnswer]:
    """Each prompt's (1, T) ids with the target's greedy answer of settings.max_new_tokens at most."""
    greedy = replace(settings, temperature=0.0)
    answers = []
    for prompt_ids in prompts:
        cycles = speculative_generate(pair, prompt_ids, greedy, make_drafter("lookup", pair))
        answer = [token.token_id for cycle in cycles for token in cycle.emitted]
        answers.append(GreedyAnswer(prompt_ids[0].tolist(), answer))
    return answers


def lookup_passes(
    options: LookupOptions, gamma: int, adaptive: bool, prompt: list[int], answer: list[int]
) -> int:
    """Target passes greedy lookup decoding with *options* needs to emit *answer* after *prompt*:
    a copy is accepted up to its first token that differs from the answer, and each pass adds
    the target's own next token, as the engine's cycle does."""
    drafter = PromptLookupDrafter(options)
    drafter.start(
        torch.tensor([prompt]),
        GenerationSettings(gamma=gamma, adaptive_gamma=adaptive),
        frozenset(),
    )
    greedy = Sampler(0.0, 0, 1.0, torch.Generator())
    text = prompt + answer
    position, passes = len(prompt), 0
    while position < len(text):
        # At most the budget left minus one: the pass's own token is the last one.
        copied = drafter.propose(torch.tensor(text[:position]), len(text) - position - 1, greedy)
        accepted = 0
        for token in copied.token_ids.tolist():
            if token != text[position + accepted]:
                break
            accepted += 1
        drafter.commit(accepted, text[position + accepted])
        position += accepted + 1
        passes += 1
    return passes


def compare_lookup_options(
    answers: Sequence[GreedyAnswer],
    options: Sequence[str] = OPTIONS,
    schedules: Sequence[tuple[int, bool]] = SCHEDULES,
) -> list[OptionsRow]:
    """τ of every option under every schedule on *answers*, schedule by schedule."""
    rows = []
    for gamma, adaptive in schedules:
        for spec in options:
            parsed = LookupOptions.from_spec(DrafterSpec.parse("lookup:" + spec))
            taus = [
                len(run.answer)
                / max(lookup_passes(parsed, gamma, adaptive, run.prompt, run.answer), 1)
                for run in answers
            ]
            rows.append(OptionsRow(spec, gamma, adaptive, taus))
    return rows
