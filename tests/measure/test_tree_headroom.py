"""The tree headroom's counts: each rule's rank rates against closed forms built from the engine's
own tree rule (specviz.core.tree), the bound above what recursive sampling keeps, and the command."""

from __future__ import annotations

import json
import math

import pytest
import torch

from specviz.cli.main import main
from specviz.core.sampling import Sampler
from specviz.core.settings import GenerationSettings
from specviz.core.tree import positive_residual, without
from specviz.labs.speedup.tree_headroom import (
    bound_kept,
    drawn_rank_counts,
    top_rank_chances,
    tree_headroom,
)
from specviz.text import UserError

P = torch.tensor([0.40, 0.25, 0.15, 0.10, 0.06, 0.04])
Q = torch.tensor([0.10, 0.45, 0.05, 0.25, 0.10, 0.05])


def _sampler(seed: int = 0) -> Sampler:
    return Sampler(1.0, 0, 1.0, torch.Generator().manual_seed(seed))


def _kept_within(p: torch.Tensor, q: torch.Tensor, ranks: int) -> float:
    """Exactly, the chance recursive rejection sampling keeps one of *ranks* children drawn from q
    without replacement, summed over every order of draws with core.tree's own updates."""
    if ranks == 0 or float(q.sum()) <= 0:
        return 0.0
    total = 0.0
    for token in range(len(q)):
        q_at = float(q[token])
        if q_at <= 0:
            continue
        chance = min(1.0, float(p[token]) / q_at)
        rest = _kept_within(positive_residual(p, q), without(q, token), ranks - 1)
        total += q_at * (chance + (1.0 - chance) * rest)
    return total


def _inclusion(q: torch.Tensor, ranks: int) -> torch.Tensor:
    """Exactly, each token's chance to be among *ranks* draws from q without replacement."""
    if ranks == 0:
        return torch.zeros_like(q)
    out = torch.zeros_like(q)
    for token in range(len(q)):
        if float(q[token]) <= 0:
            continue
        after = _inclusion(without(q, token), ranks - 1)
        after[token] = 1.0
        out += float(q[token]) * after
    return out


@pytest.mark.parametrize("ranks", [1, 2, 3])
def test_drawn_counts_keep_what_recursive_sampling_keeps(ranks: int) -> None:
    draws = 40_000
    kept, tested = drawn_rank_counts(P, Q, ranks, draws, _sampler())
    assert tested[0] == draws
    # Each rank is tested exactly when every elder sibling lost.
    assert all(tested[r] == tested[r - 1] - kept[r - 1] for r in range(1, ranks))
    expected = _kept_within(P, Q, ranks)
    share = sum(kept) / draws
    error = math.sqrt(expected * (1 - expected) / draws)
    assert abs(share - expected) < 4 * error, (share, expected)


def test_the_first_rank_keeps_the_overlap_of_p_and_q() -> None:
    kept, _ = drawn_rank_counts(P, Q, 1, 40_000, _sampler(1))
    overlap = float(torch.minimum(P, Q).sum())  # Σ min(p, q) = 0.61
    assert abs(kept[0] / 40_000 - overlap) < 4 * math.sqrt(overlap * (1 - overlap) / 40_000)


def test_top_picks_are_tested_one_hot_in_the_drafts_order() -> None:
    kept, tested = top_rank_chances(P, Q, 3)
    # The draft's order is tokens 1, 3, then 0 and 4 tie (0.10): p 0.25, 0.10, then one of them.
    assert kept[:2] == pytest.approx([0.25, 0.10])
    assert tested == pytest.approx([1.0, 0.75, 0.65])


def test_the_bound_is_the_overlap_with_the_inclusion_chances_and_bounds_the_rule() -> None:
    ranks = 3
    bounds = bound_kept(P, Q, ranks, 20_000, _sampler(2))
    # One child: exactly Σ min(p, q), no draws involved.
    assert bounds[0] == pytest.approx(float(torch.minimum(P, Q).sum()), abs=1e-6)
    for k in range(1, ranks + 1):
        exact = float(torch.minimum(P, _inclusion(Q, k)).sum())
        assert bounds[k - 1] == pytest.approx(exact, abs=0.01)
        # No exact rule beats it, recursive sampling included; with every token drawn, 1.
        assert _kept_within(P, Q, k) <= exact + 1e-9
    assert bound_kept(P, Q, len(P), 200, _sampler(3))[-1] == pytest.approx(1.0, abs=1e-6)


def test_headroom_on_the_tiny_pair_counts_every_rule(pair: object) -> None:
    settings = GenerationSettings(gamma=3, temperature=1.0, max_new_tokens=12, seed=0)
    prompts = [("code", torch.tensor([list(b"def add(a, b):")])), ("code", torch.tensor([[1, 2]]))]
    (report,) = tree_headroom(
        pair, prompts, settings, nodes=6, draft_temperatures=(1.0, 0.5), draws=200, support=64
    )
    assert report.prompts == 2 and 2 <= report.positions <= 24
    assert [(row.rule, row.draft_temperature) for row in report.rows] == [
        ("drawn", 1.0),
        ("drawn", 0.5),
        ("top", 1.0),
        ("bound", 1.0),
    ]
    for row in report.rows:
        assert all(0.0 <= rate <= 1.0 for rate in row.rates)
        assert 1.0 <= row.chain_tau <= 4.0 and row.tree_tau >= 1.0
    drawn, bound = report.rows[0], report.rows[-1]
    assert bound.tree_tau >= drawn.tree_tau - 0.05
    assert report.chain_as_drawn == drawn.chain_tau


def test_headroom_refuses_greedy_and_bad_draft_temperatures(pair: object) -> None:
    prompts = [("code", torch.tensor([[1, 2]]))]
    with pytest.raises(UserError):
        tree_headroom(pair, prompts, GenerationSettings(temperature=0.0))
    with pytest.raises(UserError):
        tree_headroom(pair, prompts, GenerationSettings(temperature=1.0), draft_temperatures=(0,))


def test_the_command_prints_each_rule_and_refuses_greedy(
    tiny_loaded: object, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["measure", "tree-headroom", "--tasks", "code", "--max-new-tokens", "8", "--draws", "50"]
    assert main([*args, "--draft-temperatures", "1,0.7"]) == 0
    out = capsys.readouterr().out
    for name in ("drawn, draft T x 1", "drawn, draft T x 0.7", "top picks", "any exact rule"):
        assert name in out
    assert main([*args, "--json"]) == 0
    (record,) = json.loads(capsys.readouterr().out)
    assert record["task"] == "code" and len(record["rows"]) == 5
    assert main([*args, "--temperature", "0"]) == 2
    assert "give --temperature above 0" in capsys.readouterr().err
    for bad in ("warm", "1,-2", "nan", ""):
        assert main([*args, "--draft-temperatures", bad]) == 2
        assert "draft temperatures are numbers above 0" in capsys.readouterr().err
    assert main([*args, "--draws", "0"]) == 2
    assert "draws must be at least 1" in capsys.readouterr().err
