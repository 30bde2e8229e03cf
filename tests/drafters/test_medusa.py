"""The medusa drafter: the tree it builds from the heads' guesses, that it drafts from the
target's verified state, and that decoding stays exact (greedy equality on tiny Qwen2 models
through both forwards, the target chain's law at temperature 1 with chosen guesses and with
drawn ones under either rule, and a wrong rule that must fail)."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import pytest
import torch
from medusa_models import CHAIN_VOCAB, chain_with_states, file_heads, fitted_heads, random_heads
from scipy.stats import chisquare
from tiny_models import TinyPair

from specviz.core.engine import autoregressive_generate, speculative_generate
from specviz.core.sampling import Sampler
from specviz.core.settings import GenerationSettings
from specviz.core.tree import DraftTree, TreeVerdict, verify_tree_recursive
from specviz.core.tree_engine import tree_stream
from specviz.drafters.medusa import MedusaDrafter, MedusaOptions, best_candidates
from specviz.drafters.registry import check_drafter_spec, make_drafter, trained_agreement
from specviz.models.heads.block import MedusaHeads
from specviz.models.heads.report import heads_agreement
from specviz.text import UserError, t_html
from specviz.views.head_scores import run_agreement
from specviz.views.run_html import cycle_cards_html

PROMPT = torch.tensor([list(b"def add(a, b):\n    return")])


def test_the_best_candidates_by_the_product_of_the_heads_probabilities() -> None:
    values = [[0.6, 0.25], [0.7, 0.2]]
    # (0,) .6, (0,0) .42, (1,) .25, (1,0) .175, (0,1) .12, (1,1) .05
    assert best_candidates(values, 4) == [(0,), (1,), (0, 0), (1, 0)]
    assert best_candidates(values, 2) == [(0,), (0, 0)]
    assert best_candidates(values, 99) == [(0,), (1,), (0, 0), (0, 1), (1, 0), (1, 1)]


def test_a_candidate_that_ends_the_text_gets_no_children() -> None:
    values = [[0.6, 0.25], [0.7, 0.2]]
    assert best_candidates(values, 4, ends=lambda ranks: ranks == (0,)) == [
        (0,),
        (1,),
        (1, 0),
        (1, 1),
    ]


def test_the_spec_options_are_checked() -> None:
    drawn = MedusaOptions.from_spec(check_drafter_spec("medusa:nodes=8,q=heads"))
    assert drawn == MedusaOptions(nodes=8, q="heads", rule="traversal")
    assert str(drawn) == "nodes=8,topk=4,q=heads,rule=traversal"
    turns = MedusaOptions.from_spec(check_drafter_spec("medusa:q=heads,rule=recursive"))
    assert turns.rule == "recursive" and str(MedusaOptions()).endswith("q=none")
    for bad in (
        "medusa:q=maybe",
        "medusa:nodes=0",
        "medusa:topk=99",
        "medusa:width=3",
        "medusa:q=heads,rule=sideways",
    ):
        with pytest.raises(UserError):
            check_drafter_spec(bad)


def test_untrained_heads_are_named_with_the_command_that_trains_them(
    tiny_pair: TinyPair, tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("SPECVIZ_CACHE", str(tmp_path))
    with pytest.raises(UserError) as raised:
        make_drafter("medusa", tiny_pair)
    assert "heads train" in raised.value.message("en")


@pytest.fixture(scope="module")
def heads_for_tiny_target(tiny_pair_module: TinyPair):  # type: ignore[no-untyped-def]
    return fitted_heads(tiny_pair_module.target, count=3)


@pytest.fixture(scope="module")
def tiny_pair_module() -> TinyPair:
    from tiny_models import EOS_ID, ByteTokenizer, tiny_qwen

    return TinyPair(tiny_qwen(1), tiny_qwen(2, layers=3), ByteTokenizer(), frozenset({EOS_ID}))


def hooked(model: torch.nn.Module) -> torch.nn.Module:
    """The model with a forward hook, which makes its runner take transformers' forward."""
    model.register_forward_hook(lambda *args: None)
    return model


@pytest.mark.parametrize("forward", ["lean", "transformers"])
@pytest.mark.parametrize("options", [MedusaOptions(), MedusaOptions(nodes=3, topk=1)])
def test_greedy_medusa_emits_plain_greedy_decoding(
    tiny_pair_module: TinyPair, heads_for_tiny_target, forward: str, options: MedusaOptions
) -> None:  # type: ignore[no-untyped-def]
    from tiny_models import tiny_qwen

    pair = tiny_pair_module
    if forward == "transformers":
        pair = TinyPair(pair.draft, hooked(tiny_qwen(2, layers=3)), pair.tokenizer, frozenset())
    settings = GenerationSettings(max_new_tokens=40, stop_on_eos=False)
    plain = [step.token.token_id for step in autoregressive_generate(pair, PROMPT, settings)]
    drafter = MedusaDrafter(heads_for_tiny_target, options)
    cycles = list(speculative_generate(pair, PROMPT, settings, drafter))
    assert [token.token_id for cycle in cycles for token in cycle.emitted] == plain
    assert cycles[0].draft_end == "prefill" and not cycles[0].drafted
    for cycle in cycles[1:]:
        assert cycle.tree is not None and len(cycle.tree.nodes) <= options.nodes
        assert max((node.depth for node in cycle.tree.nodes), default=0) <= 3
    if options == MedusaOptions():  # fitted on the target's own text: some guesses are kept
        assert sum(cycle.accepted_len for cycle in cycles) > 0


def test_the_tree_grows_under_the_token_the_target_chose(
    tiny_pair_module: TinyPair, heads_for_tiny_target
) -> None:  # type: ignore[no-untyped-def]
    """The heads read the state at the last kept token, so their first guesses are the tokens
    head 1 gives there: recomputed here from the target's own forward over the text."""
    from specviz.models.runner import ModelRunner

    pair = tiny_pair_module
    settings = GenerationSettings(max_new_tokens=12, stop_on_eos=False)
    drafter = MedusaDrafter(heads_for_tiny_target, MedusaOptions(nodes=4, topk=4))
    cycles = list(speculative_generate(pair, PROMPT, settings, drafter))
    emitted = [token.token_id for cycle in cycles for token in cycle.emitted]
    # Before cycle 2 the text is the prompt and cycle 1's token; the state that chose that
    # token is the prompt's last position's.
    runner = ModelRunner(pair.target)
    runner.keep_hidden_states()
    runner.forward(PROMPT)
    state = runner.last_hidden[-1]  # type: ignore[index]
    head_logits = heads_for_tiny_target.logits(state, pair.target.get_output_embeddings())
    expected = torch.topk(head_logits[0].float(), 4).indices.tolist()
    tree = cycles[1].tree
    assert tree is not None and emitted[0] == cycles[0].emitted[0].token_id
    first = [node.token_id for node in tree.nodes if node.parent < 0]
    assert first == expected[: len(first)] and first


def test_greedy_first_guesses_agree_exactly_where_the_path_keeps_rank_one(
    tiny_pair_module: TinyPair, heads_for_tiny_target
) -> None:  # type: ignore[no-untyped-def]
    """Greedy, head d's first guess under the kept path is the target's token exactly when the
    path keeps that rank-1 guess at depth d (siblings are distinct, and a token the target
    chose among the guesses is kept): the heads panel's count, on the engine's own records."""
    settings = GenerationSettings(max_new_tokens=40, stop_on_eos=False)
    drafter = MedusaDrafter(heads_for_tiny_target, MedusaOptions())
    cycles = list(speculative_generate(tiny_pair_module, PROMPT, settings, drafter))
    assert all(cycle.drafter == "medusa" for cycle in cycles)
    for cycle in cycles[:-1]:  # the last may be cut by the budget
        assert cycle.tree is not None
        path = cycle.tree.path
        for score in run_agreement([cycle], 3):
            if not score.chances:
                continue
            depth = score.head
            kept_first = len(path) >= depth and cycle.tree.nodes[path[depth - 1]].rank == 1
            assert score.hits == int(kept_first), (cycle.index, depth)
    totals = run_agreement(cycles, 3)
    assert totals[0].hits > 0 and totals[0].chances >= len(cycles) - 2  # not the first
    assert sum(score.chances for score in totals[1:]) > 0  # a kept guess gave head 2 a chance


def test_the_heads_report_reaches_the_views_as_a_record(
    tiny_pair: TinyPair, tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("SPECVIZ_CACHE", str(tmp_path))
    assert trained_agreement("medusa", tiny_pair) is None  # none trained: the panel says so
    report = file_heads(tiny_pair.target, MedusaHeads(3, tiny_pair.target.config.hidden_size))
    agreement = trained_agreement("medusa:nodes=4", tiny_pair)
    assert agreement == heads_agreement(report) and agreement is not None
    assert agreement.heads == 3 and agreement.steps == 7
    assert [group.group for group in agreement.groups] == ["code", "prose", "ja"]
    assert agreement.groups[0].top1 == (0.5, 0.25, 0.125)
    assert trained_agreement("draft-model", tiny_pair) is None  # a drafter without heads


# --- temperature 1: the target chain's law -------------------------------------------------

TOKENS = 4  # tokens generated per run: the first (an empty tree's), then trees two deep


def law_of_last_three(transition: torch.Tensor) -> dict[tuple[int, ...], float]:
    """The chain's law of tokens 2..4 after the prompt's last token 1 (token 1 summed out)."""
    law: dict[tuple[int, ...], float] = {}
    for cell in itertools.product(range(CHAIN_VOCAB), repeat=3):
        total = 0.0
        for first in range(CHAIN_VOCAB):
            prob, last = float(transition[1, first]), first
            for token in cell:
                prob *= float(transition[last, token])
                last = token
            total += prob
        law[cell] = total
    return law


def sample_last_three(
    q: str, samples: int, rule=None, name="traversal"
) -> Counter[tuple[int, ...]]:  # type: ignore[no-untyped-def]
    pair = chain_with_states()
    # Heads whose guesses differ from the chain's law: q must matter for the rule.
    heads = random_heads(2, CHAIN_VOCAB, seed=5, scale=2.0)
    counts: Counter[tuple[int, ...]] = Counter()
    for seed in range(samples):
        settings = GenerationSettings(
            temperature=1.0, max_new_tokens=TOKENS, seed=seed, stop_on_eos=False
        )
        drafter = MedusaDrafter(heads, MedusaOptions(nodes=4, topk=2, q=q, rule=name))
        cycles = list(tree_stream(pair, torch.tensor([[0, 1]]), settings, drafter, rule))
        emitted = [token.token_id for cycle in cycles for token in cycle.emitted]
        counts[tuple(emitted[1:])] += 1
        if seed == 0:
            assert any(cycle.tree and cycle.tree.nodes for cycle in cycles)
            if rule is None:  # the engine ran the rule the drafter named
                rules = {cycle.tree.rule for cycle in cycles if cycle.tree and cycle.tree.nodes}
                assert rules == {name if q == "heads" else "recursive_one_hot"}
    return counts


def p_value(counts: Counter[tuple[int, ...]]) -> float:
    law = law_of_last_three(chain_with_states().target.transition)  # type: ignore[union-attr]
    total = sum(counts.values())
    cells = sorted(law)
    return float(chisquare([counts[c] for c in cells], [law[c] * total for c in cells]).pvalue)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("q", "name"), [("heads", "traversal"), ("heads", "recursive"), ("none", "traversal")]
)
def test_sampled_medusa_trees_emit_the_target_chain(q: str, name: str) -> None:
    assert p_value(sample_last_three(q, 2500, name=name)) > 0.001


def resample_from_p(tree: DraftTree, q_rows, p_rows, sampler: Sampler) -> TreeVerdict:  # type: ignore[no-untyped-def]
    """The wrong rule: recursive rejection, but once every child lost, the token is drawn from
    the target's p at that node instead of what is left of p."""
    verdict = verify_tree_recursive(tree, q_rows, p_rows, sampler)
    if verdict.bonus:
        return verdict
    node = verdict.path[-1] if verdict.path else -1
    dist = p_rows[node + 1]
    return TreeVerdict(
        verdict.path, int(sampler.draw(dist)), dist, False, verdict.accept_probs, verdict.uniforms
    )


def test_the_wrong_rule_fails_through_the_engine() -> None:
    assert p_value(sample_last_three("heads", 800, resample_from_p)) < 1e-6


def test_drawn_children_are_distinct_and_within_the_budget(
    tiny_pair_module: TinyPair, heads_for_tiny_target
) -> None:  # type: ignore[no-untyped-def]
    settings = GenerationSettings(temperature=1.0, seed=3, max_new_tokens=24, stop_on_eos=False)
    drafter = MedusaDrafter(heads_for_tiny_target, MedusaOptions(nodes=6, topk=3, q="heads"))
    cycles = list(speculative_generate(tiny_pair_module, PROMPT, settings, drafter))
    assert any(cycle.tree and cycle.tree.rule == "traversal" for cycle in cycles)
    for cycle in cycles:
        nodes = cycle.tree.nodes if cycle.tree else ()
        assert len(nodes) <= 6
        for index in (-1, *range(len(nodes))):
            tokens = [node.token_id for node in nodes if node.parent == index]
            assert len(tokens) == len(set(tokens)) <= 3
        assert all(node.q_draft > 0 for node in nodes)
        assert all(math.isfinite(node.p_target) for node in nodes)
    # told as the tree drafter's drawn trees are: from the leaves up, beside the heads' panel
    drawn = next(cycle for cycle in cycles if cycle.tree and cycle.tree.nodes)
    for lang in ("en", "ja"):
        cards = cycle_cards_html(drawn, lang=lang, run=cycles)
        assert str(t_html("tree.rule.traversal", lang)) in cards and 'class="sv-heads' in cards


@pytest.mark.slow
def test_medusa_on_the_bundled_pair_in_float32_is_plain_greedy() -> None:
    """The heads trained for the bundled target (python -m specviz heads train), read by the
    target in float32 (filed by its weights rounded to bfloat16): greedy Medusa decoding emits
    plain greedy decoding's tokens, and keeps some of the heads' guesses."""
    import gc
    from dataclasses import replace

    from specviz.models.heads.store import heads_folder, read_report
    from specviz.models.loader import ModelCache
    from specviz.models.presets import default_preset, load_presets

    preset = replace(default_preset(load_presets()), draft_quantization="none")
    cache = ModelCache()
    pair = cache.load_pair(preset, dtype="float32")
    try:
        if read_report(heads_folder(pair.target)) is None:
            pytest.skip("no heads trained for the bundled target: python -m specviz heads train")
        prompt_ids = pair.encode_prompt("Write a Python function that merges two sorted lists.")
        settings = GenerationSettings(max_new_tokens=32)
        plain = [s.token.token_id for s in autoregressive_generate(pair, prompt_ids, settings)]
        for spec in ("medusa", "medusa:nodes=4,topk=2"):
            cycles = list(
                speculative_generate(pair, prompt_ids, settings, make_drafter(spec, pair))
            )
            assert [t.token_id for c in cycles for t in c.emitted] == plain, spec
            assert sum(c.accepted_len for c in cycles) > 0, spec
    finally:
        del pair
        cache.clear()
        gc.collect()
