"""`python -m specviz bench` on tiny models: the grid, the table, the JSON; the real pair is slow."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from commands import COMMAND_PRESET, EncodingPair, run_cli, small_grid

from specviz.cli import bench as bench_cli
from specviz.cli.main import main
from specviz.core.settings import GenerationSettings
from specviz.measure.bench import run_bench_grid


def test_grid_gives_one_row_per_gamma_with_all_three_methods(pair: EncodingPair) -> None:
    shown: list[str] = []
    result = run_bench_grid(
        pair, COMMAND_PRESET, small_grid(), on_row=lambda row: shown.append(row.gamma)
    )
    assert shown == ["3", "adaptive(2)"] and [row.gamma for row in result.rows] == shown
    for row in result.rows:
        assert row.plain is result.rows[0].plain or row.plain == result.rows[0].plain
        assert len(row.plain.runs) == len(row.specviz.runs) == 2
        assert row.transformers is not None and len(row.transformers.runs) == 2
        assert row.plain.new_tokens == row.specviz.new_tokens == row.transformers.new_tokens
        assert row.specviz.acceptance_rate is not None and row.transformers.acceptance_rate is None
        assert row.speedup == pytest.approx(row.specviz.tokens_per_s / row.plain.tokens_per_s)
    assert result.cut == []


def test_a_row_per_drafter_each_against_its_transformers_counterpart(pair: EncodingPair) -> None:
    drafters = ("draft-model", "lookup:max_ngram=3", "hybrid")
    result = run_bench_grid(pair, COMMAND_PRESET, small_grid(adaptive_start=0, drafters=drafters))
    assert [(row.gamma, row.drafter) for row in result.rows] == [("3", spec) for spec in drafters]
    model, lookup, hybrid = result.rows
    for row in result.rows:
        assert row.plain is model.plain and row.specviz.new_tokens == row.plain.new_tokens
    # transformers' assisted generation, then its prompt lookup; it has no hybrid.
    assert model.transformers is not None and lookup.transformers is not None
    assert lookup.transformers.new_tokens == lookup.plain.new_tokens
    assert hybrid.transformers is None and hybrid.transformers_speedup is None
    assert "-" in bench_cli.format_row(hybrid).split("|")[-1]


def test_drafter_lists_split_at_kinds_and_are_checked() -> None:
    split = bench_cli.split_drafter_specs
    assert split("draft-model, lookup,hybrid") == ("draft-model", "lookup", "hybrid")
    assert split("lookup:max_ngram=3,min_ngram=2,hybrid:occurrence=earliest") == (
        "lookup:max_ngram=3,min_ngram=2",
        "hybrid:occurrence=earliest",
    )
    with pytest.raises(ValueError, match="unknown drafter 'layers'"):
        split("lookup,layers")
    with pytest.raises(ValueError, match="max_ngram must be a whole number"):
        split("lookup:max_ngram=many")
    with pytest.raises(ValueError, match="names no drafter"):
        split(" , ")


def test_bench_refuses_a_bad_drafter_before_loading(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--drafters", "lookup:occurrence=middle"]) == 2
    assert "occurrence must be one of earliest, latest" in capsys.readouterr().err


def test_a_spent_budget_skips_whole_groups(pair: EncodingPair) -> None:
    result = run_bench_grid(
        pair,
        COMMAND_PRESET,
        small_grid(tasks=("code", "story"), time_budget_s=0.0, transformers=False),
    )
    assert result.rows == []
    assert result.cut == ["code T=0: skipped", "story T=0: skipped"]


def test_unknown_tasks_are_refused(pair: EncodingPair) -> None:
    with pytest.raises(ValueError, match="no prompts for poetry"):
        run_bench_grid(pair, COMMAND_PRESET, small_grid(tasks=("poetry",)))


@pytest.mark.usefixtures("on_tiny_pair")
def test_bench_command_prints_the_table_and_writes_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "bench.json"
    code = main(
        [
            "bench", "--tasks", "code", "--gammas", "2,3", "--adaptive-start", "0",
            "--repeats", "1", "--max-new-tokens", "6", "--temperatures", "0,1",
            "--no-transformers", "--out", str(out),
        ]
    )  # fmt: skip
    assert code == 0
    printed = capsys.readouterr()
    lines = printed.out.splitlines()
    assert lines[0].startswith("task") and "HF assist" in lines[0]
    assert [line.split()[:3] for line in lines[2:6]] == [
        ["code", "0.0", "2"], ["code", "0.0", "3"], ["code", "1.0", "2"], ["code", "1.0", "3"],
    ]  # fmt: skip
    assert "T=0: best speedup" in printed.out and "[100%] done" in printed.err
    report = json.loads(out.read_text())
    assert report["repeats"] == 1 and report["cut"] == [] and len(report["rows"]) == 4
    row = report["rows"][0]
    assert set(row) >= {
        "task",
        "temperature",
        "gamma",
        "plain",
        "specviz",
        "transformers",
        "speedup",
    }
    assert row["transformers"] is None and row["plain"]["new_tokens"] == 6
    assert set(row["specviz"]) == {
        "tokens_per_s", "new_tokens", "engine_tokens_per_s", "acceptance_rate",
        "tokens_per_target_pass", "runs",
    }  # fmt: skip


def test_each_method_decodes_every_prompt_of_the_group_pooled_into_one_row(
    pair: EncodingPair,
) -> None:
    prompts = {"editing": ("def add(a, b):", "Once upon a time", "x = 1")}
    one = run_bench_grid(
        pair, COMMAND_PRESET, small_grid(tasks=("editing",), prompts=prompts, repeats=1)
    )
    two = run_bench_grid(
        pair,
        COMMAND_PRESET,
        small_grid(tasks=("editing",), prompts=prompts, prompts_per_task=2, repeats=1),
    )
    every = run_bench_grid(
        pair,
        COMMAND_PRESET,
        small_grid(tasks=("editing",), prompts=prompts, prompts_per_task=0, repeats=1),
    )
    # 8 new tokens per prompt (the tiny pair has no EOS in reach), every method alike.
    for result, count in ((one, 1), (two, 2), (every, 3)):
        for row in result.rows:
            assert row.plain.new_tokens == row.specviz.new_tokens == 8 * count
            assert row.transformers is not None and row.transformers.new_tokens == 8 * count
    # The pooled counters are the sums: τ of the pooled row lies between the prompts' own.
    assert one.rows[0].specviz.tokens_per_target_pass is not None


@pytest.mark.usefixtures("on_tiny_pair")
def test_bench_takes_prompts_from_a_file_all_of_them_by_default(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prompts = tmp_path / "unseen.toml"
    prompts.write_text('story = ["Once upon a time", "It was late"]\n')
    out = tmp_path / "bench.json"
    code = main(
        [
            "bench", "--prompts-file", str(prompts), "--gammas", "2", "--adaptive-start", "0",
            "--repeats", "1", "--max-new-tokens", "5", "--no-transformers", "--out", str(out),
        ]
    )  # fmt: skip
    assert code == 0, capsys.readouterr().err
    report = json.loads(out.read_text())
    assert report["prompts"] == {"story": ["Once upon a time", "It was late"]}
    (row,) = report["rows"]
    assert row["task"] == "story" and row["plain"]["new_tokens"] == 10
    assert main(["bench", "--prompts-file", str(prompts), "--tasks", "code"]) == 2
    assert "no prompts for code" in capsys.readouterr().err
    prompts.write_text('poetry = ["a"]\n')
    assert main(["bench", "--prompts-file", str(prompts)]) == 2
    assert "unknown task 'poetry'" in capsys.readouterr().err


def test_bench_refuses_unknown_tasks_before_loading(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--tasks", "poetry"]) == 2
    assert "has no prompts for poetry" in capsys.readouterr().err


@pytest.mark.slow
def test_bench_on_the_bundled_pair(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    result = run_cli(
        "bench", "--tasks", "translation", "--gammas", "3", "--adaptive-start", "0",
        "--repeats", "1", "--max-new-tokens", "8", "--out", str(out),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "translation" in result.stdout and "speedup" in result.stdout
    report = json.loads(out.read_text())
    (row,) = report["rows"]
    assert row["gamma"] == "3" and row["plain"]["new_tokens"] > 0
    assert row["speedup"] == pytest.approx(
        row["specviz"]["tokens_per_s"] / row["plain"]["tokens_per_s"]
    )
    assert row["transformers"]["tokens_per_s"] > 0


def test_bench_takes_every_setting_of_the_schema_but_the_swept_ones() -> None:
    import argparse

    from specviz.core.settings import settings_schema

    parser = argparse.ArgumentParser()
    bench_cli.add_bench_arguments(parser)
    flags = {action.dest for action in parser._actions}
    swept = {"gamma", "adaptive_gamma", "cost_gamma", "temperature"}
    names = {item.name for item in settings_schema(GenerationSettings)}
    assert names - swept <= flags
    args = parser.parse_args(["--top-k", "5", "--draft-stop-cumulative", "0.1"])
    preset_settings = GenerationSettings(max_new_tokens=300, seed=9, draft_stop_below=0.3)
    preset = SimpleNamespace(settings=preset_settings, drafter="draft-model")
    grid = bench_cli.bench_grid(args, preset)
    assert grid.base.top_k == 5 and grid.base.draft_stop_cumulative == 0.1
    assert grid.base.draft_stop_below == 0.3  # the preset's, where no flag is given
    assert (grid.base.max_new_tokens, grid.base.seed) == (64, 0)  # the bench's own defaults
    assert grid.drafters == ("draft-model",)  # the preset's drafter where --drafters is not given


def test_the_summary_ranks_each_tasks_drafters_and_names_a_tie() -> None:
    from specviz.measure.bench import Measurement, Row

    def row(task: str, gamma: str, drafter: str, speedup: float) -> Row:
        return Row(
            task, 0.0, gamma, Measurement(2.0, 64), Measurement(2.0 * speedup, 64), None, drafter
        )

    rows = [
        row("editing", "5", "lookup", 3.00),
        row("editing", "7", "lookup", 3.44),
        row("editing", "7", "hybrid", 3.45),
        row("editing", "7", "draft-model", 2.32),
        row("code", "5", "lookup", 1.50),
        row("code", "5", "hybrid", 2.10),
    ]
    lines = bench_cli.drafter_ranking(rows)
    assert lines == [
        "  editing: best per drafter: hybrid 3.45x (γ=7), lookup 3.44x (γ=7), "
        "draft-model 2.32x (γ=7); hybrid and lookup within 5%",
        "  code: best per drafter: hybrid 2.10x (γ=5), lookup 1.50x (γ=5)",
    ]
    assert bench_cli.drafter_ranking(rows[:2]) == []  # one drafter: nothing to rank
