"""The draft advisor on tiny models: candidates, measures, ranking, recommendation, memory, CLI."""

from __future__ import annotations

import argparse
import gc
from dataclasses import replace

import pytest
import torch
from tiny_models import TinyPair, tiny_qwen

from specviz.cli.advise import advice_draft_formats, advice_prompts
from specviz.core.events import Totals
from specviz.core.settings import GenerationSettings
from specviz.labs.advisor.advice import (
    Advice,
    AdvicePlan,
    Candidate,
    Verdict,
    advise,
    candidates,
)
from specviz.measure.firmness import FIRM_TOKENS, MIN_TOKENS, Firmness, judge_lab
from specviz.measure.memory import module_bytes, peak_growth
from specviz.measure.spread import Spread
from specviz.models import loader
from specviz.models.allocator import return_freed_memory
from specviz.models.presets import ModelSource, default_preset, load_presets
from specviz.text import UserError

SETTINGS = GenerationSettings(gamma=3, max_new_tokens=10, stop_on_eos=False)
PROMPTS = ["def add(a, b):", "abcabcabcabc"]


def prompt_ids(pair: TinyPair) -> list[torch.Tensor]:
    return [torch.tensor([pair.tokenizer.encode(text)]) for text in PROMPTS]


def other_draft(pair: TinyPair) -> TinyPair:
    """The same target with another draft, standing for the draft at a second format."""
    return TinyPair(tiny_qwen(3), pair.target, pair.tokenizer, pair.eos_token_ids)


def plan_for(pair: TinyPair, **changes: object) -> AdvicePlan:
    plan = AdvicePlan(
        pairs={"none": pair, "int8wo": other_draft(pair)},
        prompt_ids=prompt_ids(pair),
        settings=SETTINGS,
        drafters=["draft-model", "lookup"],
        gammas=(2, 5),
        cost=True,
        warm_up=False,
    )
    return replace(plan, **changes)


@pytest.fixture(scope="module")
def advice(tiny_pair: TinyPair) -> Advice:
    return advise(plan_for(tiny_pair))


def test_candidates_are_each_proposer_at_each_gamma_then_adaptive_then_cost(
    tiny_pair: TinyPair,
) -> None:
    names = [candidate.name for candidate in candidates(plan_for(tiny_pair))]
    assert names == [
        "draft-model[none] γ=2",
        "draft-model[none] γ=5",
        "draft-model[none] γ=adaptive(3)",
        "draft-model[none] γ=cost(≤3)",
        "draft-model[int8wo] γ=2",
        "draft-model[int8wo] γ=5",
        "draft-model[int8wo] γ=adaptive(3)",
        "draft-model[int8wo] γ=cost(≤3)",
        # Lookup drafts with no model, so it is one proposer whatever the draft format.
        "lookup γ=2",
        "lookup γ=5",
        "lookup γ=adaptive(3)",
        "lookup γ=cost(≤3)",
    ]
    # The hybrid drafts with the preset's format (the first) only: the draft model's rows
    # already compare the formats.
    hybrid = candidates(plan_for(tiny_pair, adaptive=False, cost=False, drafters=["hybrid"]))
    assert [candidate.name for candidate in hybrid] == ["hybrid[none] γ=2", "hybrid[none] γ=5"]
    fixed = candidates(plan_for(tiny_pair, adaptive=False, cost=False, drafters=["lookup"]))
    assert [(c.gamma, c.adaptive, c.draft_format) for c in fixed] == [
        (2, False, ""),
        (5, False, ""),
    ]


def test_a_tree_is_measured_at_its_node_budgets_in_place_of_gamma(tiny_pair: TinyPair) -> None:
    plan = plan_for(tiny_pair, drafters=["tree", "tree:depth=3,nodes=5"])
    found = candidates(plan)
    assert [c.name for c in found] == [
        "tree[none] nodes=8",
        "tree[none] nodes=16",
        "tree[none] nodes=32",
        "tree[none] depth=3,nodes=5",  # a spec with options is measured as given
    ]
    assert [c.spec for c in found][:2] == ["tree:nodes=8", "tree:nodes=16"]
    advice = advise(replace(plan, drafters=["tree:nodes=4"], prompt_ids=prompt_ids(tiny_pair)[:1]))
    (verdict,) = advice.verdicts
    assert verdict.to_dict()["size"] == "nodes=4" and verdict.to_dict()["gamma"] is None
    assert verdict.totals.new_tokens > 0


def test_lookahead_is_raced_when_named_with_its_own_options(tiny_pair: TinyPair) -> None:
    """A drafter without a second model is measured as any other: its row reports α and τ from
    its own tree cycles, beside the draft model's chain."""
    plan = plan_for(tiny_pair, drafters=["lookahead", "draft-model"], gammas=(3,))
    plan = replace(plan, adaptive=False, cost=False, prompt_ids=prompt_ids(tiny_pair)[:1])
    advice = advise(plan)
    rows = {verdict.to_dict()["drafter"]: verdict for verdict in advice.verdicts}
    assert set(rows) == {"lookahead", "draft-model"}
    look = rows["lookahead"]
    assert look.totals.new_tokens > 0 and look.complete
    assert look.tau == pytest.approx(look.totals.new_tokens / look.totals.target_forwards)


def test_a_plan_without_drafters_gammas_or_prompts_is_refused(tiny_pair: TinyPair) -> None:
    with pytest.raises(UserError, match="drafter"):
        candidates(plan_for(tiny_pair, drafters=[]))
    with pytest.raises(UserError, match="γ"):
        candidates(plan_for(tiny_pair, gammas=(), adaptive=False, cost=False))
    with pytest.raises(UserError, match="prompt"):
        advise(plan_for(tiny_pair, prompt_ids=[]))


def test_every_candidate_is_measured_over_every_prompt(advice: Advice) -> None:
    assert len(advice.verdicts) == 12 and not advice.stopped and not advice.cut
    assert advice.plain_tokens_per_s > 0 and advice.plain_ttft_s > 0
    for verdict in advice.verdicts:
        # Both prompts decoded to the end: the pooled counters hold 2 × 10 tokens.
        assert verdict.totals.new_tokens == 2 * SETTINGS.max_new_tokens
        assert verdict.complete and verdict.ttft_s > 0
        assert verdict.speedup == pytest.approx(verdict.tokens_per_s / advice.plain_tokens_per_s)
        assert 0.0 <= verdict.alpha <= 1.0
        assert verdict.tau == pytest.approx(
            verdict.totals.new_tokens / verdict.totals.target_forwards
        )


def test_each_run_counts_the_reading_of_the_prompt_by_every_model_it_uses(
    tiny_pair: TinyPair, monkeypatch: pytest.MonkeyPatch
) -> None:
    from specviz.models.prompt_prefills import PromptPrefills

    # Say every model took 10 s to read each prompt: a run of the two prompts (20 tokens) then
    # counts 20 s of reading per model it reads with, however fast the tiny models decode.
    monkeypatch.setattr(PromptPrefills, "seconds", lambda self, model, ids: 10.0)
    plan = plan_for(tiny_pair, adaptive=False, cost=False, gammas=(2,))
    advice = advise(plan)
    rates = {v.candidate.name: v.tokens_per_s for v in advice.verdicts}
    assert 0.5 < advice.plain_tokens_per_s < 1.0  # the target alone: 20 tokens / (20 s + ε)
    assert 0.5 < rates["lookup γ=2"] < 1.0  # no second model
    assert 0.25 < rates["draft-model[none] γ=2"] < 0.5  # the draft reads the prompt too
    assert advice.plain_ttft_s > 10.0


def test_a_spent_budget_measures_each_proposer_once_at_the_presets_gamma_and_skips_the_rest(
    tiny_pair: TinyPair,
) -> None:
    spent = advise(plan_for(tiny_pair, time_budget_s=0.0, cost=False, gammas=(2, 3, 5)))
    # SETTINGS' γ is 3: each proposer is screened there (its first run always runs); the other
    # γ rows are measured only whole, and none fits in a spent budget.
    measured = {verdict.candidate.name for verdict in spent.verdicts}
    assert measured == {"draft-model[none] γ=3", "draft-model[int8wo] γ=3", "lookup γ=3"}
    skipped = {line.removesuffix(", repeat 1: skipped") for line in spent.cut if "skipped" in line}
    assert skipped == {
        f"{proposer} γ={gamma}"
        for proposer in ("draft-model[none]", "draft-model[int8wo]", "lookup")
        for gamma in ("2", "5", "adaptive(3)")
    }


def test_runs_shorter_than_a_ranking_needs_give_no_recommendation(advice: Advice) -> None:
    # 10 new tokens a prompt (SETTINGS): each verdict counts its fewest, and none is ranked.
    assert {v.firmness.level for v in advice.verdicts} == {Firmness.INCONCLUSIVE}
    assert all(v.to_dict()["firmness"] == "inconclusive" for v in advice.verdicts)
    sentence = advice.recommendation()
    assert sentence.startswith(
        f"No recommendation from this: too few tokens to rank: run with at least {MIN_TOKENS} "
        f"new tokens ({FIRM_TOKENS} for a firm result); the shortest run made 10."
    )
    assert "Use " not in sentence and "How firm: inconclusive" in sentence
    assert advice.others_share is None or 0.0 <= advice.others_share <= 1.0


def test_the_ranking_is_recomputed_from_the_records(advice: Advice) -> None:
    ranked = advice.ranked()
    assert sorted(ranked, key=lambda v: v.speedup, reverse=True) == list(ranked)
    assert [v.to_dict()["candidate"] for v in ranked] == [
        row["candidate"] for row in advice.to_dict()["ranked"]
    ]
    winner, runner = advice.winner_and_runner_up()
    assert winner is ranked[0]
    # The runner-up is the best candidate of another proposer, not the winner at another γ.
    assert runner is not None and runner.candidate.proposer != winner.candidate.proposer
    assert all(
        v.speedup <= runner.speedup
        for v in ranked[1:]
        if v.candidate.proposer != winner.candidate.proposer
    )


def test_memory_counts_the_draft_weights_of_the_drafters_that_use_them(
    advice: Advice, tiny_pair: TinyPair
) -> None:
    by_name = {v.candidate.name: v for v in advice.verdicts}
    draft = by_name["draft-model[none] γ=2"].memory_bytes
    lookup = by_name["lookup γ=2"].memory_bytes
    if draft is None or lookup is None:
        pytest.skip("peak memory is not readable on this system")
    assert draft >= module_bytes(tiny_pair.draft)
    assert lookup < module_bytes(tiny_pair.draft)


def verdict(
    name: str,
    proposer: str,
    speedup: float,
    alpha: float = 0.5,
    tokens: int = FIRM_TOKENS,
    share: float | None = 0.02,
) -> Verdict:
    """A measured candidate; by default firm (enough tokens, three repeats within 2%, a quiet
    CPU)."""
    totals = Totals(10, 4, 8, 8, int(8 * alpha), 1.0, 0.0)
    candidate = Candidate(proposer, int(name), False, "")
    repeats = Spread(speedup, 0.99 * speedup, 1.01 * speedup, 3)
    firmness = judge_lab(tokens, repeats, share)
    return Verdict(candidate, totals, 5.0 * speedup, speedup, 0.1, 0, True, firmness)


def test_the_recommendation_names_winner_and_runner_up_with_their_numbers() -> None:
    advice = Advice(5.0, 0.1, (verdict("3", "lookup", 1.4), verdict("5", "draft-model", 1.9)))
    sentence = advice.recommendation()
    assert sentence.startswith("Use draft-model γ=5: 1.90×")
    assert "Runner-up: lookup γ=3, 1.40×" in sentence
    assert "tell apart" not in sentence


def test_a_runner_up_within_five_percent_is_called_a_tie() -> None:
    close = Advice(5.0, 0.1, (verdict("8", "lookup", 3.30), verdict("8", "hybrid", 3.45)))
    sentence = close.recommendation()
    assert sentence.startswith("Use hybrid γ=8: 3.45×")
    assert "lookup γ=8, 3.30×" in sentence and "within 5% of the winner" in sentence
    apart = Advice(5.0, 0.1, (verdict("8", "lookup", 3.20), verdict("8", "hybrid", 3.45)))
    assert "of the winner" not in apart.recommendation()
    assert "区別できません" in close.recommendation("ja")


def test_when_nothing_beats_plain_decoding_the_advice_says_so() -> None:
    advice = Advice(5.0, 0.1, (verdict("3", "lookup", 0.8), verdict("5", "draft-model", 0.9)))
    sentence = advice.recommendation()
    assert sentence.startswith("Use plain decoding (5.00 tok/s)")
    assert "draft-model γ=5, 0.90×" in sentence and "lookup γ=3, 0.80×" in sentence
    only = Advice(5.0, 0.1, (verdict("5", "lookup", 0.9),)).recommendation()
    assert only.startswith("Use plain decoding") and "the only candidate" in only
    assert "nothing to recommend" in Advice(5.0, 0.1, ()).recommendation()


def test_peak_growth_sees_a_large_allocation() -> None:
    """The peak is the process's: memory another thread frees during the block (a server an
    earlier test in this process closed, a model being collected) can hide a growth, so the
    block is measured up to three times, after a collection, and one of them must see it. The
    freed memory the C allocator still holds is handed back first: a block could otherwise be
    served from pages already resident (earlier tests in this process free models and keep a
    large mmap threshold), and the resident set would not grow at all."""
    seen = []
    for _ in range(3):
        gc.collect()
        return_freed_memory()
        with peak_growth(torch.device("cpu")) as growth:
            # 256 MiB, touched: more than the freed memory the app's allocator keeps resident
            # (a 64 MiB trim threshold, set by earlier tests in this process).
            block = torch.ones(256 * 2**20, dtype=torch.uint8)
            del block
        if growth.bytes is None:
            pytest.skip("peak memory is not readable on this system")
        seen.append(growth.bytes)
        if growth.bytes >= 160 * 2**20:
            break
    assert max(seen) >= 160 * 2**20, seen


def args(**values: object) -> argparse.Namespace:
    defaults = {"prompt": None, "prompts_file": None, "task": None, "prompts_per_task": 1}
    return argparse.Namespace(**(defaults | values))


def test_prompts_come_from_flags_a_file_or_a_task_group(tmp_path) -> None:
    preset = default_preset(load_presets())
    assert advice_prompts(args(), preset) == list(preset.prompts["code"][:1])
    assert advice_prompts(args(prompt=["hi"]), preset) == ["hi"]
    file = tmp_path / "prompts.txt"
    file.write_text("first prompt\nstill first\n\nsecond\n\n\n", encoding="utf-8")
    assert advice_prompts(args(prompts_file=str(file)), preset) == [
        "first prompt\nstill first",
        "second",
    ]
    with pytest.raises(UserError, match="no task group 'poetry'"):
        advice_prompts(args(task="poetry"), preset)
    with pytest.raises(UserError, match="cannot read"):
        advice_prompts(args(prompts_file=str(tmp_path / "missing.txt")), preset)


def test_a_toml_prompts_file_gives_its_task_group_or_all_its_prompts(tmp_path) -> None:
    preset = default_preset(load_presets())
    file = tmp_path / "mine.toml"
    file.write_text('editing = ["fix\\n\\nthis", "and this"]\ncode = ["write f"]\n')
    # Blank lines inside a prompt stay in it.
    assert advice_prompts(
        args(prompts_file=str(file), task="editing", prompts_per_task=5), preset
    ) == [
        "fix\n\nthis",
        "and this",
    ]
    assert advice_prompts(args(prompts_file=str(file)), preset) == [
        "write f",
        "fix\n\nthis",
        "and this",
    ]
    with pytest.raises(UserError, match="no task group 'story'"):
        advice_prompts(args(prompts_file=str(file), task="story"), preset)


def test_draft_formats_are_the_presets_unless_named_and_unknown_ones_are_refused() -> None:
    preset = default_preset(load_presets())
    ns = argparse.Namespace(device="cpu", draft_formats=None)
    assert advice_draft_formats(ns, preset) == [preset.draft_quantization]
    ns.draft_formats = "none,int8,int8wo,int4wo,int4dual"
    formats = advice_draft_formats(ns, preset)
    assert formats[0] == preset.draft_quantization == "int4dual"
    assert set(formats) == {"none", "int8", "int8wo", "int4wo", "int4dual"}
    ns.draft_formats = "none,fp4"
    with pytest.raises(UserError, match="fp4"):
        advice_draft_formats(ns, preset)


def test_the_setup_loads_each_draft_format_once_naming_auto_by_the_format_it_chose() -> None:
    from types import SimpleNamespace

    from specviz.labs.advisor.setup import format_pairs

    preset = replace(default_preset(load_presets()), draft_quantization="auto")
    chose = SimpleNamespace(cost_report=SimpleNamespace(draft_format="int8wo"))
    unmeasured = SimpleNamespace(cost_report=None)
    asked: list[str] = []

    def load(formatted: object) -> object:
        asked.append(formatted.draft_quantization)  # type: ignore[attr-defined]
        return chose if asked[-1] == "auto" else unmeasured

    # The CLI: every format loaded, "auto" named by the format its step costs chose.
    pairs = format_pairs(preset, ["auto", "none"], load)  # type: ignore[arg-type]
    assert pairs == {"int8wo": chose, "none": unmeasured} and asked == ["auto", "none"]
    # The tab: the preset's own pair is loaded already, and only the other format is loaded.
    asked.clear()
    pairs = format_pairs(preset, ["none", "int8wo"], load, {"int8wo": chose})  # type: ignore[arg-type, dict-item]
    assert list(pairs) == ["none", "int8wo"] and pairs["int8wo"] is chose and asked == ["none"]


class VocabTokenizer:
    def __init__(self, vocab: dict[str, int]) -> None:
        self.vocab = vocab

    def get_vocab(self) -> dict[str, int]:
        return dict(self.vocab)


def test_the_tokenizer_check_says_why_two_vocabularies_differ(monkeypatch) -> None:
    vocabularies = {
        "a": {"x": 0, "y": 1},
        "b": {"x": 0, "y": 1},
        "c": {"x": 1, "y": 0},
        "d": {"x": 0},
    }
    monkeypatch.setattr(
        loader, "load_tokenizer", lambda source, *_: VocabTokenizer(vocabularies[source.ref])
    )

    def difference(first: str, second: str) -> str | None:
        found = loader.vocabulary_difference(
            ModelSource("local", first), ModelSource("local", second)
        )
        return None if found is None else found.text()

    assert difference("a", "b") is None
    assert "give the token 'x' different ids (0/1)" in str(difference("a", "c"))
    assert "2/1 tokens" in str(difference("a", "d"))


def test_the_panel_ranks_and_the_chart_groups_by_proposer(advice: Advice) -> None:
    from specviz.labs.advisor.charts import advice_chart
    from specviz.labs.advisor.panel import advice_html

    html_view = advice_html(advice)
    assert advice.recommendation().split(":")[0] in html_view
    assert html_view.count("<tr>") == 1 + len(advice.verdicts)  # header + one row each
    fig = advice_chart(advice)
    names = [trace.name for trace in fig.data]
    assert names == ["draft-model[none]", "draft-model[int8wo]", "lookup", names[-1]]
    assert "break-even" in names[-1] and list(fig.data[-1].y) == [1.0, 1.0]
    for trace in fig.data[:-1]:
        own = [v for v in advice.verdicts if v.candidate.proposer == trace.name]
        assert list(trace.x) == [v.alpha for v in own]
        assert list(trace.y) == [v.speedup for v in own]
    assert "Press Measure" in advice_html(None)
    assert advice_chart(None).layout.annotations  # the empty chart says what will appear


def test_candidate_names_are_escaped_in_the_panel() -> None:
    from specviz.labs.advisor.panel import advice_html

    hostile = Advice(5.0, 0.1, (verdict("3", "<script>x</script>", 1.2),))
    assert "<script>" not in advice_html(hostile) and "&lt;script&gt;" in advice_html(hostile)


def test_the_advise_command_measures_the_presets_format_and_prints_json(
    tiny_pair: TinyPair, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from commands import EncodingPair

    from specviz.cli import advise as advise_cli
    from specviz.cli.main import main

    pair = EncodingPair(
        tiny_pair.draft, tiny_pair.target, tiny_pair.tokenizer, tiny_pair.eos_token_ids
    )
    pair.cost_report = None  # type: ignore[attr-defined]
    loaded: list[str] = []

    def load(args: argparse.Namespace, preset: object, cache: object = None) -> EncodingPair:
        loaded.append(preset.draft_quantization)  # type: ignore[attr-defined]
        return pair

    monkeypatch.setattr(advise_cli, "load_pair_for", load)
    code = main(
        [
            "advise", "--prompt", "abcabcabc", "--max-new-tokens", "6", "--gammas", "2",
            "--drafters", "draft-model,lookup", "--json",
        ]
    )  # fmt: skip
    assert code == 0, capsys.readouterr().err
    assert loaded == [default_preset(load_presets()).draft_quantization]  # one format by default
    report = json.loads(capsys.readouterr().out)
    names = sorted(row["candidate"] for row in report["ranked"])
    # Each drafter at γ = 2 and adaptive; no cost-schedule rows unless asked for.
    assert len(names) == 4 and not any("cost" in name for name in names)
    # Six tokens a run are too few to rank: the advice says what would give a recommendation.
    assert report["recommendation"].startswith("No recommendation from this: too few tokens")
    assert {row["firmness"] for row in report["ranked"]} == {"inconclusive"}
    assert all(row["tokens_per_s"] > 0 for row in report["ranked"])
    code = main(
        [
            "advise", "--prompt", "abcabcabc", "--max-new-tokens", "6", "--gammas", "2",
            "--drafters", "lookup", "--cost-schedule", "--json",
        ]
    )  # fmt: skip
    assert code == 0
    names = [row["candidate"] for row in json.loads(capsys.readouterr().out)["ranked"]]
    assert sorted(names) == ["lookup γ=2", "lookup γ=adaptive(5)", "lookup γ=cost(≤5)"]


def test_llama_cpps_lanes_are_measured_beside_the_candidates_and_not_ranked(
    tiny_pair: TinyPair, tmp_path
) -> None:
    from types import SimpleNamespace

    from llama_fakes import fake_llama_binary

    from specviz.engines.llama_build import BuildInfo
    from specviz.labs.advisor.panel import advice_html
    from specviz.labs.advisor.setup import llama_engine_lanes
    from specviz.measure.llama_cpp import LlamaLanes

    for name in ("t.gguf", "d.gguf"):
        (tmp_path / name).touch()
    preset = SimpleNamespace(
        target=ModelSource("gguf", str(tmp_path / "t.gguf")),
        draft=ModelSource("gguf", str(tmp_path / "d.gguf")),
    )
    binary = fake_llama_binary(tmp_path)
    with LlamaLanes(BuildInfo(str(binary), "given"), threads=1) as lanes:
        engines = llama_engine_lanes(lanes, preset, SETTINGS, (2, 5))
        assert [lane.name for lane in engines] == [
            "llama.cpp plain",
            "llama.cpp γ=2",
            "llama.cpp γ=5",
        ]
        plan = plan_for(tiny_pair, drafters=["lookup"], gammas=(2,), cost=False, engines=engines)
        advice = advise(plan)
    assert [v.lane.name for v in advice.engines] == [lane.name for lane in engines]
    plain, *speculative = advice.engines
    assert plain.alpha is None and plain.own_speedup is None
    for verdict in speculative:
        assert verdict.alpha == 0.5  # the stand-in accepts half its drafts
        assert verdict.own_speedup == pytest.approx(verdict.tokens_per_s / plain.tokens_per_s)
        assert verdict.speedup == pytest.approx(verdict.tokens_per_s / advice.plain_tokens_per_s)
    # The ranking and the recommendation are specviz's candidates alone.
    assert all(not v.candidate.name.startswith("llama.cpp") for v in advice.ranked())
    page = advice_html(advice)
    assert "Beside llama.cpp" in page and "llama.cpp γ=5" in page
    assert advice.to_dict()["engines"][0]["lane"] == "llama.cpp plain"
