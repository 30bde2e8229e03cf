"""Greedy equality: at temperature 0, speculative decoding must emit plain decoding's tokens.

The verifier keeps a draft only if it is the target's argmax, so greedy speculative decoding and
greedy plain decoding of the same prompt are equal in exact arithmetic; the exactness lab runs
this check where there is no distribution to sample (temperature 0). Both runs are the engine's
own streams, staged record by record so the app can stop them between two forwards.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

import torch

from specviz.core.engine import (
    PREFILL_CHUNK,
    DraftModelPairLike,
    autoregressive_stream,
    speculative_stream,
)
from specviz.core.events import Cycle, Step
from specviz.core.settings import GenerationSettings
from specviz.drafters.registry import make_drafter
from specviz.measure.harness import Staged, staged_result
from specviz.models.presets import DEFAULT_DRAFTER
from specviz.text import Phrase


@dataclass(frozen=True)
class GreedyReport:
    """Greedy speculative decoding against greedy plain decoding, token for token."""

    speculative_ids: tuple[int, ...]
    plain_ids: tuple[int, ...]
    speculative_text: str
    plain_text: str
    first_difference: int | None  # index of the first differing token; None when identical
    target_dtype: str  # e.g. "bfloat16": reduced precision is why long outputs can drift apart
    drafter: str = DEFAULT_DRAFTER  # the drafter spec the speculative run drafted with

    @property
    def identical(self) -> bool:
        return self.first_difference is None

    @property
    def reduced_precision(self) -> bool:
        return self.target_dtype in ("bfloat16", "float16")


def greedy_equality(
    pair: DraftModelPairLike,
    prompt_ids: torch.Tensor,
    settings: GenerationSettings,
    drafter: str = DEFAULT_DRAFTER,
) -> GreedyReport:
    """iter_greedy_equality run to its end, for callers that wait (the CLI, tests)."""
    return staged_result(iter_greedy_equality(pair, prompt_ids, settings, drafter))


def iter_greedy_equality(
    pair: DraftModelPairLike,
    prompt_ids: torch.Tensor,
    settings: GenerationSettings,
    drafter: str = DEFAULT_DRAFTER,
    prefill_chunk: int = PREFILL_CHUNK,
) -> Iterator[Staged[GreedyReport]]:
    """Greedy speculative (with the drafter spec given) and plain decoding of the same prompt,
    compared token for token; a stage after every cycle, step and prompt chunk (so a caller can
    stop between two forwards), the report in the last.

    In exact arithmetic they are equal (the verifier keeps a draft only if it is the target's
    argmax). In bfloat16 a forward over γ + 1 tokens and one over a single token may round
    differently, so a near-tie argmax can flip and the texts drift apart from there.
    """
    greedy = replace(settings, temperature=0.0)
    tokens = greedy.max_new_tokens
    # Each run's records are kept as they come; a stream closed between two is simply dropped
    # (each run owns its caches), so stopping leaves nothing half-done behind.
    cycles: list[Cycle] = []
    drafts = make_drafter(drafter, pair)
    for record in speculative_stream(pair, prompt_ids, greedy, drafts, prefill_chunk):
        if isinstance(record, Cycle):
            cycles.append(record)
        done = cycles[-1].totals.new_tokens if cycles else 0
        where = Phrase("exactness.greedy.progress.speculative", done=done, tokens=tokens)
        yield Staged(0.5 * done / tokens, where)
    steps: list[Step] = []
    for event in autoregressive_stream(pair, prompt_ids, greedy, prefill_chunk):
        if isinstance(event, Step):
            steps.append(event)
        done = steps[-1].totals.new_tokens if steps else 0
        where = Phrase("exactness.greedy.progress.plain", done=done, tokens=tokens)
        yield Staged(min(0.5 + 0.5 * done / tokens, 0.99), where)
    yield Staged(1.0, Phrase("progress.done"), _greedy_report(pair, cycles, steps, drafter))


def _greedy_report(
    pair: DraftModelPairLike, cycles: Sequence[Cycle], steps: Sequence[Step], drafter: str
) -> GreedyReport:
    """Where the two greedy runs' tokens first differ, and the target's dtype that explains it."""
    spec_tokens = [token for cycle in cycles for token in cycle.emitted]
    spec_ids = tuple(token.token_id for token in spec_tokens)
    plain_ids = tuple(step.token.token_id for step in steps)
    first = next(
        (i for i, (a, b) in enumerate(zip(spec_ids, plain_ids, strict=False)) if a != b),
        None if len(spec_ids) == len(plain_ids) else min(len(spec_ids), len(plain_ids)),
    )
    weights = (*pair.target.parameters(), *pair.target.buffers())
    return GreedyReport(
        speculative_ids=spec_ids,
        plain_ids=plain_ids,
        speculative_text="".join(token.text for token in spec_tokens),
        plain_text="".join(step.token.text for step in steps),
        first_difference=first,
        target_dtype=str(weights[0].dtype).removeprefix("torch.") if weights else "unknown",
        drafter=drafter,
    )
