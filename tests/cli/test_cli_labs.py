"""The labs on the command line, as a user runs them: real output, plain errors."""

from __future__ import annotations

import json
from typing import Any

import pytest
from commands import assert_plain_error, run_cli


def test_project_prints_a_labelled_projection_without_loading_models() -> None:
    result = run_cli("project", "--gpu", "NVIDIA L4", "--alpha", "0.85", timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("PROJECTION (roofline model, not measured) on NVIDIA L4")
    assert "best γ" in result.stdout and "assumes:" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["project", "--gpu", "nope"], "unknown GPU 'nope'"),
        (["project", "--alpha", "1.5"], "α must be in [0, 1]"),
        (["exactness", "--prompt", "hi", "--gamma", "0"], "γ must be between 1 and 16"),
        (["inspect", "--prompt", "   "], "the prompt is empty"),
        (["speedup", "--prompt", "hi", "--gpu", "nope"], "unknown GPU 'nope'"),
    ],
)
def test_bad_lab_input_is_a_plain_error(args: list[str], message: str) -> None:
    assert_plain_error(args, message)


@pytest.mark.slow
def test_inspect_prints_each_decision() -> None:
    result = run_cli(
        "inspect", "--prompt", "Tell a story.", "--temperature", "1", "--max-new-tokens", "8",
        "--cycle", "1",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("cycle 1: γ = ")
    assert any("min(1, p/q)" in line for line in lines)
    assert any(line.strip().startswith("top q:") for line in lines)


@pytest.mark.slow
def test_exactness_json_reports_tests_and_catches_the_wrong_rule() -> None:
    common = ["--prompt", "Tell a story.", "--temperature", "1", "--samples", "200"]
    right = run_cli("exactness", *common, "--tokens", "1", "--json")
    wrong = run_cli("exactness", *common, "--tokens", "1", "--rule", "accept_draft", "--json")
    assert right.returncode == 0 and wrong.returncode == 0, right.stderr + wrong.stderr
    good, bad = json.loads(right.stdout), json.loads(wrong.stdout)
    assert good["samples"] == 200 and good["rule"] == "exact"
    assert bad["comparisons"][0]["speculative_fit"]["p_value"] < 1e-3
    assert good["emission_max_error"] < 1e-6


@pytest.mark.slow
def test_speedup_and_tasks_print_their_tables() -> None:
    speedup = run_cli(
        "speedup", "--prompt", "def fibonacci(n):", "--gammas", "1,3", "--max-new-tokens", "8",
        "--time-budget", "60", "--gpu", "NVIDIA H100 SXM",
    )  # fmt: skip
    assert speedup.returncode == 0, speedup.stderr
    assert "pooled α" in speedup.stdout and "PROJECTION" in speedup.stdout
    tasks = run_cli("tasks", "--max-new-tokens", "4", "--repeats", "1", "--json")
    assert tasks.returncode == 0, tasks.stderr
    report = json.loads(tasks.stdout)
    assert [task["task"] for task in report["tasks"]] == [
        "code", "story", "explanation", "translation", "rewriting", "editing",
    ]  # fmt: skip


def test_self_draft_prints_the_lookahead_table_and_its_json(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tiny_pair: Any
) -> None:
    from commands import EncodingPair

    import specviz.cli.options
    from specviz.cli.main import main

    pair = EncodingPair(tiny_pair.draft, tiny_pair.target, tiny_pair.tokenizer, frozenset())
    monkeypatch.setattr(specviz.cli.options, "load_pair_for", lambda args, preset: pair)
    run = ["self-draft", "--prompt", "def add(a, b):\n    return a + b\n\ndef add(a, b):"]
    run += ["--raw", "--max-new-tokens", "16", "--temperature", "0"]
    assert main(run) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].split() == ["accepted", "passes", "share", "by", "an", "n-gram"]
    assert [line.split()[0] for line in lines[1:4]] == ["0", "1", "2"]
    assert "Lookahead (lookahead), " in out and "Predicted: " in out
    assert main([*run, "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["heads"] is None and record["ngrams"]["ngram"] == 3
    lengths = record["ngrams"]["lengths"]
    mean = sum(k * count for k, count in enumerate(lengths)) / sum(lengths)
    assert record["ngrams"]["mean_accepted"] == pytest.approx(mean)
    assert record["model_tau"] == pytest.approx(1 + mean)
    assert main([*run, "--lang", "ja"]) == 0
    assert "受理長" in capsys.readouterr().out


def test_self_draft_refuses_a_drafter_it_does_not_model_before_loading() -> None:
    assert_plain_error(
        ["self-draft", "--prompt", "hi", "--drafter", "draft-model"],
        "this lab models the drafters that draft with the target itself (lookahead, medusa)",
    )
