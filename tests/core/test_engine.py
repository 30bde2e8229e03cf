"""The engine end to end on tiny models: exactness, greedy equality, caches, drafter behaviour."""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Callable
from dataclasses import dataclass

import pytest
import torch
from exactness_checks import CHAIN_VOCAB, chain_pair, chi_square_p_value, sample_joint, wrong_verify
from rule_drafters import RuleDrafter, successor
from tiny_models import (
    EOS_ID,
    ByteTokenizer,
    MarkovLM,
    TinyPair,
    eos_heavy_pair,
    random_transition,
    tiny_qwen,
)

import specviz.core.engine
import specviz.core.sampling
from specviz.core.engine import GenerationSettings, autoregressive_generate, speculative_generate
from specviz.core.events import Cycle, Origin
from specviz.core.proposal import Drafter, Proposal
from specviz.core.sampling import Sampler
from specviz.drafters.policy import next_gamma
from specviz.drafters.registry import make_drafter
from specviz.models.presets import DEFAULT_DRAFTER

PROMPT = torch.tensor([list(b"def fib(n):")])


def spec_ids(pair: TinyPair, settings: GenerationSettings, drafter=None) -> list[int]:
    drafter = drafter or make_drafter(DEFAULT_DRAFTER, pair)
    cycles = list(speculative_generate(pair, PROMPT, settings, drafter))
    return [token.token_id for cycle in cycles for token in cycle.emitted]


def same_chain_pair(transition: torch.Tensor) -> TinyPair:
    """Draft and target both the Markov chain `transition`: every law is known in closed form."""
    return TinyPair(
        MarkovLM(transition), MarkovLM(transition), ByteTokenizer(), frozenset({EOS_ID})
    )


def plain_ids(pair: TinyPair, settings: GenerationSettings) -> list[int]:
    return [step.token.token_id for step in autoregressive_generate(pair, PROMPT, settings)]


# -- greedy equality -------------------------------------------------------------------------


@pytest.mark.parametrize("gamma", [1, 3, 8])
@pytest.mark.parametrize("adaptive", [False, True])
def test_greedy_speculative_equals_plain_greedy(
    tiny_pair: TinyPair, gamma: int, adaptive: bool
) -> None:
    settings = GenerationSettings(
        gamma=gamma, adaptive_gamma=adaptive, max_new_tokens=40, stop_on_eos=False
    )
    expected = plain_ids(tiny_pair, settings)
    assert len(expected) == 40
    assert spec_ids(tiny_pair, settings) == expected


def test_greedy_equality_is_a_real_check(tiny_pair: TinyPair) -> None:
    """A different target gives a different greedy text, so the equality above is not vacuous."""
    settings = GenerationSettings(max_new_tokens=20, stop_on_eos=False)
    other = TinyPair(tiny_pair.draft, tiny_qwen(7), tiny_pair.tokenizer, tiny_pair.eos_token_ids)
    assert plain_ids(other, settings) != plain_ids(tiny_pair, settings)


# -- records and caches ----------------------------------------------------------------------


def run_cycles(pair: TinyPair, settings: GenerationSettings) -> list[Cycle]:
    return list(speculative_generate(pair, PROMPT, settings, make_drafter(DEFAULT_DRAFTER, pair)))


@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_cache_invariants_after_every_cycle(tiny_pair: TinyPair, temperature: float) -> None:
    settings = GenerationSettings(
        gamma=4, temperature=temperature, max_new_tokens=60, stop_on_eos=False
    )
    cycles = run_cycles(tiny_pair, settings)
    assert cycles[-1].totals.new_tokens == 60
    for cycle in cycles[:-1]:
        # Everything but the pending token is in the target's cache: rollback cropped exactly the
        # rejected drafts.
        assert cycle.target_cache_len == cycle.context_len - 1
        # The draft has not fed the newest token, nor the last draft after a full accept.
        unseen = 2 if cycle.accepted_len == cycle.draft_len > 0 else 1
        assert cycle.draft_cache_len == cycle.context_len - unseen


@pytest.mark.parametrize("temperature", [0.0, 0.8])
def test_cycle_records_are_consistent(tiny_pair: TinyPair, temperature: float) -> None:
    settings = GenerationSettings(
        gamma=3, temperature=temperature, max_new_tokens=50, stop_on_eos=False, seed=3
    )
    cycles = run_cycles(tiny_pair, settings)
    seq = 0
    tested = accepted = 0
    for cycle in cycles:
        assert [d.position for d in cycle.drafted] == list(range(1, cycle.draft_len + 1))
        assert [d.accepted for d in cycle.drafted] == [
            i < cycle.accepted_len for i in range(cycle.draft_len)
        ]
        origins = [t.origin for t in cycle.emitted]
        assert origins[: cycle.accepted_len] == [Origin.ACCEPTED] * cycle.accepted_len
        if not cycle.finished:
            extra = Origin.BONUS if cycle.accepted_len == cycle.draft_len else Origin.RESAMPLED
            assert origins[-1] == extra
            assert (cycle.rejection is None) == (cycle.accepted_len == cycle.draft_len)
        for token in cycle.emitted:
            assert token.seq_index == seq
            seq += 1
        for draft in cycle.drafted:
            assert 0.0 <= draft.accept_prob <= 1.0
            if draft.tested and not cycle.greedy:
                assert draft.uniform is not None
                assert draft.accepted == (draft.uniform < draft.accept_prob)
                assert draft.accept_prob == pytest.approx(
                    min(1.0, draft.p_target / draft.q_draft), rel=1e-5
                )
        tested += min(cycle.accepted_len + 1, cycle.draft_len)
        accepted += cycle.accepted_len
        assert cycle.timing.draft_s > 0 and cycle.timing.verify_s > 0
    totals = cycles[-1].totals
    assert totals.new_tokens == seq == 50
    assert totals.target_forwards == len(cycles)
    assert totals.tested_positions == tested and totals.accepted_positions == accepted
    assert totals.acceptance_rate == pytest.approx(accepted / tested)
    assert totals.tokens_per_target_pass == pytest.approx(50 / len(cycles))
    assert totals.draft_forwards == sum(c.draft_len for c in cycles)
    assert cycles[-1].stop_reason == "max_new_tokens"
    cycles[-1].to_dict()  # JSON-ready


def test_rejection_record_has_charts(tiny_pair: TinyPair) -> None:
    cycles = run_cycles(
        tiny_pair,
        GenerationSettings(gamma=4, temperature=1.0, max_new_tokens=40, stop_on_eos=False),
    )
    rejected = [c for c in cycles if c.rejection is not None]
    assert rejected
    rejection = rejected[0].rejection
    assert rejection is not None
    assert rejection.position == rejected[0].accepted_len + 1
    assert len(rejection.top_p) == len(rejection.top_q) == len(rejection.top_residual) == 10
    assert rejection.top_p[0].prob >= rejection.top_p[-1].prob
    resampled = rejected[0].emitted[rejected[0].accepted_len]
    assert resampled.origin is Origin.RESAMPLED
    assert rejection.resampled_token.token_id == resampled.token_id


@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_every_drafted_position_carries_its_top_p_and_q(
    tiny_pair: TinyPair, temperature: float
) -> None:
    """The inspector's bars: sorted top entries of q and p at each drafted position."""
    settings = GenerationSettings(
        gamma=4, temperature=temperature, max_new_tokens=30, stop_on_eos=False
    )
    drafted = [token for cycle in run_cycles(tiny_pair, settings) for token in cycle.drafted]
    assert drafted
    for token in drafted:
        assert len(token.top_q) == len(token.top_p) == 6
        for top in (token.top_q, token.top_p):
            probs = [entry.prob for entry in top]
            assert probs == sorted(probs, reverse=True)
        by_id = {entry.token_id: entry.prob for entry in token.top_p}
        if token.token_id in by_id:
            assert by_id[token.token_id] == pytest.approx(token.p_target, rel=1e-5)
        if temperature == 0.0:
            # Greedy drafts the draft's argmax and accepts exactly the target's argmax.
            assert token.top_q[0].token_id == token.token_id
            if token.tested:
                assert token.accepted == (token.top_p[0].token_id == token.token_id)


def x_then_eos_pair() -> TinyPair:
    """A chain that writes "x" and then always ends the text (EOS)."""
    vocab = EOS_ID + 1
    transition = torch.full((vocab, vocab), 1e-9, dtype=torch.float64)
    transition[:, ord("x")] = 1.0
    transition[ord("x"), :] = 1e-9
    transition[ord("x"), EOS_ID] = 1.0
    transition /= transition.sum(dim=1, keepdim=True)
    return same_chain_pair(transition)


def test_stops_at_eos_and_respects_the_budget() -> None:
    # A chain that always goes to EOS after one step: the run ends with stop_reason "eos".
    pair = x_then_eos_pair()
    cycles = run_cycles(pair, GenerationSettings(gamma=4))
    assert [t.token_id for c in cycles for t in c.emitted] == [ord("x"), EOS_ID]
    assert cycles[-1].stop_reason == "eos" and cycles[-1].finished
    for max_new in (1, 2, 7):
        settings = GenerationSettings(gamma=5, max_new_tokens=max_new, stop_on_eos=False)
        assert len(spec_ids(pair, settings)) == max_new


def test_a_control_token_is_named_and_left_out_of_the_text() -> None:
    """End of text is a token the reader never reads: its text is "" (so the run's text, and what
    /generate returns, leave it out) and its name is kept for the stream's marker."""
    pair = x_then_eos_pair()
    emitted = [t for c in run_cycles(pair, GenerationSettings(gamma=4)) for t in c.emitted]
    steps = list(autoregressive_generate(pair, PROMPT, GenerationSettings()))
    for tokens in (emitted, [step.token for step in steps]):
        assert [(t.text, t.special) for t in tokens] == [("x", ""), ("", "</s>")]
    drafted = [d for c in run_cycles(pair, GenerationSettings(gamma=4)) for d in c.drafted]
    assert all(d.special == ("</s>" if d.token_id == EOS_ID else "") for d in drafted)


def test_multibyte_text_decodes_across_tokens() -> None:
    """'é' is two byte-tokens; the first must contribute '' and the second 'é'."""
    vocab = EOS_ID + 1
    word = list("café".encode())  # c a f 0xC3 0xA9
    transition = torch.full((vocab, vocab), 1e-12, dtype=torch.float64)
    for a, b in itertools.pairwise([PROMPT[0, -1].item(), *word, EOS_ID]):
        transition[a, b] = 1.0
    transition /= transition.sum(dim=1, keepdim=True)
    pair = same_chain_pair(transition)
    cycles = run_cycles(pair, GenerationSettings(gamma=2))
    texts = [t.text for c in cycles for t in c.emitted]
    assert texts[:5] == ["c", "a", "f", "", "é"]
    steps = list(autoregressive_generate(pair, PROMPT, GenerationSettings()))
    assert [s.token.text for s in steps][:5] == ["c", "a", "f", "", "é"]


# -- drafter behaviour -----------------------------------------------------------------------


def test_target_as_its_own_draft_accepts_everything() -> None:
    target = tiny_qwen(2, dtype=torch.float64)
    pair = TinyPair(target, target, ByteTokenizer(), frozenset({EOS_ID}))
    settings = GenerationSettings(gamma=5, temperature=1.0, max_new_tokens=60, stop_on_eos=False)
    cycles = list(speculative_generate(pair, PROMPT, settings, make_drafter(DEFAULT_DRAFTER, pair)))
    assert cycles[-1].totals.acceptance_rate == 1.0
    assert all(c.rejection is None for c in cycles)


@dataclass
class UniformDrafter:
    """Proposes tokens uniformly at random: the worst sensible draft."""

    vocab: int
    gamma: int = 4
    cache_len: int = 0

    def start(
        self, prompt_ids: torch.Tensor, settings: GenerationSettings, stop_ids: frozenset[int]
    ) -> float:
        self.gamma = settings.gamma
        return 0.0

    def propose(self, context: torch.Tensor, max_tokens: int, sampler: Sampler) -> Proposal:
        count = min(self.gamma, max_tokens)
        q = torch.full((count, self.vocab), 1.0 / self.vocab)
        return Proposal(sampler.draw(q), q, 0, 1e-6, drafter="uniform")

    def commit(self, accepted_len: int, next_token: int) -> None:
        pass


def test_random_draft_accepts_almost_nothing() -> None:
    vocab = EOS_ID + 1
    peaked = random_transition(vocab, seed=5, concentration=0.02)
    pair = same_chain_pair(peaked)
    settings = GenerationSettings(gamma=4, temperature=1.0, max_new_tokens=200, stop_on_eos=False)
    cycles = list(speculative_generate(pair, PROMPT, settings, UniformDrafter(vocab)))
    assert cycles[-1].totals.acceptance_rate < 0.1
    assert cycles[-1].totals.tested_positions >= 150


def test_adaptive_gamma_schedule() -> None:
    assert next_gamma(5, 5, 5) == 7
    assert next_gamma(15, 15, 15) == 16
    assert next_gamma(5, 2, 5) == 4
    assert next_gamma(1, 0, 1) == 1


def test_settings_reject_bad_values() -> None:
    for bad in (
        {"gamma": 0},
        {"gamma": 17},
        {"top_p": 0.0},
        {"temperature": -1.0},
        {"max_new_tokens": 0},
    ):
        with pytest.raises(ValueError):
            GenerationSettings(**bad)  # type: ignore[arg-type]


# -- exactness: the whole engine against a known distribution -----------------------------------


@pytest.mark.parametrize("gamma", [1, 2, 4])
def test_speculative_sampling_reproduces_the_target_distribution(gamma: int) -> None:
    pair = chain_pair()
    counts = sample_joint(pair, gamma, samples=20_000)
    assert chi_square_p_value(pair, counts) > 1e-3


def test_negative_control_a_wrong_rule_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(specviz.core.engine, "verify_sampled", wrong_verify)
    pair = chain_pair()
    counts = sample_joint(pair, gamma=2, samples=20_000)
    assert chi_square_p_value(pair, counts) < 1e-6


def successor_drafter(pair: TinyPair) -> Drafter:
    """A deterministic proposer (q one-hot): after token t it drafts t + 1, t + 2, ... mod 4."""
    return RuleDrafter(successor(CHAIN_VOCAB))


@pytest.mark.parametrize("gamma", [1, 3])
def test_a_deterministic_proposer_reproduces_the_target_distribution(gamma: int) -> None:
    """Speculative sampling with q one-hot at the drafts: accept with p(x), resample from p
    without x. On this chain the target gives the successor rule's guess 0.0003 to 0.63
    depending on the state, so acceptance and the residual both carry weight."""
    pair = chain_pair()
    counts = sample_joint(pair, gamma, samples=8_000, drafter_for=successor_drafter)
    assert chi_square_p_value(pair, counts) > 1e-3


def test_negative_control_a_residual_that_keeps_the_draft_is_caught(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The one-hot rule's own classic bug: after a rejection, resample from p, x included."""
    monkeypatch.setattr(
        specviz.core.sampling, "residual_after_one_hot", lambda p_target, draft_id: p_target
    )
    pair = chain_pair()
    # Its law differs from the target's by a chi-square noncentrality of 0.24 per sample, so
    # 3000 samples find it with a margin (λ ≈ 700 against a 1e-6 critical value near 130).
    counts = sample_joint(pair, gamma=3, samples=3_000, drafter_for=successor_drafter)
    assert chi_square_p_value(pair, counts) < 1e-6


def draft_confidences(cycle: Cycle) -> list[float]:
    """What the per-token stop compares: the draft's probability of each drafted token."""
    return [draft.q_draft for draft in cycle.drafted]


def running_products(cycle: Cycle) -> list[float]:
    """What the cumulative stop compares: the running product over positions of
    1 - scale × (1 - top q), the scale being the cycle's recorded doubt scale."""
    scale = cycle.draft_doubt_scale
    factors = (1.0 - scale * (1.0 - d.top_q[0].prob) for d in cycle.drafted)
    return list(itertools.accumulate(factors, operator.mul))


@pytest.mark.parametrize("temperature", [0.0, 1.0])
@pytest.mark.parametrize(
    ("stop", "threshold", "end", "measure"),
    [
        ("draft_stop_below", 0.5, "confidence", draft_confidences),
        ("draft_stop_cumulative", 0.3, "cumulative", running_products),
    ],
)
def test_draft_stops_end_drafts_where_their_measure_first_falls_below_the_threshold(
    tiny_pair: TinyPair,
    temperature: float,
    stop: str,
    threshold: float,
    end: str,
    measure: Callable[[Cycle], list[float]],
) -> None:
    settings = GenerationSettings(
        gamma=8, temperature=temperature, max_new_tokens=60, stop_on_eos=False, **{stop: threshold}
    )
    cycles = run_cycles(tiny_pair, settings)
    shortened = 0
    for cycle in cycles[:-1]:
        if cycle.draft_end == "budget":  # near the end: fewer tokens left than γ
            continue
        values = measure(cycle)
        assert all(value >= threshold for value in values[:-1])
        if cycle.draft_len < 8:
            shortened += 1
            assert values[-1] < threshold
            assert cycle.draft_end == end
        else:
            assert cycle.draft_end == "gamma"
    assert shortened > 0
    if temperature == 0.0:  # still exactly greedy decoding of the target
        assert [t.token_id for c in cycles for t in c.emitted] == plain_ids(tiny_pair, settings)


@pytest.mark.parametrize("stop_on_eos", [True, False])
def test_drafts_end_at_a_drafted_end_of_sequence_when_the_run_would(stop_on_eos: bool) -> None:
    """Nothing drafted after an EOS could be emitted when EOS ends the run, so the draft stops
    there; when EOS does not end the run (stop_on_eos off), drafting goes on past it."""
    pair = eos_heavy_pair()
    cycles = [
        cycle
        for seed in range(40)
        for cycle in speculative_generate(
            pair,
            PROMPT,
            GenerationSettings(
                gamma=8, temperature=1.0, max_new_tokens=40, seed=seed, stop_on_eos=stop_on_eos
            ),
            make_drafter(DEFAULT_DRAFTER, pair),
        )
    ]
    eos_inside = [cycle for cycle in cycles if EOS_ID in [d.token_id for d in cycle.drafted[:-1]]]
    ended_at_eos = [cycle for cycle in cycles if cycle.draft_end == "eos"]
    if stop_on_eos:
        assert not eos_inside
        assert len(ended_at_eos) >= 5
        assert all(cycle.drafted[-1].token_id == EOS_ID for cycle in ended_at_eos)
    else:
        assert eos_inside and not ended_at_eos


def test_the_cumulative_stop_scales_doubts_by_the_runs_record() -> None:
    """Each cycle's doubt scale is min(1, (misses + 1) / (doubts + 1)) over the positions tested
    in the cycles before it, recomputed here from the records alone: doubts sum 1 - top q,
    misses count rejections. The target drafting for itself is never wrong, so its doubts shrink
    cycle by cycle and its drafts run longer than its raw confidences would allow."""
    model = tiny_qwen(3)
    pair = TinyPair(model, model, ByteTokenizer(), frozenset({EOS_ID}))
    for temperature in (0.0, 1.0):
        settings = GenerationSettings(
            gamma=8,
            temperature=temperature,
            max_new_tokens=80,
            stop_on_eos=False,
            draft_stop_cumulative=0.3,
        )
        cycles = list(
            speculative_generate(pair, PROMPT, settings, make_drafter(DEFAULT_DRAFTER, pair))
        )
        misses, doubts = 0, 0.0
        for cycle in cycles:
            assert cycle.draft_doubt_scale == pytest.approx(min(1.0, (misses + 1) / (doubts + 1)))
            tested = [d for d in cycle.drafted if d.tested]
            misses += sum(1 for d in tested if not d.accepted)
            doubts += sum(1.0 - d.top_q[0].prob for d in tested)
        assert misses == 0 and cycles[-1].draft_doubt_scale < 0.5
        raw = [math.prod(d.top_q[0].prob for d in c.drafted) for c in cycles[1:-1]]
        assert min(raw) < 0.3  # the draft's own numbers alone would have stopped these drafts
        # Untrusted doubts cannot make drafts end earlier than γ or the stop allows:
        assert all(c.draft_end == "gamma" or running_products(c)[-1] < 0.3 for c in cycles[:-1])


def test_the_doubt_record_counts_only_tested_positions() -> None:
    """A draft that is mostly right but unsure (its chain is 70 % the target's, 30 % another):
    rejections happen, guesses after them are untested and must not add to the doubts."""
    vocab = EOS_ID + 1
    target_chain = random_transition(vocab, seed=31, concentration=0.05)
    other = random_transition(vocab, seed=32, concentration=0.05)
    pair = TinyPair(
        MarkovLM(0.7 * target_chain + 0.3 * other),
        MarkovLM(target_chain),
        ByteTokenizer(),
        frozenset({EOS_ID}),
    )
    settings = GenerationSettings(
        gamma=8, max_new_tokens=200, stop_on_eos=False, draft_stop_cumulative=0.05
    )
    cycles = list(speculative_generate(pair, PROMPT, settings, make_drafter(DEFAULT_DRAFTER, pair)))
    misses, doubts, untested = 0, 0.0, 0
    for cycle in cycles:
        assert cycle.draft_doubt_scale == pytest.approx(min(1.0, (misses + 1) / (doubts + 1)))
        misses += sum(1 for d in cycle.drafted if d.tested and not d.accepted)
        doubts += sum(1.0 - d.top_q[0].prob for d in cycle.drafted if d.tested)
        untested += sum(1 for d in cycle.drafted if not d.tested)
    assert misses > 0 and untested > 0 and cycles[-1].draft_doubt_scale < 1.0
