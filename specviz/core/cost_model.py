"""What a cycle costs and yields: the speedup model of Leviathan et al. (2023) and the step costs.

With per-token acceptance rate α, γ drafted tokens per cycle, a draft step costing c target steps
and a verification of γ + 1 tokens costing v(γ + 1) target steps, one cycle costs
γ·c + v(γ + 1) target steps and yields on average τ = (1 − α^(γ+1)) / (1 − α) tokens (eq. 1), so
the speedup over plain decoding is

    S(α, γ) = τ / (γ·c + v(γ + 1)).                              (Theorem 3.8 has v = 1)

γ = 0 is a plain step: τ = 1 at cost v(1) = 1, S = 1. The theory lab evaluates S with costs it
measures; the cost γ schedule (specviz.drafters.policy) maximises it each cycle with the StepCosts
measured when the pair was loaded (specviz.models.step_costs).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from specviz.text import UserError


def check_alpha(alpha: float) -> None:
    """Raise UserError unless α is a probability."""
    if not 0.0 <= alpha <= 1.0:
        raise UserError("error.alpha", alpha=alpha)


def expected_tokens_per_pass(alpha: float, gamma: int) -> float:
    """τ = (1 − α^(γ+1)) / (1 − α): expected tokens per target pass (Leviathan et al., eq. 1)."""
    check_alpha(alpha)
    if gamma < 0:
        raise ValueError(f"γ must be non-negative, got {gamma}")
    # The same geometric series summed term by term: exact at α = 1 (τ = γ + 1) and near it.
    return sum(alpha**i for i in range(gamma + 1))


def tokens_per_pass_over(tau: float, new_tokens: int | None) -> float:
    """Tokens per target pass over a whole run of *new_tokens* tokens, for passes that give τ
    each on average: the run stops at its token limit inside its last pass, which then gives
    fewer, so it takes about N/τ + 1/2 passes (half a pass's tokens are cut, on average, when
    the cut falls anywhere in the pass). τ itself for an unlimited run (None)."""
    if new_tokens is None or new_tokens <= 0 or tau <= 0:
        return tau
    return new_tokens / (new_tokens / tau + 0.5)


def predicted_speedup(alpha: float, gamma: int, draft_cost: float, verify_cost: float) -> float:
    """S = τ / (γ·c + v): plain decoding spends one target step per token, a cycle γ·c + v steps.

    With v = 1 this is Leviathan et al.'s improvement factor (1 − α^(γ+1)) / ((1 − α)(γc + 1)).
    Whenever α ≤ c and v ≥ 1 it is at most 1 for every γ: each drafted token costs c but is worth
    at most α < c of a target step, so speculation cannot win.
    """
    if draft_cost < 0 or verify_cost <= 0:
        raise ValueError("draft cost must be >= 0 and verification cost > 0")
    return expected_tokens_per_pass(alpha, gamma) / (gamma * draft_cost + verify_cost)


@dataclass(frozen=True)
class StepCosts:
    """A pair's step costs on one machine, in units of the target's one-token step.

    verify[k - 1] = v(k): one target forward of k new tokens after a cached context, divided by
    one of a single token (so verify[0] = 1); a cycle drafting γ tokens verifies γ + 1, so γ can
    go up to len(verify) - 1. draft = c: one draft step (one new token) over one target step.
    """

    verify: tuple[float, ...]
    draft: float
    target_step_s: float  # the one-token target step they are relative to, in seconds
    # How the draft's weights were stored: none, int8, int8wo, int4wo, int4head, int4dual.
    draft_format: str = "none"

    def __post_init__(self) -> None:
        if not self.verify or self.draft < 0 or any(v <= 0 for v in self.verify):
            raise ValueError(f"step costs need v(1..k) > 0 and c >= 0, got {self}")

    @property
    def gamma_max(self) -> int:
        """The longest draft whose verification was measured."""
        return len(self.verify) - 1

    def speedup(self, alpha: float, gamma: int) -> float:
        """S(α, γ) with these costs; γ at most gamma_max."""
        return predicted_speedup(alpha, gamma, self.draft, self.verify[gamma])

    def without_draft_cost(self) -> StepCosts:
        """The same target costs for a drafter that runs no model (prompt lookup: c = 0)."""
        return replace(self, draft=0.0)


def step_costs_of(pair: object) -> StepCosts | None:
    """The step costs measured when the pair was loaded (its `step_costs`), None if it has none."""
    costs = getattr(pair, "step_costs", None)
    return costs if isinstance(costs, StepCosts) else None
