"""Bench results as Markdown: the renderer on hand-built records, the CLI flags, and the doc's
tables against the JSON they are rendered from (so docs/performance.md cannot drift from it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from specviz.cli.main import main
from specviz.measure.bench_markdown import (
    block_sources,
    cpu_words,
    render_document,
    render_report,
    render_side_by_side,
    render_table,
)

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def cell(tokens_per_s: float | None, alpha: float | None = None, tau: float | None = None) -> Any:
    return {"tokens_per_s": tokens_per_s, "acceptance_rate": alpha, "tokens_per_target_pass": tau}


def row(gamma: str, drafter: str, spec: float, hf: float | None, **stats: float) -> Any:
    """A row of the code task, greedy, plain decoding at 4.00 tok/s."""
    return {
        "task": "code",
        "temperature": 0.0,
        "gamma": gamma,
        "drafter": drafter,
        "plain": cell(4.0),
        "specviz": cell(spec, stats.get("alpha"), stats.get("tau")),
        "transformers": None if hf is None else cell(hf),
    }


REPORT: dict[str, Any] = {
    "when": "2026-12-04T09:30:00+00:00",
    "command": "python -m specviz bench --tasks code --gammas 5,7 --drafters draft-model,lookup",
    "preset": "qwen2.5-coder-bundled",
    "draft_quantization": "int4dual",
    "dtype": "bfloat16",
    "torch": "2.13.0",
    "threads": 2,
    "cpu": {"name": "AMD EPYC", "family": 25, "model": 1, "flags": ["avx", "avx2", "fma"]},
    "max_new_tokens": 64,
    "repeats": 2,
    "rows": [
        row("5", "draft-model", 5.0, 4.4, alpha=0.88, tau=4.27),
        row("5", "lookup", 3.88, 3.48, tau=1.16),
        row("7", "draft-model", 5.2, None),
        # lookup at γ = 7 was not measured: its cell is a dash
    ],
}


def test_a_report_renders_as_a_table_with_its_caption_and_command() -> None:
    assert render_report(REPORT, alpha_tau=True, source="results/x.json") == (
        "| task | γ | plain tok/s | draft-model | lookup |\n"
        "| --- | --- | --- | --- | --- |\n"
        "| code | 5 | 4.00 | **1.25×** (1.10×), α 0.88, τ 4.27 | 0.97× (0.87×), τ 1.16 |\n"
        "| code | 7 | 4.00 | **1.30×** | – |\n"
        "\n"
        "×: speedup over plain decoding in the same run (tokens/s by the wall clock, the prompt's reading\n"
        "included); in brackets, transformers' counterpart; bold, the row's fastest drafter; α: share of\n"
        "drafted tokens accepted, τ: tokens per target pass. Greedy, 64 new tokens, median of 2. CPU: AMD\n"
        "EPYC, family 25 model 1 (avx2), 2 threads; qwen2.5-coder-bundled, int4dual draft, bfloat16 target,\n"
        "torch 2.13.0; 2026-12-04. Data: [results/x.json](results/x.json).\n"
        "\n"
        "```bash\n"
        "python -m specviz bench --tasks code --gammas 5,7 --drafters draft-model,lookup\n"
        "```"
    )


def test_temperature_and_gamma_get_columns_only_where_they_vary() -> None:
    sampled = [{**row("5", "draft-model", 6.0, None), "temperature": 1.0}]
    table = render_table([REPORT["rows"][0], *sampled])
    assert table.splitlines()[0] == "| task | T | plain tok/s | draft-model |"
    assert table.splitlines()[2:] == [
        "| code | 0 | 4.00 | 1.25× (1.10×) |",
        "| code | 1 | 4.00 | 1.50× |",
    ]


def test_a_stated_speedup_wins_over_one_from_rounded_throughputs() -> None:
    # A rebuilt report keeps the speedup its typed table gave (from unrounded tok/s).
    stated = {**row("5", "draft-model", 11.8, None), "speedup": 2.95, "plain": cell(4.0)}
    assert "2.95×" in render_table([stated])
    assert render_table([{**stated, "speedup": None}]).endswith("| 2.95× |")  # 11.8 / 4.0


def test_the_cpu_is_named_by_model_family_and_the_flags_that_decide_its_kernels() -> None:
    xeon = {"name": "Intel(R) Xeon(R)", "flags": ["amx_bf16", "avx2", "avx512_bf16", "avx512f"]}
    assert cpu_words({"cpu": xeon}) == "Intel(R) Xeon(R) (avx2, avx512f, avx512_bf16, amx_bf16)"
    assert cpu_words({"cpu": {"name": None}, "threads": 2}) == "model not recorded, 2 threads"
    assert cpu_words({"machine": "x86_64"}) == "x86_64"  # a report written before the cpu field


def test_every_table_of_the_performance_doc_is_its_json_rendered() -> None:
    doc_path = DOCS / "performance.md"
    doc = doc_path.read_text()
    sources = block_sources(doc)
    stored = sorted(path.relative_to(DOCS).as_posix() for path in (DOCS / "results").glob("*.json"))
    assert sorted(set(sources)) == stored, "every docs/results/*.json has a table, and only they"

    def load(source: str) -> Any:
        return json.loads((doc_path.parent / source).read_text())

    rendered = render_document(doc, load)
    assert rendered == doc, (
        "docs/performance.md differs from its JSON: run "
        "`python -m specviz bench --render-doc docs/performance.md`"
    )


def test_runs_on_two_cpus_render_side_by_side_a_column_group_each() -> None:
    avx2 = {**REPORT, "rows": REPORT["rows"][:2]}  # γ = 5: draft-model and lookup
    zen4 = {
        "cpu": {"name": "AMD EPYC", "family": 25, "model": 17, "flags": ["avx2", "avx512f"]},
        "rows": [
            row("5", "draft-model", 10.0, 9.0),
            {**row("5", "lookup", 11.0, None), "task": "editing"},
            {**row("5", "draft-model", 6.0, None), "task": "editing"},
        ],
    }
    reports = {"results/a.json": avx2, "results/b.json": zen4}
    marker = "<!-- bench-table: results/a.json=AVX2 EPYC results/b.json -->\n"
    doc = f"{marker}stale\n<!-- /bench-table -->\n"
    # The second group's label is its JSON's cpu record; bold is each group's own fastest.
    assert render_document(doc, reports.__getitem__) == (
        f"{marker}\n"
        "| task | AVX2 EPYC: draft-model | lookup | AMD EPYC (avx512f): draft-model | lookup |\n"
        "| --- | --- | --- | --- | --- |\n"
        "| code | **1.25×** (1.10×) | 0.97× (0.87×) | **2.50×** (2.25×) | – |\n"
        "| editing | – | – | 1.50× | **2.75×** |\n"
        "\n"
        "Data: [results/a.json](results/a.json), [results/b.json](results/b.json).\n"
        "\n"
        "<!-- /bench-table -->\n"
    )
    assert block_sources(doc) == ["results/a.json", "results/b.json"]
    # α and τ as in the one-run table, where the marker asks for them.
    with_stats = render_side_by_side([("AVX2 EPYC", avx2)], alpha_tau=True)
    assert with_stats.splitlines()[2] == (
        "| code | **1.25×** (1.10×), α 0.88, τ 4.27 | 0.97× (0.87×), τ 1.16 |"
    )


def test_a_marker_word_that_is_no_json_path_or_option_is_an_error() -> None:
    doc = "<!-- bench-table: results/a.json alpha-tua -->\n<!-- /bench-table -->"
    with pytest.raises(ValueError, match="'alpha-tua' is no"):
        render_document(doc, lambda source: REPORT)


def test_the_readmes_speedup_table_is_its_json_rendered() -> None:
    readme = (ROOT / "README.md").read_text()
    assert block_sources(readme), "README.md's speedup table is a marked bench-table block"

    def load(source: str) -> Any:
        return json.loads((ROOT / source).read_text())

    assert render_document(readme, load) == readme, (
        "README.md differs from its JSON: run `python -m specviz bench --render-doc README.md`"
    )
    assert len(readme.encode()) <= 12 * 1024, "README.md stays under 12 KB"


def test_from_json_prints_the_saved_runs_table_without_loading_a_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    saved = tmp_path / "run.json"
    saved.write_text(json.dumps(REPORT))
    assert main(["bench", "--from-json", str(saved), "--alpha-tau"]) == 0
    assert capsys.readouterr().out == render_report(REPORT, True, str(saved)) + "\n"


def test_render_doc_rewrites_stale_tables_in_place(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "run.json").write_text(json.dumps(REPORT))
    doc = tmp_path / "doc.md"
    doc.write_text(
        "Before.\n\n<!-- bench-table: results/run.json -->\nstale\n<!-- /bench-table -->\n\nAfter.\n"
    )
    assert main(["bench", "--render-doc", str(doc)]) == 0
    table = render_report(REPORT, False, "results/run.json")
    expected = (
        f"Before.\n\n<!-- bench-table: results/run.json -->\n\n{table}\n\n"
        "<!-- /bench-table -->\n\nAfter.\n"
    )
    assert doc.read_text() == expected
    assert main(["bench", "--render-doc", str(doc)]) == 0
    assert "up to date" in capsys.readouterr().err


def test_a_file_that_is_not_a_bench_json_is_a_plain_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = tmp_path / "other.json"
    other.write_text('{"schema": "specviz.trace"}')
    assert main(["bench", "--from-json", str(other)]) == 2
    assert "is not a bench JSON" in capsys.readouterr().err


@pytest.mark.usefixtures("on_tiny_pair")
def test_markdown_prints_the_runs_table_and_the_json_names_the_cpu(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "bench.json"
    args = ["bench", "--tasks", "code", "--gammas", "2", "--adaptive-start", "0", "--repeats", "1"]
    args += ["--max-new-tokens", "4", "--no-transformers", "--out", str(out), "--markdown"]
    assert main(args) == 0
    report = json.loads(out.read_text())
    assert set(report["cpu"]) == {"name", "family", "model", "flags"}
    printed = capsys.readouterr().out
    assert render_table(report["rows"]) in printed
    assert "python -m specviz bench" in printed
