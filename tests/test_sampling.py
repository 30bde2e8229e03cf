"""The acceptance rule, the residual and the probability transform, on hand-built distributions.

Hand-built p and q make the expected accepted count and tokens known without a seed.
"""

from __future__ import annotations

import pytest
import torch

from specviz.core.sampling import (
    Sampler,
    acceptance_probs,
    emission_distribution,
    logits_to_probs,
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
