"""When a draft ends and how long the next one may be: the rules every drafter shares.

A drafter proposes tokens one at a time and asks DraftPolicy.goes_on after each; the policy
applies the stops the settings switch on (end-of-sequence, per-token confidence, the cumulative
estimate that every guess so far is right), records why the draft ended, and on commit updates
the run's record of misses and doubts and the γ schedule. None of this touches the output law:
speculative sampling is exact whatever the drafter proposes; the stops only save wasted drafts.

Three γ schedules: fixed (the setting's γ), the heuristic +2/−1 (next_gamma), and the cost
schedule (cost_gamma), which picks the γ with the most expected tokens per unit time from step
costs measured elsewhere and handed in, and the run's acceptance estimate (AcceptanceEstimate).
Nothing here reads a clock.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from specviz.core.cost_model import StepCosts
from specviz.core.events import scaled_confidence
from specviz.core.sampling import Sampler
from specviz.core.settings import GAMMA_MAX, GAMMA_MIN, GenerationSettings


def doubt_scale(misses: int, doubts: float) -> float:
    """How far the cumulative stop trusts the draft's doubts, from its record in this run.

    doubts: the sum of 1 - max q over the draft positions tested so far, the number of wrong
    guesses the draft itself expected; misses: how many it actually got wrong. A draft that is
    right more often than it expects (on text it can copy, say) has its doubts scaled down by
    misses / doubts, so runs of middling-but-right guesses are not cut short; never scaled up,
    since the per-token stop and adaptive γ already curb a draft that is wrong too often. One
    pseudo-count on each side keeps the first cycles near the draft's own estimate.
    """
    return min(1.0, (misses + 1) / (doubts + 1))


def next_gamma(gamma: int, accepted_len: int, proposed: int) -> int:
    """transformers' "heuristic" schedule: +2 after a full accept, -1 after any rejection."""
    if proposed == 0:
        return gamma
    if accepted_len == proposed:
        return min(gamma + 2, GAMMA_MAX)
    return max(gamma - 1, GAMMA_MIN)


def cost_gamma(alpha: float, costs: StepCosts, gamma_cap: int) -> int:
    """The γ in [0, min(gamma_cap, costs.gamma_max)] with the highest S(α, γ) = τ / (γ·c + v(γ + 1)).

    γ = 0 is a plain step (S = 1): chosen when no draft pays for its cost. Ties go to the shorter
    draft, which wastes less when α is overestimated.
    """
    best_gamma, best_speedup = 0, costs.speedup(alpha, 0)
    for gamma in range(1, min(gamma_cap, costs.gamma_max) + 1):
        speedup = costs.speedup(alpha, gamma)
        if speedup > best_speedup:
            best_gamma, best_speedup = gamma, speedup
    return best_gamma


class AcceptanceEstimate:
    """The run's per-token acceptance rate α, as the cost schedule needs it before each cycle.

    α̂ = (A + w·α₀) / (T + w), where T and A count the draft positions tested and accepted (up
    to and including the first rejection: the maximum-likelihood estimate of a per-position
    Bernoulli rate under a truncated draft), each discounted by λ per cycle so the estimate
    follows the text as it changes (code, then prose), and α₀ with weight w is a Beta prior that
    keeps the first cycles sensible. Cycles that test nothing (γ = 0, no lookup match) only
    discount: after a run of plain steps α̂ drifts back to α₀, so a schedule that stopped drafting
    tries again once the prior says drafting pays.
    """

    PRIOR_ALPHA = 0.7  # between the bundled pair's α on stories (~0.6) and on code (~0.85)
    PRIOR_WEIGHT = 2.0  # in tested positions: about one cycle's evidence
    DISCOUNT = 0.9  # per cycle: the last ~10 cycles carry most of the weight

    def __init__(self) -> None:
        self.tested = 0.0
        self.accepted = 0.0

    @property
    def alpha(self) -> float:
        """The current estimate α̂."""
        prior = self.PRIOR_WEIGHT
        return (self.accepted + prior * self.PRIOR_ALPHA) / (self.tested + prior)

    def update(self, tested: int, accepted: int) -> None:
        """Discount the record by one cycle, then add this cycle's tested and accepted positions."""
        self.tested = self.DISCOUNT * self.tested + tested
        self.accepted = self.DISCOUNT * self.accepted + accepted


class DraftPolicy:
    """The stops and the γ schedule of one run, with the record they learn from.

    Per cycle: begin(max_tokens) says how many tokens the draft may hold, goes_on(token, q) after
    each drafted token says whether to draft another, ended_by and doubt_scale describe the
    draft, commit(accepted_len, proposed) learns from the verdict.
    """

    def __init__(
        self,
        settings: GenerationSettings,
        stop_ids: frozenset[int] = frozenset(),
        costs: StepCosts | None = None,
    ) -> None:
        # The cost schedule needs measured costs; without them γ stays the setting's.
        self.costs = costs if settings.cost_gamma else None
        self.gamma_cap = settings.gamma  # the cost schedule's longest draft
        self.acceptance = AcceptanceEstimate()
        self.adaptive = settings.adaptive_gamma and self.costs is None
        # The current γ: the setting's value until a schedule moves it.
        self.gamma = settings.gamma
        if self.costs is not None:
            self.gamma = cost_gamma(self.acceptance.alpha, self.costs, self.gamma_cap)
        self.stop_below = settings.draft_stop_below
        self.stop_cumulative = settings.draft_stop_cumulative
        self.stop_ids = stop_ids
        # The cumulative stop's record of this run (see doubt_scale()).
        self.misses, self.doubts = 0, 0.0
        # The current draft: its length limit, tokens so far, the draft's estimate that every
        # guess so far is right, its top probability at each position, and why it ended.
        self._limit = 0
        self._drafted = 0
        self._all_right = 1.0
        self._tops: list[float] = []
        self.doubt_scale = 1.0
        self.ended_by = "gamma"

    def begin(self, max_tokens: int) -> int:
        """Start a draft with room for max_tokens; returns its length limit min(γ, max_tokens)."""
        self._limit = min(self.gamma, max_tokens)
        self._drafted = 0
        self._all_right = 1.0
        self._tops = []
        self.doubt_scale = doubt_scale(self.misses, self.doubts)
        self.ended_by = "gamma" if self._limit == self.gamma else "budget"
        return self._limit

    def goes_on(self, token: torch.Tensor | int, q_row: torch.Tensor | None) -> bool:
        """Record one drafted token and say whether the draft may go on past it.

        token: the drafted id (a 0-dim tensor may stay on the device: it is read back only when
        the EOS stop needs it); q_row: (V,) the distribution it was drawn from, None for one-hot
        (a deterministic proposer, sure of every guess: q(x) = max q = 1).
        """
        self._drafted += 1
        if self.stop_cumulative > 0.0:
            # The top probability, not the sampled token's: in greedy mode they are the same
            # number; when sampling, q(x) of a drawn token says more about the dice than about
            # whether the target will agree, while a peaked q means the models likely agree.
            # Read for the last guess too: the record of doubts needs every tested position.
            self._tops.append(1.0 if q_row is None else float(q_row.max()))
        if self._drafted >= self._limit:
            return False  # the draft is complete; a stop now would change nothing
        # A drafted end-of-sequence ends the run if the target accepts it, and a rejection ends
        # the cycle there anyway: guesses after it can never be emitted. transformers' assistant
        # stops there too (its draft runs generate(), which ends at EOS). Reading the id back
        # costs a host sync per token, which the confidence stops pay anyway.
        if self.stop_ids and int(token) in self.stop_ids:
            self.ended_by = "eos"
            return False
        # The confidence stops read a number back from the device per token; that is only paid
        # when a stop is on. A one-hot q never trips them: 1 is above every threshold.
        if self.stop_below > 0.0 and q_row is not None and float(q_row[token]) < self.stop_below:
            self.ended_by = "confidence"
            return False
        if self.stop_cumulative > 0.0:
            self._all_right *= scaled_confidence(self._tops[-1], self.doubt_scale)
            if self._all_right < self.stop_cumulative:
                self.ended_by = "cumulative"
                return False
        return True

    def commit(self, accepted_len: int, proposed: int) -> None:
        """Learn from the verdict on the last draft: the doubt record, then the γ schedule."""
        if self._tops:
            tested = min(accepted_len + 1, proposed)  # up to and including the first rejection
            self.misses += int(accepted_len < proposed)
            self.doubts += sum(1.0 - top for top in self._tops[:tested])
        self._tops = []
        if self.costs is not None:
            self.acceptance.update(min(accepted_len + 1, proposed), accepted_len)
            self.gamma = cost_gamma(self.acceptance.alpha, self.costs, self.gamma_cap)
        elif self.adaptive:
            self.gamma = next_gamma(self.gamma, accepted_len, proposed)

    @property
    def schedule(self) -> str:
        """Which γ schedule runs: "cost", "heuristic" or "fixed"."""
        return "cost" if self.costs is not None else "heuristic" if self.adaptive else "fixed"


def draft_autoregressively(
    next_logits: Callable[[torch.Tensor], torch.Tensor],
    feed: torch.Tensor,
    count: int,
    sampler: Sampler,
    policy: DraftPolicy,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Up to count tokens drawn one at a time, each fed back, until the policy stops the draft.

    next_logits(feed) gives the (V,) logits after feed (1, L): the uncached committed tokens
    first, then each drawn token. Returns the token ids (n,) and the q rows (n, V) they were
    drawn from. The tokens stay on the device: no host sync inside the loop.
    """
    tokens: list[torch.Tensor] = []
    dists: list[torch.Tensor] = []
    for _ in range(count):
        dist = sampler.probs(next_logits(feed))
        token = sampler.draw(dist)
        tokens.append(token)
        dists.append(dist)
        feed = token.view(1, 1)
        if not policy.goes_on(token, dist):
            break
    token_ids = torch.stack(tokens) if tokens else torch.empty(0, dtype=torch.long)
    q_draft = torch.stack(dists) if dists else torch.empty(0, 0)
    return token_ids, q_draft
