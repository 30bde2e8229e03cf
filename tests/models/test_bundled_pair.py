"""The real bundled pair, end to end. Slow: it loads Qwen2.5-Coder 0.5B and 1.5B."""

from __future__ import annotations

import gc
from dataclasses import replace
from typing import Any

import pytest
import torch

from specviz.core.detok import IncrementalDetokenizer
from specviz.core.engine import GenerationSettings, autoregressive_generate, speculative_generate
from specviz.drafters.registry import make_drafter
from specviz.models.loader import ModelCache
from specviz.models.presets import DEFAULT_DRAFTER, default_preset, load_presets

pytestmark = pytest.mark.slow

CODE_PROMPT = "Write a Python function fibonacci(n) that returns the n-th Fibonacci number."


def test_generates_code_with_high_acceptance(bundled_pair: Any) -> None:
    prompt_ids = bundled_pair.encode_prompt(CODE_PROMPT)
    settings = GenerationSettings(gamma=5, max_new_tokens=40)
    cycles = list(
        speculative_generate(
            bundled_pair, prompt_ids, settings, make_drafter(DEFAULT_DRAFTER, bundled_pair)
        )
    )
    text = "".join(token.text for cycle in cycles for token in cycle.emitted)
    totals = cycles[-1].totals
    assert "def fibonacci" in text
    assert totals.new_tokens == 40
    assert totals.acceptance_rate > 0.6  # code is predictable: the draft is mostly right
    assert totals.tokens_per_target_pass > 2.0
    # The run's text is what a reader reads: control tokens (end of text) are left out.
    assert text == bundled_pair.tokenizer.decode(
        [t.token_id for c in cycles for t in c.emitted], skip_special_tokens=True
    )


def test_sampling_run_records_rejections(bundled_pair: Any) -> None:
    prompt_ids = bundled_pair.encode_prompt("Write a short story about a lighthouse keeper.")
    settings = GenerationSettings(gamma=4, temperature=1.0, max_new_tokens=40, seed=1)
    cycles = list(
        speculative_generate(
            bundled_pair, prompt_ids, settings, make_drafter(DEFAULT_DRAFTER, bundled_pair)
        )
    )
    rejections = [c.rejection for c in cycles if c.rejection is not None]
    assert rejections, "a story at temperature 1 should see at least one rejection"
    assert all(0.0 < sum(bar.prob for bar in r.top_residual) <= 1.0 + 1e-5 for r in rejections)
    assert 0.0 < cycles[-1].totals.acceptance_rate < 1.0


def test_greedy_speculative_equals_plain_decoding_in_float32() -> None:
    """Token-for-token equality with plain greedy decoding on the real pair (float32 draft and
    target), for every drafter: the draft model, prompt lookup and the hybrid."""
    preset = replace(default_preset(load_presets()), draft_quantization="none")
    cache = ModelCache()  # its own cache: the float32 copies are freed when the test ends
    pair = cache.load_pair(preset, dtype="float32")
    try:
        prompt_ids = pair.encode_prompt(CODE_PROMPT)
        settings = GenerationSettings(gamma=5, max_new_tokens=32)
        plain = [
            step.token.token_id for step in autoregressive_generate(pair, prompt_ids, settings)
        ]
        for drafter in (DEFAULT_DRAFTER, "lookup", "hybrid"):
            cycles = list(
                speculative_generate(pair, prompt_ids, settings, make_drafter(drafter, pair))
            )
            assert [t.token_id for c in cycles for t in c.emitted] == plain, drafter
            assert cycles[-1].totals.target_forwards < len(plain), drafter  # it did speculate
    finally:
        del pair
        cache.clear()
        gc.collect()


def test_greedy_speculative_equals_plain_in_bfloat16_with_the_avx2_kernel(
    bundled_pair: Any,
) -> None:
    """With specviz's bfloat16 kernel every Linear layer sums in the same order for 1 row or many,
    so the bfloat16 target's verification and its one-token steps agree and greedy texts match
    token for token (with torch's bfloat16 product they can part at a near-tie: the docs' "Greedy
    text in bfloat16")."""
    report = bundled_pair.cost_report
    if report is None or report.products != "rows":
        pytest.skip("the bundled pair does not run the AVX2 kernel on this CPU")
    assert bundled_pair.target.lm_head.__class__.__name__ == "Bf16RowsLinear"
    settings = GenerationSettings(gamma=5, max_new_tokens=32)
    for prompt in (CODE_PROMPT, "Write a short story about a lighthouse keeper."):
        prompt_ids = bundled_pair.encode_prompt(prompt)
        plain = [
            step.token.token_id
            for step in autoregressive_generate(bundled_pair, prompt_ids, settings)
        ]
        for drafter in (DEFAULT_DRAFTER, "lookup", "hybrid"):
            cycles = list(
                speculative_generate(
                    bundled_pair, prompt_ids, settings, make_drafter(drafter, bundled_pair)
                )
            )
            assert [t.token_id for c in cycles for t in c.emitted] == plain, (prompt, drafter)


def test_incremental_text_matches_full_decode_with_multibyte_text(bundled_pair: Any) -> None:
    tokenizer = bundled_pair.tokenizer
    text = "Grüße, 日本語, a flamingo 🦩 and 𝔘𝔫𝔦 — déjà vu."
    ids = tokenizer(text)["input_ids"]
    detok = IncrementalDetokenizer(tokenizer, ids[:2])
    pieces = detok.peek(ids[2:])
    assert "".join(pieces) == tokenizer.decode(ids[2:])
    assert detok.commit(ids[2:]) == pieces
    assert any(piece == "" for piece in pieces)  # 🦩 spans two tokens: the first waits


def test_cached_safetensors_reproduce_the_gguf_logits(bundled_pair: Any) -> None:
    """The dequantized-and-cached draft gives the same logits as loading the GGUF directly."""
    from transformers import AutoModelForCausalLM, GgufConfig

    from specviz.models.bundled import BUNDLED, cache_root

    model = BUNDLED["qwen2.5-coder-0.5b-instruct"]
    folder = cache_root() / "bundled" / model.name
    from_gguf = AutoModelForCausalLM.from_pretrained(
        str(folder),
        gguf_file=model.file_name,
        dtype=torch.bfloat16,
        quantization_config=GgufConfig(dequantize=True),
    ).eval()
    cached = AutoModelForCausalLM.from_pretrained(
        str(folder / "converted"), dtype=torch.bfloat16
    ).eval()
    ids = bundled_pair.encode_prompt(CODE_PROMPT)
    with torch.inference_mode():
        assert torch.equal(from_gguf(ids).logits, cached(ids).logits)


def test_a_generated_chat_marker_is_a_marker_not_text(bundled_pair: Any) -> None:
    """Qwen's <|im_start|> is an added token marked special, not one of all_special_ids: the
    detokenizer still gives it no text and names it, so the stream shows it as a marker."""
    tokenizer = bundled_pair.tokenizer
    marker = tokenizer.convert_tokens_to_ids("<|im_start|>")
    ids = tokenizer("Hello world")["input_ids"]
    detok = IncrementalDetokenizer(tokenizer, ids[:1])
    pieces = detok.commit([*ids[1:], marker, *ids[1:]])
    assert pieces[len(ids) - 1] == "" and detok.special_name(marker) == "<|im_start|>"
    assert "".join(pieces) == tokenizer.decode(ids[1:]) * 2
