"""Lookahead decoding (lookahead:window=W,ngram=N,guesses=G): the window's tree is the reference
mask's, the Jacobi step and the pool work as the paper says, and decoding stays exact (greedy
equality, the target's law at temperature 1, and a control that must fail)."""

from __future__ import annotations

import itertools

import pytest
import torch
from exactness_checks import (
    REPEATING_PROMPT,
    assert_greedy_equals_plain,
    chain_pair,
    chi_square_p_value,
    sample_joint,
)
from tiny_models import TinyPair
from ui_events import trace_of

import specviz.core.tree
from specviz.core.engine import GenerationSettings, speculative_generate
from specviz.core.events import TreeRecord
from specviz.core.sampling import Sampler
from specviz.core.tree import ROOT, DraftTree, tree_position_ids, tree_visibility
from specviz.drafters.base import DrafterSpec
from specviz.drafters.lookahead import (
    JacobiWindow,
    LookaheadDrafter,
    LookaheadOptions,
    NgramPool,
)
from specviz.drafters.registry import check_drafter_spec, make_drafter
from specviz.export.trace import read_trace, trace_text
from specviz.text import UserError

SAMPLER = Sampler(0.0, 0, 1.0, torch.Generator())
CHAIN_PROMPT = (0, 1, 2, 3, 3, 1, 0, 2, 2, 1, 3, 0, 1)
# Three tokens a run: a window two deep, and the prompt's n-grams pooled so that the root (1)
# has three guesses besides the window's: (2, 3), (0, 2) and (3, 0).
CHAIN_SPEC = "lookahead:window=2,ngram=3,guesses=3,prompt=1"


def window_of(window: int, ngram: int, rows: list[list[int]]) -> JacobiWindow:
    made = JacobiWindow(LookaheadOptions(window, ngram, 4), itertools.count(900))
    made.rows = [list(row) for row in rows]
    return made


def steady_rows(window: int, ngram: int) -> list[list[int]]:
    """A full window of distinct tokens: the spine 100.., row l 100 * (l + 1).."""
    spine = [100 + i for i in range(window - 1)]
    return [spine] + [
        [100 * (level + 1) + i for i in range(window)] for level in range(1, ngram - 1)
    ]


def reference_visibility(window: int, ngram: int) -> torch.Tensor:
    """The reference's lookahead mask (j_make_causal_mask_multilevel, hao-ai-lab/LookaheadDecoding)
    over the root, the spine and rows 1 .. N − 2, with no guesses: block 0 (the root and the
    spine) is causal; block l sees block 0 causally and, from blocks 1 .. l, the same slot."""
    size = window * (ngram - 1)
    sees = torch.zeros(size, size, dtype=torch.bool)
    causal = torch.ones(window, window, dtype=torch.bool).tril()
    for level in range(ngram - 1):
        block = slice(window * level, window * (level + 1))
        sees[block, :window] = causal
        for row in range(1, level + 1):
            sees[block, window * row : window * (row + 1)] |= torch.eye(window, dtype=torch.bool)
    return sees


def reference_positions(window: int, ngram: int) -> list[int]:
    """The reference's position offsets: the root 0, the spine 1 .., slot i of row l at l + i."""
    return [0, *range(1, window)] + [
        level + i for level in range(1, ngram - 1) for i in range(window)
    ]


@pytest.mark.parametrize(("window", "ngram"), [(4, 3), (5, 4), (3, 5), (1, 3)])
def test_the_window_laid_as_a_tree_is_the_reference_mask(window: int, ngram: int) -> None:
    drafter = LookaheadDrafter(LookaheadOptions(window, ngram, 0))
    drafter.window = window_of(window, ngram, steady_rows(window, ngram))
    proposal = drafter.propose_tree(torch.tensor([1, 2, 7]), 16, SAMPLER)
    tree = proposal.tree
    # Every token distinct: nothing merges, one node per slot, in the reference's order.
    order = [node for row in proposal.window_rows for node in row]
    assert sorted(order) == list(range(tree.size))
    index = [0, *(node + 1 for node in order)]  # the reference's rows in the tree's rows
    visible = tree_visibility(tree)[index][:, index]
    assert torch.equal(visible, reference_visibility(window, ngram))
    positions = tree_position_ids(tree, 0)[0, index].tolist()
    assert positions == reference_positions(window, ngram)


def test_warm_up_fills_the_rows_then_each_step_reads_w_ngrams() -> None:
    # W = 3, N = 4: the first row is W + N − 3 = 4 filler tokens; two cycles fill rows 1 and 2.
    options = LookaheadOptions(window=3, ngram=4)
    window = JacobiWindow(options, iter([10, 11, 12, 13]))
    assert window.rows == [[10, 11, 12, 13]] and not window.warm
    # The target's choice after each spine token guesses the next offset: it becomes row 1.
    assert window.advance([21, 22, 23, 24], root=5) == []
    assert window.rows == [[11, 12, 13], [21, 22, 23, 24]]
    # After each token of row 1 (offsets 1 + i): row 2 from offset 2, its first slot behind us.
    assert window.advance([31, 32, 33, 34], root=6) == []
    assert window.rows == [[12, 13], [22, 23, 24], [32, 33, 34]] and window.warm
    # Warm: column i reads (its foot, row 1, row 2, the new token) and the rows move up.
    grams = window.advance([41, 42, 43], root=7)
    assert grams == [(7, (22, 32, 41)), (12, (23, 33, 42)), (13, (24, 34, 43))]
    assert window.rows == [[23, 24], [32, 33, 34], [41, 42, 43]]


def test_the_pool_keeps_the_g_latest_ngrams_per_key() -> None:
    pool = NgramPool(per_key=2)
    for gram in [(1, 2), (3, 4), (1, 2), (5, 6)]:
        pool.add(7, gram)
    assert pool.guesses(7) == [(5, 6), (1, 2)]  # (3, 4) least recently seen, dropped
    assert pool.guesses(8) == []
    NgramPool(per_key=0).add(7, (1, 2))  # G = 0: the window alone, nothing pooled


def hand_rows(tree: DraftTree, choices: dict[int, int], vocab: int = 64) -> torch.Tensor:
    """p rows whose argmax after node i is choices[i] (token 0 elsewhere)."""
    rows = torch.full((tree.size + 1, vocab), 0.1 / vocab)
    rows[:, 0] = 0.5
    for node, token in choices.items():
        rows[node + 1, token] = 0.9
    return rows


def test_the_target_s_guesses_at_the_window_become_its_next_row_and_the_pool() -> None:
    drafter = LookaheadDrafter(LookaheadOptions(window=3, ngram=3, guesses=4))
    drafter.start(torch.tensor([[1, 2, 3, 4]]), GenerationSettings(), frozenset({60}))
    first = drafter.propose_tree(torch.tensor([1, 2, 3, 4]), 16, SAMPLER)
    # Before anything is pooled, the tree is the first row: three prompt tokens in order.
    assert first.tree == DraftTree.chain((1, 2, 3)) and first.window_rows == ((0, 1, 2),)
    assert not first.window_harvest and first.window_guesses == ()  # the warm-up: no n-grams
    drafter.read_verification(first.tree, hand_rows(first.tree, {0: 21, 1: 22, 2: 23}), ())
    assert drafter.window.rows == [[2, 3], [21, 22, 23]]
    # Root 5 now: the window's comb, nothing pooled yet.
    second = drafter.propose_tree(torch.tensor([1, 2, 3, 4, 5]), 16, SAMPLER)
    assert second.window_rows == ((0, 1), (2, 3, 4))
    assert second.window_harvest  # both rows in place: its columns are read as n-grams
    tips = {2: 31, 3: 60, 4: 33}  # 60 a stop token: pooled, but it leaves the window
    drafter.read_verification(second.tree, hand_rows(second.tree, tips), ())
    assert drafter.pool.guesses(5) == [(21, 31)]
    assert drafter.pool.guesses(2) == [(22, 60)] and drafter.pool.guesses(3) == [(23, 33)]
    assert drafter.window.rows[0] == [22, 23] and drafter.window.rows[1][0] == 31
    assert drafter.window.rows[1][1] != 60 and drafter.window.rows[1][2] == 33
    # The next root is 2: its pooled guess comes first, cut after the stop token, and the
    # window's slots that agree with it share its nodes.
    third = drafter.propose_tree(torch.tensor([1, 2]), 16, SAMPLER)
    assert third.tree.tokens[:2] == (22, 60) and third.tree.parents[:2] == (ROOT, 0)
    assert third.window_rows[0][0] == 0  # the spine starts with 22, the guess's first node
    assert third.window_guesses == (1,)  # the guess ends at its stop token, node 1
    assert third.drawn is False and third.forwards == 0
    assert third.shape == "window=3,ngram=3,guesses=4"


def test_a_window_deeper_than_the_budget_stays_out_and_waits() -> None:
    drafter = LookaheadDrafter(LookaheadOptions(window=4, ngram=3, guesses=4))
    drafter.start(torch.tensor([[1, 2, 3, 4]]), GenerationSettings(), frozenset())
    drafter.pool.add(4, (7, 8))
    proposal = drafter.propose_tree(torch.tensor([1, 2, 3, 4]), 1, SAMPLER)
    # The guess cut to one token, and the one window slot one deep: the spine's first token.
    assert proposal.tree == DraftTree((7, 1), (ROOT, ROOT))
    assert proposal.window_rows == ((1, ROOT, ROOT, ROOT),)
    assert proposal.window_guesses == (0,) and not proposal.window_harvest
    drafter.read_verification(proposal.tree, hand_rows(proposal.tree, {}), ())
    assert drafter.window.rows == [[1, 2, 3, 4]]  # not advanced: its newest row was not scored
    assert drafter.propose_tree(torch.tensor([4]), 0, SAMPLER).tree.size == 0


def test_prompt_pools_the_committed_text_s_ngrams_as_it_grows() -> None:
    drafter = make_drafter("lookahead:ngram=3,guesses=2,prompt=1", None)  # type: ignore[arg-type]
    assert isinstance(drafter, LookaheadDrafter)
    drafter.start(torch.tensor([[5, 6, 7, 5, 8, 9]]), GenerationSettings(), frozenset())
    proposal = drafter.propose_tree(torch.tensor([5, 6, 7, 5, 8, 9, 5]), 16, SAMPLER)
    assert drafter.pool.guesses(5) == [(8, 9), (6, 7)]
    assert proposal.tree.tokens[:4] == (8, 9, 6, 7)  # the latest copy first, then the earlier
    assert proposal.shape == "window=4,ngram=3,guesses=2,prompt=1"
    drafter.propose_tree(torch.tensor([5, 6, 7, 5, 8, 9, 5, 1]), 16, SAMPLER)
    assert drafter.pool.guesses(9) == [(5, 1)]  # each n-gram pooled once, as the text grows
    assert drafter.pool.guesses(8) == [(9, 5)]


def test_the_spec_is_checked() -> None:
    assert LookaheadOptions.from_spec(DrafterSpec.parse("lookahead")) == LookaheadOptions(4, 3, 4)
    spec = DrafterSpec.parse("lookahead:window=6,ngram=5,guesses=2,prompt=1")
    assert LookaheadOptions.from_spec(spec) == LookaheadOptions(6, 5, 2, prompt=True)
    for bad in (
        "lookahead:window=0",
        "lookahead:ngram=2",
        "lookahead:guesses=9",
        "lookahead:window=x",
        "lookahead:gamma=3",
        "lookahead:prompt=2",
        "lookahead:window=12,ngram=6,guesses=8",  # more nodes than a tree holds
    ):
        with pytest.raises(UserError):
            check_drafter_spec(bad)


@pytest.mark.parametrize("spec", ["lookahead", "lookahead:window=5,ngram=4,guesses=3"])
def test_greedy_equals_plain_decoding(tiny_pair: TinyPair, spec: str) -> None:
    assert_greedy_equals_plain(tiny_pair, spec, 4, False)


def test_greedy_lookahead_speculates_on_the_tiny_pair(tiny_pair: TinyPair) -> None:
    settings = GenerationSettings(max_new_tokens=40, stop_on_eos=False)
    drafter = make_drafter("lookahead", tiny_pair)
    cycles = list(speculative_generate(tiny_pair, REPEATING_PROMPT, settings, drafter))
    assert len(cycles) < 30  # 40 tokens: the window's phrases were kept
    assert any(cycle.accepted_len > 0 for cycle in cycles[2:])


def test_cycles_are_recorded_as_lookahead_and_survive_a_trace(tiny_pair: TinyPair) -> None:
    settings = GenerationSettings(temperature=1.0, seed=2, max_new_tokens=32, stop_on_eos=False)
    drafter = make_drafter("lookahead", tiny_pair)
    cycles = list(speculative_generate(tiny_pair, REPEATING_PROMPT, settings, drafter))
    for cycle in cycles:
        assert cycle.drafter == "lookahead" and cycle.totals.draft_forwards == 0
        assert cycle.tree is not None and cycle.tree.rule == "recursive_one_hot"
        assert cycle.tree.shape == "window=4,ngram=3,guesses=4"
    assert any(cycle.tree is not None and cycle.tree.window_rows for cycle in cycles)
    back = read_trace(trace_text(trace_of(cycles)).encode())
    assert list(back.cycles) == cycles


def harvested(record: TreeRecord) -> list[tuple[int, ...]]:
    """The n-grams a full window's columns read this cycle, from the record alone: the root or
    the spine token under the column, the column's slot in each later row, the new token."""
    if not record.window_harvest or record.window_root is None:
        return []
    rows, tokens = record.window_rows, [node.token_id for node in record.nodes]
    feet = [record.window_root.token_id, *(tokens[node] for node in rows[0])]
    return [
        (feet[i], *(tokens[row[i]] for row in rows[1:]), new.token_id)
        for i, new in enumerate(record.window_next)
    ]


def test_the_records_tell_the_window_s_rows_n_grams_and_guesses(tiny_pair: TinyPair) -> None:
    """Each record's next row is the target's first choices that the window takes as its
    newest row on the next cycle; each verified guess is an n-gram an earlier record harvested
    under the root token (cut to the budget); the root is the last token committed."""
    settings = GenerationSettings(max_new_tokens=40, stop_on_eos=False)
    drafter = make_drafter("lookahead", tiny_pair)
    cycles = list(speculative_generate(tiny_pair, REPEATING_PROMPT, settings, drafter))
    records = [cycle.tree for cycle in cycles]
    assert all(record is not None and record.window_rows for record in records)
    pooled: set[tuple[int, ...]] = set()
    root = int(REPEATING_PROMPT[0, -1])
    followed = guessed = 0
    for cycle, record, after in zip(cycles, records, [*records[1:], None], strict=True):
        assert record is not None and record.window_root is not None
        assert record.window_root.token_id == root
        for end in record.window_guesses:
            path = [record.nodes[end].token_id]
            while record.nodes[end].parent >= 0:
                end = record.nodes[end].parent
                path.insert(0, record.nodes[end].token_id)
            assert any(gram[: len(path) + 1] == (root, *path) for gram in pooled)
            guessed += 1
        # The default window has N − 1 = 2 rows: the first cycle's one row reads no n-grams.
        assert record.window_harvest == (len(record.window_rows) == 2 and bool(record.window_next))
        pooled.update(harvested(record))
        fresh = [token.token_id for token in record.window_next]
        if after is not None and fresh and ROOT not in after.window_rows[-1]:
            assert [after.nodes[node].token_id for node in after.window_rows[-1]] == fresh
            followed += 1
        root = cycle.emitted[-1].token_id
    assert followed >= len(cycles) // 2 and guessed > 0 and pooled


def lookahead_chi_square(samples: int) -> float:
    pair = chain_pair()
    counts = sample_joint(
        pair,
        3,
        samples=samples,
        drafter_for=lambda pair: make_drafter(CHAIN_SPEC, pair),
        prompt_ids=CHAIN_PROMPT,
    )
    return chi_square_p_value(pair, counts)


@pytest.mark.slow
def test_lookahead_reproduces_the_target_distribution() -> None:
    """n-grams and window paths chosen, not drawn, each a one-hot proposal: the first three
    tokens follow the target chain's law."""
    assert lookahead_chi_square(samples=3_000) > 1e-3


def test_negative_control_keeping_a_rejected_guess_is_caught(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Leaving a rejected guess in p' for its siblings and the resample is caught through
    lookahead's trees."""
    monkeypatch.setattr(specviz.core.tree, "without", lambda dist, token: dist)
    assert lookahead_chi_square(samples=2_000) < 1e-6


def test_the_production_configs_say_no_serving_engine_runs_it() -> None:
    from specviz.app.configs_panel import current_snippets
    from specviz.models.presets import default_preset, load_presets

    presets = load_presets()
    preset = default_preset(presets)
    snippets = current_snippets(presets, {"preset": preset.id, "drafter": "lookahead"})
    assert snippets is not None and len(snippets) == 4
    for snippet in snippets:
        assert snippet.code == ""  # not another drafter's config in its place
        assert "has no serving-engine equivalent" in snippet.notes[0].text("en")
