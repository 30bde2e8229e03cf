"""Prompts read once and copied into each run (the advisor's prefill): same tokens, less fed."""

from __future__ import annotations

import pytest
import torch
from tiny_models import ByteTokenizer, TinyPair

from specviz.core.engine import autoregressive_generate, speculative_generate
from specviz.core.settings import GenerationSettings
from specviz.drafters.registry import make_drafter
from specviz.models.prompt_prefills import PromptPrefills, installed_prefills
from specviz.models.runner import ModelRunner

TEXT = "def average(numbers):\n    return sum(numbers) / len(numbers)\n# fix the empty list"
GREEDY = GenerationSettings(gamma=3, max_new_tokens=12, stop_on_eos=False, temperature=0.0)


def ids_of(text: str) -> torch.Tensor:
    return torch.tensor([ByteTokenizer().encode(text)])


def read(pair: TinyPair, prompts: list[torch.Tensor], chunk: int = 16) -> PromptPrefills:
    reads = PromptPrefills(prompts, chunk)
    for model in (pair.target, pair.draft):
        for _ in reads.read(ModelRunner(model)):
            pass
    return reads


def run(pair: TinyPair, drafter: str | None, ids: torch.Tensor) -> list[int]:
    """The new tokens of one run, the engine reading the whole prompt in its first forward."""
    if drafter is None:
        steps = autoregressive_generate(pair, ids, GREEDY, prefill_chunk=ids.shape[1])
        return [step.token.token_id for step in steps]
    drafts = make_drafter(drafter, pair)
    cycles = speculative_generate(pair, ids, GREEDY, drafts, prefill_chunk=ids.shape[1])
    return [token.token_id for cycle in cycles for token in cycle.emitted]


@pytest.mark.parametrize("drafter", [None, "draft-model", "hybrid", "layerskip:skip=1-2"])
def test_a_run_from_a_read_prompt_writes_what_a_run_that_reads_it_writes(
    tiny_pair: TinyPair, drafter: str | None
) -> None:
    ids = ids_of(TEXT)
    alone = run(tiny_pair, drafter, ids)
    reads = read(tiny_pair, [ids])
    with reads.installed():
        reused = run(tiny_pair, drafter, ids)
        again = run(tiny_pair, drafter, ids)  # the store's copy was not written through
    assert reused == again == alone and len(alone) == GREEDY.max_new_tokens


def test_the_run_feeds_only_what_follows_the_read_prompt(
    tiny_pair: TinyPair, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = ids_of(TEXT)
    reads = read(tiny_pair, [ids])
    fed: list[tuple[str, int]] = []
    forward = ModelRunner.forward_uncached

    def spy(self: ModelRunner, input_ids: torch.Tensor, logits_to_keep: int = 1) -> torch.Tensor:
        name = "target" if self.model is tiny_pair.target else "draft"
        fed.append((name, input_ids.shape[1]))
        return forward(self, input_ids, logits_to_keep)

    monkeypatch.setattr(ModelRunner, "forward_uncached", spy)
    with reads.installed():
        cycles = list(speculative_generate(tiny_pair, ids, GREEDY, make_drafter("draft-model", tiny_pair), prefill_chunk=ids.shape[1]))  # fmt: skip
    # The draft's first forward reads the prompt's last token only; the target's first forward
    # that token and the first cycle's drafts. Nothing feeds the prompt's head again.
    assert fed[0] == ("draft", 1)
    assert ("target", 1 + cycles[0].draft_len) in fed
    assert max(length for _, length in fed) < ids.shape[1] - 1
    # Outside the block a new runner reads the prompt itself.
    fed.clear()
    assert installed_prefills() is None
    run(tiny_pair, None, ids)
    assert fed[0] == ("target", ids.shape[1])


def test_only_a_prompt_read_into_that_model_is_restored(tiny_pair: TinyPair) -> None:
    ids, other = ids_of(TEXT), ids_of("an unrelated prompt of some length")
    reads = PromptPrefills([ids], chunk=16)
    for _ in reads.read(ModelRunner(tiny_pair.target)):
        pass
    assert reads.seconds(tiny_pair.target, ids) > 0
    assert reads.seconds(tiny_pair.draft, ids) == 0.0  # never read into the draft
    assert reads.seconds(tiny_pair.target, other) == 0.0
    runner = ModelRunner(tiny_pair.target)
    head = ids.shape[1] - 1
    # Another prompt, another model, or too few positions left to compute: fed whole.
    assert reads.restore(runner, other, keep=1) is other and runner.cache_len == 0
    assert reads.restore(ModelRunner(tiny_pair.draft), ids, keep=1) is ids
    assert reads.restore(runner, ids, keep=2) is ids and runner.cache_len == 0
    rest = reads.restore(runner, ids, keep=1)
    assert rest.shape[1] == 1 and runner.cache_len == head
    # The store's copy is never written through: a second run starts from the same head.
    runner.forward(rest)
    again = ModelRunner(tiny_pair.target)
    assert reads.restore(again, ids, keep=1).shape[1] == 1 and again.cache_len == head


def test_a_store_is_installed_only_in_the_thread_that_entered_its_block(
    tiny_pair: TinyPair,
) -> None:
    """The app serves visitors from several threads: a runner another visitor builds while the
    advisor's store is installed must read its own prompt, not restore the advisor's."""
    import threading

    reads = PromptPrefills([ids_of(TEXT)], chunk=16)
    seen: list[object] = []
    with reads.installed():
        assert installed_prefills() is reads
        other = threading.Thread(target=lambda: seen.append(installed_prefills()))
        other.start()
        other.join()
        with PromptPrefills([ids_of("x y")], chunk=16).installed():
            assert installed_prefills() is not reads  # the inner block's store
        assert installed_prefills() is reads
    assert seen == [None]
    assert installed_prefills() is None
