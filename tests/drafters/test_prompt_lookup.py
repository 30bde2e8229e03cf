"""The prompt-lookup drafter: what it copies, when it stops, and that decoding stays exact."""

from __future__ import annotations

import random

import pytest
import torch
from exactness_checks import (
    REPEATING_PROMPT,
    assert_greedy_equals_plain,
    chain_pair,
    chi_square_p_value,
    sample_joint,
)
from tiny_models import EOS_ID, TinyPair

import specviz.core.sampling
from specviz.core.engine import GenerationSettings, speculative_generate
from specviz.core.proposal import Proposal
from specviz.core.sampling import Sampler
from specviz.drafters.base import DrafterSpec
from specviz.drafters.prompt_lookup import LookupOptions, PromptLookupDrafter
from specviz.drafters.registry import DRAFTERS, check_drafter_spec, make_drafter

SAMPLER = Sampler(0.0, 0, 1.0, torch.Generator())


def lookup(
    gamma: int = 8, stop_ids: frozenset[int] = frozenset(), **options: object
) -> PromptLookupDrafter:
    drafter = PromptLookupDrafter(LookupOptions(**options))  # type: ignore[arg-type]
    drafter.start(torch.tensor([[0]]), GenerationSettings(gamma=gamma), stop_ids)
    return drafter


def propose(drafter: PromptLookupDrafter, context: list[int], max_tokens: int = 99) -> Proposal:
    return drafter.propose(torch.tensor(context), max_tokens, SAMPLER)


def copy_reference(context: list[int], options: LookupOptions, limit: int) -> list[int]:
    """Prompt lookup by brute force: the positions copied, for comparison with the index."""
    end = len(context)
    for n in range(min(options.max_ngram, end), options.min_ngram - 1, -1):
        suffix = context[end - n :]
        starts = [i for i in range(end - n) if context[i : i + n] == suffix]
        if starts:
            start = starts[0] if options.occurrence == "earliest" else starts[-1]
            return list(range(start + n, min(start + n + limit, end)))
    return []


# -- what it copies --------------------------------------------------------------------------------


def test_the_longest_suffix_match_wins_over_shorter_ones() -> None:
    # Suffix "7 8 9": the 1-gram "9" occurred at 0 (followed by 1), the 3-gram at 3 (followed by 5).
    context = [9, 1, 2, 7, 8, 9, 5, 6, 4, 7, 8, 9]
    proposal = propose(lookup(gamma=3), context)
    assert proposal.token_ids.tolist() == [5, 6, 4]
    assert proposal.copied_from == (6, 7, 8)
    assert proposal.q_draft is None and proposal.forwards == 0 and proposal.drafter == "lookup"
    assert proposal.ended_by == "gamma"
    # With max_ngram 1 only the last token is matched: its latest earlier occurrence is at 5,
    # its earliest at 0.
    latest = lookup(gamma=3, max_ngram=1, occurrence="latest")
    assert propose(latest, context).token_ids.tolist() == [5, 6, 4]
    assert propose(lookup(gamma=3, max_ngram=1), context).copied_from == (
        1,
        2,
        3,
    )


def test_latest_and_earliest_occurrences() -> None:
    context = [5, 1, 2, 3, 6, 1, 2, 4, 7, 1, 2]  # the longest earlier suffix, "1 2", occurs twice
    assert propose(lookup(gamma=2, occurrence="latest"), context).token_ids.tolist() == [4, 7]
    assert propose(lookup(gamma=2, occurrence="earliest"), context).token_ids.tolist() == [3, 6]
    assert propose(lookup(gamma=2), context).token_ids.tolist() == [3, 6]  # the default


def test_no_match_proposes_nothing() -> None:
    proposal = propose(lookup(), [1, 2, 3, 4])
    assert proposal.token_ids.shape == (0,) and proposal.copied_from == ()
    assert proposal.ended_by == "no_match"
    # min_ngram 2: a repeated last token alone is not a match.
    assert propose(lookup(min_ngram=2), [1, 2, 3, 2]).token_ids.tolist() == []
    assert propose(lookup(min_ngram=1), [1, 2, 3, 2]).token_ids.tolist() == [3, 2]


def test_a_match_running_into_the_end_proposes_only_what_exists() -> None:
    proposal = propose(lookup(gamma=8), [5, 6, 7, 5, 6])
    assert proposal.token_ids.tolist() == [7, 5, 6] and proposal.copied_from == (2, 3, 4)
    assert proposal.ended_by == "text_end"


def test_the_budget_caps_the_copy() -> None:
    context = [1, 2, 3, 4, 5, 6, 1]
    proposal = propose(lookup(gamma=5), context, max_tokens=2)
    assert proposal.token_ids.tolist() == [2, 3] and proposal.ended_by == "budget"
    nothing = propose(lookup(gamma=5), context, max_tokens=0)
    assert nothing.token_ids.tolist() == [] and nothing.ended_by == "budget"


def test_a_copied_end_of_sequence_ends_the_draft_when_it_ends_the_run() -> None:
    context = [1, 2, EOS_ID, 3, 4, 1, 2]
    stopping = propose(lookup(stop_ids=frozenset({EOS_ID})), context)
    assert stopping.token_ids.tolist() == [EOS_ID] and stopping.ended_by == "eos"
    # When EOS does not end the run the copy goes on past it.
    assert propose(lookup(), context).token_ids.tolist() == [EOS_ID, 3, 4, 1, 2]


def test_adaptive_gamma_follows_the_shared_schedule() -> None:
    drafter = PromptLookupDrafter(LookupOptions())
    drafter.start(
        torch.tensor([[0]]), GenerationSettings(gamma=2, adaptive_gamma=True), frozenset()
    )
    context = list(range(10)) * 3
    assert len(propose(drafter, context).token_ids) == 2
    drafter.commit(2, 0)  # all accepted: γ + 2
    assert len(propose(drafter, context).token_ids) == 4
    drafter.commit(0, 0)  # a rejection: γ - 1
    assert len(propose(drafter, context).token_ids) == 3


@pytest.mark.parametrize("occurrence", ["latest", "earliest"])
@pytest.mark.parametrize(("min_ngram", "max_ngram"), [(1, 4), (2, 3), (1, 1)])
def test_the_incremental_index_copies_what_brute_force_does(
    occurrence: str, min_ngram: int, max_ngram: int
) -> None:
    """Grown a few tokens per cycle, as in a run, the index finds the brute-force copy."""
    options = LookupOptions(max_ngram, min_ngram, occurrence)
    rng = random.Random(5)
    drafter = lookup(gamma=6, max_ngram=max_ngram, min_ngram=min_ngram, occurrence=occurrence)
    context = [rng.randrange(4) for _ in range(12)]
    for _ in range(60):
        proposal = propose(drafter, context)
        expected = copy_reference(context, options, 6)
        assert list(proposal.copied_from or ()) == expected
        assert proposal.token_ids.tolist() == [context[i] for i in expected]
        drafter.commit(0, 0)
        context += [rng.randrange(4) for _ in range(rng.randrange(1, 4))]


# -- options and the registry ----------------------------------------------------------------------


def test_options_parse_with_defaults_and_plain_errors(tiny_pair: TinyPair) -> None:
    assert LookupOptions.from_spec(DrafterSpec("lookup")) == LookupOptions(4, 1, "earliest")
    parsed = DrafterSpec.parse("lookup:max_ngram=3,min_ngram=2,occurrence=latest")
    assert LookupOptions.from_spec(parsed) == LookupOptions(3, 2, "latest")
    drafter = make_drafter(parsed, tiny_pair)
    assert isinstance(drafter, PromptLookupDrafter) and drafter.options.max_ngram == 3
    for bad, message in [
        ("lookup:max_ngram=x", "max_ngram must be a whole number, got 'x'"),
        ("lookup:min_ngram=3,max_ngram=2", "1 <= min_ngram <= max_ngram"),
        ("lookup:min_ngram=0", "1 <= min_ngram"),
        ("lookup:occurrence=middle", "occurrence must be one of earliest, latest"),
        ("lookup:depth=2", "'lookup' does not take depth"),
        ("hybrid:max_ngram=0", "drafter 'hybrid' needs 1 <= min_ngram"),
        ("draft-model:max_ngram=2", "'draft-model' does not take max_ngram"),
        (
            "nope",
            "unknown drafter 'nope'; known drafters: draft-model, hybrid, layerskip, lookahead",
        ),
    ]:
        with pytest.raises(ValueError, match=message):
            check_drafter_spec(bad)  # no pair needed: a command checks before loading
    assert {"draft-model", "lookup", "hybrid"} <= set(DRAFTERS)


# -- through the engine ----------------------------------------------------------------------------


@pytest.mark.parametrize("spec", ["lookup", "lookup:occurrence=latest,min_ngram=2", "hybrid"])
@pytest.mark.parametrize(("gamma", "adaptive"), [(1, False), (4, False), (3, True)])
def test_greedy_equals_plain_decoding(
    tiny_pair: TinyPair, spec: str, gamma: int, adaptive: bool
) -> None:
    assert_greedy_equals_plain(tiny_pair, spec, gamma, adaptive)


def test_no_match_is_a_plain_step_and_copies_are_recorded(tiny_pair: TinyPair) -> None:
    settings = GenerationSettings(gamma=4, max_new_tokens=40, stop_on_eos=False)
    cycles = list(
        speculative_generate(
            tiny_pair, REPEATING_PROMPT, settings, make_drafter("lookup", tiny_pair)
        )
    )
    context = REPEATING_PROMPT[0].tolist() + [t.token_id for c in cycles for t in c.emitted]
    plain_steps = [cycle for cycle in cycles if cycle.draft_len == 0]
    copies = [cycle for cycle in cycles if cycle.draft_len > 0]
    assert plain_steps and copies
    for cycle in plain_steps:  # nothing drafted: one target forward, one token from p
        assert cycle.draft_end == "no_match" and cycle.drafted == ()
        assert len(cycle.emitted) == 1 and cycle.copied_from == ()
    for cycle in cycles:
        assert cycle.drafter == "lookup" and cycle.draft_cache_len == 0
        assert cycle.totals.draft_forwards == 0
        assert len(cycle.copied_from or ()) == cycle.draft_len
        # Every copied token is the token at its source position, which precedes the cycle.
        start = cycle.context_len - len(cycle.emitted)
        for draft, source in zip(cycle.drafted, cycle.copied_from or (), strict=True):
            assert source < start and context[source] == draft.token_id
    assert cycles[0].to_dict()["copied_from"] == list(cycles[0].copied_from or ())


# Every token of the chain occurs in the prompt with a follower, so each cycle copies something.
CHAIN_PROMPT = (0, 1, 2, 3, 3, 1, 0, 2, 2, 1, 3, 0, 1)


def lookup_chi_square(gamma: int, samples: int) -> float:
    """The p-value of the first three tokens sampled with lookup on the chain, against its law."""
    pair = chain_pair()
    counts = sample_joint(
        pair,
        gamma,
        samples=samples,
        drafter_for=lambda pair: make_drafter("lookup", pair),
        prompt_ids=CHAIN_PROMPT,
    )
    return chi_square_p_value(pair, counts)


@pytest.mark.parametrize("gamma", [1, 3, 5])
def test_lookup_reproduces_the_target_distribution(gamma: int) -> None:
    """Sampling with lookup's one-hot q: accept a copy x with p(x), else draw from p without x."""
    assert lookup_chi_square(gamma, samples=4_000) > 1e-3


def test_negative_control_lookup_with_a_residual_that_keeps_the_copy_is_caught(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The one-hot rule's classic bug, resampling from p with the copy x included, is caught."""
    monkeypatch.setattr(
        specviz.core.sampling, "residual_after_one_hot", lambda p_target, draft_id: p_target
    )
    assert lookup_chi_square(3, samples=3_000) < 1e-6
