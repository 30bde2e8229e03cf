"""The lean decoding step computes the model's logits as faithfully as transformers, or is not used.

The lean step is driven through ModelRunner, as the engine drives it. References: the same weights
in float32 through transformers' own forward, step by step with its own cache. A float32 model's lean logits match them to 1e-5. In bfloat16 the lean step's error
against them stays within the bounds below and at most about that of transformers' own bfloat16
forward (SDPA), because it computes attention in float32; a wrong mask, position, rotary embedding
or head grouping moves the logits by far more (tests below break each on purpose).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
import torch
from tiny_models import BYTE_VOCAB, tiny_config, tiny_qwen
from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM

from specviz.drafters.draft_model import ModelDrafter
from specviz.models.lean_forward import LeanCache, lean_support_problem, supports_lean_decoding
from specviz.models.model_steps import new_cache
from specviz.models.quantize import quantize_int8_weight_only
from specviz.models.runner import ModelRunner

# The feeds a speculative run makes: a prompt, γ + 1 verified positions after a cached prefix,
# single tokens, two tokens (last draft + bonus); then a rollback and another verify.
FEEDS = ((40, 1), (6, 6), (1, 1), (2, 2))


def tiny_llama(seed: int, dtype: torch.dtype = torch.float32) -> LlamaForCausalLM:
    torch.manual_seed(seed)
    return LlamaForCausalLM(tiny_config(LlamaConfig)).to(dtype).eval()


def assert_faithful_logits(model: torch.nn.Module) -> None:
    runner = ModelRunner(model)
    assert runner.kind == "lean" and runner.fallback_reason is None
    reference = copy.deepcopy(model).float()  # the same weights, transformers' forward, float32
    own_cache, reference_cache = new_cache(model), new_cache(reference)
    generator = torch.Generator().manual_seed(0)

    def both(length: int, keep: int) -> None:
        feed = torch.randint(0, BYTE_VOCAB, (1, length), generator=generator)
        with torch.inference_mode():
            expected = reference(
                input_ids=feed, past_key_values=reference_cache, logits_to_keep=keep
            ).logits[0]
            own = model(input_ids=feed, past_key_values=own_cache, logits_to_keep=keep).logits[0]
        got = runner.forward(feed, logits_to_keep=keep)
        assert got.dtype == own.dtype and got.shape == own.shape
        error = (got.float() - expected).abs().max().item()
        if got.dtype == torch.float32:
            assert error < 1e-5
        else:
            own_error = (own.float() - expected).abs().max().item()
            assert error < 0.02 * expected.abs().max().item() + 0.01
            assert error <= 2 * own_error + 0.005  # no worse than transformers' bfloat16 forward
        assert runner.cache_len == reference_cache.get_seq_length()

    for length, keep in FEEDS:
        both(length, keep)
    for cache in (own_cache, reference_cache):
        cache.crop(-3)
    runner.rollback(3)
    both(4, 4)
    runner.rollback(0)  # removes nothing (the drafter's rollback when nothing was rejected)
    both(1, 1)
    for _ in range(220):  # past the first 256 cached positions: the cache buffers grow
        both(1, 1)
    with pytest.raises(ValueError, match="how many tokens"):
        runner.rollback(-2)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_qwen2_logits_are_faithful(dtype: torch.dtype) -> None:
    assert_faithful_logits(tiny_qwen(3, dtype=dtype))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_llama_logits_are_faithful(dtype: torch.dtype) -> None:
    assert_faithful_logits(tiny_llama(4, dtype=dtype))


def test_int8_weight_only_draft_logits_are_faithful() -> None:
    assert_faithful_logits(quantize_int8_weight_only(tiny_qwen(5, dtype=torch.bfloat16)))


def test_eager_models_use_the_lean_step_too() -> None:
    model = tiny_qwen(10)
    model.config._attn_implementation = "eager"
    assert_faithful_logits(model)


def test_the_cache_writes_in_place_and_rolls_back_by_length() -> None:
    cache = LeanCache(layers=1)
    first = torch.arange(2 * 3 * 4, dtype=torch.bfloat16).view(2, 3, 4)
    keys, values = cache.extend(0, first, -first)
    cache.advance(3)
    assert keys.dtype == torch.float32 and torch.equal(keys, first.float())
    assert torch.equal(values, -first.float())
    cache.crop(-2)
    assert cache.get_seq_length() == 1
    keys, _ = cache.extend(0, first[:, :1] + 100, first[:, :1])
    cache.advance(1)
    assert torch.equal(keys[:, 0], first[:, 0].float())  # position 0 kept
    assert torch.equal(keys[:, 1], first[:, 0].float() + 100)  # position 1 overwritten
    assert cache.get_seq_length() == 2


def gpt2() -> GPT2LMHeadModel:
    config = GPT2Config(vocab_size=BYTE_VOCAB + 1, n_embd=32, n_layer=1, n_head=2)
    return GPT2LMHeadModel(config).eval()


def flash_qwen() -> Any:
    model = tiny_qwen(6)
    model.config._attn_implementation = "flash_attention_2"
    return model


def sliding_qwen() -> Any:
    model = tiny_qwen(7)
    model.model.layers[0].self_attn.sliding_window = 16
    return model


def split_qwen() -> Any:
    model = tiny_qwen(9)
    model.hf_device_map = {"model.layers.0": 0, "model.layers.1": 1}
    return model


def hooked_qwen() -> Any:
    model = tiny_qwen(12)
    model.model.layers[1].mlp.down_proj.register_forward_hook(lambda *_: None)
    return model


@pytest.mark.parametrize("build", [gpt2, flash_qwen, sliding_qwen, split_qwen, hooked_qwen])
def test_other_models_keep_transformers_forward(build: Any) -> None:
    model = build()
    assert not supports_lean_decoding(model)
    runner = ModelRunner(model)
    assert runner.kind == "transformers"
    assert runner.fallback_reason == lean_support_problem(model)


def test_the_drafter_runs_the_lean_step_and_nothing_is_kept_on_the_model() -> None:
    model = tiny_qwen(8)
    drafter = ModelDrafter(model)
    assert drafter.runner.kind == "lean"
    assert not [name for name in vars(model) if "lean" in name]


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_branch_logits_equal_each_branch_fed_alone(dtype: torch.dtype) -> None:
    model = tiny_qwen(13, dtype=dtype)
    context = torch.tensor([list(b"branches share a prefix")])
    branches = torch.tensor([list(b"abc"), list(b"xyz"), list(b"ab!")])
    runner = ModelRunner(model)
    assert runner.kind == "lean"
    runner.forward(context)
    together = runner.branch_logits(branches)  # (3, V)
    assert runner.cache_len == context.shape[1]  # the cache is left as it was
    for row, branch in enumerate(branches):
        alone = runner.forward(branch.view(1, -1))[-1]
        runner.rollback(branch.shape[0])
        tolerance = 1e-5 if dtype == torch.float32 else 0.02 * alone.abs().max().item()
        assert (together[row].float() - alone.float()).abs().max().item() < tolerance
