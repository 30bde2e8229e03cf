"""The speedup model against closed forms, the roofline projection's regimes, the lab on tiny models,
and the figures read back from their traces."""

from __future__ import annotations

import itertools
import json
import time
import warnings
from dataclasses import asdict, replace
from typing import Any

import pytest
import torch
from tiny_models import TinyPair, tiny_config, tiny_qwen
from transformers import Qwen2Config, Qwen2ForCausalLM

from specviz.core.events import Totals
from specviz.core.settings import GenerationSettings
from specviz.labs.speedup.charts import (
    break_even_paragraph,
    cost_curve_chart,
    projection_chart,
    theory_chart,
)
from specviz.labs.speedup.cost_curve import CostCurve, CostPoint
from specviz.labs.speedup.fixed_cost import EAGER, NO_FIXED_COST, PUBLISHED, FixedCost
from specviz.labs.speedup.gpu_projection import (
    GPU_PRESETS,
    GpuSpec,
    model_footprint,
    project_speedup,
)
from specviz.labs.speedup.theory import (
    MeasuredRun,
    SpeedupLab,
    break_even_alpha,
    expected_tokens_per_pass,
    iter_speedup_lab,
    predicted_speedup,
    theory_from_measurements,
    verify_costs,
)
from specviz.labs.tasks.charts import task_chart
from specviz.labs.tasks.experiment import PromptRun, TaskReport, TaskResult
from specviz.measure.harness import staged_result
from specviz.views import run_charts

PROMPT = torch.tensor([list(b"def fibonacci(n):")])
_SPEC = Totals(20, 5, 25, 20, 15, 2.0, 0.1)
_PLAIN = Totals(20, 20, 0, 0, 0, 4.0, 0.1)
H100 = GPU_PRESETS["NVIDIA H100 SXM"]
# The bare roofline (no fixed cost per forward): the regimes of bytes against arithmetic alone.
BARE: dict[str, Any] = {"target_layers": 28, "draft_layers": 24, "fixed": PUBLISHED[NO_FIXED_COST]}


def measure_speedup_lab(*args: Any, progress: Any = None, **kwargs: Any) -> SpeedupLab:
    """The speedup lab run to its end."""
    return staged_result(iter_speedup_lab(*args, **kwargs), progress)


def curve_of(relative: list[float], one_token_s: float = 0.1) -> CostCurve:
    """A cost curve with the given relative costs for 1, 2, ... new tokens."""
    points = tuple(
        CostPoint(
            k, one_token_s * r, (one_token_s * r * 0.9, one_token_s * r, one_token_s * r * 1.2)
        )
        for k, r in enumerate(relative, start=1)
    )
    return CostCurve("cpu", 10, points, True)


# --- The formula -----------------------------------------------------------------------------------


@pytest.mark.parametrize("gamma", [0, 1, 4, 16])
def test_tau_is_one_for_a_useless_draft_and_gamma_plus_one_for_a_perfect_one(gamma: int) -> None:
    assert expected_tokens_per_pass(0.0, gamma) == 1.0
    assert expected_tokens_per_pass(1.0, gamma) == gamma + 1


def test_tau_matches_the_closed_form() -> None:
    assert expected_tokens_per_pass(0.8, 4) == pytest.approx((1 - 0.8**5) / 0.2)
    assert expected_tokens_per_pass(0.8, 4) == pytest.approx(3.3616)


@pytest.mark.parametrize(("alpha", "gamma", "c"), [(0.8, 4, 0.05), (0.6, 2, 0.3), (0.95, 10, 0.1)])
def test_speedup_with_free_verification_is_leviathans_improvement_factor(
    alpha: float, gamma: int, c: float
) -> None:
    leviathan = (1 - alpha ** (gamma + 1)) / ((1 - alpha) * (gamma * c + 1))
    assert predicted_speedup(alpha, gamma, c, 1.0) == pytest.approx(leviathan)


def test_a_draft_accepted_less_often_than_it_costs_never_wins() -> None:
    # α = 0.3 < c = 0.4, and verification grows with γ: every γ loses.
    theory = theory_from_measurements(0.3, curve_of([1.0 + 0.1 * k for k in range(17)]), 0.04)
    assert theory.draft_cost == pytest.approx(0.4)
    assert all(row.speedup < 1.0 for row in theory.rows)
    assert theory.best_speedup < 1.0


def test_break_even_alpha_is_c_when_verification_is_free() -> None:
    # γ = 1 wins iff (1 + α) / (1 + c) ≥ 1, i.e. α ≥ c; no larger γ wins below that.
    assert break_even_alpha(0.3, {g: 1.0 for g in range(1, 17)}) == pytest.approx(0.3, abs=1e-9)
    assert break_even_alpha(0.9, {1: 3.0}) is None  # (1 + α) / 3.9 < 1 even at α = 1


def test_invalid_inputs_are_refused() -> None:
    with pytest.raises(ValueError):
        expected_tokens_per_pass(1.2, 3)
    with pytest.raises(ValueError):
        predicted_speedup(0.5, 3, 0.1, 0.0)


# --- The theory from a cost curve -----------------------------------------------------------------


def test_verify_costs_read_the_curve_and_extrapolate_a_straight_line() -> None:
    costs = verify_costs(curve_of([1.0, 1.5, 2.0, 2.5]), [1, 3, 5])
    assert costs[1] == (pytest.approx(1.5), False)  # two tokens
    assert costs[3] == (pytest.approx(2.5), False)  # four tokens, the last measured
    assert costs[5][0] == pytest.approx(3.5) and costs[5][1]  # six tokens, extrapolated


def test_extrapolation_never_falls_and_a_single_point_means_free() -> None:
    assert verify_costs(curve_of([1.0, 1.3, 1.2]), [6])[6][0] >= 1.2
    assert verify_costs(curve_of([1.0]), [4]) == {4: (1.0, True)}


def test_theory_uses_the_measured_costs_and_marks_the_best_gamma() -> None:
    relative = [1.0 + 0.15 * k for k in range(8)]  # 1..8 tokens measured
    theory = theory_from_measurements(0.7, curve_of(relative, 0.2), 0.05, gammas=range(1, 11))
    assert theory.draft_cost == pytest.approx(0.25)
    assert [row.gamma for row in theory.rows] == list(range(1, 11))
    for row in theory.rows:
        assert row.speedup == pytest.approx(
            predicted_speedup(0.7, row.gamma, 0.25, row.verify_cost)
        )
        assert row.verify_extrapolated == (row.gamma + 1 > 8)
    best = max(theory.rows, key=lambda row: row.speedup)
    assert (theory.best_gamma, theory.best_speedup) == (best.gamma, best.speedup)
    assert theory.best_speedup > 1.0
    assert theory.break_even_alpha is not None and theory.break_even_alpha < 0.7


# --- The GPU projection ---------------------------------------------------------------------------


def test_memory_bound_gpu_verifies_sixteen_tokens_for_the_price_of_one() -> None:
    # 1.5B bf16 weights on an H100: arithmetic catches up with the weight reads near k = 295.
    projection = project_speedup(0.8, H100, 3.0e9, 1.0e9, 1.5e9, 0.5e9, **BARE)
    assert all(row.verify_cost == 1.0 for row in projection.rows)
    assert projection.draft_cost == pytest.approx(1.0 / 3.0)  # the bytes ratio
    assert projection.kind == "projection"
    assert any("measured on this machine" in line.text() for line in projection.assumptions)


def test_verification_cost_rises_once_compute_bound() -> None:
    toy = GpuSpec("toy", bandwidth_gb_s=100.0, tflops=1.0)
    # 2e9 bytes / 100 GB/s = 20 ms; 2 · 1e9 · k / 1e12 = 2k ms: crossover at k = 10.
    projection = project_speedup(0.8, toy, 2.0e9, 0.2e9, 1.0e9, 0.1e9, **BARE)
    verify = {row.gamma: row.verify_cost for row in projection.rows}
    assert verify[1] == verify[9] == 1.0
    assert verify[11] == pytest.approx(1.2) and verify[15] == pytest.approx(1.6)


def test_more_bandwidth_makes_both_faster_but_leaves_c_unchanged() -> None:
    sizes = (3.0e9, 1.0e9, 1.5e9, 0.5e9)
    h100, h200 = (
        project_speedup(0.8, H100, *sizes, **BARE),
        project_speedup(0.8, GPU_PRESETS["NVIDIA H200 SXM"], *sizes, **BARE),
    )
    assert h200.target_step_s < h100.target_step_s
    assert h200.draft_cost == pytest.approx(h100.draft_cost)
    assert h200.best_speedup == pytest.approx(h100.best_speedup)


def test_a_fixed_launch_overhead_pushes_c_towards_one() -> None:
    ideal = project_speedup(0.8, H100, 3.0e9, 1.0e9, 1.5e9, 0.5e9, **BARE)
    flat = FixedCost(EAGER, 0.02, 0.0, "custom")  # 20 ms a forward, whatever the depth
    launch_bound = project_speedup(
        0.8, H100, 3.0e9, 1.0e9, 1.5e9, 0.5e9, target_layers=28, draft_layers=24, fixed=flat
    )
    assert ideal.draft_cost < launch_bound.draft_cost < 1.0
    assert launch_bound.best_speedup < ideal.best_speedup


def test_footprint_counts_int8_packed_weights_and_skips_input_embeddings() -> None:
    model = tiny_qwen(1)
    embedding = model.model.embed_tokens.weight.numel()
    total = sum(p.numel() for p in model.parameters())
    footprint = model_footprint(model)
    assert footprint.params == total - embedding  # untied: the lookup table is not streamed
    assert footprint.loaded_bytes == 4 * footprint.params  # float32
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        quantized = torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, torch.qint8)
    int8 = model_footprint(quantized)
    assert int8.params == footprint.params  # the packed weights are still counted
    assert int8.loaded_bytes < footprint.loaded_bytes / 3
    assert int8.bytes_at(2.0) == 2 * footprint.params


def test_footprint_counts_a_tied_output_layer_once() -> None:
    model = Qwen2ForCausalLM(tiny_config(Qwen2Config, layers=1, tie_word_embeddings=True))
    assert model.lm_head.weight is model.model.embed_tokens.weight
    assert model_footprint(model).params == sum(p.numel() for p in model.parameters())


# --- The lab on tiny models -----------------------------------------------------------------------


def test_speedup_lab_on_tiny_models(tiny_pair: TinyPair) -> None:
    fractions: list[float] = []
    lab = measure_speedup_lab(
        tiny_pair,
        PROMPT,
        GenerationSettings(max_new_tokens=12, temperature=0.0, stop_on_eos=False),
        gammas=(1, 3),
        cost_max_tokens=4,
        cost_repeats=2,
        time_budget_s=60.0,
        progress=lambda fraction, message: fractions.append(fraction),
    )
    assert lab.complete and lab.plain_new_tokens == 12 and lab.plain_tokens_per_s > 0
    assert [run.gamma for run in lab.runs] == [1, 3]
    for run in lab.runs:
        assert 0.0 <= run.alpha <= 1.0 and run.tau >= 1.0 and run.new_tokens == 12
        assert run.speedup == pytest.approx(run.tokens_per_s / lab.plain_tokens_per_s)
    assert [point.new_tokens for point in lab.target_curve.points] == [1, 2, 3, 4]
    assert len(lab.draft_curve.points) == 1
    theory = lab.theory
    pooled = sum(r.accepted_positions for r in lab.runs) / sum(r.tested_positions for r in lab.runs)
    assert theory.alpha == pytest.approx(pooled)
    assert theory.draft_cost == pytest.approx(
        lab.draft_curve.points[0].median_s / lab.target_curve.points[0].median_s
    )
    assert [row.gamma for row in theory.rows] == list(range(1, 17))
    assert [row.verify_extrapolated for row in theory.rows[:4]] == [False, False, False, True]
    assert fractions[-1] == 1.0 and fractions == sorted(fractions)
    json.dumps(asdict(lab))  # plain numbers all the way down


def test_repeats_pair_each_run_with_plain_decoding_of_its_repeat(tiny_pair: TinyPair) -> None:
    lab = measure_speedup_lab(
        tiny_pair,
        PROMPT,
        GenerationSettings(max_new_tokens=12, temperature=0.0, stop_on_eos=False),
        gammas=(2,),
        cost_max_tokens=2,
        cost_repeats=2,
        time_budget_s=120.0,
        repeats=3,
    )
    (run,) = lab.runs
    assert len(run.speedups) == 3 and all(ratio > 0 for ratio in run.speedups)
    assert run.speedup == pytest.approx(sorted(run.speedups)[1])
    judged = lab.run_firmness(run)
    # Three repeats count as three in the judgement (one run alone says "one run").
    assert judged.facts[1].key != "firmness.lab.one_run"


def test_one_repeat_is_never_firm() -> None:
    run = MeasuredRun(3, 0.9, 3.5, 10.0, 2.0, 200, 90, 100, 0.01, 0.1, True, (2.0,))
    lab = SpeedupLab(
        5.0, 200, 0.2, True, (run,), curve_of([1.0, 1.1]), curve_of([0.3]),
        theory_from_measurements(0.9, curve_of([1.0, 1.1]), 0.03), 10.0, True, 0.0,
    )  # fmt: skip
    assert lab.run_firmness(run).level.value == "indicative"
    steady = replace(run, speedups=(2.0, 2.02, 1.98))
    assert lab.run_firmness(steady).level.value == "firm"


def test_time_budget_cuts_every_run_short(tiny_pair: TinyPair) -> None:
    began = time.perf_counter()
    lab = measure_speedup_lab(
        tiny_pair,
        PROMPT,
        GenerationSettings(max_new_tokens=64, stop_on_eos=False),
        gammas=(2, 4),
        cost_max_tokens=16,
        cost_repeats=2,
        time_budget_s=0.0,
    )
    assert time.perf_counter() - began < 10.0
    assert not lab.complete and not lab.plain_complete and lab.plain_new_tokens == 1
    assert all(not run.complete and run.new_tokens <= run.gamma + 1 for run in lab.runs)
    assert len(lab.target_curve.points) == 1


def test_lab_refuses_out_of_range_gammas(tiny_pair: TinyPair) -> None:
    with pytest.raises(ValueError):
        measure_speedup_lab(tiny_pair, PROMPT, GenerationSettings(), gammas=(0, 3))
    with pytest.raises(ValueError):
        measure_speedup_lab(tiny_pair, PROMPT[:, :1], GenerationSettings(), gammas=(3,))


# --- Figures --------------------------------------------------------------------------------------


def _traces(fig: object) -> dict[str, object]:
    return {trace.name: trace for trace in fig.data}  # type: ignore[attr-defined]


def test_theory_chart_carries_predicted_and_measured_numbers() -> None:
    theory = theory_from_measurements(0.7, curve_of([1.0 + 0.1 * k for k in range(8)]), 0.03)
    runs = [
        MeasuredRun(3, 0.68, 2.4, 11.0, 1.3, 48, 30, 44, 0.004, 0.15, True),
        MeasuredRun(5, 0.71, 2.9, 10.0, 1.2, 48, 35, 49, 0.004, 0.18, True),
    ]
    traces = _traces(theory_chart(theory, runs))
    predicted = next(t for name, t in traces.items() if name.startswith("predicted (α"))
    assert list(predicted.y) == [row.speedup for row in theory.rows]  # type: ignore[attr-defined]
    assert list(traces["measured speedup"].y) == [1.3, 1.2]  # type: ignore[attr-defined]
    assert list(traces["measured τ"].y) == [2.4, 2.9]  # type: ignore[attr-defined]
    assert list(traces["no gain (1×)"].y) == [1.0, 1.0]  # type: ignore[attr-defined]
    best = next(t for name, t in traces.items() if name.startswith("best γ"))
    assert list(best.x) == [theory.best_gamma]  # type: ignore[attr-defined]
    # An inconclusive measurement draws no best γ on the chart, as its summary names none.
    unranked = _traces(theory_chart(theory, runs, draw_best=False))
    assert not any(name.startswith("best γ") for name in unranked)
    assert "no gain (1×)" in unranked


def test_cost_curve_chart_shows_median_and_spread() -> None:
    curve = curve_of([1.0, 1.2, 1.5], one_token_s=0.1)
    trace = _traces(cost_curve_chart(curve))["measured on cpu (median)"]
    assert list(trace.y) == pytest.approx([100.0, 120.0, 150.0])  # type: ignore[attr-defined]
    assert list(trace.error_y.array) == pytest.approx([20.0, 24.0, 30.0])  # type: ignore[attr-defined]
    assert list(trace.error_y.arrayminus) == pytest.approx([10.0, 12.0, 15.0])  # type: ignore[attr-defined]


def test_projection_chart_is_titled_as_a_projection_and_holds_no_measurement() -> None:
    projection = project_speedup(0.8, H100, 3.0e9, 1.0e9, 1.5e9, 0.5e9, **BARE)
    fig = projection_chart(projection)
    assert "Projection" in fig.layout.title.text and "not measured" in fig.layout.title.text
    assert not any(name.startswith("measured") for name in _traces(fig))
    projected = next(t for name, t in _traces(fig).items() if name.startswith("projected"))
    assert list(projected.y) == [row.speedup for row in projection.rows]  # type: ignore[attr-defined]
    assert projected.line.dash == "dash"  # type: ignore[attr-defined]


def test_empty_inputs_show_a_placeholder() -> None:
    for fig in (theory_chart(None), cost_curve_chart(None), projection_chart(None)):
        assert fig.layout.annotations and not fig.data


def test_break_even_paragraph_names_the_numbers() -> None:
    losing = theory_from_measurements(0.3, curve_of([1.0 + 0.1 * k for k in range(17)]), 0.04)
    text = break_even_paragraph(losing)
    assert "α = 0.30" in text and "c = 0.40" in text
    assert "does not win" in text and "not free" in text
    winning = break_even_paragraph(theory_from_measurements(0.9, curve_of([1.0] * 17), 0.01))
    assert "it wins" in winning and "nearly free" in winning


def test_footprint_of_many_quantized_layers_counts_every_one() -> None:
    # weight() unpacks a fresh tensor each call: ids of freed ones must not hide later layers.
    model = torch.nn.Sequential(*(torch.nn.Linear(32, 32) for _ in range(40)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        quantized = torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, torch.qint8)
    assert model_footprint(quantized).params == 40 * (32 * 32 + 32)
    assert model_footprint(quantized).loaded_bytes == 40 * (32 * 32 + 4 * 32)


# --- Displays that were wrong -----------------------------------------------------


def _has_zigzag(values: list[float]) -> bool:
    """A dip between two higher neighbours: the prediction fell and rose again."""
    return any(a > b < c for a, b, c in zip(values, values[1:], values[2:], strict=False))


def test_one_noisy_point_of_the_cost_curve_does_not_make_the_prediction_zigzag() -> None:
    # The 3-token forward measured slow once (a busy machine): read point by point, v(2) jumps
    # and the prediction dips at γ = 2 between higher neighbours. A line fitted to the whole
    # curve gives a v smooth in γ, and S = τ(γ) / (γ·c + v(γ)) rises to its best γ then falls.
    noisy = curve_of([1.0, 1.05, 1.6, 1.12, 1.18, 1.25, 1.3, 1.4])
    theory = theory_from_measurements(0.7, noisy, 0.01, gammas=range(1, 11))
    speedups = [row.speedup for row in theory.rows]
    assert not _has_zigzag(speedups)
    costs = [row.verify_cost for row in theory.rows]
    assert costs == sorted(costs) and costs[0] > 1.0
    steps = [b - a for a, b in itertools.pairwise(costs)]
    assert max(steps) - min(steps) < 1e-9  # one slope: the fitted line


def test_tau_has_its_own_panel_and_style_apart_from_the_speedups() -> None:
    theory = theory_from_measurements(0.7, curve_of([1.0 + 0.1 * k for k in range(8)]), 0.03)
    runs = [MeasuredRun(3, 0.68, 2.4, 11.0, 1.3, 48, 30, 44, 0.004, 0.15, True)]
    fig = theory_chart(theory, runs)
    tau = [trace for trace in fig.data if "τ" in trace.name]
    speed = [trace for trace in fig.data if "τ" not in trace.name]
    assert len(tau) == 2 and {trace.yaxis for trace in tau} == {"y2"}
    assert {trace.yaxis for trace in speed} <= {None, "y"}
    # Two panels, one above the other: τ's axis does not overlay the speedup's.
    assert fig.layout.yaxis2.overlaying is None
    top, bottom = sorted([fig.layout.yaxis.domain, fig.layout.yaxis2.domain], key=lambda d: d[0])
    assert top[1] < bottom[0]
    measured_tau = next(trace for trace in tau if trace.mode == "markers")
    assert measured_tau.marker.color == run_charts.TAU and measured_tau.marker.symbol != "diamond"
    assert all(trace.line.color == run_charts.TAU for trace in tau if trace.mode == "lines")


def test_tau_bars_have_their_own_colour_not_the_bonus_tokens() -> None:
    report = TaskReport(
        GenerationSettings(),
        (TaskResult("code", (PromptRun("p", _SPEC, _PLAIN, "a", "a"),)),),
        complete=True,
    )
    tau = task_chart(report).data[1]
    assert tau.marker.color == run_charts.TAU != run_charts.BONUS
