"""Drafters as plug-ins: the shared DraftPolicy, the registry, and a new kind run end to end."""

from __future__ import annotations

import pytest
import torch
from rule_drafters import RuleDrafter, copy_after_last_match
from tiny_models import EOS_ID, TinyPair

from specviz.core.engine import GenerationSettings, autoregressive_generate, speculative_generate
from specviz.core.events import Origin
from specviz.drafters.base import DrafterSpec
from specviz.drafters.draft_model import ModelDrafter
from specviz.drafters.policy import DraftPolicy, next_gamma
from specviz.drafters.registry import DRAFTERS, DrafterEntry, Drafts, make_drafter
from specviz.models.presets import DEFAULT_DRAFTER

V = 8
PROMPT = torch.tensor([list(b"def fib(n):")])


def peaked(top: float, token: int = 0, vocab: int = V) -> torch.Tensor:
    """A (V,) distribution with top on token and the rest spread evenly."""
    row = torch.full((vocab,), (1.0 - top) / (vocab - 1))
    row[token] = top
    return row


def policy(**settings: object) -> DraftPolicy:
    return DraftPolicy(GenerationSettings(**settings), stop_ids=frozenset({EOS_ID}))  # type: ignore[arg-type]


def draft(rule: DraftPolicy, rows: list[torch.Tensor | None], max_tokens: int = 99) -> int:
    """Feed the policy drafted token 0 with each row's q until it says stop; the length drafted."""
    limit = rule.begin(max_tokens)
    for count, row in enumerate(rows[:limit], start=1):
        if not rule.goes_on(0, row):
            return count
    return min(limit, len(rows))


# -- the policy: each stop, the doubt scale, the γ schedule ----------------------------------------


def test_a_draft_holds_gamma_tokens_or_what_the_budget_leaves() -> None:
    rule = policy(gamma=4)
    assert rule.begin(10) == 4 and rule.ended_by == "gamma"
    assert [rule.goes_on(1, None) for _ in range(4)] == [True, True, True, False]
    assert rule.ended_by == "gamma"
    assert rule.begin(2) == 2 and rule.ended_by == "budget"
    assert rule.begin(0) == 0 and rule.ended_by == "budget"


def test_the_eos_stop_ends_a_draft_at_a_drafted_end_of_sequence() -> None:
    rule = policy(gamma=4)
    rule.begin(10)
    assert rule.goes_on(5, None)
    assert not rule.goes_on(torch.tensor(EOS_ID), None)  # a device tensor is read back
    assert rule.ended_by == "eos"
    # Without stop ids (EOS does not end the run) drafting goes on past it.
    free = DraftPolicy(GenerationSettings(gamma=4))
    free.begin(10)
    assert free.goes_on(EOS_ID, None) and free.ended_by == "gamma"


def test_the_per_token_stop_reads_q_of_the_drafted_token() -> None:
    rule = policy(gamma=8, draft_stop_below=0.5)
    assert draft(rule, [peaked(0.9), peaked(0.6), peaked(0.4), peaked(0.9)]) == 3
    assert rule.ended_by == "confidence"
    # q of the drafted token, not the top: token 1 holds 0.7, the drafted token 0 only 0.3 / 7.
    rule.begin(10)
    assert not rule.goes_on(0, peaked(0.7, token=1)) and rule.ended_by == "confidence"
    # A one-hot q (a deterministic proposer) is sure of every guess: it never trips the stop.
    assert draft(rule, [None] * 8) == 8 and rule.ended_by == "gamma"


def test_the_cumulative_stop_ends_where_the_product_of_tops_falls_below() -> None:
    rule = policy(gamma=8, draft_stop_cumulative=0.5)
    # 0.8 · 0.7 = 0.56, · 0.9 = 0.504, · 0.9 = 0.4536 < 0.5: the fourth guess ends the draft.
    tops = [0.8, 0.7, 0.9, 0.9, 0.9]
    assert draft(rule, [peaked(top) for top in tops]) == 4
    assert rule.ended_by == "cumulative" and rule.doubt_scale == 1.0
    assert draft(rule, [None] * 8) == 8 and rule.ended_by == "gamma"


def test_the_doubt_scale_learns_from_tested_positions_only() -> None:
    rule = policy(gamma=3, draft_stop_cumulative=0.1)
    assert draft(rule, [peaked(0.5)] * 3) == 3
    rule.commit(accepted_len=3, proposed=3)  # all right, though it doubted 3 × 0.5
    assert (rule.misses, rule.doubts) == (0, 1.5)
    rule.begin(3)
    assert rule.doubt_scale == pytest.approx(1 / 2.5)
    # With doubts scaled by 0.4 a top of 0.5 counts as 1 - 0.4 · 0.5 = 0.8.
    rule = policy(gamma=8, draft_stop_cumulative=0.6)
    rule.misses, rule.doubts = 0, 1.5
    assert draft(rule, [peaked(0.5)] * 8) == 3  # 0.8, 0.64, 0.512
    # A rejection at position 1 of 3: positions 1 and 2 are tested, position 3 is not.
    rule.commit(accepted_len=1, proposed=3)
    assert rule.misses == 1 and rule.doubts == pytest.approx(1.5 + 2 * 0.5)
    rule.begin(8)
    assert rule.doubt_scale == min(1.0, 2 / 3.5)
    # Scaling never raises doubts above the draft's own.
    rule.misses = 10
    rule.begin(8)
    assert rule.doubt_scale == 1.0


def test_no_record_of_doubts_without_the_cumulative_stop() -> None:
    rule = policy(gamma=4)
    draft(rule, [peaked(0.3)] * 4)
    rule.commit(accepted_len=0, proposed=4)
    assert (rule.misses, rule.doubts) == (0, 0.0)


def test_gamma_moves_only_when_adaptive() -> None:
    fixed = policy(gamma=5)
    fixed.commit(accepted_len=5, proposed=5)
    assert fixed.gamma == 5
    adaptive = policy(gamma=5, adaptive_gamma=True)
    for accepted, proposed, gamma in [(5, 5, 7), (2, 7, 6), (0, 0, 6), (6, 6, 8)]:
        adaptive.commit(accepted_len=accepted, proposed=proposed)
        assert adaptive.gamma == gamma
    assert next_gamma(16, 16, 16) == 16 and next_gamma(1, 0, 1) == 1


# -- the registry ---------------------------------------------------------------------------------


def test_the_default_drafter_is_the_draft_model(tiny_pair: TinyPair) -> None:
    assert DEFAULT_DRAFTER in DRAFTERS
    drafter = make_drafter(DEFAULT_DRAFTER, tiny_pair)
    assert isinstance(drafter, ModelDrafter) and drafter.model is tiny_pair.draft
    assert isinstance(make_drafter(DrafterSpec("draft-model"), tiny_pair), ModelDrafter)


def test_an_unknown_kind_names_the_known_ones(tiny_pair: TinyPair) -> None:
    with pytest.raises(
        ValueError,
        match="unknown drafter 'nope'; known drafters: draft-model, hybrid, layerskip, lookahead, lookup",
    ):
        make_drafter("nope", tiny_pair)


def test_a_drafter_refuses_options_it_does_not_take(tiny_pair: TinyPair) -> None:
    with pytest.raises(ValueError, match=r"'draft-model' does not take depth .*no options"):
        make_drafter("draft-model:depth=2", tiny_pair)


def test_the_draft_model_needs_a_draft_model() -> None:
    class NoDraft:
        target = torch.nn.Linear(1, 1)

    with pytest.raises(ValueError, match="needs a model pair with a draft model"):
        make_drafter("draft-model", NoDraft())  # type: ignore[arg-type]


def test_specs_parse_and_print_back() -> None:
    spec = DrafterSpec.parse(" prompt-lookup : ngram=3, max=10 ")
    assert spec == DrafterSpec("prompt-lookup", (("max", "10"), ("ngram", "3")))
    assert str(spec) == "prompt-lookup:max=10,ngram=3"
    assert DrafterSpec.parse(str(spec)) == spec
    assert spec.option("ngram", "2") == "3" and spec.option("other", "x") == "x"
    assert str(DrafterSpec.parse("draft-model")) == "draft-model"
    for bad, message in [
        ("", "needs a kind"),
        (":a=1", "needs a kind"),
        ("k:a", "not name=value"),
        ("k:=1", "not name=value"),
        ("k:a=1,a=2", "given twice"),
    ]:
        with pytest.raises(ValueError, match=message):
            DrafterSpec.parse(bad)


# -- a new kind, registered in a test, end to end --------------------------------------------------


@pytest.fixture
def lookup_kind(monkeypatch: pytest.MonkeyPatch) -> str:
    """A deterministic one-token copying drafter registered as "copy-rule" for one test."""

    class CopyRule:
        kind = "copy-rule"

        @classmethod
        def check_spec(cls, spec: DrafterSpec) -> None:
            spec.check_options()

        @classmethod
        def from_spec(cls, spec: DrafterSpec, pair: object) -> RuleDrafter:
            return RuleDrafter(copy_after_last_match, cls.kind)

    entry = DrafterEntry(
        CopyRule.kind,
        lambda: CopyRule,
        Drafts.BY_RULE,
        uses_draft_model=False,
        copies_from_text=True,
    )
    monkeypatch.setitem(DRAFTERS, CopyRule.kind, entry)
    return CopyRule.kind


@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_a_registered_kind_runs_through_the_engine(
    tiny_pair: TinyPair, lookup_kind: str, temperature: float
) -> None:
    settings = GenerationSettings(
        gamma=4, temperature=temperature, max_new_tokens=60, stop_on_eos=False, seed=1
    )
    drafter = make_drafter(lookup_kind, tiny_pair)
    cycles = list(speculative_generate(tiny_pair, PROMPT, settings, drafter))
    emitted = [token.token_id for cycle in cycles for token in cycle.emitted]
    assert len(emitted) == 60
    assert all(cycle.drafter == "copy-rule" for cycle in cycles)
    assert cycles[0].to_dict()["drafter"] == "copy-rule"  # what generate --json prints
    drafted = [token for cycle in cycles for token in cycle.drafted]
    if temperature == 0.0:
        assert any(token.accepted for token in drafted)  # the tiny model's loops get copied
    else:  # sampled text rarely repeats itself: the copies are tested, kept or not
        tested = [token for token in drafted if token.tested]
        assert tested
        for token in tested:
            # One-hot q: a copied token is kept with min(1, p(x) / 1) = p(x), decided by its u.
            assert token.accept_prob == pytest.approx(token.p_target)
            assert token.uniform is not None
            assert token.accepted == (token.uniform < token.accept_prob)
    for token in drafted:
        # q is one-hot at the proposed token: records say q = 1 there, and nothing else.
        assert token.q_draft == 1.0
        assert [(bar.token_id, bar.prob) for bar in token.top_q] == [(token.token_id, 1.0)]
        if token.tested and temperature > 0:
            assert token.accept_prob == pytest.approx(min(1.0, token.p_target))
    for cycle in cycles:
        if cycle.rejection is not None:
            rejected = cycle.drafted[cycle.accepted_len]
            assert [(b.token_id, b.prob) for b in cycle.rejection.top_q] == [
                (rejected.token_id, 1.0)
            ]
            assert cycle.rejection.rejected_token.prob == 1.0
            assert rejected.token_id not in {b.token_id for b in cycle.rejection.top_residual}
            assert cycle.emitted[cycle.accepted_len].origin is Origin.RESAMPLED
    # Each proposal read the committed context: the prompt then everything emitted before.
    assert (
        drafter.contexts
        == [  # type: ignore[attr-defined]
            PROMPT[0].tolist() + emitted[: cycle.totals.new_tokens - len(cycle.emitted)]
            for cycle in cycles
        ]
    )
    if temperature == 0.0:  # greedy: exactly the target's own greedy text
        plain = autoregressive_generate(tiny_pair, PROMPT, settings)
        assert emitted == [step.token.token_id for step in plain]


def test_a_deterministic_proposer_stops_at_a_drafted_end_of_sequence(tiny_pair: TinyPair) -> None:
    """The shared policy's EOS stop serves every drafter: a rule that always guesses EOS
    drafts it once per cycle when EOS ends the run."""
    drafter = RuleDrafter(lambda text: EOS_ID)
    settings = GenerationSettings(gamma=4, max_new_tokens=10)
    cycles = list(speculative_generate(tiny_pair, PROMPT, settings, drafter))
    ended = [cycle for cycle in cycles if cycle.draft_end != "budget"]  # not the last few
    assert len(ended) >= 3
    assert all(cycle.draft_len == 1 and cycle.draft_end == "eos" for cycle in ended)
