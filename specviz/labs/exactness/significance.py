"""Significance arithmetic for the exactness lab: chi-square tests with pooled rare cells, the TV
two samples of one law show anyway, and the sample size needed to see a given difference.

Pure functions over counts and probability vectors (scipy for the distributions), kept apart from
the sampling so each can be read and tested on its own.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from scipy import optimize, stats

MIN_EXPECTED = 5.0  # the usual validity condition for a chi-square test's cells


@dataclass(frozen=True)
class ChiSquare:
    """A chi-square test after pooling rare outcomes into one cell (expected counts >= 5)."""

    statistic: float
    dof: int  # 0 when everything fell in one cell: nothing to test, p-value 1
    p_value: float


def homogeneity_test(plain: Sequence[int], spec: Sequence[int]) -> ChiSquare:
    """Chi-square test that both arms share one law (equal arms: expected = column total / 2)."""
    expected = [(a + b) / 2 for a, b in zip(plain, spec, strict=True)]
    table = _pool([list(plain), list(spec)], expected, [e >= MIN_EXPECTED for e in expected])
    if len(table[0]) < 2:
        return ChiSquare(0.0, 0, 1.0)
    result = stats.chi2_contingency(table, correction=False)
    return ChiSquare(float(result.statistic), int(result.dof), float(result.pvalue))


def fit_test(observed: Sequence[int], law: Sequence[float], samples: int) -> ChiSquare:
    """Chi-square goodness of fit of one arm's counts to the exact law.

    Outcomes neither arm produced carry the law's remaining mass; they always join the pooled
    cell, so the cells are in effect fixed by the law (kept: expected >= 5), not by the data.
    """
    expected = [samples * p for p in law] + [samples * max(0.0, 1.0 - sum(law))]
    keep = [e >= MIN_EXPECTED for e in expected[:-1]] + [False]
    counts, cells = _pool([[*observed, 0], expected], expected, keep)
    if len(counts) < 2:
        return ChiSquare(0.0, 0, 1.0)
    result = stats.chisquare(counts, [samples * e / sum(cells) for e in cells])
    return ChiSquare(float(result.statistic), len(counts) - 1, float(result.pvalue))


def _pool(
    rows: list[list[float]], expected: Sequence[float], keep: Sequence[bool]
) -> list[list[float]]:
    """Columns not kept summed into one 'other'; a pool with expected count under 5 joins the
    smallest kept column, so every cell meets the usual validity condition of the test."""
    kept = sorted((i for i in range(len(keep)) if keep[i]), key=lambda i: -expected[i])
    pooled = [i for i in range(len(keep)) if not keep[i]]
    columns = [[i] for i in kept]
    if sum(expected[i] for i in pooled) >= MIN_EXPECTED or not columns:
        columns.append(pooled)
    else:
        columns[-1] += pooled
    return [[sum(row[i] for i in column) for column in columns] for row in rows]


def tv_if_equal(law: Sequence[float], samples: int, generator: torch.Generator) -> float:
    """About the TV two samples of this size from the same law show (mean of 20 simulated pairs).

    Finite samples of one law never match exactly, so this is the floor to read TV against. The
    outcomes neither arm produced are rare, and a rare outcome adds about its own probability to
    the TV (it lands in one arm only), so their remaining mass is added as it is.
    """
    rest = max(0.0, 1.0 - sum(law))
    probs = torch.tensor([*law, rest], dtype=torch.float64)
    reps = 20
    draws = torch.multinomial(probs.expand(2 * reps, -1), samples, True, generator=generator)
    counts = torch.zeros(2 * reps, probs.numel(), dtype=torch.float64)
    counts.scatter_add_(1, draws, torch.ones_like(draws, dtype=torch.float64))
    gaps = (counts[:reps, :-1] - counts[reps:, :-1]).abs().sum(dim=1).mean()
    return float(gaps) / (2 * samples) + rest


def samples_needed(
    p_null: torch.Tensor | Sequence[float],
    p_alt: torch.Tensor | Sequence[float],
    alpha: float = 0.05,
    power: float = 0.8,
    max_bins: int = 20,
) -> int:
    """Samples per arm at which the two-sample chi-square test tells p_alt from p_null.

    Cohen's effect size on the largest max_bins - 1 bins plus one pooled bin (as the test pools
    rare outcomes): w² = Σ (p0 − p1)² / (2 (p0 + p1)) for two equal arms; the test statistic is then
    noncentral chi-square with λ = 2 n w², and n is the smallest with P(reject) >= power.
    """
    null, alt = _as_law(p_null), _as_law(p_alt)
    if null.shape != alt.shape:
        raise ValueError("both distributions must have the same number of outcomes")
    if not 0.0 < alpha < power < 1.0:
        raise ValueError("need 0 < alpha < power < 1")
    order = torch.argsort(null + alt, descending=True)
    null, alt = _pool_tail(null[order], max_bins), _pool_tail(alt[order], max_bins)
    w2 = float(((null - alt) ** 2 / (2 * (null + alt)).clamp_min(1e-300)).sum())
    if w2 < 1e-12:
        raise ValueError("the two distributions are the same: no sample size tells them apart")
    dof = null.numel() - 1
    critical = stats.chi2.ppf(1.0 - alpha, dof)

    def shortfall(noncentrality: float) -> float:
        return float(stats.ncx2.sf(critical, dof, noncentrality)) - power

    upper = 1.0
    while shortfall(upper) < 0:
        upper *= 2.0
    noncentrality = float(optimize.brentq(shortfall, 1e-9, upper, xtol=1e-9))
    return math.ceil(noncentrality / (2.0 * w2))


def samples_needed_for_shift(
    p_null: torch.Tensor | Sequence[float], tv: float, alpha: float = 0.05, power: float = 0.8
) -> int:
    """Samples per arm to see the most likely outcome lose `tv` of probability to the others
    (spread in proportion to them): one concrete difference of total variation `tv`."""
    null = _as_law(p_null)
    top = int(null.argmax())
    if not 0.0 < tv <= float(null[top]):
        raise ValueError(f"the shift must be in (0, {float(null[top]):.3f}], got {tv}")
    rest = 1.0 - float(null[top])
    if rest < 1e-9:  # a certain outcome: the lost mass goes to a new one
        null = torch.cat([null, null.new_zeros(1)])
        alt = null.clone()
        alt[-1] = tv
    else:
        alt = null * (1.0 + tv / rest)
    alt[top] = null[top] - tv
    return samples_needed(null, alt, alpha, power)


def _as_law(values: torch.Tensor | Sequence[float]) -> torch.Tensor:
    law = torch.as_tensor(values, dtype=torch.float64).flatten().cpu()
    if law.numel() == 0 or bool((law < 0).any()) or abs(float(law.sum()) - 1.0) > 1e-3:
        raise ValueError("a distribution must be non-negative and sum to 1")
    return law / law.sum()


def _pool_tail(law: torch.Tensor, max_bins: int) -> torch.Tensor:
    if law.numel() <= max_bins:
        return law
    return torch.cat([law[: max_bins - 1], law[max_bins - 1 :].sum().view(1)])
