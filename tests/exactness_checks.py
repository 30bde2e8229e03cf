"""The checks that decoding stays exact, shared by the engine's and every drafter's tests: greedy
speculative decoding emits plain greedy decoding's tokens; and on a four-token Markov chain pair,
whose law is known in closed form, sampled tokens pass a chi-square test against the target's law
while the wrong rule (the negative control) fails it.

Not a test module: tests import from here (pytest puts tests/ on sys.path).
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable

import torch
from scipy.stats import chisquare
from tiny_models import ByteTokenizer, MarkovLM, TinyPair, random_transition

from specviz.core.engine import autoregressive_generate, speculative_generate
from specviz.core.proposal import Drafter
from specviz.core.sampling import Verdict, verify_sampled
from specviz.core.settings import GenerationSettings
from specviz.drafters.registry import make_drafter
from specviz.models.presets import DEFAULT_DRAFTER

# A prompt that repeats itself, so a copying drafter finds something to copy.
REPEATING_PROMPT = torch.tensor([list(b"def add(a, b):\n    return a + b\n\ndef add(a, b):")])


def assert_greedy_equals_plain(pair: TinyPair, spec: str, gamma: int, adaptive: bool) -> None:
    """Greedy speculative decoding with the drafter spec emits plain greedy decoding's tokens."""
    settings = GenerationSettings(
        gamma=gamma, adaptive_gamma=adaptive, max_new_tokens=40, stop_on_eos=False
    )
    plain = [
        step.token.token_id for step in autoregressive_generate(pair, REPEATING_PROMPT, settings)
    ]
    cycles = speculative_generate(pair, REPEATING_PROMPT, settings, make_drafter(spec, pair))
    assert [token.token_id for cycle in cycles for token in cycle.emitted] == plain


CHAIN_VOCAB = 4
CHAIN_TOKENS = 3  # the test looks at the joint law of the first three generated tokens


def chain_pair() -> TinyPair:
    """Draft and target two different random chains over CHAIN_VOCAB tokens (fixed seeds)."""
    target = MarkovLM(random_transition(CHAIN_VOCAB, seed=11, concentration=1.0))
    draft = MarkovLM(random_transition(CHAIN_VOCAB, seed=12, concentration=1.0))
    return TinyPair(draft, target, ByteTokenizer(), frozenset())


def sample_joint(
    pair: TinyPair,
    gamma: int,
    samples: int,
    drafter_for: Callable[[TinyPair], Drafter] = lambda pair: make_drafter(DEFAULT_DRAFTER, pair),
    prompt_ids: tuple[int, ...] = (0, 1),  # must end with token 1 (chi_square_p_value's start)
) -> Counter[tuple[int, ...]]:
    """How often each sequence of the first CHAIN_TOKENS tokens came out, over *samples* seeds."""
    prompt = torch.tensor([prompt_ids])
    counts: Counter[tuple[int, ...]] = Counter()
    for seed in range(samples):
        settings = GenerationSettings(
            gamma=gamma, temperature=1.0, max_new_tokens=CHAIN_TOKENS, seed=seed, stop_on_eos=False
        )
        cycles = speculative_generate(pair, prompt, settings, drafter_for(pair))
        counts[tuple(t.token_id for c in cycles for t in c.emitted)] += 1
    return counts


def chi_square_p_value(pair: TinyPair, counts: Counter[tuple[int, ...]]) -> float:
    """The chi-square p-value of *counts* against the target chain's law of those tokens."""
    transition = pair.target.transition  # type: ignore[union-attr]
    cells = list(itertools.product(range(CHAIN_VOCAB), repeat=CHAIN_TOKENS))
    expected = []
    for cell in cells:
        prob, last = 1.0, 1  # the prompt ends with token 1
        for token in cell:
            prob *= float(transition[last, token])
            last = token
        expected.append(prob)
    total = sum(counts.values())
    observed = [counts[cell] for cell in cells]
    return float(chisquare(observed, [e * total for e in expected]).pvalue)


def wrong_verify(draft_ids, q_draft, p_target, uniforms, sampler) -> Verdict:  # type: ignore[no-untyped-def]
    """The classic bug: after a rejection, resample from p instead of norm(max(0, p - q))."""
    verdict = verify_sampled(draft_ids, q_draft, p_target, uniforms, sampler)
    if verdict.accepted_len < draft_ids.shape[0]:
        dist = p_target[verdict.accepted_len]
        return Verdict(
            verdict.accepted_len,
            int(sampler.draw(dist)),
            dist,
            verdict.accept_probs,
            verdict.p_at_draft,
            verdict.q_at_draft,
        )
    return verdict
