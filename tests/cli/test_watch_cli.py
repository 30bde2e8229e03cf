"""`python -m specviz watch`: a row per request and the totals, JSON, and plain errors, against
a fake engine (tests/fake_engines.py) served from this process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from commands import assert_plain_error
from fake_engines import FakeEngine

from specviz.cli.main import main

ROOT = Path(__file__).resolve().parents[2]


def test_a_row_per_request_then_the_totals(capsys: pytest.CaptureFixture[str]) -> None:
    with FakeEngine("llama-server") as url:
        assert main(["watch", "--url", url, "--tasks", "code,story"]) == 0
    out = capsys.readouterr()
    lines = out.out.splitlines()
    assert lines[0] == f"Watching llama-server at {url}, model fake/model-7b"
    header = lines[1].split()
    assert header[:3] == ["#", "task", "tokens"] and "α" in header and "τ" in header
    rows = [line.split() for line in lines[2:5]]
    assert [row[0] for row in rows] == ["1", "2", "total"]
    assert rows[0][1] == "code" and rows[0][3:8] == ["4", "16", "10", "62%", "3.50"]
    assert rows[2][1:7] == ["30", "8", "32", "20", "62%", "3.50"]  # no task: one cell fewer
    assert "acceptance by draft position (all requests): 100% 75% 50% 25%" in out.out
    assert "Sending request 2 of 2" in out.err


def test_a_baseline_adds_its_speed_and_the_speedup(capsys: pytest.CaptureFixture[str]) -> None:
    with FakeEngine("vllm") as url, FakeEngine("vllm", speculative=False, delay_s=0.1) as base:
        assert main(["watch", "--url", url, "--baseline-url", base]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1] == f"Baseline: vLLM at {base}, model fake/model-7b"
    assert lines[2].rstrip().endswith("baseline tok/s speedup")
    total = lines[-2].split()  # the last line: acceptance by position
    assert total[0] == "total" and total[-1].endswith("×")


def test_a_prompts_file_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    prompts = str(ROOT / "docs" / "unseen-prompts.toml")
    args = ["--prompts-file", prompts, "--tasks", "editing", "--json", "--max-tokens", "8"]
    with FakeEngine("sglang") as url:
        assert main(["watch", "--url", url, *args]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["server"]["kind"] == "sglang"
    assert [r["task"] for r in record["results"]] == ["editing"]
    assert record["totals"]["alpha"] is None and record["totals"]["mean_acceptance_length"] == 3.5
    assert record["warnings"] and "SGLang" in record["warnings"][0]


def test_japanese_words(capsys: pytest.CaptureFixture[str]) -> None:
    with FakeEngine("vllm") as url:
        assert main(["watch", "--url", url, "--lang", "ja"]) == 0
    out = capsys.readouterr().out
    assert "を観察中" in out and "合計" in out and "ドラフト位置ごとの受理率" in out


def test_an_unreachable_server_is_a_sentence_not_a_traceback() -> None:
    assert_plain_error(
        ["watch", "--url", "http://127.0.0.1:9", "--timeout", "5"],
        "Could not reach http://127.0.0.1:9",
    )
