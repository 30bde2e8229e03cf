"""What the cumulative draft stop changes, counted rather than timed (no timing noise).

Each prompt and γ runs speculatively twice at the same settings: with the per-token draft stop
alone, and with the per-token plus the cumulative stop. The counters compare them: target passes P,
draft forwards D, and tokens per unit of work, tokens / (P + cost × D), where cost is a draft step's
time relative to a target pass.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import torch

from specviz.core.engine import DraftModelPairLike
from specviz.core.events import Totals
from specviz.core.settings import GenerationSettings
from specviz.measure.harness import measure
from specviz.measure.methods import speculative_decoding
from specviz.text import UserError

__all__ = ["RuleCount", "StopRuleRow", "count_stop_rules", "overall"]

GAMMA_ROWS: tuple[tuple[int, bool], ...] = ((3, False), (5, False), (7, False), (5, True))


@dataclass(frozen=True)
class RuleCount:
    """One rule's counters on one prompt and γ."""

    rule: str  # "per-token" or "+cumulative"
    target_passes: int
    draft_forwards: int
    new_tokens: int
    tokens_per_work: float  # new tokens / (target passes + cost × draft forwards)


@dataclass(frozen=True)
class StopRuleRow:
    """Both rules on one prompt at one γ."""

    task: str
    gamma: str  # "5" or "adaptive(5)"
    rules: tuple[RuleCount, RuleCount]


def count_stop_rules(
    pair: DraftModelPairLike,
    prompts: Sequence[tuple[str, torch.Tensor]],
    settings: GenerationSettings,
    draft_cost: float,
    gammas: Sequence[tuple[int, bool]] = GAMMA_ROWS,
) -> list[StopRuleRow]:
    """For each (task, prompt ids) and (γ, adaptive): the counters with and without the
    cumulative stop. settings give the per-token and cumulative thresholds and the run length."""
    if draft_cost < 0:
        raise UserError("error.stop_rules.draft_cost", cost=draft_cost)
    per_token = replace(settings, draft_stop_cumulative=0.0)
    rows = []
    for task, prompt_ids in prompts:
        for gamma, adaptive in gammas:
            label = f"adaptive({gamma})" if adaptive else str(gamma)
            methods = [
                speculative_decoding(
                    pair, prompt_ids, replace(rule, gamma=gamma, adaptive_gamma=adaptive), name
                )
                for name, rule in (("per-token", per_token), ("+cumulative", settings))
            ]
            measured = measure(methods)
            first, second = (
                _count(result.name, result.totals, draft_cost) for result in measured.methods
            )
            rows.append(StopRuleRow(task, label, (first, second)))
    return rows


def overall(rows: Sequence[StopRuleRow]) -> tuple[float, float]:
    """Each rule's geometric mean of tokens per unit of work over the rows (per-token alone, then
    with the cumulative stop): one number per rule that no single long row dominates."""
    if not rows:
        raise ValueError("no rows to summarise")
    return (
        _geometric_mean([row.rules[0].tokens_per_work for row in rows]),
        _geometric_mean([row.rules[1].tokens_per_work for row in rows]),
    )


def _geometric_mean(values: Sequence[float]) -> float:
    return math.exp(sum(math.log(value) for value in values) / len(values))


def _count(rule: str, totals: Totals | None, draft_cost: float) -> RuleCount:
    if totals is None:  # pragma: no cover - engine methods always report their counters
        raise RuntimeError("a speculative run reported no counters")
    work = totals.target_forwards + draft_cost * totals.draft_forwards
    return RuleCount(
        rule,
        totals.target_forwards,
        totals.draft_forwards,
        totals.new_tokens,
        totals.new_tokens / work if work else 0.0,
    )
