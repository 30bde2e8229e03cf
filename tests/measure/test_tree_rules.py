"""The two exact rules priced on the same trees: each expectation equals the mean of its own
rule's sampled passes, recursive sampling's also a closed form, and the command on the tiny pair."""

from __future__ import annotations

import json

import pytest
import torch
from medusa_models import fitted_heads
from tiny_models import TinyPair

from specviz.cli.main import main
from specviz.core.sampling import Sampler
from specviz.core.settings import GenerationSettings
from specviz.core.tree import DraftTree, positive_residual, verify_tree_recursive
from specviz.core.tree_engine import tree_stream
from specviz.core.tree_traversal import verify_tree_traversal
from specviz.drafters.medusa import MedusaDrafter, MedusaOptions
from specviz.drafters.registry import make_drafter
from specviz.measure.tree_rules import (
    RulePricer,
    check_rules_settings,
    recursive_expected_tokens,
    traversal_expected_tokens,
    tree_rules,
)
from specviz.text import UserError

V = 5


def _rows(tree: DraftTree, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Random q and p rows (M + 1, V) in float64, every token possible under q."""
    generator = torch.Generator().manual_seed(seed)
    q, p = (
        torch.rand(tree.size + 1, V, generator=generator, dtype=torch.float64) ** 2 + 0.02
        for _ in "qp"
    )
    return q / q.sum(dim=1, keepdim=True), p / p.sum(dim=1, keepdim=True)


# Two children at the root, two under the first, one under each of those: distinct tokens
# among siblings, as draws without replacement give.
TREE = DraftTree((0, 1, 2, 3, 4, 0), (-1, -1, 0, 0, 2, 3))


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("rule", ["recursive", "traversal"])
def test_each_expectation_is_its_rules_mean_tokens_a_pass(seed: int, rule: str) -> None:
    q_rows, p_rows = _rows(TREE, seed)
    priced = {"recursive": recursive_expected_tokens, "traversal": traversal_expected_tokens}[rule]
    verify = {"recursive": verify_tree_recursive, "traversal": verify_tree_traversal}[rule]
    sampler = Sampler(1.0, 0, 1.0, torch.Generator().manual_seed(seed))
    lengths = torch.tensor(
        [len(verify(TREE, q_rows, p_rows, sampler).path) + 1.0 for _ in range(6000)]
    )
    error = float(lengths.std()) / len(lengths) ** 0.5
    assert priced(TREE, q_rows, p_rows) == pytest.approx(float(lengths.mean()), abs=4 * error)


def test_recursive_sampling_at_one_level_is_the_closed_form() -> None:
    """Two children x, y at the root: 1 + c_x + (1 − c_x) · c_y, c_y from the residual."""
    tree = DraftTree((1, 3), (-1, -1))
    q_rows, p_rows = _rows(tree, 4)
    p, q = p_rows[0], q_rows[0]
    c_x = min(1.0, float(p[1] / q[1]))
    rest_q = q.clone()
    rest_q[1] = 0
    rest_q /= rest_q.sum()
    c_y = min(1.0, float(positive_residual(p, q)[3] / rest_q[3]))
    want = 1 + c_x + (1 - c_x) * c_y
    assert recursive_expected_tokens(tree, q_rows, p_rows) == pytest.approx(want, abs=1e-12)
    # one level: the leaf-to-root walk is recursive sampling
    assert traversal_expected_tokens(tree, q_rows, p_rows) == pytest.approx(want, abs=1e-12)


def test_every_tree_of_a_run_is_priced_per_prompt_and_pooled_per_task(pair: object) -> None:
    settings = GenerationSettings(temperature=1.0, max_new_tokens=10, seed=0)
    prompts = [("code", torch.tensor([list(b"def add(a, b):")])), ("code", torch.tensor([[1, 2]]))]
    rows = tree_rules(pair, prompts, settings, "tree:nodes=6,depth=3", seeds=2)  # type: ignore[arg-type]
    first, second, pooled = rows
    assert [row.prompt for row in rows] == [1, 2, 0] and all(row.seeds == 2 for row in rows)
    assert pooled.trees == first.trees + second.trees and first.trees >= 2
    assert pooled.new_tokens == first.new_tokens + second.new_tokens <= 40  # EOS may end one
    for row in rows:
        assert 1.0 <= row.recursive <= 7.0 and 1.0 <= row.traversal <= 7.0
        assert row.recursive_ms > 0 and row.traversal_ms > 0
    assert min(first.traversal, second.traversal) <= pooled.traversal
    assert pooled.traversal <= max(first.traversal, second.traversal)


def test_greedy_other_drafters_and_no_seeds_are_refused(pair: object) -> None:
    prompts = [("code", torch.tensor([[1, 2]]))]
    greedy = GenerationSettings(temperature=0.0)
    sampled = GenerationSettings(temperature=1.0)
    for settings, drafter, seeds in (
        (greedy, "tree", 1),
        (sampled, "draft-model", 1),
        (sampled, "medusa", 1),  # the heads' top guesses chosen: no tree drawn
        (sampled, "tree", 0),
    ):
        with pytest.raises(UserError):
            tree_rules(pair, prompts, settings, drafter, seeds)  # type: ignore[arg-type]


def test_the_command_prints_each_prompt_and_the_task(
    tiny_loaded: object, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["measure", "tree-rules", "--tasks", "code", "--max-new-tokens", "8", "--seeds", "1"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "siblings in turn" in out and "leaves up" in out and " all " in out
    assert main([*args, "--json"]) == 0
    records = json.loads(capsys.readouterr().out)
    assert records[-1]["prompt"] == 0 and "gain" in records[-1]
    assert main([*args, "--temperature", "0"]) == 2
    assert "give --temperature above 0" in capsys.readouterr().err
    assert main([*args, "--drafter", "lookup"]) == 2
    assert "tree-rules prices drawn trees" in capsys.readouterr().err


def test_pricing_and_timing_leave_the_runs_dice_alone(pair: object) -> None:
    """The run priced emits what the same run unpriced emits: the rules timed on dice of their
    own, the drafter's rule deciding with the run's."""
    settings = GenerationSettings(temperature=1.0, max_new_tokens=16, seed=3, stop_on_eos=False)
    prompt = torch.tensor([list(b"def add(a, b):")])

    def emitted(rule: RulePricer | None) -> list[int]:
        drafter = make_drafter("tree:nodes=6,depth=3", pair)  # type: ignore[arg-type]
        cycles = tree_stream(pair, prompt, settings, drafter, rule)  # type: ignore[arg-type]
        return [token.token_id for cycle in cycles for token in cycle.emitted]

    pricer = RulePricer("traversal")
    assert emitted(pricer) == emitted(None)
    assert len(pricer.recursive) == len(pricer.seconds["traversal"]) >= 2


def test_medusas_drawn_trees_are_priced_as_the_tree_drafters_are(pair: TinyPair) -> None:
    """medusa:q=heads passes the command's check with its own rule; its trees, drawn from the
    heads, priced under both rules without changing what the run emits."""
    settings = GenerationSettings(temperature=1.0, max_new_tokens=16, seed=3, stop_on_eos=False)
    assert check_rules_settings(settings, "medusa:q=heads", 1) == "traversal"
    assert check_rules_settings(settings, "medusa:q=heads,rule=recursive", 1) == "recursive"
    heads = fitted_heads(pair.target, count=3)
    prompt = torch.tensor([list(b"def add(a, b):")])

    def emitted(rule: RulePricer | None) -> list[int]:
        drafter = MedusaDrafter(heads, MedusaOptions(nodes=6, topk=3, q="heads"))
        cycles = tree_stream(pair, prompt, settings, drafter, rule)
        return [token.token_id for cycle in cycles for token in cycle.emitted]

    pricer = RulePricer("traversal")
    assert emitted(pricer) == emitted(None)
    assert len(pricer.recursive) >= 2
    assert all(1.0 <= value <= 7.0 for value in (*pricer.recursive, *pricer.traversal))
