"""`python -m specviz measure ...` and the package functions under it, on tiny models."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from commands import EncodingPair
from tiny_models import eos_heavy_pair, tiny_qwen

from specviz.cli import measure as measure_cli
from specviz.cli.main import main
from specviz.core.cost_model import StepCosts
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
from specviz.measure.stop_rules import RuleCount, StopRuleRow, count_stop_rules, overall
from specviz.text import UserError

PROMPT = torch.tensor([list(b"def fibonacci(n):")])


def prompts_file(folder: Path, text: str) -> Path:
    """A --prompts-file in *folder* holding *text* (TOML)."""
    path = folder / "prompts.toml"
    path.write_text(text)
    return path


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
        assert (per_token.rule, cumulative.rule) == ("per-token", "+cumulative 0.5")
        for count in row.rules:
            work = count.target_passes + 0.5 * count.draft_forwards
            assert count.tokens_per_work == pytest.approx(count.new_tokens / work)
        # A stricter stop never drafts more.
        assert cumulative.draft_forwards <= per_token.draft_forwards


def test_stop_rules_count_each_threshold_asked_for(pair: EncodingPair) -> None:
    # No per-token stop, so that only the cumulative stop ends a draft before γ.
    settings = GenerationSettings(max_new_tokens=10, stop_on_eos=False)
    gammas = ((5, False),)
    rows = count_stop_rules(pair, [("code", PROMPT)], settings, 0.5, gammas, thresholds=(0.9, 0.5))
    assert [count.rule for count in rows[0].rules] == [
        "per-token",
        "+cumulative 0.9",
        "+cumulative 0.5",
    ]
    # Each threshold's counts are those of a run with that threshold alone.
    for count in rows[0].rules[1:]:
        stop = float(count.rule.split()[1])
        alone = count_stop_rules(pair, [("code", PROMPT)], settings, 0.5, gammas, (stop,))
        assert alone[0].rules[1] == count
    # At 0.9 the stop bites: it drafts less than the per-token stop alone.
    assert rows[0].rules[1].draft_forwards < rows[0].rules[0].draft_forwards
    for wrong in ((0.0,), (1.0,), (0.2, -0.1)):
        with pytest.raises(UserError):
            count_stop_rules(pair, [("code", PROMPT)], settings, 0.5, gammas, wrong)
    # Without thresholds the settings' own stop is counted, and it must be one.
    with pytest.raises(UserError):
        count_stop_rules(pair, [("code", PROMPT)], settings, 0.5, gammas)


def test_stop_rules_command(tiny_loaded: EncodingPair, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["measure", "stop-rules", "--tasks", "code", "--max-new-tokens", "6"]
    # The tiny preset has no cumulative stop of its own: the thresholds must be named.
    assert main(args) == 2
    assert "needs --thresholds" in capsys.readouterr().err
    assert main([*args, "--thresholds", "0.3,0.1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    # A pair loaded without step costs is counted at the default draft cost.
    assert lines[0].endswith(f"tokens / (P + {measure_cli.DEFAULT_DRAFT_COST:.3f} D)")
    assert "cumulative 0.3, 0.1;" in lines[0]
    assert len(lines) == 6 and lines[1].startswith("code")
    assert "+cumulative 0.3 P" in lines[1] and "+cumulative 0.1 P" in lines[1]
    assert lines[-1].startswith("geometric mean over 4 rows: per-token ")
    assert "+cumulative 0.3 " in lines[-1] and "+cumulative 0.1 " in lines[-1]
    for wrong in ("0.2,x", "1.5", "0"):
        assert main([*args, "--thresholds", wrong]) == 2
        assert "between 0 and 1" in capsys.readouterr().err
    assert main(["measure", "stop-rules", "--tasks", "poetry"]) == 2
    assert main([*args, "--cost", "-1", "--thresholds", "0.2"]) == 2


def test_stop_rules_command_counts_every_prompt_of_a_file_at_the_measured_cost(
    tiny_loaded: EncodingPair,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    prompts = prompts_file(
        tmp_path, 'code = ["def add(a, b):", "def mul(a, b):"]\nstory = ["Once"]\n'
    )
    monkeypatch.setattr(tiny_loaded, "step_costs", StepCosts((1.0, 1.0), 0.25, 0.1), raising=False)
    args = ["measure", "stop-rules", "--prompts-file", str(prompts), "--max-new-tokens", "4"]
    args += ["--thresholds", "0.2"]
    assert main(args) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith("tokens / (P + 0.250 D)")  # the draft cost measured at load
    labels = [line.split()[0:2] for line in lines[1:-1]]
    assert [label for label in labels if label[0] == "code"] == [["code", "1"]] * 4 + [
        ["code", "2"]
    ] * 4
    assert sum(label[0] == "story" for label in labels) == 4  # one prompt: no number
    assert lines[-1].startswith("geometric mean over 12 rows")
    assert main([*args, "--tasks", "explanation"]) == 2  # not in the file


def test_overall_is_each_rules_geometric_mean() -> None:
    def row(per_token: float, cumulative: float) -> StopRuleRow:
        counts = (
            RuleCount("per-token", 1, 1, 1, per_token),
            RuleCount("+cumulative 0.2", 1, 1, 1, cumulative),
            RuleCount("+cumulative 0.1", 1, 1, 1, cumulative * 2),
        )
        return StopRuleRow("code", "5", counts)

    assert overall([row(1.0, 2.0), row(4.0, 2.0)]) == pytest.approx((2.0, 2.0, 4.0))
    assert overall([row(3.0, 1.5)]) == pytest.approx((3.0, 1.5, 3.0))
    with pytest.raises(ValueError):
        overall([])


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
    assert sum(passes) == sum(cycle.draft_len + 1 for cycle in cycles)
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


def test_compare_command_decodes_the_groups_first_prompt_of_a_file(
    tiny_loaded: EncodingPair,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    prompts = prompts_file(
        tmp_path, 'rewriting = ["Make it formal: hi there", "Make it short: hello"]\n'
    )
    encoded: list[str] = []
    encode = tiny_loaded.encode_prompt

    def recording(text: str, chat: bool = True) -> torch.Tensor:
        encoded.append(text)
        return encode(text, chat)

    monkeypatch.setattr(tiny_loaded, "encode_prompt", recording)
    args = ["measure", "compare-transformers", "--prompts-file", str(prompts), "--gamma", "3"]
    assert main([*args, "--max-new-tokens", "4"]) == 0
    assert encoded == ["Make it formal: hi there"]
    assert "specviz" in capsys.readouterr().out
    assert main([*args, "--task", "code"]) == 2  # the file has no code prompt
