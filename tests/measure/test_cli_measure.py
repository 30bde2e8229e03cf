"""`python -m specviz measure lookup-options` on the tiny pair, and the replay it counts with."""

from __future__ import annotations

import json

import pytest
import torch

from specviz.cli.main import main
from specviz.core.engine import speculative_generate
from specviz.core.settings import GenerationSettings
from specviz.drafters.prompt_lookup import LookupOptions
from specviz.drafters.registry import make_drafter
from specviz.measure.lookup_options import OPTIONS, lookup_passes

SCHEDULE_HEADS = [
    "γ=5: tokens per target forward per prompt",
    "γ=8: tokens per target forward per prompt",
    "γ=5 adaptive: tokens per target forward per prompt",
]


def test_lookup_options_prints_the_answers_then_each_option_per_schedule(
    tiny_loaded: object, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["measure", "lookup-options", "--tasks", "code,story", "--max-new-tokens", "24"]
    assert main(args) == 0
    out = capsys.readouterr().out.splitlines()
    assert sum(line.startswith("--- ") and line.endswith(" tokens:") for line in out) == 2
    heads = [line for line in out if line.startswith("γ=")]
    assert heads == SCHEDULE_HEADS
    first = out.index(SCHEDULE_HEADS[0])
    assert [line.split()[0] for line in out[first + 1 : first + 1 + len(OPTIONS)]] == list(OPTIONS)

    assert main([*args, "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert [answer["new_tokens"] for answer in record["answers"]] == [24, 24]
    assert len(record["rows"]) == len(OPTIONS) * len(SCHEDULE_HEADS)
    for row in record["rows"]:
        # Each pass emits its own token and at most γ copies.
        assert len(row["taus"]) == 2 and all(1 <= tau <= row["gamma"] + 1 for tau in row["taus"])
        assert row["mean_tau"] == pytest.approx(sum(row["taus"]) / 2)


def test_the_replay_counts_passes_on_a_known_answer() -> None:
    prompt, answer = [5, 1, 2, 3, 4], [1, 2, 3, 4, 9]
    # Nothing followed an earlier 4: a plain step emits 1; then 1 occurred before, followed by
    # 2 3 4, all copied and accepted, and the pass adds 9: 2 passes.
    assert lookup_passes(LookupOptions(), 5, False, prompt, answer) == 2
    # With min_ngram 2 the lone 1 is no match: a second plain step emits 2, then "1 2" copies
    # 3 4 and the pass adds 9: 3 passes.
    assert lookup_passes(LookupOptions(min_ngram=2), 5, False, prompt, answer) == 3


@pytest.mark.parametrize("adaptive", [False, True])
def test_the_replay_counts_what_a_real_lookup_run_does(pair: object, adaptive: bool) -> None:
    settings = GenerationSettings(gamma=5, adaptive_gamma=adaptive, max_new_tokens=40)
    prompt = torch.tensor([list(b"def add(a, b): return a + b\ndef add(a, b):")])
    cycles = list(speculative_generate(pair, prompt, settings, make_drafter("lookup", pair)))
    answer = [token.token_id for cycle in cycles for token in cycle.emitted]
    assert len(cycles) < len(answer)  # copies were accepted: not one pass per token
    replayed = lookup_passes(LookupOptions(), 5, adaptive, prompt[0].tolist(), answer)
    assert replayed == len(cycles)


def test_tree_drafting_times_both_ways_and_refuses_a_chain_drafter(
    tiny_loaded: object, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["measure", "tree-drafting", "--drafter", "tree:shape=2x2x1", "--repeats", "2"]
    assert main([*args, "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["growth"] == "shape=2x2x1"
    assert len(record["new_nodes_s"]) == len(record["whole_tree_s"]) == 2
    # The tiny draft computes in float32 with one kernel for any row count: the same tree.
    assert record["same_trees"] == 2 and record["ratio"] > 0
    assert main(args) == 0
    assert "each depth reads its new nodes" in capsys.readouterr().out
    assert main(["measure", "tree-drafting", "--drafter", "draft-model"]) == 2
    assert "tree-drafting times a tree drafter" in capsys.readouterr().err
