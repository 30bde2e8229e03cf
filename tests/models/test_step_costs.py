"""Step costs measured at load (specviz.models.step_costs): v(k), c, agreement, the format choice,
the per-machine cache and the loader's use of it, on tiny models."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import torch
from tiny_models import ByteTokenizer, TinyPair, load_tiny_models, tiny_local_preset

import specviz.models.loader as loader
from specviz.core.cost_model import StepCosts
from specviz.models.loader import measure_in_turn
from specviz.models.presets import Preset
from specviz.models.quantize import Int4DualLinear, dual_rows
from specviz.models.step_costs import (
    GAMMA_MEASURED,
    MIN_SIZES,
    PREFILL,
    READ_ROWS,
    REFERENCE_PROMPT,
    REFERENCE_STEPS,
    CostMeasurer,
    CostReport,
    DraftTrial,
    choose_draft_format,
    cost_file,
    cost_key,
    measure_costs,
    read_cached,
    text_ids,
    write_cached,
)

IDS = text_ids(ByteTokenizer())


def test_the_measurement_gives_relative_costs_and_agreement(tiny_pair: TinyPair) -> None:
    drafts = {"none": tiny_pair.draft, "target itself": tiny_pair.target}
    report = measure_costs(tiny_pair.target, drafts, IDS, auto=True, rounds=1)
    costs = report.costs
    assert costs.verify[0] == 1.0 and MIN_SIZES <= len(costs.verify) <= GAMMA_MEASURED + 1
    assert all(v > 0 for v in costs.verify) and costs.target_step_s > 0
    positions = len(IDS) - PREFILL - 1
    assert [trial.positions for trial in report.trials] == [positions, positions]
    # The target drafting for itself agrees everywhere; a different random model does not.
    by_name = {trial.draft_format: trial for trial in report.trials}
    assert by_name["target itself"].agreement == 1.0
    assert by_name["none"].agreement < 1.0
    assert report.draft_format in by_name and costs.draft == by_name[report.draft_format].draft_cost
    assert all(trial.read_cost > 0 for trial in report.trials)


def test_a_fixed_format_is_measured_not_chosen(tiny_pair: TinyPair) -> None:
    report = measure_costs(tiny_pair.target, {"int8wo": tiny_pair.draft}, IDS, auto=False, rounds=1)
    assert report.draft_format == "int8wo" and not report.auto and len(report.trials) == 1


def trial(name: str, cost: float, agreement: float, read: float | None = None) -> DraftTrial:
    # A read of READ_ROWS tokens costing 8 steps' worth unless told: what reads do at one step's
    # cost per few tokens, the same for every format, so that only c decides.
    return DraftTrial(name, cost, cost * 0.1, agreement, 50, 8 * cost if read is None else read)


def test_the_cheapest_format_that_keeps_agreement_is_chosen() -> None:
    trials = (trial("none", 0.3, 0.84), trial("int8", 0.15, 0.70), trial("int8wo", 0.2, 0.83))
    assert choose_draft_format(trials).draft_format == "int8wo"  # int8 loses agreement
    close = (trial("none", 0.3, 0.84), trial("int8", 0.15, 0.82))  # one position of 50: kept
    assert choose_draft_format(close).draft_format == "int8"


def test_a_format_that_reads_faster_wins_over_a_slightly_cheaper_step() -> None:
    # As measured on an AVX2 EPYC: 4-bit weights step at 0.34 of a target step but read 32
    # tokens at 3.3 steps, int4dual steps at 0.35 and reads at 2.0; int4head steps at 0.43.
    int4wo, dual, head = trial("int4wo", 0.34, 0.83, 3.3), trial("int4dual", 0.35, 0.85, 2.0), trial("int4head", 0.43, 0.85, 2.0)  # fmt: skip
    assert dual.reference_cost == pytest.approx(
        2.0 * REFERENCE_PROMPT / READ_ROWS + REFERENCE_STEPS * 0.35
    )
    assert choose_draft_format((int4wo, dual, head)).draft_format == "int4dual"
    # Where the reads cost the same, the cheaper step wins, as before the read was weighed.
    assert choose_draft_format((trial("int4wo", 0.34, 0.85, 2.0), dual)).draft_format == "int4wo"


# -- the cache -------------------------------------------------------------------------------

REPORT = CostReport(
    StepCosts((1.0, 1.7, 2.5), 0.12, 0.21, "int8wo"),
    (trial("none", 0.3, 0.84), trial("int8wo", 0.12, 0.84)),
    auto=True,
)


def key(**changes: Any) -> dict[str, Any]:
    values = {
        "draft": "bundled:a",
        "target": "bundled:b",
        "dtype": torch.bfloat16,
        "draft_format": "auto",
        "device": torch.device("cpu"),
    } | changes
    return cost_key(**values)


def test_the_key_names_the_machine_models_dtype_and_format() -> None:
    fields = key()
    for name in ("cpu", "cpu_flags", "torch", "threads", "draft", "target", "dtype", "version"):
        assert name in fields
    assert fields["dtype"] == "bfloat16" and fields["draft_format"] == "auto"
    assert fields["torch"] == torch.__version__ and fields["threads"] == torch.get_num_threads()
    folder = Path("/nowhere")
    files = {
        cost_file(variant, folder)
        for variant in (
            key(),
            key(draft="bundled:c"),
            key(dtype=torch.float32),
            key(draft_format="int8"),
        )
    }
    assert len(files) == 4 and cost_file(key(), folder) == cost_file(key(), folder)


def test_the_cache_file_round_trips_and_refuses_what_it_cannot_trust(tmp_path: Path) -> None:
    assert read_cached(key(), tmp_path) is None
    write_cached(key(), REPORT, tmp_path)
    cached = read_cached(key(), tmp_path)
    assert cached is not None and cached.cached and not REPORT.cached
    assert cached.costs == REPORT.costs and cached.trials == REPORT.trials and cached.auto
    assert read_cached(key(draft_format="int8"), tmp_path) is None  # another key
    path = cost_file(key(), tmp_path)
    data = json.loads(path.read_text())
    data["key"]["threads"] = -1  # a hash collision would still not be trusted
    path.write_text(json.dumps(data))
    assert read_cached(key(), tmp_path) is None
    path.write_text("{not json")
    assert read_cached(key(), tmp_path) is None


def test_the_report_words_the_costs_and_the_choice() -> None:
    text = REPORT.phrase().text()
    assert "1.00, 1.70, 2.50" in text and "210 ms" in text and "int8wo" in text
    # A read of READ_ROWS tokens at 2.4 steps, scaled to the 128-token reference prompt.
    assert "unquantized (c 0.30, a 128-token read 9.6 steps, agreement 84%)" in text
    assert "reads a 128-token prompt and takes 128 steps soonest" in text
    fixed = CostReport(REPORT.costs, REPORT.trials[1:], auto=False, cached=True)
    assert "cached for this machine" in fixed.phrase().text()
    assert "chosen" not in fixed.phrase().text()


# -- the loader: measured once, cached, the unchosen formats dropped ---------------------------


def tiny_preset() -> Preset:
    return tiny_local_preset(draft_quantization="auto")


def test_the_loader_measures_once_then_reads_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    loaded = load_tiny_models(monkeypatch, tmp_path)
    cache = loader.ModelCache()
    held: list[int] = []  # drafts in memory after each draft load
    model = loader.ModelCache.model

    def counting(self: loader.ModelCache, source: Any, *args: Any, **kwargs: Any) -> Any:
        found = model(self, source, *args, **kwargs)
        if source.ref == "draft":
            held.append(sum(k[0] == "local:draft" for k in self._models))
        return found

    monkeypatch.setattr(loader.ModelCache, "model", counting)
    pair = cache.load_pair(tiny_preset(), device="cpu")
    report = pair.cost_report
    assert report is not None and report.auto and not report.cached
    formats = {"none", "int8", "int8wo", "int4wo", "int4head", "int4dual"}
    assert {trial.draft_format for trial in report.trials} == formats
    assert pair.step_costs == report.costs
    # Every format, one at a time beside the choice so far (and the choice again, should a later
    # format have brought back one released before).
    assert len(formats) <= loaded.count("draft") <= len(formats) + 1
    assert max(held) <= 2
    drafts = [k for k in cache._models if k[0] == "local:draft"]
    assert len(drafts) == 1 and pair.draft is cache._models[drafts[0]]  # the others left memory
    assert list((tmp_path / "step-costs").glob("*.json"))

    loaded.clear()
    again = loader.ModelCache().load_pair(tiny_preset(), device="cpu")
    assert again.cost_report is not None and again.cost_report.cached
    assert again.cost_report.draft_format == report.draft_format
    assert loaded.count("draft") == 1  # only the chosen format

    remeasured = loader.ModelCache().load_pair(tiny_preset(), device="cpu", remeasure_costs=True)
    assert remeasured.cost_report is not None and not remeasured.cost_report.cached


def test_costs_timed_while_other_programs_took_the_cpu_are_used_but_not_cached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    load_tiny_models(monkeypatch, tmp_path)
    shares = iter([0.6, 0.1])  # a busy machine at the first load, a quiet one at the second

    def watching() -> SimpleNamespace:
        share = next(shares)  # what this load's measurement will find
        return SimpleNamespace(share=lambda: share)

    monkeypatch.setattr(loader, "OthersShare", watching)
    preset = tiny_local_preset(draft_quantization="int8wo")
    busy = loader.ModelCache().load_pair(preset, device="cpu")
    report = busy.cost_report
    assert report is not None and report.busy and report.others_share == 0.6
    assert busy.step_costs == report.costs  # this load still runs with what it measured
    assert not list((tmp_path / "step-costs").glob("*.json"))
    assert "other programs used 60% of the CPU, so not cached" in report.phrase().text("en")
    assert "60%" in report.phrase().text("ja")

    quiet = loader.ModelCache().load_pair(preset, device="cpu")
    assert quiet.cost_report is not None and not quiet.cost_report.cached  # measured again
    assert not quiet.cost_report.busy
    assert list((tmp_path / "step-costs").glob("*.json"))
    again = loader.ModelCache().load_pair(preset, device="cpu")
    assert again.cost_report is not None and again.cost_report.cached


class ScriptedMeasurer:
    """A CostMeasurer whose trials are given: what measure_in_turn chooses and releases."""

    def __init__(self, trials: dict[str, DraftTrial]) -> None:
        self.trials = trials
        self.report = CostMeasurer.report.__get__(self)
        self.target_s = [0.25, 0.375]

    def trial(self, name: str, draft: torch.nn.Module) -> DraftTrial:
        return self.trials[name]


def test_formats_measured_in_turn_hold_two_drafts_and_can_bring_an_earlier_one_back() -> None:
    # A, the cheapest within the agreement slack, leads after A, B and C, so B and C are
    # released; D's agreement puts A outside the slack, and B, the cheapest left, is the choice.
    trials = {
        "A": trial("A", 0.05, 0.90),
        "B": trial("B", 0.10, 0.91),
        "C": trial("C", 0.50, 0.915),
        "D": trial("D", 0.60, 0.925),
    }
    held: set[str] = set()
    peak, released = 0, []

    def draft_in(name: str) -> torch.nn.Module:
        nonlocal peak
        held.add(name)
        peak = max(peak, len(held))
        return torch.nn.Linear(2, 2)

    def release(name: str) -> None:
        if name in held:
            held.discard(name)
            released.append(name)

    measurer: Any = ScriptedMeasurer(trials)
    report = measure_in_turn(measurer, tuple(trials), draft_in, release, True, "torch")
    assert report.draft_format == "B" and report.auto
    assert [t.draft_format for t in report.trials] == ["A", "B", "C", "D"]
    assert peak == 2 and released == ["B", "C", "A", "D"]
    assert held == set()  # B was released when A led: the loader loads the choice again
    assert report.costs.draft == 0.10 and report.costs.verify == (1.0, 1.5)


def test_int4duals_crossovers_are_cached_and_set_on_the_next_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    load_tiny_models(monkeypatch, tmp_path)
    preset = tiny_local_preset(draft_quantization="int4dual")
    first = loader.ModelCache().load_pair(preset, device="cpu")
    assert first.cost_report is not None and not first.cost_report.cached
    crossovers = first.cost_report.dual_rows
    assert crossovers == dual_rows(first.draft) and crossovers  # every shape, tuned
    assert list((tmp_path / "step-costs").glob("*.json"))

    def untimed(model: torch.nn.Module) -> dict[tuple[int, int], int]:
        assert not [m for m in model.modules() if isinstance(m, Int4DualLinear) and not m.tuned]
        return {}

    monkeypatch.setattr(loader, "tune_dual_layers", untimed)  # the cache leaves nothing to time
    again = loader.ModelCache().load_pair(preset, device="cpu")
    assert again.cost_report is not None and again.cost_report.cached
    assert dual_rows(again.draft) == crossovers


def test_the_targets_steps_are_timed_on_the_products_every_run_uses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # With the AVX2 kernel chosen, the target's v(k) must be timed after the kernel is in the
    # target: timed before, torch's row-by-row products made verification look 2.6x dearer.
    load_tiny_models(monkeypatch, tmp_path)
    swapped: set[int] = set()
    timed_on: list[bool] = []
    measurer = loader.CostMeasurer

    def kernel_in(model: torch.nn.Module) -> int:
        swapped.add(id(model))
        return 1

    def measuring(target: torch.nn.Module, *args: Any, **kwargs: Any) -> CostMeasurer:
        timed_on.append(id(target) in swapped)
        return measurer(target, *args, **kwargs)

    monkeypatch.setattr(loader, "choose_products", lambda *args: "rows")
    monkeypatch.setattr(loader, "use_rows_kernel", kernel_in)
    monkeypatch.setattr(loader, "CostMeasurer", measuring)
    pair = loader.ModelCache().load_pair(tiny_preset(), device="cpu")
    assert timed_on == [True]
    assert id(pair.target) in swapped and id(pair.draft) in swapped
    assert pair.cost_report is not None and pair.cost_report.products == "rows"


def test_the_crossovers_round_trip_through_the_cache_file(tmp_path: Path) -> None:
    report = dataclasses.replace(REPORT, dual_rows=((896, 4864, 3), (4864, 896, 0)))
    write_cached(key(), report, tmp_path)
    cached = read_cached(key(), tmp_path)
    assert cached is not None and cached.dual_rows == report.dual_rows
