"""One forward over a draft tree: each node's logits equal its root-to-node path fed as plain
causal text, and keeping the accepted path leaves the KV cache plain decoding would have left.

Both forwards are checked, the lean step and transformers' own (a 4D additive mask and position
ids), in float32 on the tiny Qwen model, and the lean step on the bundled target in float32.
"""

from __future__ import annotations

import gc
from dataclasses import replace

import pytest
import torch
from tiny_models import tiny_qwen

from specviz.core.tree import ROOT, DraftTree
from specviz.models import runner as runner_module
from specviz.models.runner import ForwardChoice, ModelRunner

PROMPT = list(b"def add(a, b):")
# root's children 0, 1; node 0's children 2, 3; node 1's child 4; node 3's child 5.
TREE = DraftTree(tokens=tuple(b"\n \trx!"), parents=(ROOT, ROOT, 0, 0, 1, 3))


def runner_of(model: torch.nn.Module, kind: str, monkeypatch: pytest.MonkeyPatch) -> ModelRunner:
    if kind == "transformers":  # the model's own forward, as for a family the lean step lacks
        monkeypatch.setattr(
            runner_module, "choose_forward", lambda model: ForwardChoice("transformers", None)
        )
    runner = ModelRunner(model)
    monkeypatch.undo()
    assert runner.kind == kind
    return runner


def alone(model: torch.nn.Module, tokens: list[int]) -> torch.Tensor:
    """The last position's logits of *tokens* fed from an empty cache as plain causal text."""
    return ModelRunner(model).forward_uncached(torch.tensor([tokens]))[-1]


def path_tokens(tree: DraftTree, node: int) -> list[int]:
    return [tree.tokens[step] for step in tree.path_to(node)]


def assert_tree_matches_paths(
    model: torch.nn.Module, runner: ModelRunner, prompt: list[int], tree: DraftTree, tol: float
) -> torch.Tensor:
    runner.forward(torch.tensor([prompt[:-1]]))
    logits = runner.tree_forward(tree, root_id=prompt[-1])
    assert logits.shape[0] == tree.size + 1
    assert runner.cache_len == len(prompt) + tree.size
    references = [alone(model, prompt)]
    references += [alone(model, prompt + path_tokens(tree, node)) for node in range(tree.size)]
    expected = torch.stack(references)
    # tol relative to the largest logit: the same sums in another order (the bundled target's
    # logits reach about 20, and differ by under 2e-5).
    scale = max(1.0, expected.abs().max().item())
    worst = (logits - expected).abs().max().item()
    assert worst < tol * scale, (worst, scale)
    return logits


@pytest.mark.parametrize("kind", ["lean", "transformers"])
def test_each_node_scores_as_its_path_fed_alone(kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    model = tiny_qwen(31)
    runner = runner_of(model, kind, monkeypatch)
    assert_tree_matches_paths(model, runner, PROMPT, TREE, 1e-5)


@pytest.mark.parametrize("kind", ["lean", "transformers"])
@pytest.mark.parametrize("path", [(), (1,), (0, 3, 5), (1, 4)])
def test_keeping_a_path_leaves_plain_decodings_cache(
    kind: str, path: tuple[int, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    model = tiny_qwen(32)
    runner = runner_of(model, kind, monkeypatch)
    runner.forward(torch.tensor([PROMPT[:-1]]))
    runner.tree_forward(TREE, root_id=PROMPT[-1])
    runner.keep_path(path)
    kept = [TREE.tokens[node] for node in path]
    assert runner.cache_len == len(PROMPT) + len(kept)
    after = runner.forward(torch.tensor([list(b"ok")]), logits_to_keep=2)
    plain = ModelRunner(model).forward_uncached(torch.tensor([PROMPT + kept + list(b"ok")]), 2)
    assert (after - plain).abs().max().item() < 1e-5
    with pytest.raises(RuntimeError):
        runner.keep_path(path)  # only once per tree forward


@pytest.mark.parametrize("kind", ["lean", "transformers"])
def test_a_tree_grown_depth_by_depth_scores_as_the_whole_tree(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reading the root, then depth 1, then the rest after the cached entries gives each entry
    the logits of one forward over the whole tree, and the grown tree keeps a path as well."""
    model = tiny_qwen(34)
    whole, grown = ModelRunner(model), runner_of(model, kind, monkeypatch)
    for runner in (whole, grown):
        runner.forward(torch.tensor([PROMPT[:-1]]))
    expected = whole.tree_forward(TREE, root_id=PROMPT[-1])
    parts = [
        grown.tree_forward(DraftTree((), ()), PROMPT[-1]),
        grown.tree_forward(DraftTree(TREE.tokens[:2], TREE.parents[:2]), PROMPT[-1], read=1),
        grown.tree_forward(TREE, PROMPT[-1], read=3),
    ]
    assert [part.shape[0] for part in parts] == [1, 2, 4]
    assert (torch.cat(parts) - expected).abs().max().item() < 1e-5
    with pytest.raises(RuntimeError):
        grown.tree_forward(TREE, PROMPT[-1], read=2)  # the cache holds 7 tree entries, not 2
    grown.keep_path((0, 3, 5))
    after = grown.forward(torch.tensor([list(b"ok")]), logits_to_keep=2)
    kept = [TREE.tokens[node] for node in (0, 3, 5)]
    plain = ModelRunner(model).forward_uncached(torch.tensor([PROMPT + kept + list(b"ok")]), 2)
    assert (after - plain).abs().max().item() < 1e-5


def test_a_chain_tree_is_the_chain_forward(monkeypatch: pytest.MonkeyPatch) -> None:
    model = tiny_qwen(33)
    chain = DraftTree.chain(list(b"(a)"))
    tree_runner, chain_runner = ModelRunner(model), ModelRunner(model)
    tree_runner.forward(torch.tensor([PROMPT[:-1]]))
    chain_runner.forward(torch.tensor([PROMPT[:-1]]))
    as_tree = tree_runner.tree_forward(chain, root_id=PROMPT[-1])
    as_chain = chain_runner.forward(torch.tensor([[PROMPT[-1], *chain.tokens]]), logits_to_keep=4)
    assert (as_tree - as_chain).abs().max().item() < 1e-5


@pytest.mark.slow
def test_the_bundled_pair_scores_trees_as_paths_and_tree_decoding_is_plain_greedy() -> None:
    """In float32: the target's tree forward equals its paths run one by one, and greedy
    decoding over the tree drafters' trees (the lookup tree's and lookahead's too) emits plain
    greedy decoding's tokens."""
    from specviz.core.engine import autoregressive_generate, speculative_generate
    from specviz.core.settings import GenerationSettings
    from specviz.drafters.registry import make_drafter
    from specviz.models.loader import ModelCache
    from specviz.models.presets import default_preset, load_presets

    preset = replace(default_preset(load_presets()), draft_quantization="none")
    cache = ModelCache()
    pair = cache.load_pair(preset, dtype="float32")
    try:
        prompt = [int(t) for t in pair.encode_prompt("def fibonacci(n):")[0]]
        tokens = [int(t) for t in pair.encode_prompt(" return fib if n else")[0][-6:]]
        tree = DraftTree(tuple(tokens), (ROOT, ROOT, 0, 0, 1, 2))
        runner = ModelRunner(pair.target)
        assert runner.kind == "lean"
        logits = assert_tree_matches_paths(pair.target, runner, prompt, tree, 1e-5)
        assert logits.dtype == torch.float32

        prompt_ids = pair.encode_prompt("Write a Python function that reverses a string.")
        settings = GenerationSettings(max_new_tokens=24)
        plain = [s.token.token_id for s in autoregressive_generate(pair, prompt_ids, settings)]
        for spec in ("tree", "tree:shape=2x2x1", "lookup:branches=3", "lookahead"):
            drafter = make_drafter(spec, pair)
            cycles = list(speculative_generate(pair, prompt_ids, settings, drafter))
            assert [t.token_id for c in cycles for t in c.emitted] == plain, spec
            if spec.startswith("tree"):  # a copy needs a repeat, which 24 tokens may lack
                assert sum(c.accepted_len for c in cycles) > 0, spec  # it did speculate
    finally:
        del pair
        cache.clear()
        gc.collect()
