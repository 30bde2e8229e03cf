"""The cost γ schedule: γ from measured step costs and the running acceptance estimate.

specviz.drafters.policy.cost_gamma maximises S(α, γ) = τ / (γ·c + v(γ + 1)) over γ in [0, cap];
AcceptanceEstimate is the discounted Beta-prior estimate of α it is fed; DraftPolicy switches
the schedule on with the cost_gamma setting. Sampling must stay exact while γ moves cycle by cycle.
"""

from __future__ import annotations

import math
from collections import Counter
from types import SimpleNamespace

import pytest
import torch
from exactness_checks import CHAIN_TOKENS, chain_pair, chi_square_p_value, wrong_verify
from tiny_models import TinyPair

import specviz.core.engine
from specviz.core.cost_model import StepCosts, step_costs_of
from specviz.core.engine import speculative_generate
from specviz.core.settings import GenerationSettings, settings_from_mapping
from specviz.drafters.draft_model import ModelDrafter
from specviz.drafters.policy import AcceptanceEstimate, DraftPolicy, cost_gamma
from specviz.drafters.registry import make_drafter
from specviz.measure.bench import BenchGrid


def costs(verify: tuple[float, ...], draft: float) -> StepCosts:
    return StepCosts(verify, draft, target_step_s=0.1)


# -- the choice of γ, in closed form ---------------------------------------------------------


@pytest.mark.parametrize("alpha", [0.05, 0.5, 0.9, 1.0])
def test_free_verification_and_drafts_take_the_longest_draft(alpha: float) -> None:
    """v(k) = 1 and c = 0: S = τ(γ), which grows with γ whenever α > 0."""
    free = costs((1.0,) * 9, 0.0)
    assert cost_gamma(alpha, free, gamma_cap=16) == 8  # the longest measured
    assert cost_gamma(alpha, free, gamma_cap=5) == 5  # the setting caps it


@pytest.mark.parametrize("alpha", [0.0, 0.5, 0.99, 1.0])
def test_verification_as_dear_as_steps_means_a_plain_step(alpha: float) -> None:
    """v(k) = k (no batching gain) and c > 0: τ ≤ γ + 1 < γ·c + γ + 1, so S < 1 for every γ ≥ 1."""
    dear = costs(tuple(float(k) for k in range(1, 10)), 0.1)
    assert cost_gamma(alpha, dear, gamma_cap=8) == 0


def test_one_draft_pays_exactly_when_alpha_exceeds_c_plus_v2_minus_one() -> None:
    """With γ ≤ 1: S(1) = (1 + α) / (c + v(2)) > 1 = S(0) iff α > c + v(2) − 1 (here 0.5)."""
    two = costs((1.0, 1.3), 0.2)
    assert cost_gamma(0.49, two, gamma_cap=4) == 0
    assert cost_gamma(0.51, two, gamma_cap=4) == 1


def test_two_drafts_beat_one_above_the_root_of_the_quadratic() -> None:
    """v = 1, c = 0.5: S(2) > S(1) iff 3(1 + α + α²) > 4(1 + α), i.e. α > (1 + √13) / 6."""
    threshold = (1 + math.sqrt(13)) / 6
    flat = costs((1.0, 1.0, 1.0), 0.5)
    assert cost_gamma(threshold - 0.01, flat, gamma_cap=2) == 1
    assert cost_gamma(threshold + 0.01, flat, gamma_cap=2) == 2


def test_ties_go_to_the_shorter_draft() -> None:
    """α = 0: every γ yields one token; with free drafts and verification all S are 1."""
    assert cost_gamma(0.0, costs((1.0,) * 6, 0.0), gamma_cap=5) == 0


def test_the_costs_measured_on_an_avx2_cpu_and_an_avx512_one() -> None:
    """v(k) measured on a 2-core AVX2 EPYC (bf16 target) keeps drafts at one or none; a nearly
    flat curve (AVX512-BF16: v(6) ≈ 1.2, the draft at 0.17 of a target step) leads to long ones."""
    alphas = (0.6, 0.7, 0.8, 0.85, 0.9)
    avx2 = costs((1.0, 1.68, 2.52, 3.21, 3.93, 4.70, 5.56, 6.18), 0.12)
    assert [cost_gamma(alpha, avx2, 7) for alpha in alphas] == [0, 0, 1, 1, 1]
    avx512 = costs(tuple(1.0 + 0.04 * k for k in range(8)), 0.17)
    assert [cost_gamma(alpha, avx512, 7) for alpha in alphas] == [2, 3, 4, 5, 6]


# -- the acceptance estimate -----------------------------------------------------------------


def test_the_estimate_starts_at_the_prior_and_follows_closed_form_updates() -> None:
    estimate = AcceptanceEstimate()
    prior, weight, discount = estimate.PRIOR_ALPHA, estimate.PRIOR_WEIGHT, estimate.DISCOUNT
    assert estimate.alpha == pytest.approx(prior)
    estimate.update(tested=4, accepted=3)
    assert estimate.alpha == pytest.approx((3 + weight * prior) / (4 + weight))
    estimate.update(tested=2, accepted=0)
    tested, accepted = discount * 4 + 2, discount * 3
    assert estimate.alpha == pytest.approx((accepted + weight * prior) / (tested + weight))


def test_cycles_that_test_nothing_drift_back_to_the_prior() -> None:
    estimate = AcceptanceEstimate()
    for _ in range(20):
        estimate.update(tested=5, accepted=0)
    assert estimate.alpha < 0.1
    for _ in range(200):
        estimate.update(tested=0, accepted=0)  # γ = 0 cycles: plain steps
    assert estimate.alpha == pytest.approx(estimate.PRIOR_ALPHA, abs=1e-6)


def test_a_long_run_of_full_accepts_approaches_one() -> None:
    estimate = AcceptanceEstimate()
    for _ in range(100):
        estimate.update(tested=5, accepted=5)
    assert estimate.alpha > 0.97


# -- the policy --------------------------------------------------------------------------------

# γ = 2 at α near 0.7 (S(2) = 1.29 against S(1) = 1.21), 1 near 0.47, 0 below c + v(2) − 1 = 0.4.
STEEP = costs((1.0, 1.15, 1.2, 1.5), 0.25)


def test_the_policy_runs_the_cost_schedule_only_with_the_setting_and_costs() -> None:
    on = GenerationSettings(gamma=3, cost_gamma=True)
    assert DraftPolicy(on, costs=STEEP).schedule == "cost"
    assert DraftPolicy(on, costs=STEEP).gamma == cost_gamma(0.7, STEEP, 3) == 2
    assert DraftPolicy(on).schedule == "fixed" and DraftPolicy(on).gamma == 3  # no costs
    assert DraftPolicy(GenerationSettings(gamma=3), costs=STEEP).schedule == "fixed"
    both = GenerationSettings(gamma=3, adaptive_gamma=True, cost_gamma=True)
    assert DraftPolicy(both, costs=STEEP).schedule == "cost"  # it overrides adaptive γ
    assert DraftPolicy(both).schedule == "heuristic"


def test_the_cost_schedule_moves_gamma_with_the_verdicts() -> None:
    rule = DraftPolicy(GenerationSettings(gamma=3, cost_gamma=True), costs=STEEP)
    assert rule.begin(10) == 2
    rule.commit(accepted_len=0, proposed=2)  # rejected at once: α̂ = 1.4 / 3
    assert rule.gamma == 1
    rule.begin(10)
    rule.commit(accepted_len=0, proposed=1)
    assert rule.gamma == 0  # α̂ = 1.4 / 3.9: no draft pays
    assert rule.begin(10) == 0 and rule.ended_by == "gamma"
    for _ in range(40):
        rule.commit(accepted_len=0, proposed=0)  # plain steps: the estimate returns to the prior
    assert rule.gamma == 2


def test_drafters_take_the_pairs_measured_costs(tiny_pair: TinyPair) -> None:
    pair = SimpleNamespace(**vars(tiny_pair), step_costs=STEEP)
    assert step_costs_of(pair) is STEEP and step_costs_of(tiny_pair) is None
    model = make_drafter("draft-model", pair)
    assert isinstance(model, ModelDrafter) and model.costs is STEEP
    lookup = make_drafter("lookup", pair)
    assert lookup.costs == STEEP.without_draft_cost()  # type: ignore[attr-defined]  # c = 0


# -- the schema and the bench ----------------------------------------------------------------


def test_the_setting_is_one_schema_field_old_presets_leave_off() -> None:
    assert GenerationSettings().cost_gamma is False
    assert settings_from_mapping({"cost_gamma": True}, GenerationSettings()).cost_gamma is True
    with pytest.raises(Exception, match="true or false"):
        settings_from_mapping({"cost_gamma": "yes"}, GenerationSettings())


def test_the_bench_compares_fixed_heuristic_and_cost_rows() -> None:
    base = GenerationSettings(gamma=5, cost_gamma=True, adaptive_gamma=True)  # a preset's
    grid = BenchGrid(("code",), (1, 5), 5, (0.0,), 1, base, cost_cap=5)
    rows = grid.variants(base)
    assert [label for label, _ in rows] == ["1", "5", "adaptive(5)", "cost(≤5)"]
    schedules = [(s.gamma, s.adaptive_gamma, s.cost_gamma) for _, s in rows]
    assert schedules == [(1, False, False), (5, False, False), (5, True, False), (5, False, True)]


# -- exactness while γ moves -----------------------------------------------------------------


def sample_with_cost_schedule(samples: int) -> tuple[Counter[tuple[int, ...]], Counter[int]]:
    """The first CHAIN_TOKENS tokens of `samples` sampled runs on the chain, with the γ drafted."""
    pair = chain_pair()
    prompt = torch.tensor([[0, 1]])  # ends with token 1, chi_square_p_value's start
    counts: Counter[tuple[int, ...]] = Counter()
    gammas: Counter[int] = Counter()
    for seed in range(samples):
        settings = GenerationSettings(
            gamma=3,
            cost_gamma=True,
            temperature=1.0,
            max_new_tokens=CHAIN_TOKENS,
            seed=seed,
            stop_on_eos=False,
        )
        drafter = ModelDrafter(pair.draft, STEEP)
        cycles = list(speculative_generate(pair, prompt, settings, drafter))
        gammas.update(cycle.draft_len for cycle in cycles)
        counts[tuple(token.token_id for cycle in cycles for token in cycle.emitted)] += 1
    return counts, gammas


def test_sampling_stays_exact_while_the_cost_schedule_moves_gamma() -> None:
    counts, gammas = sample_with_cost_schedule(4_000)
    assert {0, 1, 2} <= set(gammas)  # plain steps, short and longer drafts all happened
    assert chi_square_p_value(chain_pair(), counts) > 1e-3


def test_negative_control_a_wrong_rule_is_caught_under_the_cost_schedule(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(specviz.core.engine, "verify_sampled", wrong_verify)
    counts, _ = sample_with_cost_schedule(1_500)
    assert chi_square_p_value(chain_pair(), counts) < 1e-6
