"""The verification-cost measurement on a tiny real model: shape, rollback, the time bound."""

from __future__ import annotations

import pytest
import torch
from tiny_models import tiny_qwen

from specviz.labs.speedup.cost_curve import iter_verification_cost, measure_verification_cost

CONTEXT = torch.tensor([list(b"def fibonacci(n):")])


def test_measures_every_size_and_reports_relative_cost() -> None:
    curve = measure_verification_cost(tiny_qwen(1), CONTEXT, max_new_tokens=6, repeats=3)
    assert curve.complete
    assert [point.new_tokens for point in curve.points] == [1, 2, 3, 4, 5, 6]
    assert all(len(point.runs_s) == 3 and point.median_s > 0 for point in curve.points)
    assert curve.relative()[0] == 1.0
    assert curve.context_len == CONTEXT.shape[1] - 1


def test_the_curve_is_staged_after_every_forward_and_ends_with_it() -> None:
    stages = list(iter_verification_cost(tiny_qwen(1), CONTEXT, max_new_tokens=3, repeats=2))
    # The context, 3 settling forwards, then a warm-up and 2 timed forwards per size: a stage
    # after each (the app stops the curve between two), then the curve.
    assert len(stages) == 1 + 3 + 3 * (1 + 2) + 1
    assert [stage.finished for stage in stages] == [False] * (len(stages) - 1) + [True]
    fractions = [stage.fraction for stage in stages]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    sizes = [stage.message.values.get("size") for stage in stages[4:-1]]
    assert sizes == [1, 1, 1, 2, 2, 2, 3, 3, 3]
    curve = stages[-1].result
    assert curve is not None and curve.complete
    assert [point.new_tokens for point in curve.points] == [1, 2, 3]


def test_time_budget_stops_early_but_keeps_one_point() -> None:
    curve = measure_verification_cost(
        tiny_qwen(1), CONTEXT, max_new_tokens=16, repeats=2, time_budget_s=0.0
    )
    assert len(curve.points) == 1 and not curve.complete


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError):
        measure_verification_cost(tiny_qwen(1), CONTEXT[:, :1])
    with pytest.raises(ValueError):
        measure_verification_cost(tiny_qwen(1), CONTEXT, max_new_tokens=0)
