"""The probability maths of speculative sampling, as pure functions over tensors.

Notation follows Leviathan et al., "Fast Inference from Transformers via Speculative Decoding"
(ICML 2023), and Chen et al., "Accelerating Large Language Model Decoding with Speculative Sampling"
(2023): p is the target's next-token distribution, q the draft's, x a drafted token.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from specviz.core.settings import GenerationSettings

# Bars kept per distribution in a Rejection record: enough for a readable chart.
TOP_N = 10
# Bars kept per drafted position for the probability inspector (γ positions per cycle, so fewer).
TOP_PER_POSITION = 6


@dataclass
class Sampler:
    """The probability transform and the random stream shared by drafter, verifier and baseline.

    Both p and q must come from the *same* transform, otherwise the output is exact for the wrong
    distribution. Temperature 0 means greedy decoding.
    """

    temperature: float
    top_k: int
    top_p: float
    generator: torch.Generator

    @classmethod
    def from_settings(cls, settings: GenerationSettings, device: torch.device) -> Sampler:
        """The settings' transform with a fresh random stream on device, seeded from them."""
        generator = torch.Generator(device=device)
        generator.manual_seed(settings.seed)
        return cls(settings.temperature, settings.top_k, settings.top_p, generator)

    @property
    def greedy(self) -> bool:
        return self.temperature <= 0.0

    def probs(self, logits: torch.Tensor) -> torch.Tensor:
        """Logits (..., V) -> float32 probabilities (..., V).

        In greedy mode these are the untempered softmax: only shown to the user, never sampled from.
        """
        if self.greedy:
            return torch.softmax(logits.float(), dim=-1)
        return logits_to_probs(logits, self.temperature, self.top_k, self.top_p)

    def draw(self, probs: torch.Tensor) -> torch.Tensor:
        """One token per row of probs (..., V) -> (...,) long. Greedy takes the argmax.

        Inverse-CDF sampling: one uniform u per row picks the first token whose cumulative mass
        exceeds u times the row's total. On a CPU this is about 18 times faster than
        torch.multinomial over a 152k-token vocabulary (0.17 against 3.1 ms a draw on a 2-core
        Zen 4), which a drawn draft tree pays once per node. A token of zero mass adds nothing
        to the cumulative sum, so it is never picked; float32 rounding moves a token's mass by
        at most one ulp of the running sum (about 6e-8), as the probabilities' own rounding does.
        """
        if self.greedy:
            return probs.argmax(dim=-1)
        flat = probs.reshape(-1, probs.shape[-1])
        cumulative = torch.cumsum(flat, dim=-1)
        total = cumulative[:, -1:]
        u = torch.rand(flat.shape[0], 1, generator=self.generator, device=flat.device)
        # Kept below the total (a uniform of 1.0 would reach it), so the pick has mass of its own.
        below = torch.minimum(u * total, torch.nextafter(total, torch.zeros_like(total)))
        picked = torch.searchsorted(cumulative, below, right=True)
        return picked.reshape(probs.shape[:-1])

    def uniforms(self, count: int, device: torch.device) -> torch.Tensor:
        """The u ~ U(0, 1) for the acceptance tests of one cycle, drawn in one call."""
        return torch.rand(count, generator=self.generator, device=device)


def logits_to_probs(
    logits: torch.Tensor, temperature: float, top_k: int = 0, top_p: float = 1.0
) -> torch.Tensor:
    """Temperature, then top-k, then nucleus (top-p) filtering, then softmax; float32 (..., V)."""
    scaled = logits.float() / max(temperature, 1e-5)
    vocab = scaled.shape[-1]
    if 0 < top_k < vocab:
        kth = torch.topk(scaled, top_k, dim=-1).values[..., -1:]
        scaled = scaled.masked_fill(scaled < kth, float("-inf"))
    if top_p < 1.0:
        sorted_logits, order = torch.sort(scaled, dim=-1, descending=True)
        cumulative = torch.softmax(sorted_logits, dim=-1).cumsum(dim=-1)
        # Drop a token when the tokens strictly more likely than it already cover top_p; the most
        # likely token therefore always survives.
        drop_sorted = (cumulative - torch.softmax(sorted_logits, dim=-1)) >= top_p
        drop = drop_sorted.scatter(-1, order, drop_sorted)
        scaled = scaled.masked_fill(drop, float("-inf"))
    return torch.softmax(scaled, dim=-1)


def acceptance_probs(p_target: torch.Tensor, q_draft: torch.Tensor) -> torch.Tensor:
    """min(1, p(x) / q(x)) for each drafted x (Leviathan et al., Algorithm 1).

    q(x) > 0 always holds for a token the draft actually sampled; the clamp only guards rounding.
    """
    return torch.clamp(p_target / q_draft.clamp_min(torch.finfo(q_draft.dtype).tiny), max=1.0)


def residual_distribution(p_target: torch.Tensor, q_draft: torch.Tensor) -> torch.Tensor:
    """norm(max(0, p - q)): what to sample from after a rejection (Leviathan et al., eq. in §2.3).

    When p == q everywhere the residual is empty; a rejection then has probability 0, so any
    distribution is correct and p keeps the function total.
    """
    residual = torch.clamp(p_target - q_draft, min=0.0)
    total = residual.sum(dim=-1, keepdim=True)
    return torch.where(total > 0, residual / total.clamp_min(1e-30), p_target)


def residual_after_one_hot(p_target: torch.Tensor, draft_id: torch.Tensor) -> torch.Tensor:
    """norm(max(0, p - onehot(x))) for a deterministic proposer sure of x: p with x's mass removed.

    p (V,), x a 0-dim long tensor. Since p(x) <= 1, max(0, p - onehot(x)) is p with p(x) set to 0;
    no (V,) one-hot is built. When p(x) = 1 nothing is left, but then min(1, p(x)/1) = 1 and a
    rejection cannot happen: p keeps the function total, as in residual_distribution.
    """
    residual = p_target.index_fill(0, draft_id.view(1), 0.0)
    total = residual.sum(dim=-1, keepdim=True)
    return torch.where(total > 0, residual / total.clamp_min(1e-30), p_target)


def q_at_drafts(q_draft: torch.Tensor | None, draft_ids: torch.Tensor) -> torch.Tensor:
    """q(x_i) for each drafted x_i, (n,): 1 everywhere when q is one-hot at the drafts (None)."""
    if q_draft is None:
        return torch.ones(draft_ids.shape[0], device=draft_ids.device)
    positions = torch.arange(draft_ids.shape[0], device=draft_ids.device)
    return q_draft[positions, draft_ids]


@dataclass(frozen=True)
class Verdict:
    """The outcome of verifying one cycle's drafts: tensors, converted to records by the engine."""

    accepted_len: int  # leading drafted tokens accepted
    next_token: int  # resampled (accepted_len < n) or bonus (accepted_len == n)
    next_dist: torch.Tensor  # (V,) the distribution next_token was drawn from
    accept_probs: torch.Tensor  # (n,) min(1, p/q), or 1/0 argmax matches in greedy mode
    p_at_draft: torch.Tensor  # (n,) p(x_i)
    q_at_draft: torch.Tensor  # (n,) q(x_i)


def verify_sampled(
    draft_ids: torch.Tensor,
    q_draft: torch.Tensor | None,
    p_target: torch.Tensor,
    uniforms: torch.Tensor,
    sampler: Sampler,
) -> Verdict:
    """Speculative sampling for one cycle.

    draft_ids (n,), q_draft (n, V) or None for one-hot at draft_ids, p_target (n + 1, V),
    uniforms (n,). Token i is accepted iff every earlier one was and u_i < min(1, p_i(x_i) / q_i(x_i)).
    At the first rejection j the replacement is drawn from norm(max(0, p_j - q_j)); if all n pass,
    a bonus token is drawn from p_n. Either way the emitted token at each position has law exactly
    p (Leviathan et al., Theorem 1). With a one-hot q the test is u_i < p_i(x_i) and the residual
    is p_j without x_j, renormalised: the theorem holds for any q, a point mass included.
    """
    n = draft_ids.shape[0]
    positions = torch.arange(n, device=draft_ids.device)
    p_at = p_target[positions, draft_ids]
    q_at = q_at_drafts(q_draft, draft_ids)
    ratios = acceptance_probs(p_at, q_at)
    rejected = uniforms >= ratios  # (n,)
    # One host sync per cycle: the index of the first rejection (n if none).
    accepted_len = int(torch.cat([rejected, rejected.new_ones(1)]).int().argmax())
    if accepted_len == n:
        next_dist = p_target[n]
    elif q_draft is None:
        next_dist = residual_after_one_hot(p_target[accepted_len], draft_ids[accepted_len])
    else:
        next_dist = residual_distribution(p_target[accepted_len], q_draft[accepted_len])
    next_token = int(sampler.draw(next_dist))
    return Verdict(accepted_len, next_token, next_dist, ratios, p_at, q_at)


def verify_greedy(
    draft_ids: torch.Tensor, q_draft: torch.Tensor | None, p_target: torch.Tensor
) -> Verdict:
    """Greedy verification: accept while the drafted token is the target's argmax.

    The output is then identical to greedy decoding of the target alone. q_draft and p_target are
    the untempered softmaxes, carried only so the user can see how confident each model was
    (q_draft None: one-hot at draft_ids, a deterministic proposer).
    """
    n = draft_ids.shape[0]
    positions = torch.arange(n, device=draft_ids.device)
    target_choice = p_target.argmax(dim=-1)  # (n + 1,)
    matches = target_choice[:n] == draft_ids
    mismatch = ~matches
    accepted_len = int(torch.cat([mismatch, mismatch.new_ones(1)]).int().argmax())
    next_token = int(target_choice[accepted_len])
    return Verdict(
        accepted_len,
        next_token,
        p_target[accepted_len],
        matches.float(),
        p_target[positions, draft_ids],
        q_at_drafts(q_draft, draft_ids),
    )


def emission_distribution(p_target: torch.Tensor, q_draft: torch.Tensor) -> torch.Tensor:
    """The exact law of the token emitted at one position under the rule, computed analytically.

    P(x) = q(x) min(1, p(x)/q(x)) + (1 - Σ_y min(p(y), q(y))) · norm(max(0, p - q))(x), which the
    theorem says equals p(x). Tests compare the two; the exactness lab shows it.
    """
    accepted_mass = torch.minimum(p_target, q_draft)
    rejection_prob = 1.0 - accepted_mass.sum(dim=-1, keepdim=True)
    return accepted_mass + rejection_prob * residual_distribution(p_target, q_draft)


def top_entries(probs: torch.Tensor, count: int = TOP_N) -> list[tuple[int, float]]:
    """The count most probable (token id, probability) pairs of a (V,) distribution."""
    values, indices = torch.topk(probs, min(count, probs.shape[-1]))
    return list(zip(indices.tolist(), values.tolist(), strict=True))


def top_entries_per_row(
    probs: torch.Tensor, count: int = TOP_PER_POSITION
) -> list[list[tuple[int, float]]]:
    """top_entries for every row of (n, V) probabilities, in one topk and one host copy."""
    values, indices = torch.topk(probs, min(count, probs.shape[-1]), dim=-1)
    return [
        list(zip(row_ids, row_values, strict=True))
        for row_ids, row_values in zip(indices.tolist(), values.tolist(), strict=True)
    ]
