"""A long prompt read in chunks before the first cycle: the same tokens, the same cache, and a
Prefill record between chunks so a consumer can stop there."""

from __future__ import annotations

import pytest
import torch
from tiny_models import TinyPair

from specviz.core.engine import (
    GenerationSettings,
    autoregressive_generate,
    autoregressive_stream,
    speculative_generate,
    speculative_stream,
)
from specviz.core.events import Cycle, Prefill, Step
from specviz.drafters.draft_model import ModelDrafter
from specviz.drafters.registry import make_drafter
from specviz.models.runner import ModelRunner

# 45 bytes: chunks of 8 leave 5 for the first forward, chunks of 9 leave a whole chunk.
LONG_PROMPT = torch.tensor([list(b"def fibonacci(n):\n    # the n-th number, fast")])
GREEDY = GenerationSettings(gamma=4, max_new_tokens=30, stop_on_eos=False)


def plain_ids(pair: TinyPair, chunk: int) -> list[int]:
    steps = autoregressive_generate(pair, LONG_PROMPT, GREEDY, prefill_chunk=chunk)
    return [step.token.token_id for step in steps]


def spec_ids(pair: TinyPair, drafter: str, chunk: int) -> list[int]:
    cycles = speculative_generate(
        pair, LONG_PROMPT, GREEDY, make_drafter(drafter, pair), prefill_chunk=chunk
    )
    return [token.token_id for cycle in cycles for token in cycle.emitted]


@pytest.mark.parametrize("drafter", ["draft-model", "lookup", "hybrid", "layerskip:skip=1"])
@pytest.mark.parametrize("chunk", [1, 8, 9])
def test_greedy_speculative_equals_plain_with_a_prompt_longer_than_a_chunk(
    tiny_pair: TinyPair, drafter: str, chunk: int
) -> None:
    expected = plain_ids(tiny_pair, chunk)
    assert len(expected) == GREEDY.max_new_tokens
    assert spec_ids(tiny_pair, drafter, chunk) == expected


def test_chunked_and_whole_prompts_decode_the_same_text(tiny_pair: TinyPair) -> None:
    whole = plain_ids(tiny_pair, LONG_PROMPT.shape[1])
    assert plain_ids(tiny_pair, 8) == whole
    assert spec_ids(tiny_pair, "draft-model", 8) == whole


def test_chunked_prefill_builds_the_cache_one_forward_builds(tiny_pair: TinyPair) -> None:
    """Causal attention: feeding the prompt in chunks gives the same keys, values and last
    logits as one forward over it, to float tolerance."""
    whole, chunked = ModelRunner(tiny_pair.target), ModelRunner(tiny_pair.target)
    expected = whole.forward(LONG_PROMPT, logits_to_keep=1)
    for begin in range(0, LONG_PROMPT.shape[1], 8):
        logits = chunked.forward(LONG_PROMPT[:, begin : begin + 8], logits_to_keep=1)
    assert chunked.cache_len == whole.cache_len == LONG_PROMPT.shape[1]
    torch.testing.assert_close(logits, expected, rtol=1e-4, atol=1e-4)
    assert whole.lean_step is not None and chunked.lean_step is not None
    cache_whole, cache_chunked = whole.lean_step[1], chunked.lean_step[1]
    length = LONG_PROMPT.shape[1]
    for got, want in zip(
        cache_chunked.keys + cache_chunked.values,
        cache_whole.keys + cache_whole.values,
        strict=True,
    ):
        assert got is not None and want is not None
        torch.testing.assert_close(got[:, :length], want[:, :length], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    ("chunk", "dones"), [(8, [8, 16, 24, 32, 40]), (9, [9, 18, 27, 36]), (45, [])]
)
def test_a_prefill_record_follows_each_chunk_but_the_last(
    tiny_pair: TinyPair, chunk: int, dones: list[int]
) -> None:
    drafter = make_drafter("draft-model", tiny_pair)
    stream = list(speculative_stream(tiny_pair, LONG_PROMPT, GREEDY, drafter, prefill_chunk=chunk))
    prefills = [event for event in stream if isinstance(event, Prefill)]
    assert prefills == [Prefill(done, LONG_PROMPT.shape[1]) for done in dones]
    assert stream[: len(prefills)] == prefills  # all before the first cycle
    assert all(isinstance(event, Cycle) for event in stream[len(prefills) :])
    first = stream[len(prefills)]
    assert isinstance(first, Cycle)
    assert first.index == 0 and first.totals.target_forwards == 1
    assert (first.totals.prefill_s > 0) == bool(dones)

    steps = list(autoregressive_stream(tiny_pair, LONG_PROMPT, GREEDY, prefill_chunk=chunk))
    assert [event for event in steps if isinstance(event, Prefill)] == prefills
    assert all(isinstance(event, Step) for event in steps[len(prefills) :])


def test_both_caches_hold_the_chunks_read_when_the_consumer_stops(tiny_pair: TinyPair) -> None:
    """Stopping after the first record: one chunk read by each model, nothing decoded."""
    drafter = make_drafter("draft-model", tiny_pair)
    assert isinstance(drafter, ModelDrafter)
    stream = speculative_stream(tiny_pair, LONG_PROMPT, GREEDY, drafter, prefill_chunk=8)
    assert next(stream) == Prefill(8, LONG_PROMPT.shape[1])
    assert drafter.cache_len == 8
    stream.close()  # what Stop does to the handler's generator between two yields
    assert next(stream, None) is None


def test_a_chunk_size_below_one_is_refused(tiny_pair: TinyPair) -> None:
    with pytest.raises(ValueError, match="prefill_chunk"):
        list(autoregressive_generate(tiny_pair, LONG_PROMPT, GREEDY, prefill_chunk=0))


@pytest.mark.parametrize("drafter", ["draft-model", "hybrid"])
def test_the_draft_reads_the_chunks_too(tiny_pair: TinyPair, drafter: str) -> None:
    """The draft's cache after chunked reading is its whole-prompt cache: every cycle drafts and
    is accepted as it is when the prompt is read at once (a draft missing a chunk would guess
    from a shorter context)."""

    def verdicts(chunk: int) -> list[tuple[int, int]]:
        cycles = speculative_generate(
            tiny_pair, LONG_PROMPT, GREEDY, make_drafter(drafter, tiny_pair), prefill_chunk=chunk
        )
        return [(cycle.draft_len, cycle.accepted_len) for cycle in cycles]

    assert verdicts(8) == verdicts(LONG_PROMPT.shape[1])
