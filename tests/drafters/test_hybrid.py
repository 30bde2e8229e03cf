"""The hybrid drafter: lookup when it matches, the draft model otherwise, one cache kept right."""

from __future__ import annotations

import itertools

import pytest
import torch
from rule_drafters import record_proposals
from tiny_models import TinyPair

from specviz.core.engine import GenerationSettings, speculative_generate
from specviz.core.sampling import Sampler
from specviz.drafters.draft_model import ModelDrafter
from specviz.drafters.hybrid import HybridDrafter
from specviz.drafters.registry import make_drafter

# Repeats (copyable) and fresh text (nothing to copy at first), so both parts propose.
PROMPT = torch.tensor([list(b"abcdefg")])
# Ends with a repeat of its start, so the first cycle copies whatever is sampled; the fresh text
# after it has nothing to copy at first, so the draft model proposes too.
COPY_FIRST = torch.tensor([list(b"abcdefg abc")])


def hybrid(pair: TinyPair, spec: str = "hybrid") -> HybridDrafter:
    drafter = make_drafter(spec, pair)
    assert isinstance(drafter, HybridDrafter)
    return drafter


def test_it_needs_a_draft_model_and_takes_the_lookup_options(tiny_pair: TinyPair) -> None:
    drafter = hybrid(tiny_pair, "hybrid:max_ngram=2,occurrence=latest")
    assert drafter.lookup.options.max_ngram == 2 and drafter.lookup.options.occurrence == "latest"
    assert drafter.model.model is tiny_pair.draft

    class NoDraft:
        target = torch.nn.Linear(1, 1)

    with pytest.raises(ValueError, match="needs a model pair with a draft model"):
        make_drafter("hybrid", NoDraft())  # type: ignore[arg-type]


def test_it_copies_after_a_repeated_two_gram_unless_told_otherwise(tiny_pair: TinyPair) -> None:
    assert hybrid(tiny_pair).lookup.options.min_ngram == 2
    assert hybrid(tiny_pair, "hybrid:min_ngram=1").lookup.options.min_ngram == 1
    # A repeated last token alone is no match for the hybrid: the draft model proposes.
    drafter = hybrid(tiny_pair)
    settings = GenerationSettings(gamma=3, max_new_tokens=8, stop_on_eos=False)
    drafter.start(torch.tensor([[1, 2, 3, 2]]), settings, frozenset())
    proposal = drafter.propose(
        torch.tensor([1, 2, 3, 2]), 3, Sampler(0.0, 0, 1.0, torch.Generator())
    )
    assert proposal.drafter == "draft-model"
    # "2 3" occurred before: copied.
    drafter = hybrid(tiny_pair)
    drafter.start(torch.tensor([[2, 3, 9, 2, 3]]), settings, frozenset())
    proposal = drafter.propose(
        torch.tensor([2, 3, 9, 2, 3]), 3, Sampler(0.0, 0, 1.0, torch.Generator())
    )
    assert proposal.drafter == "lookup" and proposal.token_ids.tolist() == [9, 2, 3]


@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_each_cycle_records_which_part_proposed(tiny_pair: TinyPair, temperature: float) -> None:
    settings = GenerationSettings(
        gamma=4, temperature=temperature, max_new_tokens=40, stop_on_eos=False, seed=3
    )
    cycles = list(speculative_generate(tiny_pair, COPY_FIRST, settings, hybrid(tiny_pair)))
    kinds = [cycle.drafter for cycle in cycles]
    assert set(kinds) == {"lookup", "draft-model"}
    for cycle in cycles:
        if cycle.draft_len == 0:  # only where the budget leaves no room for a draft
            assert cycle.draft_end == "budget"
        elif cycle.drafter == "lookup":  # copied: no forward, a source position per draft
            assert len(cycle.copied_from or ()) == cycle.draft_len
            assert all(token.q_draft == 1.0 for token in cycle.drafted)
        else:  # guessed: the draft model's forwards and its q, nothing copied
            assert cycle.copied_from is None
    forwards = [cycle.totals.draft_forwards for cycle in cycles]
    guessed = [c.draft_len for c in cycles if c.drafter == "draft-model"]
    assert forwards[-1] == sum(guessed)


def test_the_draft_cache_catches_up_on_what_lookup_cycles_committed(tiny_pair: TinyPair) -> None:
    """Every draft-model proposal after lookup cycles has the q a cache-free forward over the
    whole committed text gives: the cache held exactly the committed prefix it should."""
    drafter = hybrid(tiny_pair)
    seen = record_proposals(drafter.model)
    settings = GenerationSettings(gamma=3, max_new_tokens=40, stop_on_eos=False)
    cycles = list(speculative_generate(tiny_pair, PROMPT, settings, drafter))
    kinds = [cycle.drafter for cycle in cycles]
    # At least one draft-model proposal comes after a lookup cycle.
    assert any(a == "lookup" and b == "draft-model" for a, b in itertools.pairwise(kinds))
    assert len(seen) == kinds.count("draft-model")
    for context, proposal in seen:
        drafts = proposal.token_ids.tolist()
        full = torch.tensor([context + drafts[:-1]])
        with torch.inference_mode():
            logits = tiny_pair.draft(full).logits[0, -len(drafts) :]
        assert proposal.q_draft is not None
        torch.testing.assert_close(proposal.q_draft, torch.softmax(logits, -1), atol=1e-4, rtol=0)
    for cycle in cycles:
        assert cycle.draft_cache_len <= cycle.context_len  # never ahead of the committed text


def test_lookup_cycles_leave_the_draft_model_untouched(tiny_pair: TinyPair) -> None:
    """A lookup cycle neither feeds nor crops the draft model; only its own verdicts move it."""
    drafter = hybrid(tiny_pair)
    commits: list[str] = []
    model_commit = drafter.model.commit

    def recording(accepted_len: int, next_token: int) -> None:
        commits.append("draft-model")
        model_commit(accepted_len, next_token)

    drafter.model.commit = recording  # type: ignore[method-assign]
    settings = GenerationSettings(gamma=3, max_new_tokens=40, stop_on_eos=False)
    cycles = list(speculative_generate(tiny_pair, PROMPT, settings, drafter))
    assert len(commits) == sum(cycle.drafter == "draft-model" for cycle in cycles)
    assert isinstance(drafter.model, ModelDrafter)


# -- check=yes: the copy as far as the draft model agrees, then the model's own draws ----------


def test_checked_copies_keep_the_agreed_prefix_and_the_model_drafts_on(tiny_pair: TinyPair) -> None:
    """Each proposal is the copy up to the draft's first disagreement (one-hot q), then the
    model's draws with the q a cache-free forward over the committed text gives: the model's
    cache held exactly what it should after every kind of cycle."""
    drafter = hybrid(tiny_pair, "hybrid:check=yes")
    seen = record_proposals(drafter)
    settings = GenerationSettings(gamma=4, max_new_tokens=60, stop_on_eos=False)
    cycles = list(speculative_generate(tiny_pair, PROMPT, settings, drafter))
    mixed = 0
    for context, proposal in seen:
        drafts = proposal.token_ids.tolist()
        if not drafts:
            continue
        kept = len(proposal.copied_from or ())
        full = torch.tensor([context + drafts[:-1]])
        with torch.inference_mode():
            probs = torch.softmax(tiny_pair.draft(full).logits[0, -len(drafts) :], -1)
        assert proposal.q_draft is not None
        # Copies: one-hot, and the draft's own first choice there; then the model's q.
        for position in range(kept):
            assert proposal.q_draft[position, drafts[position]] == 1.0
            assert int(probs[position].argmax()) == drafts[position]
            assert drafts[position] == context[proposal.copied_from[position]]  # type: ignore[index]
        torch.testing.assert_close(proposal.q_draft[kept:], probs[kept:], atol=1e-4, rtol=0)
        mixed += 0 < kept < len(drafts)
    assert mixed > 0  # some cycles copied, then guessed on
    assert {cycle.drafter for cycle in cycles} >= {"lookup"}
    plain = GenerationSettings(gamma=4, max_new_tokens=60, stop_on_eos=False)
    expected = list(speculative_generate(tiny_pair, PROMPT, plain, hybrid(tiny_pair)))
    # Greedy: the same text as the unchecked hybrid (both are the target's greedy decoding).
    assert [t.token_id for c in cycles for t in c.emitted] == [
        t.token_id for c in expected for t in c.emitted
    ]


def test_a_bad_check_option_is_refused() -> None:
    from specviz.drafters.registry import check_drafter_spec

    with pytest.raises(ValueError, match="check must be yes or no, got 'maybe'"):
        check_drafter_spec("hybrid:check=maybe")
    with pytest.raises(ValueError, match="max_ngram"):
        check_drafter_spec("hybrid:check=yes,max_ngram=x")
    assert str(check_drafter_spec("hybrid:check=yes,max_ngram=3")) == "hybrid:check=yes,max_ngram=3"


@pytest.mark.parametrize("gamma", [2, 4])
def test_checked_copies_keep_the_target_law(gamma: int) -> None:
    """Chi-square against the Markov chain's closed-form law, with a prompt lookup can copy from."""
    from exactness_checks import chain_pair, chi_square_p_value, sample_joint

    pair = chain_pair()
    counts = sample_joint(
        pair,
        gamma,
        samples=6_000,
        drafter_for=lambda pair: make_drafter("hybrid:check=yes", pair),
        prompt_ids=(0, 1, 2, 3, 1, 0, 2, 1),
    )
    assert chi_square_p_value(pair, counts) > 1e-3


def test_checked_copies_with_the_wrong_rule_are_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    from exactness_checks import chain_pair, chi_square_p_value, sample_joint, wrong_verify

    import specviz.core.engine

    monkeypatch.setattr(specviz.core.engine, "verify_sampled", wrong_verify)
    pair = chain_pair()
    counts = sample_joint(
        pair,
        3,
        samples=6_000,
        drafter_for=lambda pair: make_drafter("hybrid:check=yes", pair),
        prompt_ids=(0, 1, 2, 3, 1, 0, 2, 1),
    )
    assert chi_square_p_value(pair, counts) < 1e-6
