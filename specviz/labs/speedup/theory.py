"""Why speculation wins or loses: the speedup model of Leviathan et al. (2023), fed with measurements.

The formula is specviz.core.cost_model's: with per-token acceptance rate α, γ drafts per cycle,
a draft step costing c target steps and a verification of γ + 1 tokens costing v(γ) target steps
(here indexed by γ, read from a line fitted to the measured cost curve, so one noisy point cannot
make the prediction zigzag), S(α, γ) = τ / (γ·c + v(γ)) with τ = (1 − α^(γ+1)) / (1 − α) (eq. 1).

Two labs sit on this formula: the theory computed from this run's measured α, c and v, overlaid with
the speedups measured at several γ; and a projection of the same α onto a GPU through a roofline
model of forward time. The projection is a model, never a measurement, and its record says so.

Each measured speedup, and the best γ drawn from them all, is judged firm, indicative or
inconclusive by specviz.measure.firmness (the tokens each run made, one run per γ, and the CPU
share other programs took while the lab ran): a short or disturbed lab draws no best γ.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Protocol, TypeVar

import torch

from specviz.core.cost_model import check_alpha, expected_tokens_per_pass, predicted_speedup
from specviz.core.engine import DraftModelPairLike
from specviz.core.events import Cycle, Totals
from specviz.core.settings import GAMMA_MAX, GAMMA_MIN, GenerationSettings
from specviz.labs.speedup.cost_curve import CostCurve, iter_verification_cost
from specviz.measure.firmness import Judgement, judge_forward_times, judge_lab, weakest
from specviz.measure.harness import (
    Method,
    Outcome,
    Sample,
    Staged,
    iter_measurements,
    staged_measurements,
    staged_part,
    warm_up_settings,
)
from specviz.measure.methods import plain_decoding, speculative_decoding
from specviz.measure.spread import Spread
from specviz.models.cpu_load import OthersShare
from specviz.text import Phrase, UserError

ALL_GAMMAS = range(GAMMA_MIN, GAMMA_MAX + 1)


@dataclass(frozen=True)
class SpeedupRow:
    """The model at one γ."""

    gamma: int
    tau: float  # expected tokens per target pass
    verify_cost: float  # v(γ): one forward over γ + 1 tokens, in one-token forwards (fitted line)
    verify_extrapolated: bool  # v(γ) lies beyond the measured cost curve (linear extrapolation)
    speedup: float  # predicted tokens/s over plain decoding's


@dataclass(frozen=True)
class SpeedupTheory:
    """The speedup model evaluated with α, c and v(γ) all measured on this device."""

    alpha: float  # per-token acceptance rate
    draft_cost: float  # c = draft one-token step / target one-token step
    target_step_s: float
    draft_step_s: float
    rows: tuple[SpeedupRow, ...]
    best_gamma: int
    best_speedup: float
    # The least α at which some γ of `rows` beats plain decoding (None: not even α = 1 does).
    break_even_alpha: float | None


def speedup_rows(
    alpha: float, draft_cost: float, verify: Mapping[int, tuple[float, bool]]
) -> tuple[SpeedupRow, ...]:
    return tuple(
        SpeedupRow(
            gamma,
            expected_tokens_per_pass(alpha, gamma),
            v,
            extrapolated,
            predicted_speedup(alpha, gamma, draft_cost, v),
        )
        for gamma, (v, extrapolated) in verify.items()
    )


def best_speedup_row(rows: Iterable[SpeedupRow]) -> SpeedupRow:
    """The row with the highest predicted speedup (the smallest γ among ties)."""
    return max(rows, key=lambda row: (row.speedup, -row.gamma))


def break_even_alpha(draft_cost: float, verify_costs: Mapping[int, float]) -> float | None:
    """The least α for which some γ gives S ≥ 1, by bisection (S grows with α at every γ)."""

    def wins(alpha: float) -> bool:
        return any(
            predicted_speedup(alpha, gamma, draft_cost, v) >= 1.0
            for gamma, v in verify_costs.items()
        )

    if not wins(1.0):
        return None
    low, high = 0.0, 1.0
    for _ in range(40):
        mid = (low + high) / 2
        low, high = (low, mid) if wins(mid) else (mid, high)
    return high


def verify_costs(curve: CostCurve, gammas: Iterable[int]) -> dict[int, tuple[float, bool]]:
    """v(γ) = time(γ + 1 tokens) / time(1 token) from the line fitted to the curve
    (CostCurve.line: smooth in γ, so one noisy point cannot make the prediction zigzag), and
    whether γ + 1 lies beyond the measured sizes. With a single point verification is assumed
    free (v = 1)."""
    measured = len(curve.points)
    return {gamma: (curve.fitted(gamma), gamma + 1 > measured) for gamma in gammas}


def theory_from_measurements(
    alpha: float, target_curve: CostCurve, draft_step_s: float, gammas: Iterable[int] = ALL_GAMMAS
) -> SpeedupTheory:
    """The speedup model with α from a run, v(γ) from the target's cost curve and c = draft/target."""
    check_alpha(alpha)
    target_step_s = target_curve.points[0].median_s
    draft_cost = draft_step_s / target_step_s
    verify = verify_costs(target_curve, gammas)
    rows = speedup_rows(alpha, draft_cost, verify)
    best = best_speedup_row(rows)
    return SpeedupTheory(
        alpha=alpha,
        draft_cost=draft_cost,
        target_step_s=target_step_s,
        draft_step_s=draft_step_s,
        rows=rows,
        best_gamma=best.gamma,
        best_speedup=best.speedup,
        break_even_alpha=break_even_alpha(draft_cost, {g: v for g, (v, _) in verify.items()}),
    )


# --- Measurement: the same prompt decoded plainly and speculatively at several γ ------------------


@dataclass(frozen=True)
class MeasuredRun:
    """One speculative run at a fixed γ, measured (engine time)."""

    gamma: int
    alpha: float  # accepted / tested draft positions
    tau: float  # new tokens per target pass
    tokens_per_s: float
    speedup: float  # tokens_per_s / plain decoding's tokens/s on the same prompt and settings
    new_tokens: int
    accepted_positions: int
    tested_positions: int
    draft_s_per_forward: float  # in-run draft time per draft forward (sampling included)
    verify_s_per_pass: float  # in-run target verification time per pass
    complete: bool  # False when the time budget cut the run short
    # Each repeat's speedup over the plain run of the same repeat (interleaved, so drift in the
    # machine's speed hits both); `speedup` is their median, the counters are the median repeat's.
    speedups: tuple[float, ...] = ()


@dataclass(frozen=True)
class SpeedupLab:
    """Measured runs at several γ, the cost curves, and the theory from the pooled α."""

    plain_tokens_per_s: float
    plain_new_tokens: int
    plain_s_per_token: float
    plain_complete: bool
    runs: tuple[MeasuredRun, ...]
    target_curve: CostCurve
    draft_curve: CostCurve  # one point: the draft's one-token step
    theory: SpeedupTheory
    elapsed_s: float
    complete: bool  # every run finished and the cost curve reached its last size
    # The share of the machine's CPU other programs took while the lab ran (0 to 1; None: not
    # measurable), for the firmness of what it found.
    others_share: float | None

    def run_firmness(self, run: MeasuredRun) -> Judgement:
        """How firm *run*'s measured speedup is: the fewer tokens of it and of plain decoding,
        one run of each, and the CPU other programs took."""
        tokens = min(run.new_tokens, self.plain_new_tokens)
        return judge_lab(tokens, Spread.of(run.speedups or (run.speedup,)), self.others_share)

    @property
    def firmness(self) -> Judgement:
        """How firm the best γ is: as the weakest of the runs and the target's cost curve it
        rests on."""
        judgements = [self.run_firmness(run) for run in self.runs]
        found = weakest([*judgements, curve_firmness(self.target_curve, self.others_share)])
        assert found is not None  # the curve always has a judgement
        return found


def curve_firmness(curve: CostCurve, others_share: float | None) -> Judgement:
    """How firm a verification-cost curve is: its sizes, the spread of a typical size's repeated
    forwards (the median one: the fitted line shrugs off a few wild points) and the CPU other
    programs took while it was measured."""
    spreads = sorted((Spread.of(point.runs_s) for point in curve.points), key=_relative)
    typical = spreads[len(spreads) // 2] if spreads else Spread(0.0, 0.0, 0.0, 0)
    return judge_forward_times(len(curve.points), typical, others_share)


def _relative(spread: Spread) -> float:
    return spread.relative


_RUN_SHARE = 0.7  # of the time budget for the decoding runs; the cost curves get the rest
_PLAIN = "plain"  # the baseline method's name among the results


def iter_speedup_lab(
    pair: DraftModelPairLike,
    prompt_ids: torch.Tensor,
    settings: GenerationSettings,
    gammas: Iterable[int] = (1, 2, 3, 5, 8),
    cost_max_tokens: int = 16,
    cost_repeats: int = 3,
    time_budget_s: float = 90.0,
    repeats: int = 1,
) -> Iterator[Staged[SpeedupLab]]:
    """Decode plainly and speculatively at each γ, *repeats* times interleaved, measure the
    cost curves, fit the theory; a stage before each run and each curve, the lab's result in
    the last.

    Each γ's speedup is the median over the repeats of its run against the same repeat's plain
    run; one repeat gives a speedup with no spread, which specviz.measure.firmness never calls
    firm. The theory's α pools every run (accepted over tested positions). The runs go through
    the measurement harness with 70% of the time budget: each gets an equal share of what is
    left and is cut short (marked incomplete) past it, within one cycle; repeats the budget
    leaves no time for are skipped. The cost curve gets the rest
    and stops within one forward past it (after at least one size), so the whole lab ends within
    about the budget plus a few forwards. The arguments are checked on the first next(); run it
    to its end with measure.harness.staged_result.
    """
    gammas = tuple(gammas)
    if not gammas or not all(GAMMA_MIN <= g <= GAMMA_MAX for g in gammas):
        raise UserError("error.speedup.gammas", low=GAMMA_MIN, high=GAMMA_MAX, gammas=gammas)
    if prompt_ids.dim() != 2 or prompt_ids.shape[1] < 2:
        raise UserError("error.prompt_too_short")
    began = time.perf_counter()
    deadline = began + time_budget_s
    others = OthersShare()  # from the warm-up to the last forward: the whole lab
    # A fixed γ with no early draft stop: the formula assumes exactly γ drafts every cycle.
    plain_method = plain_decoding(pair, prompt_ids, settings, _PLAIN)
    at_gammas = [_at_gamma(pair, prompt_ids, settings, g) for g in gammas]
    methods = [replace(plain_method, label=Phrase("speedup.progress.plain")), *at_gammas]
    warm = warm_up_settings(settings)
    warm_up = [
        plain_decoding(pair, prompt_ids, warm, "warm-up plain"),
        speculative_decoding(
            pair, prompt_ids, fixed_gamma(warm, max(gammas)), "warm-up speculative"
        ),
    ]

    updates = iter_measurements(
        methods, repeats, warm_up=warm_up, time_budget_s=_RUN_SHARE * time_budget_s
    )
    measured = yield from staged_measurements(updates, _RUN_SHARE)  # the cost curves come next
    plain_by_repeat = {sample.repeat: sample.outcome for sample in measured[_PLAIN].samples}
    runs = [
        _repeated(g, measured[method.name].samples, plain_by_repeat)
        for g, method in zip(gammas, at_gammas, strict=True)
    ]
    plain_outcome = median_outcome(list(plain_by_repeat.values()))
    plain = engine_totals(plain_outcome)

    # The curves stage after every forward, so Stop ends the lab within one forward here too.
    target_curve = yield from staged_part(
        iter_verification_cost(
            pair.target,
            prompt_ids,
            max_new_tokens=cost_max_tokens,
            repeats=cost_repeats,
            time_budget_s=max(0.0, deadline - time.perf_counter()),
        ),
        _RUN_SHARE,
        0.95,
        Phrase("speedup.progress.cost"),
    )
    draft_curve = yield from staged_part(
        iter_verification_cost(
            pair.draft,
            prompt_ids,
            max_new_tokens=1,
            repeats=cost_repeats,
            time_budget_s=max(0.0, deadline - time.perf_counter()),
        ),
        0.95,
        0.99,
        Phrase("speedup.progress.draft_step"),
    )
    accepted = sum(run.accepted_positions for run in runs)
    tested = sum(run.tested_positions for run in runs)
    theory = theory_from_measurements(
        accepted / tested if tested else 0.0, target_curve, draft_curve.points[0].median_s
    )
    yield Staged(
        1.0,
        Phrase("progress.done"),
        SpeedupLab(
            plain_tokens_per_s=plain.tokens_per_s,
            plain_new_tokens=plain.new_tokens,
            plain_s_per_token=plain.elapsed_s / max(plain.new_tokens, 1),
            plain_complete=plain_outcome.complete,
            runs=tuple(runs),
            target_curve=target_curve,
            draft_curve=draft_curve,
            theory=theory,
            elapsed_s=time.perf_counter() - began,
            complete=measured.complete and target_curve.complete,
            others_share=others.share(),
        ),
    )


def _at_gamma(
    pair: DraftModelPairLike, prompt_ids: torch.Tensor, settings: GenerationSettings, gamma: int
) -> Method:
    """Speculative decoding at a fixed γ, named for the results and worded for progress."""
    method = speculative_decoding(pair, prompt_ids, fixed_gamma(settings, gamma), f"γ = {gamma}")
    return replace(method, label=Phrase("speedup.progress.gamma", gamma=gamma))


def fixed_gamma(settings: GenerationSettings, gamma: int) -> GenerationSettings:
    """*settings* at exactly γ drafts a cycle: no schedule and no early draft stop, as the
    speedup model assumes."""
    return replace(
        settings,
        gamma=gamma,
        adaptive_gamma=False,
        cost_gamma=False,
        draft_stop_below=0.0,
        draft_stop_cumulative=0.0,
    )


def engine_totals(outcome: Outcome) -> Totals:
    """An engine run's counters."""
    if outcome.totals is None:  # pragma: no cover - engine runs always carry their counters
        raise RuntimeError("an engine run reported no counters")
    return outcome.totals


Item = TypeVar("Item")


def lower_middle(items: Sequence[Item], key: Callable[[Item], float]) -> Item:
    """The item at the median of *key* (the lower middle one of an even count)."""
    return sorted(items, key=key)[(len(items) - 1) // 2]


def median_outcome(outcomes: list[Outcome]) -> Outcome:
    """The outcome of median speed (the lower middle one of an even count)."""
    return lower_middle(outcomes, lambda outcome: engine_totals(outcome).tokens_per_s)


class _Paced(Protocol):
    @property
    def speedup(self) -> float: ...


Run = TypeVar("Run", bound=_Paced)


def median_repeat(
    samples: Iterable[Sample],
    plain: Mapping[int, Outcome],
    measured: Callable[[Outcome, Totals], Run],
) -> tuple[Run, tuple[float, ...]]:
    """A method's repeats, each *measured* against the plain run of the same repeat (a repeat
    the budget skipped for plain decoding is paired with plain's first): the repeat of median
    speedup, and every repeat's speedup."""
    first = next(iter(plain.values()))
    paired = [
        measured(sample.outcome, engine_totals(plain.get(sample.repeat, first)))
        for sample in samples
    ]
    return lower_middle(paired, lambda run: run.speedup), tuple(run.speedup for run in paired)


def _repeated(gamma: int, samples: Iterable[Sample], plain: Mapping[int, Outcome]) -> MeasuredRun:
    """One γ's repeats as one run: the median of their speedups over the same repeat's plain
    run, with the median repeat's counters."""
    middle, speedups = median_repeat(
        samples, plain, lambda outcome, totals: _measured(gamma, outcome, totals)
    )
    return replace(middle, speedup=Spread.of(speedups).median, speedups=speedups)


def _measured(gamma: int, outcome: Outcome, plain: Totals) -> MeasuredRun:
    totals = engine_totals(outcome)
    cycles = [event for event in outcome.events if isinstance(event, Cycle)]
    return MeasuredRun(
        gamma=gamma,
        alpha=totals.acceptance_rate,
        tau=totals.tokens_per_target_pass,
        tokens_per_s=totals.tokens_per_s,
        speedup=totals.tokens_per_s / plain.tokens_per_s if plain.tokens_per_s else 0.0,
        new_tokens=totals.new_tokens,
        accepted_positions=totals.accepted_positions,
        tested_positions=totals.tested_positions,
        draft_s_per_forward=sum(c.timing.draft_s for c in cycles) / max(totals.draft_forwards, 1),
        verify_s_per_pass=sum(c.timing.verify_s for c in cycles) / max(totals.target_forwards, 1),
        complete=outcome.complete,
    )
