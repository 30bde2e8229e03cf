"""Self-drafting against its papers' models: Medusa's acceptance per head and lookahead decoding's
accepted n-gram length, measured in a real run, turned into tokens per pass and a predicted
speedup, beside the speedup the same run measured.

Both drafters let the target draft for itself (no second model): Medusa's heads read its last
hidden state (specviz.labs.speedup.heads_theory, τ = 1 + Σ_d Π_{k≤d} α_k, Cai et al. 2024), and
lookahead's Jacobi window and n-gram pool ride in its verifying pass
(specviz.labs.speedup.ngram_theory, τ = 1 + E[accepted length], Fu et al. 2024). Either way a
cycle costs, in plain decoding's steps,

    d + v_tree(M)

with d the drafter's own work per cycle as the run timed it (Medusa's heads; lookahead's
bookkeeping) and v_tree(M) the target's tree forward over the M tokens that cycle's pass sent,
timed here through the runner the engine verifies with, each cycle's pass priced at its own M.
The predicted speedup is τ over the mean of that cost (Leviathan et al. 2023, Theorem 3.8 with
the verifying forward costing v(M) instead of one step, as specviz.labs.speedup.tree_lab does
for draft trees). The unit is the seconds per token plain decoding took in this lab, the
denominator of the measured speedup.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

import torch

from specviz.core.engine import DraftModelPairLike
from specviz.core.events import Cycle, Totals
from specviz.core.settings import GenerationSettings
from specviz.drafters.registry import DRAFTERS, Drafts, check_drafter_spec, drafter_entry
from specviz.drafters.registry import tokens_a_pass as most_tokens_a_pass
from specviz.drafters.tree_growth import MAX_NODES
from specviz.labs.speedup.cost_curve import CostCurve, iter_verification_cost
from specviz.labs.speedup.heads_theory import HeadsTheory, measure_heads
from specviz.labs.speedup.ngram_theory import NgramTheory, measure_ngrams
from specviz.labs.speedup.theory import engine_totals
from specviz.labs.speedup.tree_lab import forward_s
from specviz.measure.firmness import Judgement, judge_lab
from specviz.measure.harness import (
    Staged,
    iter_measurements,
    staged_measurements,
    staged_part,
    warm_up_settings,
)
from specviz.measure.methods import plain_decoding, speculative_decoding
from specviz.measure.spread import Spread
from specviz.models.cpu_load import OthersShare
from specviz.text import Phrase, UserError

# The ways of drafting this lab has a model for: heads on the target's state (Medusa) and the
# target's own Jacobi window (lookahead). The registry says which kinds draft so.
MODELLED = (Drafts.WITH_TARGET_HEADS, Drafts.BY_TARGET_WINDOW)
DEFAULT_SPEC = "lookahead"  # needs nothing trained first
_RUN_SHARE = 0.7  # of the time budget for the two decoding runs; the tree forwards get the rest
_PRICED_SIZES = 6  # tree forward sizes timed at most (with the one-token step): the rest between
_PLAIN = "plain"
_SELF = "self"


def modelled_kinds() -> tuple[str, ...]:
    """The registered drafter kinds this lab models, in registry order."""
    return tuple(kind for kind, entry in DRAFTERS.items() if entry.drafts in MODELLED)


def check_modelled(spec: str) -> str:
    """*spec* checked, and of a kind this lab models; UserError naming those kinds otherwise."""
    parsed = check_drafter_spec(spec)
    if drafter_entry(parsed).drafts not in MODELLED:
        raise UserError(
            "error.self_draft.drafter", spec=repr(str(parsed)), kinds=", ".join(modelled_kinds())
        )
    return str(parsed)


@dataclass(frozen=True)
class Prediction:
    """τ over a cycle's cost, both in plain decoding's steps."""

    tau: float
    draft_cost: float  # the drafter's own work per cycle (d)
    verify_cost: float  # the target's pass, averaged over the cycles' sizes (v_tree(M))
    speedup: float


def predict(
    tau: float,
    pass_tokens: Sequence[int],
    draft_s: float,
    curve: CostCurve,
    plain_step_s: float,
) -> Prediction:
    """S = τ / (d + mean v_tree(M_i)) in steps of *plain_step_s* (module doc): *pass_tokens* the
    tokens each cycle's pass read, *draft_s* the drafter's mean seconds a cycle."""
    step = max(plain_step_s, 1e-9)
    verify_s = statistics.fmean(forward_s(curve, size) for size in pass_tokens or (1,))
    return Prediction(
        tau, draft_s / step, verify_s / step, tau * step / max(draft_s + verify_s, 1e-9)
    )


def priced_sizes(pass_tokens: Sequence[int], most: int = _PRICED_SIZES) -> list[int]:
    """The tree forward sizes to time: 1 (the curve's base), then the passes' sizes, thinned to
    *most* spread from the smallest to the largest (forward_s interpolates between them)."""
    seen = sorted({min(size, MAX_NODES + 1) for size in pass_tokens} - {1})
    if len(seen) > most:
        step = (len(seen) - 1) / (most - 1)
        seen = sorted({seen[round(i * step)] for i in range(most)})
    return [1, *seen]


@dataclass(frozen=True)
class SelfDraftLab:
    """One self-drafting run against plain decoding, and its paper's model fed from the run."""

    spec: str  # the drafter measured, "lookahead:window=4,ngram=3,guesses=4" or "medusa"
    heads: HeadsTheory | None  # Medusa's model, for a drafter with heads
    ngrams: NgramTheory | None  # lookahead's, for a drafter with a Jacobi window
    most_tokens: int  # the most tokens one of its passes can send (registry.tokens_a_pass)
    plain_tokens_per_s: float
    plain_new_tokens: int
    tau: float  # the run's new tokens per target pass, measured
    tokens_per_s: float
    new_tokens: int
    speedup: float  # measured: tokens/s over plain decoding's
    draft_s_per_cycle: float  # the drafter's own seconds a cycle, timed in the run
    predicted: Prediction
    tree_curve: CostCurve  # the target's tree forward at the priced sizes
    elapsed_s: float
    runs_complete: bool  # both runs made their tokens within their share of the budget
    others_share: float | None

    @property
    def complete(self) -> bool:
        """The runs made their tokens and the tree forward was timed at every priced size."""
        return self.runs_complete and self.tree_curve.complete

    @property
    def model_tau(self) -> float:
        """The paper's τ from the run's acceptance (heads or n-gram lengths)."""
        theory = self.heads or self.ngrams
        return theory.tau if theory is not None else 1.0

    @property
    def pass_tokens(self) -> tuple[int, ...]:
        theory = self.heads or self.ngrams
        return theory.pass_tokens if theory is not None else ()

    @property
    def firmness(self) -> Judgement:
        """How firm the measured speedup is (tokens, one run, the CPU others took)."""
        tokens = min(self.new_tokens, self.plain_new_tokens)
        return judge_lab(tokens, Spread.of([self.speedup]), self.others_share)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict, with the model's derived numbers: τ, each head's α_d and reach, the
        mean accepted length and guesses a pass."""
        record = asdict(self)
        record["model_tau"] = self.model_tau
        if self.heads is not None:
            for row, head in zip(record["heads"]["heads"], self.heads.heads, strict=True):
                row.update(
                    rate=head.rate,
                    first_guess_rate=head.first_guess_rate,
                    reach=self.heads.reach(head.head),
                )
        if self.ngrams is not None:
            record["ngrams"].update(
                mean_accepted=self.ngrams.mean_accepted, mean_guesses=self.ngrams.mean_guesses
            )
        return record


def iter_self_draft_lab(
    pair: DraftModelPairLike,
    prompt_ids: torch.Tensor,
    settings: GenerationSettings,
    spec: str = DEFAULT_SPEC,
    cost_repeats: int = 3,
    time_budget_s: float = 90.0,
) -> Iterator[Staged[SelfDraftLab]]:
    """Decode plainly and with *spec*'s drafter (interleaved, 70 % of the time budget), then time
    the target's tree forward at the sizes its passes sent; a stage before each run and after
    each forward, the lab in the last. Checked on the first next()."""
    spec = check_modelled(spec)
    if prompt_ids.dim() != 2 or prompt_ids.shape[1] < 2:
        raise UserError("error.prompt_too_short")
    began = time.perf_counter()
    deadline = began + time_budget_s
    others = OthersShare()
    methods = [
        replace(
            plain_decoding(pair, prompt_ids, settings, _PLAIN),
            label=Phrase("speedup.progress.plain"),
        ),
        replace(
            speculative_decoding(pair, prompt_ids, settings, _SELF, drafter_spec=spec),
            label=Phrase("self_draft.progress.run", spec=spec),
        ),
    ]
    warm = warm_up_settings(settings)
    warm_up = [
        plain_decoding(pair, prompt_ids, warm, "warm-up plain"),
        speculative_decoding(pair, prompt_ids, warm, "warm-up self", drafter_spec=spec),
    ]
    measured = yield from staged_measurements(
        iter_measurements(methods, warm_up=warm_up, time_budget_s=_RUN_SHARE * time_budget_s),
        _RUN_SHARE,
    )
    plain_outcome = measured[_PLAIN].samples[0].outcome
    outcome = measured[_SELF].samples[0].outcome
    cycles = [event for event in outcome.events if isinstance(event, Cycle)]
    heads, ngrams = _theories(spec, cycles)
    theory = heads or ngrams
    assert theory is not None  # check_modelled let only the modelled kinds through
    curve = yield from staged_part(
        iter_verification_cost(
            pair.target,
            prompt_ids,
            repeats=cost_repeats,
            time_budget_s=max(0.0, deadline - time.perf_counter()),
            sizes=priced_sizes(theory.pass_tokens),
            tree=True,
        ),
        _RUN_SHARE,
        0.99,
        Phrase("self_draft.progress.cost"),
    )
    plain = engine_totals(plain_outcome)
    run = engine_totals(outcome)
    drafting = [cycle.timing.draft_s for cycle in cycles if cycle.tree and cycle.tree.nodes]
    draft_s = statistics.fmean(drafting) if drafting else 0.0
    plain_step_s = 1.0 / plain.tokens_per_s if plain.tokens_per_s else 0.0
    yield Staged(
        1.0,
        Phrase("progress.done"),
        SelfDraftLab(
            spec=spec,
            heads=heads,
            ngrams=ngrams,
            most_tokens=most_tokens_a_pass(spec, settings.gamma),
            plain_tokens_per_s=plain.tokens_per_s,
            plain_new_tokens=plain.new_tokens,
            tau=run.tokens_per_target_pass,
            tokens_per_s=run.tokens_per_s,
            new_tokens=run.new_tokens,
            speedup=_speedup(run, plain),
            draft_s_per_cycle=draft_s,
            predicted=predict(theory.tau, theory.pass_tokens, draft_s, curve, plain_step_s),
            tree_curve=curve,
            elapsed_s=time.perf_counter() - began,
            runs_complete=measured.complete,
            others_share=others.share(),
        ),
    )


def _theories(spec: str, cycles: Sequence[Cycle]) -> tuple[HeadsTheory | None, NgramTheory | None]:
    """The model the spec's kind drafts by, measured from its cycles."""
    if drafter_entry(spec).drafts is Drafts.WITH_TARGET_HEADS:
        return measure_heads(cycles), None
    return None, measure_ngrams(cycles)


def _speedup(run: Totals, plain: Totals) -> float:
    return run.tokens_per_s / plain.tokens_per_s if plain.tokens_per_s else 0.0
