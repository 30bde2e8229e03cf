"""What one verifying forward costs for each drafter's largest pass, read off the cost curve.

A chain of γ guesses sends γ + 1 tokens through the target each cycle; a tree, Medusa's
candidates or lookahead's window and guesses send many more. On the cost curve v(M), the time
of a forward over M new tokens in one-token forwards, a drafter that sends M tokens a pass gains
only if it keeps more than v(M) tokens a pass, before its own drafting time is counted:
speedup = τ / (v(M) + drafting), Leviathan et al. 2023, Theorem 3.8 with the verifying forward
costing v(M) instead of one step. The table under the curve says where each drafter sits on it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from specviz.drafters.registry import tokens_a_pass
from specviz.labs.speedup.cost_curve import CostCurve

# The drafters the table lists, at their defaults: the chain at the preset's usual γ, the draft
# tree at two budgets, and the two that need no second model.
COMPARED = ("draft-model", "tree", "tree:nodes=32", "medusa", "lookahead")


@dataclass(frozen=True)
class PassCost:
    """One drafter's largest pass and what it costs on this curve."""

    spec: str
    tokens: int  # M: the newest committed token and every guess
    cost: float  # v(M): the forward's time in one-token forwards
    fitted: bool  # M lies past the measured sizes: v(M) is read off the fitted line


def cost_of(curve: CostCurve, tokens: int) -> tuple[float, bool]:
    """v(tokens) measured where the curve reaches it, else on its fitted line (and True)."""
    relative = curve.relative()
    if tokens <= len(relative):
        return relative[tokens - 1], False
    return curve.fitted(tokens - 1), True


def pass_costs(curve: CostCurve, gamma: int, specs: Sequence[str] = COMPARED) -> list[PassCost]:
    """Each spec's largest pass on *curve*, a chain at *gamma*."""
    rows = []
    for spec in specs:
        tokens = tokens_a_pass(spec, gamma)
        cost, fitted = cost_of(curve, tokens)
        rows.append(PassCost(spec, tokens, cost, fitted))
    return rows
