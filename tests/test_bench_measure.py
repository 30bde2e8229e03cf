"""`python -m specviz measure ...` and the package functions under it, on tiny models."""

from __future__ import annotations

import json

import pytest
import torch
from conftest import TinyPair, eos_heavy_pair, tiny_qwen
from test_bench import PRESET, EncodingPair

from specviz.cli import measure as measure_cli
from specviz.cli.main import main
from specviz.core.engine import speculative_generate
from specviz.core.settings import GenerationSettings
from specviz.drafters.draft_model import ModelDrafter
from specviz.measure.attention import attention_fidelity, time_attention_kernels
from specviz.measure.compare_transformers import (
    compare_with_transformers,
    counted_forwards,
    verifying_passes,
)
from specviz.measure.draft_feeding import feeding_difference
from specviz.measure.lean_step import lean_step, time_lean_step
from specviz.measure.stop_rules import count_stop_rules

PROMPT = torch.tensor([list(b"def fibonacci(n):")])


@pytest.fixture(scope="module")
def pair(tiny_pair: TinyPair) -> EncodingPair:
    return EncodingPair(
        tiny_pair.draft, tiny_pair.target, tiny_pair.tokenizer, tiny_pair.eos_token_ids
    )


@pytest.fixture
def tiny_loaded(pair: EncodingPair, monkeypatch: pytest.MonkeyPatch) -> EncodingPair:
    """Commands that load the preset's pair get the tiny pair and the tiny preset instead."""
    monkeypatch.setattr(measure_cli, "load_pair_for", lambda args, preset: pair)
    monkeypatch.setattr(measure_cli, "preset_for", lambda args: PRESET)
    return pair


def test_every_subcommand_parses_and_documents_itself(capsys: pytest.CaptureFixture[str]) -> None:
    for what in (
        "attention-kernels",
        "attention-fidelity",
        "lean-step",
        "draft-feeding",
        "stop-rules",
        "compare-transformers",
        "app-speed",
        "bf16-rows",
    ):
        with pytest.raises(SystemExit) as exit_:
            main(["measure", what, "--help"])
        assert exit_.value.code == 0
        assert "--json" in capsys.readouterr().out


def test_attention_kernels_command_prints_one_line_per_cache_length(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ["measure", "attention-kernels", "--cached", "8,16", "--calls", "2", "--repeats", "2"]
    assert main([*args, "--json"]) == 0
    timings = json.loads(capsys.readouterr().out)
    assert [timing["cached"] for timing in timings] == [8, 16]
    assert all(timing[k] > 0 for timing in timings for k in ("sdpa_us", "eager_us", "lean_us"))
    assert main(args) == 0
    assert capsys.readouterr().out.splitlines()[1].startswith("    8 cached: SDPA")


def test_attention_kernels_refuse_an_empty_cache() -> None:
    with pytest.raises(ValueError, match="at least one position"):
        time_attention_kernels([0], calls=1, repeats=1)


def test_fidelity_of_a_low_precision_model_against_its_float32_self() -> None:
    reference = tiny_qwen(3)
    low = tiny_qwen(3, dtype=torch.bfloat16)
    rows = attention_fidelity(low, reference, PROMPT)
    assert [row.path for row in rows] == [
        "transformers, sdpa",
        "transformers, eager",
        "specviz lean step",
    ]
    for row in rows:
        assert 0.0 <= row.mean_kl <= row.largest_kl < 0.05 and row.argmax_agreement > 0.8
    assert low.config._attn_implementation == "sdpa"  # restored
    # The same weights in the same precision: no difference at all.
    exact = attention_fidelity(reference, reference, PROMPT)[0]
    assert exact.largest_kl == pytest.approx(0.0, abs=1e-6) and exact.argmax_agreement == 1.0


def test_lean_step_timing_on_a_tiny_model() -> None:
    timing = time_lean_step(tiny_qwen(4), context_length=12, blocks=2, steps_per_block=3)
    assert [path.name for path in timing.paths] == ["transformers", "lean"]
    assert all(len(path.blocks_ms) == 2 and path.ms_per_step > 0 for path in timing.paths)
    assert timing.largest_logit_difference < 1e-3  # float32 model: the two paths agree


def test_lean_step_is_refused_where_it_does_not_apply() -> None:
    markov = eos_heavy_pair().target
    assert lean_step(markov) is None
    with pytest.raises(ValueError, match="does not apply"):
        time_lean_step(markov)


def test_lean_step_command(tiny_loaded: EncodingPair, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["measure", "lean-step", "--blocks", "2", "--context", "8", "--steps", "2", "--json"]
    assert main(args) == 0
    timing = json.loads(capsys.readouterr().out)
    assert timing["context_length"] == 8 and len(timing["paths"]) == 2


def test_feeding_difference_is_rounding_only_for_a_float32_model() -> None:
    difference = feeding_difference(tiny_qwen(5), PROMPT)
    assert difference.prompt_tokens == PROMPT.shape[1]
    assert difference.largest_logprob_difference < 1e-3
    assert difference.top_prob_full == pytest.approx(difference.top_prob_stepped, abs=1e-4)
    with pytest.raises(ValueError):
        feeding_difference(tiny_qwen(5), PROMPT[:, :1])


def test_stop_rules_count_both_rules(pair: EncodingPair) -> None:
    settings = GenerationSettings(
        max_new_tokens=10, stop_on_eos=False, draft_stop_below=0.2, draft_stop_cumulative=0.5
    )
    rows = count_stop_rules(pair, [("code", PROMPT)], settings, draft_cost=0.5)
    assert [row.gamma for row in rows] == ["3", "5", "7", "adaptive(5)"]
    for row in rows:
        per_token, cumulative = row.rules
        assert (per_token.rule, cumulative.rule) == ("per-token", "+cumulative")
        for count in row.rules:
            work = count.target_passes + 0.5 * count.draft_forwards
            assert count.tokens_per_work == pytest.approx(count.new_tokens / work)
        # A stricter stop never drafts more.
        assert cumulative.draft_forwards <= per_token.draft_forwards


def test_stop_rules_command(tiny_loaded: EncodingPair, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["measure", "stop-rules", "--tasks", "code", "--max-new-tokens", "6"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 5 and lines[1].startswith("code")
    assert main(["measure", "stop-rules", "--tasks", "poetry"]) == 2


def test_compare_counts_specviz_from_its_records_as_hooks_would() -> None:
    """specviz's counts come from its cycles; on a Markov pair (no lean step: every forward goes
    through the model's own call), forward pre-hooks count the same target work."""
    markov = eos_heavy_pair()
    settings = GenerationSettings(gamma=4, max_new_tokens=24, stop_on_eos=False)
    prompt = torch.tensor([[1, 2, 3, 4, 5]])
    calls: dict[str, list[int]] = {"target": [], "draft": []}
    with counted_forwards(markov, calls):
        cycles = list(speculative_generate(markov, prompt, settings, ModelDrafter(markov.draft)))
    passes = verifying_passes(calls["target"], prompt.shape[1])
    assert len(passes) == len(cycles)
    assert sum(passes) == sum(cycle.gamma + 1 for cycle in cycles)
    markov.target(input_ids=prompt)
    assert len(calls["target"]) == len(cycles)  # the hooks were removed on the way out


def test_compare_with_transformers_on_tiny_models(pair: EncodingPair) -> None:
    settings = GenerationSettings(gamma=3, max_new_tokens=10, stop_on_eos=False)
    comparison = compare_with_transformers(pair, PROMPT, settings)
    specviz, transformers = comparison.methods
    assert (specviz.method, transformers.method) == ("specviz", "transformers")
    assert comparison.plain_new_tokens == 10
    for work in comparison.methods:
        assert work.new_tokens == 10 and work.tokens_per_s > 0
        assert work.verifying_passes >= 1 and work.positions_scored >= work.verifying_passes
        assert work.draft_forwards >= 1
    assert specviz.same_as_plain and transformers.same_as_plain  # greedy, float32


def test_compare_command(tiny_loaded: EncodingPair, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["measure", "compare-transformers", "--task", "code", "--gamma", "a3"]
    assert main([*args, "--max-new-tokens", "6", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [work["method"] for work in report["methods"]] == ["specviz", "transformers"]
    assert main(["measure", "compare-transformers", "--task", "code", "--gamma", "x"]) == 2
    assert "--gamma takes a number" in capsys.readouterr().err
