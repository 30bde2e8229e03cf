"""Why does transformers' assisted generation win or lose a benchmark row? Count what each does.

specviz and `generate(assistant_model=draft)` run on the same pair, prompt, γ and per-token draft
stop, after plain decoding of the target; each reports its wall-clock tokens/s, its verifying target
passes, the positions those passes scored (the last committed token plus the drafts) and its draft
forwards, and whether its text equals plain decoding's. specviz's counts come from its own cycle
records; transformers' from forward pre-hooks on both models (torch's public hook API), which are
removed before anything else runs.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import torch

from specviz.core.engine import DraftModelPairLike
from specviz.core.events import Cycle
from specviz.core.settings import GenerationSettings
from specviz.measure.harness import Method, Outcome, Trial, measure
from specviz.measure.methods import assisted_new_ids, plain_decoding, speculative_decoding

__all__ = [
    "TargetWork",
    "WorkComparison",
    "compare_with_transformers",
    "counted_forwards",
    "verifying_passes",
]


@dataclass(frozen=True)
class TargetWork:
    """What one method did to produce its text."""

    method: str  # "specviz" or "transformers"
    tokens_per_s: float  # wall clock of the whole call
    new_tokens: int
    verifying_passes: int  # target forwards that checked drafts (a prefill alone is not one)
    positions_scored: int  # over those passes: the last committed token plus the drafts
    draft_forwards: int
    same_as_plain: bool


@dataclass(frozen=True)
class WorkComparison:
    """specviz against transformers on one prompt and setting."""

    plain_new_tokens: int
    methods: tuple[TargetWork, TargetWork]  # specviz, transformers


def compare_with_transformers(
    pair: DraftModelPairLike, prompt_ids: torch.Tensor, settings: GenerationSettings
) -> WorkComparison:
    """Run plain decoding, specviz and transformers' assisted generation once each; count."""
    prompt_len = prompt_ids.shape[1]
    calls: dict[str, list[int]] = {"target": [], "draft": []}  # tokens fed per forward

    def assisted(trial: Trial) -> Outcome:
        with counted_forwards(pair, calls):
            ids = assisted_new_ids(pair, prompt_ids, trial.settings)
        return Outcome(len(ids), token_ids=tuple(ids))

    methods = [
        plain_decoding(pair, prompt_ids, settings, "plain"),
        speculative_decoding(pair, prompt_ids, settings, "specviz"),
        Method("transformers", assisted, settings),
    ]
    measured = measure(methods)
    plain_ids = measured["plain"].samples[0].outcome.token_ids
    spec = measured["specviz"].samples[0]
    cycles = [event for event in spec.outcome.events if isinstance(event, Cycle)]
    specviz = TargetWork(
        "specviz",
        spec.tokens_per_s,
        spec.outcome.new_tokens,
        len(cycles),
        sum(cycle.draft_len + 1 for cycle in cycles),
        spec.outcome.totals.draft_forwards if spec.outcome.totals else 0,
        spec.outcome.token_ids == plain_ids,
    )
    theirs = measured["transformers"].samples[0]
    passes = verifying_passes(calls["target"], prompt_len)
    transformers = TargetWork(
        "transformers",
        theirs.tokens_per_s,
        theirs.outcome.new_tokens,
        len(passes),
        sum(passes),
        len(calls["draft"]),
        theirs.outcome.token_ids == plain_ids,
    )
    return WorkComparison(len(plain_ids), (specviz, transformers))


def verifying_passes(fed: list[int], prompt_len: int) -> list[int]:
    """Positions each verifying pass scored, from the tokens each target forward was fed.

    A first forward shorter than the prompt is a prefill that verified nothing; one that read the
    prompt with the first drafts scored its last prompt token and those drafts.
    """
    if not fed:
        return []
    if fed[0] < prompt_len:
        return fed[1:]
    return [fed[0] - (prompt_len - 1), *fed[1:]]


@contextmanager
def counted_forwards(pair: DraftModelPairLike, calls: dict[str, list[int]]) -> Iterator[None]:
    """Record the tokens fed to each forward of the target and the draft while inside."""

    def counter(which: str) -> Any:
        def hook(module: torch.nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
            ids = kwargs.get("input_ids", args[0] if args else None)
            calls[which].append(int(ids.shape[1]) if ids is not None else 0)

        return hook

    handles = [
        pair.target.register_forward_pre_hook(counter("target"), with_kwargs=True),
        pair.draft.register_forward_pre_hook(counter("draft"), with_kwargs=True),
    ]
    try:
        yield
    finally:
        for handle in handles:
            handle.remove()
