"""The acceptance rule, the residual and the probability transform, on hand-built distributions.

Hand-built p and q make the expected accepted count and tokens known without a seed.
"""

from __future__ import annotations

from typing import Any

import pytest
import torch
from torch.overrides import TorchFunctionMode

from specviz.core.sampling import (
    Sampler,
    acceptance_probs,
    emission_distribution,
    logits_to_probs,
    residual_after_one_hot,
    residual_distribution,
    verify_greedy,
    verify_sampled,
)

V = 6


def sampler(temperature: float = 1.0, seed: int = 0) -> Sampler:
    return Sampler(temperature, 0, 1.0, torch.Generator().manual_seed(seed))


def one_hot(index: int, size: int = V) -> torch.Tensor:
    row = torch.zeros(size)
    row[index] = 1.0
    return row


def test_p_equal_q_accepts_every_draft_and_adds_the_bonus() -> None:
    dist = torch.tensor([0.1, 0.2, 0.3, 0.4, 0.0, 0.0])
    q = dist.repeat(3, 1)
    p = torch.stack([dist, dist, dist, one_hot(5)])  # the bonus position is one-hot on token 5
    verdict = verify_sampled(
        torch.tensor([3, 0, 2]), q, p, torch.tensor([0.99, 0.99, 0.99]), sampler()
    )
    assert verdict.accepted_len == 3
    assert verdict.next_token == 5
    assert verdict.accept_probs.tolist() == [1.0, 1.0, 1.0]


def test_one_hot_draft_is_rejected_where_target_disagrees_and_replaced_by_target_choice() -> None:
    # Draft is certain of 1, 1, 4; target is certain of 1, then 2.
    q = torch.stack([one_hot(1), one_hot(1), one_hot(4)])
    p = torch.stack([one_hot(1), one_hot(2), one_hot(0), one_hot(0)])
    verdict = verify_sampled(
        torch.tensor([1, 1, 4]), q, p, torch.tensor([0.5, 0.0, 0.0]), sampler()
    )
    assert verdict.accepted_len == 1  # p(1)/q(1) = 1 passes; p(1)/q(1) = 0 at position 2 fails
    assert verdict.next_token == 2  # the residual max(0, p - q) is all on token 2
    assert torch.equal(verdict.next_dist, one_hot(2))


def test_disjoint_supports_always_reject_and_resample_from_p() -> None:
    q = torch.tensor([[0.5, 0.5, 0.0, 0.0, 0.0, 0.0]])
    p = torch.tensor([[0.0, 0.0, 0.25, 0.75, 0.0, 0.0]] * 2)
    verdict = verify_sampled(torch.tensor([0]), q, p, torch.tensor([0.0]), sampler())
    assert verdict.accepted_len == 0
    assert verdict.accept_probs.item() == 0.0
    assert torch.allclose(verdict.next_dist, p[0])
    assert verdict.next_token in (2, 3)


def test_acceptance_ratio_is_p_over_q_and_u_decides() -> None:
    q = torch.tensor([[0.6, 0.4, 0, 0, 0, 0]])
    p = torch.tensor([[0.3, 0.7, 0, 0, 0, 0], [0, 0, 0, 0, 0, 1.0]])
    assert acceptance_probs(p[0, :1], q[0, :1]).item() == pytest.approx(0.5)
    accepted = verify_sampled(torch.tensor([0]), q, p, torch.tensor([0.49]), sampler())
    rejected = verify_sampled(torch.tensor([0]), q, p, torch.tensor([0.51]), sampler())
    assert (accepted.accepted_len, accepted.next_token) == (1, 5)
    assert rejected.accepted_len == 0
    assert rejected.next_token == 1  # residual: max(0, p - q) = (0, 0.3) -> all on token 1


def test_residual_is_normalised_positive_part() -> None:
    p = torch.tensor([0.5, 0.3, 0.2])
    q = torch.tensor([0.2, 0.6, 0.2])
    assert torch.allclose(residual_distribution(p, q), torch.tensor([1.0, 0.0, 0.0]))
    # p == q: no residual mass; the function falls back to p rather than dividing by zero.
    assert torch.equal(residual_distribution(p, p), p)


@pytest.mark.parametrize("seed", range(5))
def test_emission_law_equals_p_to_float64_precision(seed: int) -> None:
    """Analytic check of Theorem 1: q·min(1, p/q) + P(reject)·residual == p, for random p, q."""
    generator = torch.Generator().manual_seed(seed)
    vocab = 50
    p = torch.rand(vocab, generator=generator, dtype=torch.float64)
    q = torch.rand(vocab, generator=generator, dtype=torch.float64)
    p[torch.rand(vocab, generator=generator) < 0.3] = 0.0  # some tokens impossible for the target
    q[torch.rand(vocab, generator=generator) < 0.3] = 0.0  # and some the draft never proposes
    p, q = p / p.sum(), q / q.sum()
    emitted = emission_distribution(p, q)
    assert torch.allclose(emitted, p, rtol=0, atol=1e-15)
    # The check can fail: a rule that skips the residual does not reproduce p.
    assert not torch.allclose(torch.minimum(p, q) + (1 - torch.minimum(p, q).sum()) * p, p)


def test_top_k_keeps_exactly_k_tokens() -> None:
    logits = torch.tensor([1.0, 4.0, 3.0, 2.0, 0.0])
    probs = logits_to_probs(logits, temperature=1.0, top_k=2)
    assert (probs > 0).tolist() == [False, True, True, False, False]
    assert probs.sum().item() == pytest.approx(1.0)
    expected = torch.softmax(torch.tensor([4.0, 3.0]), dim=0)
    assert torch.allclose(probs[1:3], expected)


def test_top_p_keeps_the_smallest_set_reaching_p() -> None:
    probs_in = torch.tensor([0.5, 0.3, 0.15, 0.05])
    logits = probs_in.log()
    kept = logits_to_probs(logits, temperature=1.0, top_p=0.8) > 0
    assert kept.tolist() == [True, True, False, False]  # 0.5 + 0.3 reaches 0.8
    kept = logits_to_probs(logits, temperature=1.0, top_p=0.81) > 0
    assert kept.tolist() == [True, True, True, False]
    # The most likely token always survives, however small top_p is.
    assert (logits_to_probs(logits, temperature=1.0, top_p=0.01) > 0).tolist() == [
        True,
        False,
        False,
        False,
    ]


def test_temperature_sharpens_and_flattens() -> None:
    logits = torch.tensor([2.0, 1.0, 0.0])
    cold = logits_to_probs(logits, temperature=0.5)
    hot = logits_to_probs(logits, temperature=2.0)
    assert torch.allclose(cold, torch.softmax(logits / 0.5, dim=0))
    assert cold[0] > torch.softmax(logits, dim=0)[0] > hot[0]


def test_greedy_verification_accepts_matching_prefix() -> None:
    logits = torch.tensor(
        [[0.0, 5.0, 0.0], [0.0, 0.0, 5.0], [5.0, 0.0, 0.0], [0.0, 5.0, 0.0]]
    )  # target argmax: 1, 2, 0, 1
    p = torch.softmax(logits, dim=-1)
    q = torch.full((3, 3), 1 / 3)
    verdict = verify_greedy(torch.tensor([1, 2, 2]), q, p)
    assert verdict.accepted_len == 2
    assert verdict.next_token == 0  # the target's argmax at the first mismatch
    assert verdict.accept_probs.tolist() == [1.0, 1.0, 0.0]
    all_match = verify_greedy(torch.tensor([1, 2, 0]), q, p)
    assert (all_match.accepted_len, all_match.next_token) == (3, 1)  # bonus = argmax at position 4


def test_sampler_draw_follows_the_distribution() -> None:
    probs = torch.tensor([0.2, 0.0, 0.8])
    draws = [int(sampler(seed=s).draw(probs)) for s in range(400)]
    assert 1 not in draws
    assert 0.7 < draws.count(2) / len(draws) < 0.9


def test_each_row_is_drawn_from_its_own_law() -> None:
    laws = torch.tensor([[0.0, 0.2, 0.0, 0.5, 0.3, 0.0], [0.6, 0.0, 0.0, 0.0, 0.0, 0.4]])
    assert sampler().draw(laws.expand(3, 2, V)).shape == (3, 2)
    one = sampler(seed=1)
    counts = torch.zeros(2, V)
    for _ in range(100):
        drawn = one.draw(laws.expand(500, 2, V))  # (500, 2)
        for row in range(2):
            counts[row] += torch.bincount(drawn[:, row], minlength=V)
    # 50,000 draws a row: each share within 4 standard errors of its probability (≤ 0.009)
    torch.testing.assert_close(counts / counts.sum(-1, keepdim=True), laws, atol=0.009, rtol=0)
    assert counts[laws == 0].sum() == 0


class _Uniform(TorchFunctionMode):
    """torch.rand giving *u* everywhere: the draw's edges without waiting for a seed to hit them."""

    def __init__(self, u: float) -> None:
        super().__init__()
        self.u = u

    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        if func is torch.rand:
            return torch.full(tuple(args), self.u)
        return func(*args, **(kwargs or {}))


@pytest.mark.parametrize(
    ("u", "token"),
    [
        (0.0, 1),  # the first token with mass, not the zero before it
        (0.25, 3),  # a token's mass is [start, end): 0.25 is past token 1's
        (1.0 - 2.0**-24, 3),  # torch.rand's largest: the last token with mass, not the zeros
        (1.0, 3),  # never from torch.rand, but u · total = total must not run off the end
    ],
)
def test_a_uniform_at_an_edge_picks_a_token_with_mass(u: float, token: int) -> None:
    law = torch.tensor([0.0, 0.25, 0.0, 0.75, 0.0, 0.0])
    with _Uniform(u):
        assert int(sampler().draw(law)) == token


# -- a deterministic proposer: q one-hot at the drafts, passed as None -----------------------------


def test_one_hot_q_accepts_with_probability_p_of_the_draft() -> None:
    p = torch.tensor([[0.5, 0.3, 0.2, 0, 0, 0], [0, 0, 0, 0, 0, 1.0]])
    accepted = verify_sampled(torch.tensor([0]), None, p, torch.tensor([0.49]), sampler())
    rejected = verify_sampled(torch.tensor([0]), None, p, torch.tensor([0.51]), sampler())
    assert accepted.accept_probs.tolist() == [0.5]  # min(1, p(x) / 1)
    assert accepted.q_at_draft.tolist() == [1.0]
    assert (accepted.accepted_len, accepted.next_token) == (1, 5)  # then the bonus from p_2
    assert rejected.accepted_len == 0
    # norm(max(0, p - onehot(0))): token 0's mass removed, the rest renormalised.
    assert torch.allclose(rejected.next_dist, torch.tensor([0, 0.6, 0.4, 0, 0, 0]))
    assert rejected.next_token in (1, 2)


def test_one_hot_residual_is_the_dense_residual_of_a_one_hot_q() -> None:
    generator = torch.Generator().manual_seed(3)
    for _ in range(20):
        p = torch.rand(V, generator=generator)
        p[torch.rand(V, generator=generator) < 0.3] = 0.0
        p = p / p.sum()
        token = int(torch.randint(V, (1,), generator=generator))
        expected = residual_distribution(p, one_hot(token))
        assert torch.allclose(residual_after_one_hot(p, torch.tensor(token)), expected)
        # Theorem 1 for a point mass: p(x)·onehot(x) + (1 - p(x))·residual == p.
        law = p[token] * one_hot(token) + (1 - p[token]) * residual_after_one_hot(
            p, torch.tensor(token)
        )
        assert torch.allclose(law, p, atol=1e-6)
        assert torch.allclose(
            emission_distribution(p.double(), one_hot(token).double()), p.double()
        )


def test_one_hot_q_matches_the_dense_path_draw_for_draw() -> None:
    """q=None and an explicit one-hot (n, V) q give the same verdict on the same draws."""
    generator = torch.Generator().manual_seed(5)
    for seed in range(30):
        p = torch.softmax(3 * torch.randn(4, V, generator=generator), dim=-1)
        drafts = torch.randint(V, (3,), generator=generator)
        uniforms = torch.rand(3, generator=generator)
        dense_q = torch.stack([one_hot(int(token)) for token in drafts])
        fast = verify_sampled(drafts, None, p, uniforms, sampler(seed=seed))
        dense = verify_sampled(drafts, dense_q, p, uniforms, sampler(seed=seed))
        assert (fast.accepted_len, fast.next_token) == (dense.accepted_len, dense.next_token)
        assert torch.allclose(fast.next_dist, dense.next_dist)
        assert torch.equal(fast.accept_probs, dense.accept_probs)


def test_a_certain_target_cannot_reject_a_one_hot_draft() -> None:
    """p(x) = 1: the draft is accepted for every u < 1; the empty residual falls back to p."""
    p = torch.stack([one_hot(2), one_hot(4)])
    verdict = verify_sampled(torch.tensor([2]), None, p, torch.tensor([0.999999]), sampler())
    assert (verdict.accepted_len, verdict.next_token) == (1, 4)
    assert torch.equal(residual_after_one_hot(one_hot(2), torch.tensor(2)), one_hot(2))


def test_greedy_verification_takes_a_one_hot_q() -> None:
    p = torch.softmax(torch.tensor([[0.0, 5.0, 0.0], [0.0, 0.0, 5.0], [5.0, 0.0, 0.0]]), dim=-1)
    verdict = verify_greedy(torch.tensor([1, 0]), None, p)
    assert (verdict.accepted_len, verdict.next_token) == (1, 2)
    assert verdict.q_at_draft.tolist() == [1.0, 1.0]


class LargestResult(TorchFunctionMode):
    """Records the most elements any torch call inside the mode returned."""

    def __init__(self) -> None:
        super().__init__()
        self.most = 0

    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        result = func(*args, **(kwargs or {}))
        if isinstance(result, torch.Tensor):
            self.most = max(self.most, result.numel())
        return result


@pytest.mark.parametrize("uniform", [0.0, 0.99])  # all accepted (bonus), or a rejection at 1
def test_a_one_hot_q_is_never_built_as_rows(uniform: float) -> None:
    """Verifying n drafts with q=None creates no tensor larger than one row of V (a one-hot
    (n, V) q would be n times that)."""
    vocab, n = 1000, 4
    p = torch.softmax(torch.randn(n + 1, vocab, generator=torch.Generator().manual_seed(0)), -1)
    drafts = torch.arange(n)
    for verify in (
        lambda: verify_sampled(drafts, None, p, torch.full((n,), uniform), sampler()),
        lambda: verify_greedy(drafts, None, p),
    ):
        with LargestResult() as watch:
            verify()
        assert 0 < watch.most <= vocab
    # The check can fail: the dense path with a one-hot (n, V) q does build rows.
    with LargestResult() as watch:
        torch.nn.functional.one_hot(drafts, vocab)
    assert watch.most == n * vocab
