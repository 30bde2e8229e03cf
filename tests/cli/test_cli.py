"""The command line, as a user runs it: a subprocess, real output, plain errors."""

from __future__ import annotations

import json
from typing import Any

import pytest
from commands import assert_plain_error, run_cli

from specviz.export.trace import read_trace


def test_presets_lists_the_default_first() -> None:
    result = run_cli("presets")
    assert result.returncode == 0
    first = result.stdout.splitlines()[0]
    assert first.startswith("*") and "qwen2.5-coder-bundled" in first


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["generate", "--prompt", "hi", "--gamma", "0"], "γ must be between 1 and 16"),
        (["generate", "--prompt", "hi", "--top-p", "0"], "Top-p must be above 0 and at most 1"),
        (
            ["generate", "--prompt", "hi", "--draft-stop-cumulative", "1"],
            "Cumulative draft stop must be at least 0 and below 1",
        ),
        (
            ["generate", "--prompt", "hi", "--temperature", "3"],
            "Temperature must be between 0 and 2",
        ),
        (["generate", "--prompt", "   "], "the prompt is empty"),
        (["generate", "--prompt", "hi", "--preset", "nope"], "unknown preset 'nope'"),
        (["generate", "--prompt", "hi", "--drafter", "nope"], "unknown drafter 'nope'; known"),
        (
            ["inspect", "--prompt", "hi", "--drafter", "lookup:max_ngram=0"],
            "drafter 'lookup' needs 1 <= min_ngram <= max_ngram",
        ),
    ],
)
def test_bad_input_is_a_plain_error_not_a_traceback(args: list[str], message: str) -> None:
    assert_plain_error(args, message)


@pytest.mark.slow
def test_generate_json_prints_a_real_trace() -> None:
    result = run_cli(
        "generate", "--prompt", "def fibonacci(n):", "--json", "--max-new-tokens", "24"
    )
    assert result.returncode == 0, result.stderr
    trace = json.loads(result.stdout)
    assert (trace["schema"], trace["schema_version"]) == ("specviz.trace", 2)
    assert trace["models"]["preset"] == "qwen2.5-coder-bundled"
    assert trace["cycles"][-1]["totals"]["new_tokens"] == len(
        [token for cycle in trace["cycles"] for token in cycle["emitted"]]
    )
    read_trace(result.stdout)  # what --json prints replays as a --trace file does
    first = trace["cycles"][0]
    assert {"drafted", "emitted", "timing", "totals", "target_cache_len"} <= set(first)
    assert first["drafter"] == "draft-model"
    drafted = first["drafted"][0]
    assert {"q_draft", "p_target", "accept_prob", "uniform", "accepted", "text"} <= set(drafted)
    assert trace["text"] == "".join(t["text"] for c in trace["cycles"] for t in c["emitted"])


def test_generate_drafts_with_the_drafter_named(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tiny_pair: Any
) -> None:
    from commands import EncodingPair

    import specviz.cli.options
    from specviz.cli.main import main

    pair = EncodingPair(tiny_pair.draft, tiny_pair.target, tiny_pair.tokenizer, frozenset())
    monkeypatch.setattr(specviz.cli.options, "load_pair_for", lambda args, preset: pair)
    prompt = "abcabcabcabc"
    code = main(["generate", "--prompt", prompt, "--drafter", "hybrid", "--json", "--raw"])
    assert code == 0
    trace = json.loads(capsys.readouterr().out)
    assert trace["schema"] == "specviz.trace" and trace["drafter"] == "hybrid"
    assert {cycle["drafter"] for cycle in trace["cycles"]} <= {"lookup", "draft-model"}
    assert any(cycle["copied_from"] for cycle in trace["cycles"])


def test_generate_speaks_japanese_with_lang_ja_before_or_after_the_command(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tiny_pair: Any
) -> None:
    from commands import EncodingPair

    import specviz.cli.options
    from specviz.cli.main import main

    pair = EncodingPair(tiny_pair.draft, tiny_pair.target, tiny_pair.tokenizer, frozenset())
    monkeypatch.setattr(specviz.cli.options, "load_pair_for", lambda args, preset: pair)
    run = ["generate", "--prompt", "abcabc", "--raw", "--max-new-tokens", "8"]
    for argv in (["--lang", "ja", *run], [*run, "--lang", "ja"], [*run, "--lang=ja"]):
        assert main(argv) == 0
        out = capsys.readouterr().out
        assert "サイクル   0 γ=" in out and "受理" in out
        assert "トークン/秒（新規トークン数 ÷ エンジン時間" in out and "tok/s" not in out
    assert main(run) == 0
    assert "cycle   0 γ=" in capsys.readouterr().out


def test_generate_with_plain_says_what_its_tokens_per_second_count(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tiny_pair: Any
) -> None:
    from commands import EncodingPair

    import specviz.cli.options
    from specviz.cli.main import main

    pair = EncodingPair(tiny_pair.draft, tiny_pair.target, tiny_pair.tokenizer, frozenset())
    monkeypatch.setattr(specviz.cli.options, "load_pair_for", lambda args, preset: pair)
    assert (
        main(["generate", "--prompt", "abcabc", "--raw", "--max-new-tokens", "8", "--plain"]) == 0
    )
    out = capsys.readouterr().out
    # The report's definition: new tokens over engine seconds, the prompt's reading included.
    assert "tok/s (new tokens over engine seconds: every forward, the prompt's reading" in out
    assert "plain decoding: " in out and "tok/s, counted the same way" in out
    assert "(one run of each)" in out


def test_lang_ja_words_a_listing_and_an_error_in_japanese() -> None:
    listing = run_cli("presets", "--lang", "ja", timeout=120)
    assert listing.returncode == 0 and "ドラフト bundled:" in listing.stdout
    assert_plain_error(
        ["generate", "--prompt", "hi", "--gamma", "0", "--lang", "ja"],
        "エラー：γ：1 以上 16 以下でなければなりません（指定：0）",
    )


def test_generate_help_lists_every_setting_flag() -> None:
    result = run_cli("generate", "--help", timeout=120)
    assert result.returncode == 0
    for flag in (
        "--gamma", "--adaptive", "--no-adaptive", "--temperature", "--top-k", "--top-p", "--seed",
        "--max-new-tokens", "--no-stop", "--draft-stop-below", "--draft-stop-cumulative", "--raw",
    ):  # fmt: skip
        assert flag in result.stdout
    assert "generation settings (default: the preset's)" in result.stdout


@pytest.mark.slow
def test_cost_curve_json() -> None:
    result = run_cli("cost-curve", "--max-new-tokens", "3", "--repeats", "1", "--json")
    assert result.returncode == 0, result.stderr
    curve = json.loads(result.stdout)
    assert [point["new_tokens"] for point in curve["points"]] == [1, 2, 3]
    assert curve["relative"][0] == 1.0 and curve["complete"]
    # Each drafter's largest pass priced on the curve: past 3 tokens, on its fitted line.
    passes = {row["spec"]: row for row in curve["passes"]}
    assert passes["draft-model"]["tokens"] == 6 and passes["lookahead"]["tokens"] == 16
    assert all(row["fitted"] and row["cost"] >= 1.0 for row in passes.values())
