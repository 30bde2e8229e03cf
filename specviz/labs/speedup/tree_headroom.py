"""How many tokens per target pass a draft tree could give over the chain, counted on the target's
own text at a temperature above 0.

At T > 0 what a tree adds to the chain is set by how often the draft's second, third ... guess
for a position is kept after the first lost: the rank rates a[r] of the rank model
(specviz.labs.speedup.tree_theory). This measurement samples the target's answer to each prompt
(plain decoding at the settings' temperature, seeded), feeds the same tokens to the draft, and at
every position of the answer counts the rates at the root of a tree with ``ranks`` children,
under three rules:

- **drawn**: the children drawn from the draft's law q without replacement and tested by
  recursive rejection sampling (specviz.core.tree.verify_tree_recursive), ``draws`` times a
  position. Besides q as the drafter draws it, q sharpened or flattened by a draft temperature
  t (the draft's logits over T · t): the rule is exact for any q the children are drawn from,
  so t is a choice a drafter could make.
- **top**: the draft's ``ranks`` most likely tokens, tested one-hot (kept with p'(x), a loss
  removes x from p'): the target-only walk over a fixed top-k tree (SpecExec; SGLang).
- **bound**: the most any exact rule could keep. Whatever a rule does with k children drawn
  from q, the token it emits follows p, so it is one of the children with probability at most
  Σ_x min(p(x), π_k(x)), π_k(x) the chance that x is among the k drawn (a coupling bound).
  π_k is estimated from ``draws`` draws of the first k − 1 children, the k-th taken in
  expectation given them, so tokens never drawn still get their share. The bound is for q as the
  drafter draws it (draft temperature 1); another draft temperature is another q.

From each rule's rates pooled over the positions, the rank model's τ for the chain at γ
(Leviathan et al. 2023, eq. 1, with α = a[1]) and for the best tree of ``nodes`` nodes, the
measure the tree lab prices trees with. The rates are taken at the root of every position, not
at the depths a tree reaches (where text that was easy so far tends to stay easy), so the τ are
the rank model's, not a run's; their ratio is what a rule or a draft temperature moves.

The drawn and bound rules read each position's p and q on the ``support`` tokens most likely
under p + q, renormalised; the mass left outside is reported.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace

import torch

from specviz.core.device import device_of
from specviz.core.engine import DraftModelPairLike
from specviz.core.sampling import Sampler, logits_to_probs
from specviz.core.settings import GenerationSettings
from specviz.labs.speedup.tree_theory import RankAcceptance, best_tree, expected_tokens
from specviz.models.runner import ModelRunner
from specviz.text import UserError

__all__ = [
    "HeadroomRow",
    "RankTally",
    "TreeHeadroom",
    "answer_positions",
    "bound_kept",
    "check_headroom",
    "drawn_rank_counts",
    "top_rank_chances",
    "tree_headroom",
]


@dataclass
class RankTally:
    """Kept and tested counts by sibling rank, summed over positions (floats: the one-hot and
    bound rules add expected counts)."""

    kept: list[float]
    tested: list[float]

    @classmethod
    def empty(cls, ranks: int) -> RankTally:
        return cls([0.0] * ranks, [0.0] * ranks)

    def add(self, kept: Sequence[float], tested: Sequence[float]) -> None:
        for rank, (won, tried) in enumerate(zip(kept, tested, strict=True)):
            self.kept[rank] += won
            self.tested[rank] += tried

    def rates(self) -> tuple[float, ...]:
        return tuple(
            won / tried if tried else 0.0 for won, tried in zip(self.kept, self.tested, strict=True)
        )


@dataclass(frozen=True)
class HeadroomRow:
    """One rule's rank rates and the rank model's τ for the chain and the best tree from them."""

    rule: str  # "drawn", "top" or "bound"
    draft_temperature: float  # the draft's logits over T · this (1.0: as the drafter draws)
    rates: tuple[float, ...]  # a[1], a[2], ...
    chain_tau: float  # the chain at γ with α = a[1]
    tree_tau: float  # the best tree of the budget's nodes


@dataclass(frozen=True)
class TreeHeadroom:
    """One task group's answers, pooled."""

    task: str
    prompts: int
    positions: int  # answer tokens counted
    temperature: float
    gamma: int
    nodes: int
    outside_mass: float  # mean mass of p and q outside the support read, q as the drafter draws it
    rows: tuple[HeadroomRow, ...] = field(default=())

    @property
    def chain_as_drawn(self) -> float:
        """The chain's τ with q as the drafter draws it: what every row is compared against (the
        bound's, whose a[1] is Σ min(p, q) exactly, where no drawn row is at draft temperature 1)."""
        return next(
            (
                row.chain_tau
                for row in self.rows
                if row.rule == "drawn" and row.draft_temperature == 1.0
            ),
            next((row.chain_tau for row in self.rows if row.rule == "bound"), 0.0),
        )


def _positive_residuals(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """Row by row, norm(max(p − q, 0)), or p where p ≤ q everywhere (core.tree.positive_residual)."""
    rest = torch.clamp(p - q, min=0.0)
    total = rest.sum(dim=-1, keepdim=True)
    return torch.where(total > 0, rest / total.clamp_min(1e-30), p)


def _without_drawn(q: torch.Tensor, drawn: torch.Tensor) -> torch.Tensor:
    """Row by row, q with the drawn token removed and renormalised (core.tree.without)."""
    rest = q.scatter(1, drawn[:, None], 0.0)
    total = rest.sum(dim=-1, keepdim=True)
    return torch.where(total > 0, rest / total.clamp_min(1e-30), q)


def drawn_rank_counts(
    p: torch.Tensor, q: torch.Tensor, ranks: int, draws: int, sampler: Sampler
) -> tuple[list[int], list[int]]:
    """*draws* root tests of a node whose *ranks* children are drawn from q (V,) without
    replacement, by recursive rejection sampling against p (V,): per rank, how many tests
    reached it (every elder sibling lost) and how many it won."""
    p_now = p.expand(draws, -1).clone()
    q_now = q.expand(draws, -1).clone()
    open_ = torch.ones(draws, dtype=torch.bool)
    kept, tested = [], []
    for _ in range(ranks):
        tested.append(int(open_.sum()))
        drawn = sampler.draw(q_now)
        p_at = p_now.gather(1, drawn[:, None]).squeeze(1)
        q_at = q_now.gather(1, drawn[:, None]).squeeze(1)
        won = open_ & (sampler.uniforms(draws, p.device) < p_at / q_at.clamp_min(1e-30))
        kept.append(int(won.sum()))
        open_ &= ~won
        p_now = _positive_residuals(p_now, q_now)
        q_now = _without_drawn(q_now, drawn)
    return kept, tested


def top_rank_chances(
    p: torch.Tensor, q: torch.Tensor, ranks: int
) -> tuple[list[float], list[float]]:
    """The draft's *ranks* most likely tokens tested one-hot against p: per rank, the chance the
    test reaches it and the chance it wins (exact: a loss removes the token from p)."""
    top = torch.topk(q, ranks).indices
    kept = [float(p[token]) for token in top]
    tested, left = [], 1.0
    for chance in kept:
        tested.append(left)
        left -= chance
    return kept, tested


def bound_kept(
    p: torch.Tensor, q: torch.Tensor, ranks: int, draws: int, sampler: Sampler
) -> list[float]:
    """For k = 1 .. *ranks* children drawn from q without replacement, the most any exact rule
    keeps one: Σ_x min(p(x), π_k(x)) (module doc), π_k from *draws* draws of the first k − 1."""
    q_rows = q.expand(draws, -1).clone()
    among = torch.zeros_like(q_rows)  # 1 where a row's token was drawn already
    out = []
    for _ in range(ranks):
        left = (1.0 - (q * among).sum(dim=-1, keepdim=True)).clamp_min(1e-30)
        chance = (among + (1.0 - among) * q / left).mean(dim=0)  # π_k
        out.append(float(torch.minimum(p, chance.clamp(max=1.0)).sum()))
        drawn = sampler.draw(q_rows)
        among.scatter_(1, drawn[:, None], 1.0)
        q_rows = _without_drawn(q_rows, drawn)
    return out


def answer_positions(
    pair: DraftModelPairLike, prompt_ids: torch.Tensor, settings: GenerationSettings
) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    """The target's answer sampled at the settings' temperature, position by position: the
    target's law p (V,) there and the draft's logits (V,) after the same text. Each model runs
    its own forward with its KV cache, one token a step after the prompt's reading."""
    device = device_of(pair.target)
    sampler = Sampler.from_settings(settings, device)
    target, draft = ModelRunner(pair.target), ModelRunner(pair.draft)
    ids = prompt_ids.to(device)
    target_logits, draft_logits = target.forward(ids)[-1], draft.forward(ids)[-1]
    for _ in range(settings.max_new_tokens):
        p = sampler.probs(target_logits)
        yield p, draft_logits
        token = int(sampler.draw(p))
        if token in pair.eos_token_ids:
            return
        step = torch.tensor([[token]], device=device)
        target_logits, draft_logits = target.forward(step)[-1], draft.forward(step)[-1]


def _support(
    p: torch.Tensor, q: torch.Tensor, size: int
) -> tuple[torch.Tensor, torch.Tensor, float]:
    """p and q on the *size* tokens most likely under p + q, renormalised, and the mass left out."""
    chosen = torch.topk(p + q, min(size, p.shape[-1])).indices
    p_in, q_in = p[chosen], q[chosen]
    left_out = float(2.0 - p_in.sum() - q_in.sum()) / 2.0
    return p_in / p_in.sum(), q_in / q_in.sum(), left_out


@dataclass
class _Tallies:
    """One task group's counts so far: the drawn rule at each draft temperature, the top picks,
    the bound, and the mass the support left out."""

    settings: GenerationSettings
    draft_temperatures: Sequence[float]
    ranks: int
    draws: int
    support: int
    sampler: Sampler
    drawn: dict[float, RankTally] = field(default_factory=dict)
    top: RankTally = field(init=False)
    bound: RankTally = field(init=False)
    positions: int = 0
    left_out: float = 0.0

    def __post_init__(self) -> None:
        self.drawn = {t: RankTally.empty(self.ranks) for t in self.draft_temperatures}
        self.top, self.bound = RankTally.empty(self.ranks), RankTally.empty(self.ranks)

    def _law(self, draft_logits: torch.Tensor, scale: float = 1.0) -> torch.Tensor:
        """The draft's law under the settings' transform, its temperature times *scale*."""
        settings = self.settings
        return logits_to_probs(
            draft_logits, settings.temperature * scale, settings.top_k, settings.top_p
        )

    def add_position(self, p: torch.Tensor, draft_logits: torch.Tensor) -> None:
        """Count one answer position under every rule."""
        self.positions += 1
        for scale, tally in self.drawn.items():
            p_in, q_in, _ = _support(p, self._law(draft_logits, scale), self.support)
            tally.add(*drawn_rank_counts(p_in, q_in, self.ranks, self.draws, self.sampler))
        q = self._law(draft_logits)
        self.top.add(*top_rank_chances(p, q, self.ranks))
        p_in, q_in, outside = _support(p, q, self.support)
        self.left_out += outside
        kept_by = bound_kept(p_in, q_in, self.ranks, self.draws, self.sampler)
        before = [0.0, *kept_by[:-1]]  # P(one of the first k − 1 kept), as ranks are tested
        self.bound.add(
            [now - then for now, then in zip(kept_by, before, strict=True)],
            [1.0 - then for then in before],
        )

    def rows(self, nodes: int) -> tuple[HeadroomRow, ...]:
        counted = [("drawn", scale, tally) for scale, tally in self.drawn.items()]
        counted += [("top", 1.0, self.top), ("bound", 1.0, self.bound)]
        gamma = self.settings.gamma
        return tuple(_row(rule, scale, tally, gamma, nodes) for rule, scale, tally in counted)


def check_headroom(
    settings: GenerationSettings, draft_temperatures: Sequence[float], shown: object = None
) -> None:
    """A UserError unless the settings sample (T > 0) and every draft temperature is a finite
    number above 0 (*shown*: the temperatures as the user gave them, for the message)."""
    if settings.temperature <= 0:
        raise UserError("error.measure.headroom_greedy")
    if not all(0 < value < math.inf for value in draft_temperatures or [0.0]):
        got = list(draft_temperatures) if shown is None else shown
        raise UserError("error.measure.draft_temperatures", got=got)


def tree_headroom(
    pair: DraftModelPairLike,
    prompts: Sequence[tuple[str, torch.Tensor]],
    settings: GenerationSettings,
    *,
    nodes: int = 16,
    draft_temperatures: Sequence[float] = (1.0, 0.8, 0.6),
    ranks: int = 4,
    draws: int = 400,
    support: int = 2048,
) -> list[TreeHeadroom]:
    """Each task group's rank rates under the drawn rule (at each draft temperature), the
    one-hot top picks and the bound, on the target's sampled answers (module doc); the answer
    to a group's i-th prompt is sampled with the settings' seed + i."""
    check_headroom(settings, draft_temperatures)
    sampler = Sampler(1.0, 0, 1.0, torch.Generator().manual_seed(settings.seed))
    reports: list[TreeHeadroom] = []
    for task in dict.fromkeys(task for task, _ in prompts):
        group = [prompt_ids for name, prompt_ids in prompts if name == task]
        tallies = _Tallies(settings, draft_temperatures, ranks, draws, support, sampler)
        for index, prompt_ids in enumerate(group):
            seeded = replace(settings, seed=settings.seed + index)
            for p, draft_logits in answer_positions(pair, prompt_ids, seeded):
                tallies.add_position(p.float().cpu(), draft_logits.float().cpu())
        reports.append(
            TreeHeadroom(
                task,
                len(group),
                tallies.positions,
                settings.temperature,
                settings.gamma,
                nodes,
                tallies.left_out / max(tallies.positions, 1),
                tallies.rows(nodes),
            )
        )
    return reports


def _row(
    rule: str, draft_temperature: float, tally: RankTally, gamma: int, nodes: int
) -> HeadroomRow:
    acceptance = RankAcceptance.from_rates(tally.rates())
    return HeadroomRow(
        rule,
        draft_temperature,
        tally.rates(),
        expected_tokens(acceptance, [1] * gamma),
        best_tree(acceptance, nodes, max_depth=nodes).tau,
    )
