"""The GPU projection's fixed cost per forward: small pairs lose more to it than large ones, zero
gives the bare roofline's numbers back exactly, and gpu-check's calibration round-trips."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from specviz.labs.speedup.charts import projection_chart
from specviz.labs.speedup.fixed_cost import (
    CUDA_GRAPHS,
    EAGER,
    MODES,
    NO_FIXED_COST,
    PUBLISHED,
    Calibration,
    FixedCost,
    ForwardPoint,
    calibration_file,
    fit_fixed_cost,
    fixed_costs,
    load_fixed_costs,
    read_calibration,
    write_calibration,
)
from specviz.labs.speedup.gpu_projection import (
    GPU_PRESETS,
    Footprint,
    GpuSpec,
    Projection,
    project_each_mode,
    project_speedup,
)
from specviz.labs.speedup.panel import projection_html
from specviz.labs.speedup.theory import ALL_GAMMAS, speedup_rows
from specviz.text import UserError

H100 = GPU_PRESETS["NVIDIA H100 SXM"]
# Weights streamed per forward in bf16 (Qwen2.5 configs; tied output layers counted once).
DRAFT_05B = Footprint(494_032_768, 2 * 494_032_768, 24)
TARGET_15B = Footprint(1_543_714_304, 2 * 1_543_714_304, 28)
TARGET_7B = Footprint(7_070_619_136, 2 * 7_070_619_136, 28)  # 7.62 B less the input embeddings


def project(target: Footprint, fixed: FixedCost, alpha: float = 0.8) -> Projection:
    shown, _ = project_each_mode(alpha, H100, target, DRAFT_05B, {fixed.mode: fixed}, fixed)
    return shown


# --- The model ------------------------------------------------------------------------------------


def test_with_no_fixed_cost_the_bare_roofline_numbers_return_exactly() -> None:
    # The roofline before the fixed cost, by hand: memory-bound, so c is the bytes ratio and
    # verification free; on a toy GPU the target turns compute-bound past 10 tokens.
    toy = GpuSpec("toy", bandwidth_gb_s=100.0, tflops=1.0)
    for gpu, sizes in ((H100, (3.0e9, 1.0e9, 1.5e9, 0.5e9)), (toy, (2.0e9, 0.2e9, 1.0e9, 0.1e9))):
        target_bytes, draft_bytes, target_params, draft_params = sizes

        def bare(weight_bytes: float, params: float, tokens: int, gpu: GpuSpec = gpu) -> float:
            memory = weight_bytes / (gpu.bandwidth_gb_s * 1e9)
            return max(memory, 2.0 * params * tokens / (gpu.tflops * 1e12))

        cost = bare(draft_bytes, draft_params, 1) / bare(target_bytes, target_params, 1)
        verify = {
            gamma: (
                bare(target_bytes, target_params, gamma + 1) / bare(target_bytes, target_params, 1),
                False,
            )
            for gamma in ALL_GAMMAS
        }
        for zero in (PUBLISHED[NO_FIXED_COST], FixedCost(EAGER, 0.0, 0.0, "custom")):
            projection = project_speedup(
                0.8, gpu, *sizes, target_layers=28, draft_layers=24, fixed=zero
            )
            assert projection.draft_cost == cost
            assert projection.rows == speedup_rows(0.8, cost, verify)  # exactly, row for row
            assert projection.target_fixed_s == projection.draft_fixed_s == 0.0


def project_pair(target: Footprint, draft: Footprint, fixed: FixedCost) -> Projection:
    return project_each_mode(0.8, H100, target, draft, {fixed.mode: fixed}, fixed)[0]


def test_a_small_pair_falls_below_a_large_pair_with_the_same_bytes_ratio() -> None:
    # Five times the weights at the same depths: the bare roofline sees only the bytes ratio and
    # projects the same gain for both; the launches cost the same for both, so they weigh on the
    # small pair's far shorter steps and its gain falls below the large pair's.
    large_draft = Footprint(5 * DRAFT_05B.params, 5 * DRAFT_05B.loaded_bytes, 24)
    large_target = Footprint(5 * TARGET_15B.params, 5 * TARGET_15B.loaded_bytes, 28)
    bare = PUBLISHED[NO_FIXED_COST]
    small_bare = project_pair(TARGET_15B, DRAFT_05B, bare)
    assert small_bare.best_speedup == pytest.approx(
        project_pair(large_target, large_draft, bare).best_speedup, rel=1e-12
    )
    for mode in (EAGER, CUDA_GRAPHS):
        small = project_pair(TARGET_15B, DRAFT_05B, PUBLISHED[mode])
        large = project_pair(large_target, large_draft, PUBLISHED[mode])
        assert small.best_speedup < large.best_speedup < small_bare.best_speedup, mode
        assert small.draft_cost > large.draft_cost, mode  # launches push c towards 1
        assert small.target_fixed_share > large.target_fixed_share, mode


def test_the_bundled_pair_gains_less_than_a_7b_target_and_nothing_eager() -> None:
    for mode in (EAGER, CUDA_GRAPHS):
        small, large = project(TARGET_15B, PUBLISHED[mode]), project(TARGET_7B, PUBLISHED[mode])
        assert small.best_speedup < large.best_speedup, mode
        assert small.target_fixed_share > large.target_fixed_share, mode
    # Eager, a 24-layer draft costs nearly what a 28-layer target does: the bundled pair loses,
    # while the 7B target's weight reads still leave room for a gain.
    eager = project(TARGET_15B, PUBLISHED[EAGER])
    assert eager.draft_cost > 0.8 and eager.best_speedup < 1.0
    assert eager.draft_fixed_share > 0.9
    assert project(TARGET_7B, PUBLISHED[EAGER]).best_speedup > 1.0


def test_the_fixed_cost_grows_with_the_layers_and_its_share_is_reported() -> None:
    fixed = FixedCost(EAGER, 1e-4, 1e-3, "custom")
    assert fixed.seconds(28) == pytest.approx(1e-4 + 28e-3)
    projection = project(TARGET_15B, fixed)
    assert projection.target_fixed_s == pytest.approx(fixed.seconds(28))
    assert projection.draft_fixed_s == pytest.approx(fixed.seconds(24))
    memory_s = TARGET_15B.bytes_at(2) / (H100.bandwidth_gb_s * 1e9)
    assert projection.target_step_s == pytest.approx(fixed.seconds(28) + memory_s)
    assert projection.target_fixed_share == pytest.approx(
        fixed.seconds(28) / (fixed.seconds(28) + memory_s)
    )


def test_a_projection_needs_layers_and_a_non_negative_fixed_cost() -> None:
    with pytest.raises(UserError) as caught:
        project_speedup(0.8, H100, 3e9, 1e9, 1.5e9, 0.5e9, target_layers=0, draft_layers=24)
    assert caught.value.key == "error.projection.layers"
    negative = FixedCost(EAGER, 0.0, -1e-6, "custom")
    with pytest.raises(UserError) as caught:
        project_speedup(
            0.8, H100, 3e9, 1e9, 1.5e9, 0.5e9, target_layers=28, draft_layers=24, fixed=negative
        )
    assert caught.value.key == "error.projection.sizes"


def test_the_published_figures_follow_from_their_sources() -> None:
    # gpt-fast (blog and README, Llama-2-7B, 32 layers, A100): see fixed_cost.py.
    assert PUBLISHED[EAGER].per_layer_s == pytest.approx(0.933e-3, rel=1e-3)
    assert PUBLISHED[CUDA_GRAPHS].per_layer_s == pytest.approx(53.0e-6, rel=1e-2)
    assert all(PUBLISHED[mode].published for mode in (EAGER, CUDA_GRAPHS))
    assert PUBLISHED[NO_FIXED_COST].seconds(28) == 0.0
    assert MODES[0] == EAGER  # the default: what specviz itself runs


# --- What the reader sees -------------------------------------------------------------------------


def test_the_panel_and_chart_show_the_fixed_share_the_other_modes_and_the_source() -> None:
    shown, others = project_each_mode(0.8, H100, TARGET_15B, DRAFT_05B, PUBLISHED, PUBLISHED[EAGER])
    assert [other.fixed.mode for other in others] == [CUDA_GRAPHS, NO_FIXED_COST]
    page = projection_html(shown, others=others)
    assert "eager PyTorch, published figures, not measured on a GPU" in page
    assert f"{shown.target_fixed_share:.0%} of the target" in page
    assert "with CUDA graphs: c = " in page and "python -m specviz gpu-check" in page
    japanese = projection_html(shown, others=others, lang="ja")
    assert "公開値（GPU では未実測）" in japanese and "CUDA グラフなら" in japanese
    names = [trace.name for trace in projection_chart(shown, others=others).data]
    projected = [name for name in names if name.startswith("projected")]
    assert len(projected) == 3 and projected[-1].startswith("projected, eager PyTorch")


def test_measured_figures_are_named_as_measured() -> None:
    measured = FixedCost(EAGER, 2e-4, 3e-4, "measured", "NVIDIA H100 80GB HBM3")
    page = projection_html(project(TARGET_15B, measured))
    assert "measured on NVIDIA H100 80GB HBM3 by gpu-check" in page
    assert "published figures" not in page


# --- The calibration: fit and JSON round trip -----------------------------------------------------


def synthetic_points(
    per_forward: float, per_layer: float, gb_s: float | None
) -> list[ForwardPoint]:
    """Forward times of the bundled pair's shapes at full and quarter depth, by the model."""
    points = []
    for layers, weight_bytes in ((24, 0.99e9), (6, 0.45e9), (28, 3.09e9), (7, 1.12e9)):
        memory = 0.0 if gb_s is None else weight_bytes / (gb_s * 1e9)
        for tokens in (1, 4):
            points.append(
                ForwardPoint(
                    layers, weight_bytes, tokens, per_forward + layers * per_layer + memory
                )
            )
    return points


def test_the_fit_recovers_fixed_cost_and_bandwidth() -> None:
    fit = fit_fixed_cost(CUDA_GRAPHS, synthetic_points(1e-4, 4e-5, 3000.0))
    assert fit.per_forward_s == pytest.approx(1e-4, rel=1e-6)
    assert fit.per_layer_s == pytest.approx(4e-5, rel=1e-6)
    assert fit.bandwidth_gb_s == pytest.approx(3000.0, rel=1e-6)
    assert fit.rms_error_s == pytest.approx(0.0, abs=1e-12)


def test_a_launch_bound_fit_leaves_the_bandwidth_unresolved_never_negative() -> None:
    # Eager on a fast GPU: the host's launches hide the weight reads, so time is flat in bytes
    # (here slightly falling, as noise makes it): no negative bandwidth, the cost on the layers.
    points = synthetic_points(0.0, 9e-4, None)
    noisy = [
        ForwardPoint(p.layers, p.weight_bytes, p.tokens, p.seconds - p.weight_bytes * 1e-14)
        for p in points
    ]
    fit = fit_fixed_cost(EAGER, noisy)
    assert fit.bandwidth_gb_s is None
    assert min(fit.per_forward_s, fit.per_layer_s) >= 0
    assert fit.per_layer_s == pytest.approx(9e-4, rel=0.02)


def test_the_fit_needs_two_one_token_points() -> None:
    with pytest.raises(UserError) as caught:
        fit_fixed_cost(EAGER, [ForwardPoint(24, 1e9, 1, 0.02), ForwardPoint(24, 1e9, 4, 0.02)])
    assert caught.value.key == "error.fixed_cost.points"


def make_calibration() -> Calibration:
    return Calibration(
        device="NVIDIA H100 80GB HBM3",
        torch_version="2.13.0",
        fits={EAGER: fit_fixed_cost(EAGER, synthetic_points(5e-4, 2.5e-4, 2500.0))},
        unavailable={CUDA_GRAPHS: "RuntimeError: capture failed"},
    )


def test_the_calibration_round_trips_and_replaces_the_published_figures(tmp_path: Path) -> None:
    calibration = make_calibration()
    path = tmp_path / "nested" / "calibration.json"
    write_calibration(calibration, path)
    again = read_calibration(path)
    assert again == calibration
    assert json.loads(path.read_text())["kind"] == "specviz.gpu-fixed-cost"
    costs = load_fixed_costs(path)
    assert costs[EAGER].source == "measured" and costs[EAGER].device == calibration.device
    assert costs[EAGER].per_layer_s == pytest.approx(2.5e-4)
    assert costs[CUDA_GRAPHS] == PUBLISHED[CUDA_GRAPHS]  # not measured: the published figure
    assert costs[NO_FIXED_COST] == PUBLISHED[NO_FIXED_COST]


def test_a_bad_calibration_named_by_the_user_is_an_error(tmp_path: Path) -> None:
    missing = tmp_path / "none.json"
    with pytest.raises(UserError) as caught:
        load_fixed_costs(missing)
    assert caught.value.key == "error.fixed_cost.unreadable"
    for text in ("{}", "[1]", "not json", '{"kind": "specviz.gpu-fixed-cost", "version": 1}'):
        broken = tmp_path / "broken.json"
        broken.write_text(text)
        with pytest.raises(UserError) as caught:
            load_fixed_costs(broken)
        assert caught.value.key == "error.fixed_cost.malformed", text
    record = make_calibration().to_dict()
    record["fits"][EAGER]["per_layer_s"] = -1.0
    broken.write_text(json.dumps(record))
    with pytest.raises(UserError):
        read_calibration(broken)


def test_the_default_calibration_file_is_used_when_valid(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SPECVIZ_CACHE", str(tmp_path))
    assert calibration_file() == tmp_path / "gpu-fixed-cost.json"
    assert load_fixed_costs() == fixed_costs() == dict(PUBLISHED)  # none there yet
    write_calibration(make_calibration(), calibration_file())
    assert load_fixed_costs()[EAGER].source == "measured"
    calibration_file().write_text("{")  # a broken cache file: the published figures again
    assert load_fixed_costs() == dict(PUBLISHED)
