"""The lean decoding step gives transformers' logits bit for bit, or is not used at all.

Its attention is transformers' eager attention (grouped differently, same dot products), so the
references run with attn_implementation "eager". In bfloat16, the dtype the bundled pair runs in,
the logits are equal bit for bit. In float32 PyTorch's CPU matrix product rounds one query row
differently from a block of rows, so there they agree to ~1e-6 (a wrong mask, position or rotary
embedding moves them by far more). Against PyTorch's SDPA kernel they agree to rounding.
"""

from __future__ import annotations

from typing import Any

import pytest
import torch
from conftest import BYTE_VOCAB, tiny_qwen
from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM

from specviz.drafters import ModelDrafter
from specviz.lean_forward import LeanDecoder, lean_decoder, supports_lean_decoding
from specviz.model_steps import new_cache
from specviz.models import load_model
from specviz.presets import ModelSource
from specviz.quantize import quantize_int8_weight_only

# The feeds a speculative run makes: a prompt, γ + 1 verified positions after a cached prefix,
# single tokens, two tokens (last draft + bonus); then a rollback and another verify.
FEEDS = ((40, 1), (6, 6), (1, 1), (2, 2))


def tiny_llama(seed: int, dtype: torch.dtype = torch.float32) -> LlamaForCausalLM:
    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=BYTE_VOCAB + 1,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=512,
        tie_word_embeddings=False,
    )
    return LlamaForCausalLM(config).to(dtype).eval()


def eager(model: Any) -> Any:
    model.config._attn_implementation = "eager"
    return model


def assert_same_logits(model: torch.nn.Module) -> None:
    lean = lean_decoder(model)
    assert isinstance(lean, LeanDecoder)
    config: Any = model.config
    assert config._attn_implementation == "eager", "bit-identity is with eager attention"
    reference_cache, lean_cache = new_cache(model), lean.new_cache()
    generator = torch.Generator().manual_seed(0)

    def both(length: int, keep: int) -> None:
        feed = torch.randint(0, BYTE_VOCAB, (1, length), generator=generator)
        with torch.inference_mode():
            expected = model(
                input_ids=feed, past_key_values=reference_cache, use_cache=True, logits_to_keep=keep
            ).logits
            got = lean(input_ids=feed, past_key_values=lean_cache, logits_to_keep=keep).logits
        assert got.dtype == expected.dtype and got.shape == expected.shape
        if got.dtype == torch.bfloat16:
            assert torch.equal(got, expected)  # bit for bit, not approximately
        else:
            assert (got - expected).abs().max().item() < 1e-5
        assert lean_cache.get_seq_length() == reference_cache.get_seq_length()

    for length, keep in FEEDS:
        both(length, keep)
    reference_cache.crop(-3)
    lean_cache.crop(-3)
    both(4, 4)
    reference_cache.crop(0)  # removes nothing (the drafter's rollback when nothing was rejected)
    lean_cache.crop(0)
    both(1, 1)
    with pytest.raises(ValueError, match="minus the tokens"):
        lean_cache.crop(2)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_qwen2_logits_are_identical_to_transformers(dtype: torch.dtype) -> None:
    assert_same_logits(eager(tiny_qwen(3, dtype=dtype)))


def test_llama_logits_are_identical_to_transformers() -> None:
    assert_same_logits(eager(tiny_llama(4, dtype=torch.bfloat16)))


def test_int8_weight_only_draft_logits_are_identical_to_transformers() -> None:
    assert_same_logits(eager(quantize_int8_weight_only(tiny_qwen(5, dtype=torch.bfloat16))))


@pytest.mark.parametrize(("dtype", "tolerance"), [(torch.float32, 1e-4), (torch.bfloat16, 0.1)])
def test_sdpa_models_use_the_lean_step_and_agree_to_rounding(
    dtype: torch.dtype, tolerance: float
) -> None:
    model = tiny_qwen(10, dtype=dtype)
    assert model.config._attn_implementation == "sdpa"
    lean = lean_decoder(model)
    assert isinstance(lean, LeanDecoder)
    feed = torch.randint(0, BYTE_VOCAB, (1, 30), generator=torch.Generator().manual_seed(1))
    with torch.inference_mode():
        expected = model(input_ids=feed, past_key_values=new_cache(model), logits_to_keep=30)
        got = lean(input_ids=feed, past_key_values=lean.new_cache(), logits_to_keep=30)
    difference = (got.logits.float() - expected.logits.float()).abs().max().item()
    assert difference < tolerance


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
    assert lean_decoder(model) is model


def test_one_lean_step_per_model_and_the_drafter_uses_it() -> None:
    model = tiny_qwen(8)
    assert lean_decoder(model) is lean_decoder(model)
    drafter = ModelDrafter(model)
    assert drafter.step is lean_decoder(model)
    assert "_specviz_lean_decoder" not in dict(model.named_children())


def test_loaded_models_compute_what_the_lean_step_computes(tmp_path: Any) -> None:
    """Loading a Llama/Qwen2 model switches its own forward to eager attention, the lean step's
    arithmetic: transformers' forward (and generate()) then decode the same numbers as specviz."""
    tiny_qwen(11, dtype=torch.bfloat16).save_pretrained(tmp_path / "qwen")
    gpt2().save_pretrained(tmp_path / "gpt2")
    device = torch.device("cpu")
    model = load_model(ModelSource("local", str(tmp_path / "qwen")), device, torch.bfloat16)
    assert model.config._attn_implementation == "eager"
    assert_same_logits(model)
    other = load_model(ModelSource("local", str(tmp_path / "gpt2")), device, torch.float32)
    assert other.config._attn_implementation == "sdpa"  # no lean step: transformers' default
