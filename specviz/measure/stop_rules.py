"""What the cumulative draft stop changes, counted rather than timed (no timing noise).

Each prompt and γ runs speculatively at the same settings with the per-token draft stop alone, then
with the per-token plus the cumulative stop at each threshold asked for (the settings' own by
default). The counters compare them: target passes P, draft forwards D, and tokens per unit of
work, tokens / (P + cost × D), where cost is a draft step's time relative to a target pass.
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

__all__ = ["RuleCount", "StopRuleRow", "count_stop_rules", "cumulative_stops", "overall"]

GAMMA_ROWS: tuple[tuple[int, bool], ...] = ((3, False), (5, False), (7, False), (5, True))


@dataclass(frozen=True)
class RuleCount:
    """One rule's counters on one prompt and γ."""

    rule: str  # "per-token", or "+cumulative 0.2" for the cumulative stop at 0.2
    target_passes: int
    draft_forwards: int
    new_tokens: int
    tokens_per_work: float  # new tokens / (target passes + cost × draft forwards)


@dataclass(frozen=True)
class StopRuleRow:
    """Every rule on one prompt at one γ: the per-token stop alone first."""

    task: str
    gamma: str  # "5" or "adaptive(5)"
    rules: tuple[RuleCount, ...]


def count_stop_rules(
    pair: DraftModelPairLike,
    prompts: Sequence[tuple[str, torch.Tensor]],
    settings: GenerationSettings,
    draft_cost: float,
    gammas: Sequence[tuple[int, bool]] = GAMMA_ROWS,
    thresholds: Sequence[float] = (),
) -> list[StopRuleRow]:
    """For each (task, prompt ids) and (γ, adaptive): the counters with the per-token stop alone,
    then with the cumulative stop at each of thresholds (settings.draft_stop_cumulative when
    empty). settings give the per-token threshold and the run length."""
    if draft_cost < 0:
        raise UserError("error.stop_rules.draft_cost", cost=draft_cost)
    stops = cumulative_stops(thresholds, settings)
    rules = [("per-token", replace(settings, draft_stop_cumulative=0.0))] + [
        (f"+cumulative {stop:g}", replace(settings, draft_stop_cumulative=stop)) for stop in stops
    ]
    rows = []
    for task, prompt_ids in prompts:
        for gamma, adaptive in gammas:
            label = f"adaptive({gamma})" if adaptive else str(gamma)
            methods = [
                speculative_decoding(
                    pair, prompt_ids, replace(rule, gamma=gamma, adaptive_gamma=adaptive), name
                )
                for name, rule in rules
            ]
            measured = measure(methods)
            counts = tuple(
                _count(result.name, result.totals, draft_cost) for result in measured.methods
            )
            rows.append(StopRuleRow(task, label, counts))
    return rows


def cumulative_stops(thresholds: Sequence[float], settings: GenerationSettings) -> list[float]:
    """The cumulative stops to count: thresholds, or the settings' own when none are given;
    each must lie strictly between 0 (no stop) and 1 (a stop after every guess)."""
    stops = list(thresholds) or [settings.draft_stop_cumulative]
    if any(not 0.0 < stop < 1.0 for stop in stops):
        raise UserError("error.stop_rules.threshold", values=", ".join(f"{s:g}" for s in stops))
    return stops


def overall(rows: Sequence[StopRuleRow]) -> tuple[float, ...]:
    """Each rule's geometric mean of tokens per unit of work over the rows, in the rows' order of
    rules (per-token alone first): one number per rule that no single long row dominates."""
    if not rows:
        raise ValueError("no rows to summarise")
    return tuple(
        _geometric_mean([row.rules[rule].tokens_per_work for row in rows])
        for rule in range(len(rows[0].rules))
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
