"""A run's speculative numbers under the names serving engines use, so engineers read them as
they read their own dashboards.

vLLM's per-request acceptance stats (``speculative_decoding_stats`` on each response choice with
``--per-request-spec-decode-stats summary|detailed``; vLLM's docs, "Per-Request Acceptance
Metrics") define:

- ``num_spec_steps``: verification steps; the sum of the histogram's counts;
- ``num_draft_tokens``: proposed draft tokens; ``num_accepted_draft_tokens``: accepted ones,
  bonus tokens excluded;
- ``draft_acceptance_rate`` = num_accepted_draft_tokens / num_draft_tokens;
- ``mean_acceptance_length`` = 1 + num_accepted_draft_tokens / num_spec_steps (the bonus or
  replacement token counted once per step), from 1.0 to num_spec_tokens + 1;
- ``acceptance_histogram``: sparse map from j accepted drafts to the steps that accepted exactly
  j, keys as strings, zero counts left out;
- ``num_spec_tokens``: the configured k (here the setting γ);
- ``per_step_drafted`` / ``per_step_accepted``: one entry per step, in order ("detailed").

llama.cpp's speculative example (``examples/speculative/speculative.cpp``) prints ``n_drafted``
and ``n_accept`` and their ratio as ``accept``; they are the same two counts.

specviz's own α differs on purpose: accepted / *tested* positions (drafts after the first
rejection are never tested), while draft_acceptance_rate divides by every drafted token. A cycle
that drafted nothing (prompt lookup without a match, a drafter waiting for the prompt) is a plain
decoding step, not a verification step, as in vLLM, where a request without drafts adds no step.
A tree cycle's drafts are all its nodes, as vLLM counts a token tree's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from specviz.core.events import Cycle, Step, Totals
from specviz.measure.race_records import LaneGain, engine_seconds


def vllm_summary(cycles: Sequence[Cycle], num_spec_tokens: int) -> dict[str, Any]:
    """vLLM's per-request speculative metrics ("detailed" level) for these cycles; the rates are
    None where they divide by zero (no drafts, no steps)."""
    steps = [cycle for cycle in cycles if cycle.drafted]
    drafted = [_drafts(cycle) for cycle in steps]
    accepted = [cycle.accepted_len for cycle in steps]
    total_drafted, total_accepted = sum(drafted), sum(accepted)
    histogram = Counter(accepted)
    return {
        "num_spec_steps": len(steps),
        "num_draft_tokens": total_drafted,
        "num_accepted_draft_tokens": total_accepted,
        "draft_acceptance_rate": total_accepted / total_drafted if total_drafted else None,
        "mean_acceptance_length": 1 + total_accepted / len(steps) if steps else None,
        "acceptance_histogram": {str(j): histogram[j] for j in sorted(histogram)},
        "num_spec_tokens": num_spec_tokens,
        "per_step_drafted": drafted,
        "per_step_accepted": accepted,
    }


def _drafts(cycle: Cycle) -> int:
    """Tokens the cycle proposed: its chain, or every node of its tree."""
    return len(cycle.tree.nodes) if cycle.tree is not None else len(cycle.drafted)


def llama_cpp_summary(cycles: Sequence[Cycle]) -> dict[str, int]:
    """llama.cpp's two counts: tokens drafted and drafts accepted."""
    return {
        "n_drafted": sum(_drafts(cycle) for cycle in cycles),
        "n_accept": sum(cycle.accepted_len for cycle in cycles),
    }


def engine_tokens_per_s(totals: Totals) -> float | None:
    """New tokens per engine second (compute plus a drafter's own preparation): the race's
    tokens/s, the one every view shows; None before any time was counted."""
    seconds = engine_seconds(totals)
    return totals.new_tokens / seconds if seconds > 0 else None


def engine_speedup(cycles: Sequence[Cycle], steps: Sequence[Step]) -> float | None:
    """Tokens per engine second of the run over plain decoding's (None without both)."""
    if not cycles or not steps:
        return None
    spec = engine_tokens_per_s(cycles[-1].totals)
    plain = engine_tokens_per_s(steps[-1].totals)
    if spec is None or not plain:
        return None
    return spec / plain


def run_summary(
    cycles: Sequence[Cycle],
    steps: Sequence[Step],
    num_spec_tokens: int,
    race_gain: LaneGain | None = None,
) -> dict[str, Any]:
    """The trace's summary: vLLM's names at the top level, llama.cpp's beside them, then
    specviz's own α, τ, speed (tokens per engine second) and the speedup over plain decoding:
    the race's (the drafter's median speed over plain decoding's) with its firmness when there
    was a race, else this run over its plain lane (None without one)."""
    totals = cycles[-1].totals if cycles else None
    if race_gain is not None:
        speedup: float | None = race_gain.speedup.median
        firmness: str | None = race_gain.firmness.level.value
    else:
        speedup, firmness = engine_speedup(cycles, steps), None
    return {
        **vllm_summary(cycles, num_spec_tokens),
        "llama_cpp": llama_cpp_summary(cycles),
        "specviz": {
            "new_tokens": totals.new_tokens if totals else 0,
            "target_forwards": totals.target_forwards if totals else 0,
            "alpha": totals.acceptance_rate if totals else None,
            "tau": totals.tokens_per_target_pass if totals else None,
            "tokens_per_s": engine_tokens_per_s(totals) if totals else None,
            "plain_tokens_per_s": engine_tokens_per_s(steps[-1].totals) if steps else None,
            "speedup": speedup,
            "speedup_firmness": firmness,
            "stop_reason": cycles[-1].stop_reason if cycles else None,
        },
    }
