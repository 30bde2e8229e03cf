"""The exactness lab: is speculative sampling really lossless?

Leviathan et al. (2023, Theorem 1) and Chen et al. (2023) prove that accepting a drafted x with
probability min(1, p(x)/q(x)) and, at the first rejection, drawing from norm(max(0, p − q)) emits
every token with law exactly p, the target's. This lab tests that claim empirically: N continuations
of a few tokens by plain sampling from p and N by speculative sampling, compared with a chi-square
test. A deliberately wrong rule (accept every draft, whose output law is q) shows the test has teeth.

Both models are deterministic, so every sample that reaches the same prefix sees the same p and q.
The samples therefore advance together one depth at a time, grouped by prefix: each model runs one
batched forward per block of distinct prefixes (far fewer than N), and tokens are drawn for a whole
group at once with torch.multinomial. The rule itself is the project's own (sampling.py), so a bug
there shows up here.
"""

from __future__ import annotations

import functools
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import torch

from specviz.core.device import device_of
from specviz.core.engine import DraftModelPairLike
from specviz.core.sampling import (
    Sampler,
    acceptance_probs,
    emission_distribution,
    residual_distribution,
)
from specviz.core.settings import GenerationSettings
from specviz.labs.exactness.significance import (
    ChiSquare,
    fit_test,
    homogeneity_test,
    samples_needed,
    samples_needed_for_shift,
    tv_if_equal,
)
from specviz.measure.harness import Staged
from specviz.models.runner import ModelRunner
from specviz.text import Joined, Phrase, UserError

PLAIN = -1  # the state of a plain sample (speculative ones count accepted drafts)
RULES = ("exact", "accept_draft")  # the paper's rule, and the deliberately wrong one
SAMPLES_RANGE, TOKENS_RANGE = (10, 20_000), (1, 3)
TV_STEPS = (0.01, 0.02, 0.05, 0.1)  # differences the report sizes a test for
_LAW_BINS = 30  # exact first-token probabilities kept in the report (then the rest, pooled)

Prefix = tuple[int, ...]  # generated ids after the prompt


@dataclass(frozen=True)
class Outcome:
    """One observed continuation (its first `length` tokens) and how often each arm produced it."""

    token_ids: tuple[int, ...]
    token_texts: tuple[str, ...]  # each token decoded on its own, for labels
    plain: int
    speculative: int
    exact_prob: float  # the target's probability of this continuation: p_1(x_1) · p_2(x_2 | x_1) …


@dataclass(frozen=True)
class Comparison:
    """Plain against speculative on the law of the first `length` generated tokens."""

    length: int
    outcomes: tuple[Outcome, ...]  # every outcome either arm produced, most frequent first
    tv_distance: float  # between the two empirical distributions
    tv_if_equal: float  # about the TV two samples of this size from the SAME law would show
    homogeneity: ChiSquare  # plain vs speculative counts
    speculative_fit: ChiSquare  # speculative counts vs the exact law
    plain_fit: ChiSquare  # plain counts vs the exact law (a control on the test itself)


@dataclass(frozen=True)
class ExactnessReport:
    """Everything the exactness tab shows; plain numbers and strings."""

    settings: GenerationSettings
    samples: int  # per arm
    tokens: int
    rule: str
    elapsed_s: float
    target_forwards: int  # batched forward calls
    draft_forwards: int
    target_prefixes: int  # distinct prefixes the target scored, each once
    draft_prefixes: int
    comparisons: tuple[Comparison, ...]  # first token, first two tokens, …
    # max |analytic law of the first emitted token under the rule run − p_1|: rounding for the
    # paper's rule (Theorem 1), max |q_1 − p_1| for the wrong one, which ships the draft's law
    emission_max_error: float
    draft_target_tv: float  # TV(p_1, q_1): how far the wrong rule moves the first token
    wrong_rule_samples_needed: int | None  # per arm, to see that shift (None when p_1 = q_1)
    samples_needed_by_tv: tuple[tuple[float, int], ...]  # (TV shift away from the top token, N)
    first_token_law: tuple[float, ...]  # p_1's largest probabilities, then the rest pooled


class _Scorer:
    """One model's next-token distributions for many prefixes: one batched forward per block.

    The prompt but its last token is fed once into the model's runner (the forward the engine
    runs); each block feeds [last prompt token, *prefix] per row as branches after that cache, so
    all rows of a depth have equal length and the cache is left as it was for the next block.
    """

    def __init__(self, model: torch.nn.Module, prompt_ids: torch.Tensor, sampler: Sampler):
        self.sampler = sampler
        self.runner = ModelRunner(model)
        self.device = self.runner.device
        if prompt_ids.shape[1] > 1:
            self.runner.forward(prompt_ids[:, :-1].to(self.device))
        self.last = int(prompt_ids[0, -1])
        self.forwards = self.prefixes = 0

    def probs(self, prefixes: Sequence[Prefix]) -> torch.Tensor:
        """(B, V) float32 distributions after each prefix, with the run's temperature/top-k/top-p."""
        if not prefixes:
            return torch.empty(0)
        feed = torch.tensor([[self.last, *prefix] for prefix in prefixes], device=self.device)
        logits = self.runner.branch_logits(feed)  # (B, V)
        self.forwards += 1
        self.prefixes += len(prefixes)
        return self.sampler.probs(logits)


def _draw(dist: torch.Tensor, count: int, generator: torch.Generator) -> list[tuple[int, int]]:
    """count draws from dist as (token id, times drawn) pairs: one multinomial per group."""
    draws = torch.multinomial(dist, count, replacement=True, generator=generator)
    ids, counts = torch.unique(draws, return_counts=True)
    return list(zip(ids.tolist(), counts.tolist(), strict=True))


@torch.inference_mode()
def iter_exactness_lab(
    pair: DraftModelPairLike,
    prompt_ids: torch.Tensor,
    settings: GenerationSettings,
    samples: int = 2000,
    tokens: int = 2,
    rule: str = "exact",
    batch_size: int = 32,
) -> Iterator[Staged[ExactnessReport]]:
    """Sample `samples` continuations of `tokens` tokens both ways and compare their laws; a
    stage after each batch of forwards (so a caller can stop between them), the report in the
    last (run it to its end with measure.harness.staged_result). The arguments are checked on
    the first next()."""
    _check(prompt_ids, settings, samples, tokens, rule)
    began = time.perf_counter()
    sampler = Sampler.from_settings(settings, device_of(pair.target))
    target = _Scorer(pair.target, prompt_ids, sampler)
    draft = _Scorer(pair.draft, prompt_ids, sampler)
    # Samples by (prefix, state): state PLAIN for the plain arm, else the drafts accepted so far
    # this cycle. Drafting lazily (x_{i+1} only once x_i is accepted) keeps the engine's law, since
    # drafts after the first rejection are discarded unseen; drafts past the window never matter.
    states: Counter[tuple[Prefix, int]] = Counter({((), PLAIN): samples, ((), 0): samples})
    exact: dict[Prefix, float] = {(): 1.0}  # the target's probability of each prefix reached
    first: tuple[torch.Tensor, torch.Tensor] | None = None  # p_1 and q_1
    for depth in range(tokens):
        reached = sorted({prefix for prefix, _ in states})
        drafting = {prefix for prefix, state in states if 0 <= state < settings.gamma}
        current, states = states, Counter()
        for start in range(0, len(reached), batch_size):
            block = reached[start : start + batch_size]
            q_rows = [prefix for prefix in block if prefix in drafting]
            q_of = dict(zip(q_rows, draft.probs(q_rows), strict=True))
            for prefix, p in zip(block, target.probs(block), strict=True):
                q = q_of.get(prefix, p)  # p stands in where no sample drafts from here
                first = first or (p, q)
                emit = functools.partial(_emit, states, exact, prefix, p)
                for state in range(PLAIN, settings.gamma + 1):
                    if count := current[(prefix, state)]:
                        _step(p, q, count, state, rule, settings, sampler, emit)
            done = (depth + min(start + batch_size, len(reached)) / len(reached)) / tokens
            where = Phrase(
                "exactness.progress", token=depth + 1, tokens=tokens, prefixes=len(reached)
            )
            yield Staged(min(done, 0.99), where)
    assert first is not None  # depth 0 always scores the empty prefix
    plain: Counter[Prefix] = Counter()
    spec: Counter[Prefix] = Counter()
    for (prefix, state), count in states.items():
        (plain if state == PLAIN else spec)[prefix] += count
    elapsed = time.perf_counter() - began
    lab = _Lab(pair, settings, samples, tokens, rule, elapsed, target, draft)
    yield Staged(1.0, Phrase("progress.done"), _report(lab, plain, spec, exact, first))


def _emit(
    states: Counter[tuple[Prefix, int]],
    exact: dict[Prefix, float],
    prefix: Prefix,
    p: torch.Tensor,
    token: int,
    count: int,
    state: int,
) -> None:
    """count samples at prefix emit token and move to state; the new prefix's exact law is kept."""
    grown = (*prefix, token)
    if grown not in exact:
        exact[grown] = exact[prefix] * float(p[token])
    states[(grown, state)] += count


def _step(
    p: torch.Tensor,
    q: torch.Tensor,
    count: int,
    state: int,
    rule: str,
    settings: GenerationSettings,
    sampler: Sampler,
    emit: Callable[[int, int, int], None],
) -> None:
    """Advance `count` samples that share one prefix and state by one emitted token."""
    if state in (PLAIN, settings.gamma):
        # Plain sampling, or the bonus token after γ accepted drafts: both are drawn from p.
        for token, times in _draw(p, count, sampler.generator):
            emit(token, times, PLAIN if state == PLAIN else 0)
        return
    drafts = torch.multinomial(q, count, replacement=True, generator=sampler.generator)
    if rule == "exact":  # accept x iff u < min(1, p(x)/q(x)), the engine's own test
        ratios = acceptance_probs(p[drafts], q[drafts])
        kept = drafts[sampler.uniforms(count, drafts.device) < ratios]
    else:  # the wrong rule: every draft accepted, so the output law is q, not p
        kept = drafts
    ids, times = torch.unique(kept, return_counts=True)
    for token, times_kept in zip(ids.tolist(), times.tolist(), strict=True):
        # The engine's confidence stop ends the draft after an unsure token; a bonus follows.
        # (The cumulative stop is not mirrored: where a draft ends never changes the law.)
        stop = float(q[token]) < settings.draft_stop_below
        emit(token, times_kept, settings.gamma if stop else state + 1)
    if rejected := count - kept.numel():  # the first rejection: draw from norm(max(0, p − q))
        for token, times_drawn in _draw(residual_distribution(p, q), rejected, sampler.generator):
            emit(token, times_drawn, 0)


def _check(
    prompt_ids: torch.Tensor, settings: GenerationSettings, samples: int, tokens: int, rule: str
) -> None:
    """Raise one UserError naming every argument the lab cannot run with."""
    problems = []
    if prompt_ids.dim() != 2 or prompt_ids.shape[0] != 1 or prompt_ids.shape[1] == 0:
        problems.append(Phrase("error.exactness.prompt"))
    if not SAMPLES_RANGE[0] <= samples <= SAMPLES_RANGE[1]:
        low, high = SAMPLES_RANGE
        problems.append(Phrase("error.exactness.samples", low=low, high=f"{high:,}", value=samples))
    if not TOKENS_RANGE[0] <= tokens <= TOKENS_RANGE[1]:
        low, high = TOKENS_RANGE
        problems.append(Phrase("error.exactness.tokens", low=low, high=high, value=tokens))
    if settings.temperature <= 0.0:
        problems.append(Phrase("error.exactness.greedy"))
    if rule not in RULES:
        problems.append(Phrase("error.exactness.rule", known=", ".join(RULES), value=repr(rule)))
    if problems:
        raise UserError("error.problems", problems=Joined("error.separator", tuple(problems)))


@dataclass(frozen=True)
class _Lab:
    """What a run was and what it cost, handed from the sampler to the report."""

    pair: DraftModelPairLike
    settings: GenerationSettings
    samples: int
    tokens: int
    rule: str
    elapsed_s: float
    target: _Scorer
    draft: _Scorer


def _report(
    lab: _Lab,
    plain: Counter[Prefix],
    spec: Counter[Prefix],
    exact: dict[Prefix, float],
    first: tuple[torch.Tensor, torch.Tensor],
) -> ExactnessReport:
    # Renormalised in float64: the analytic check is about the rule, not float32 rounding.
    p_first, q_first = (dist.double().cpu() / dist.double().sum() for dist in first)
    generator = torch.Generator().manual_seed(lab.settings.seed)
    comparisons = tuple(
        _compare(lab.pair, length, plain, spec, exact, lab.samples, generator)
        for length in range(1, lab.tokens + 1)
    )
    tv_first = 0.5 * float((p_first - q_first).abs().sum())
    try:
        wrong_rule_n: int | None = samples_needed(p_first, q_first)
    except ValueError:  # p_1 = q_1: the wrong rule changes nothing at the first token
        wrong_rule_n = None
    top = float(p_first.max())
    law, _ = torch.sort(p_first, descending=True)
    return ExactnessReport(
        settings=lab.settings,
        samples=lab.samples,
        tokens=lab.tokens,
        rule=lab.rule,
        elapsed_s=lab.elapsed_s,
        target_forwards=lab.target.forwards,
        draft_forwards=lab.draft.forwards,
        target_prefixes=lab.target.prefixes,
        draft_prefixes=lab.draft.prefixes,
        comparisons=comparisons,
        emission_max_error=float(
            (first_token_law(lab.rule, p_first, q_first) - p_first).abs().max()
        ),
        draft_target_tv=tv_first,
        wrong_rule_samples_needed=wrong_rule_n,
        samples_needed_by_tv=tuple(
            (tv, samples_needed_for_shift(p_first, tv)) for tv in TV_STEPS if tv <= top
        ),
        first_token_law=(*law[:_LAW_BINS].tolist(), float(law[_LAW_BINS:].sum())),
    )


def first_token_law(rule: str, p_first: torch.Tensor, q_first: torch.Tensor) -> torch.Tensor:
    """The law of the first emitted token under `rule`, in closed form: the paper's rule emits p
    (emission_distribution, Leviathan et al. Theorem 1); accepting every draft emits q."""
    return emission_distribution(p_first, q_first) if rule == "exact" else q_first


def _compare(
    pair: DraftModelPairLike,
    length: int,
    plain: Counter[Prefix],
    spec: Counter[Prefix],
    exact: dict[Prefix, float],
    samples: int,
    generator: torch.Generator,
) -> Comparison:
    """Both arms' counts of the first `length` tokens, and the tests between them and the law."""
    plain_counts: Counter[Prefix] = Counter()
    spec_counts: Counter[Prefix] = Counter()
    for source, target in ((plain, plain_counts), (spec, spec_counts)):
        for prefix, count in source.items():
            target[prefix[:length]] += count
    keys = sorted(
        set(plain_counts) | set(spec_counts), key=lambda k: (-plain_counts[k] - spec_counts[k], k)
    )
    decode = pair.tokenizer.decode
    outcomes = tuple(
        Outcome(
            key,
            tuple(decode([token], skip_special_tokens=False) for token in key),
            plain_counts[key],
            spec_counts[key],
            exact[key],
        )
        for key in keys
    )
    plain_n = [o.plain for o in outcomes]
    spec_n = [o.speculative for o in outcomes]
    law = [o.exact_prob for o in outcomes]
    return Comparison(
        length=length,
        outcomes=outcomes,
        tv_distance=0.5 * sum(abs(a - b) for a, b in zip(plain_n, spec_n, strict=True)) / samples,
        tv_if_equal=tv_if_equal(law, samples, generator),
        homogeneity=homogeneity_test(plain_n, spec_n),
        speculative_fit=fit_test(spec_n, law, samples),
        plain_fit=fit_test(plain_n, law, samples),
    )
