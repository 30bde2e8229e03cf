"""Low-bit drafts on tiny models: weight-only int8 and int4 stay close, are batch-independent, and
exact."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from tiny_models import EOS_ID, ByteTokenizer, TinyPair, tiny_qwen

from specviz.core.engine import GenerationSettings, autoregressive_generate, speculative_generate
from specviz.drafters.registry import make_drafter
from specviz.models import quantize
from specviz.models.model_steps import new_cache, prefill
from specviz.models.presets import DEFAULT_DRAFTER
from specviz.models.quantize import (
    Int4DualLinear,
    Int4WeightOnlyLinear,
    Int8WeightOnlyLinear,
    dual_rows,
    quantize_int4_dual,
    quantize_int4_output_layer,
    quantize_int4_weight_only,
    quantize_int8,
    quantize_int8_weight_only,
    set_dual_rows,
    tune_dual_layers,
)

PROMPT = torch.tensor([list(b"def fibonacci(n): return n if n < 2 else")])  # (1, 41)


@torch.inference_mode()
def last_log_probs_full(model: torch.nn.Module, ids: torch.Tensor) -> torch.Tensor:
    """Log-probs for the next token from one forward over the whole context: (V,)."""
    return model(input_ids=ids).logits[0, -1].float().log_softmax(-1)


@torch.inference_mode()
def last_log_probs_stepped(model: torch.nn.Module, ids: torch.Tensor) -> torch.Tensor:
    """The same log-probs, fed as the drafter does: prefill all but the last token, then one."""
    cache = new_cache(model)
    prefill(model, ids, cache)
    logits = model(input_ids=ids[:, -1:], past_key_values=cache, use_cache=True).logits
    return logits[0, -1].float().log_softmax(-1)


def feeding_gap(model: torch.nn.Module) -> float:
    """max |Δ log p| between the two ways of feeding the same context."""
    full = last_log_probs_full(model, PROMPT)
    return float((full - last_log_probs_stepped(model, PROMPT)).abs().max())


def test_every_linear_is_swapped_and_embeddings_still_work() -> None:
    model = quantize_int8_weight_only(tiny_qwen(1))
    linears = [m for m in model.modules() if isinstance(m, torch.nn.Linear)]
    swapped = [m for m in model.modules() if isinstance(m, Int8WeightOnlyLinear)]
    assert not linears
    assert len(swapped) == 2 * 7 + 1  # q, k, v, o, gate, up, down per layer, plus lm_head
    assert model.lm_head.weight.dtype == torch.int8
    assert model.get_input_embeddings().weight.dtype == torch.float32


def test_tied_output_layer_gets_its_own_int8_copy() -> None:
    model = tiny_qwen(1)
    model.lm_head.weight = model.get_input_embeddings().weight  # tie, as the bundled draft does
    reference = last_log_probs_full(model, PROMPT)
    quantize_int8_weight_only(model)
    assert model.lm_head.weight.dtype == torch.int8
    assert model.get_input_embeddings().weight.dtype == torch.float32
    quantized = last_log_probs_full(model, PROMPT)
    assert float((quantized - reference).abs().max()) < 0.1


@pytest.mark.parametrize("in_features", [64, 40])  # 40: not a multiple of the kernel's block
def test_linear_matches_its_dequantized_weights(in_features: int) -> None:
    torch.manual_seed(0)
    linear = torch.nn.Linear(in_features, 33)
    layer = Int8WeightOnlyLinear(linear)
    inputs = torch.randn(2, 5, in_features)
    dequantized = layer.weight.float() * layer.scales[:, None]
    expected = inputs @ dequantized.T + linear.bias
    assert torch.allclose(layer(inputs), expected, atol=1e-4)
    assert (dequantized - linear.weight).abs().max() <= layer.scales.max() / 2 + 1e-6


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_weight_only_logits_are_close_to_the_unquantized_model(dtype: torch.dtype) -> None:
    reference = last_log_probs_full(tiny_qwen(1, dtype=dtype), PROMPT)  # spans about 7 nats
    quantized = last_log_probs_full(quantize_int8_weight_only(tiny_qwen(1, dtype=dtype)), PROMPT)
    assert float((quantized - reference).abs().max()) < 0.1  # measured 0.04
    assert int(quantized.argmax()) == int(reference.argmax())


def test_weight_only_output_does_not_depend_on_how_the_context_is_fed() -> None:
    """Dynamic int8 scales activations per tensor, so prefill + 1 differs from a full forward;
    weight-only int8 computes each position on its own."""
    weight_only = feeding_gap(quantize_int8_weight_only(tiny_qwen(1)))
    dynamic = feeding_gap(quantize_int8(tiny_qwen(1)))
    assert weight_only < 1e-4
    assert dynamic > 100 * weight_only


def test_weight_only_in_bfloat16_is_batch_independent_up_to_rounding() -> None:
    unquantized = feeding_gap(tiny_qwen(1, dtype=torch.bfloat16))
    weight_only = feeding_gap(quantize_int8_weight_only(tiny_qwen(1, dtype=torch.bfloat16)))
    assert weight_only <= max(2 * unquantized, 0.05)


@pytest.mark.parametrize("gamma", [1, 4])
@pytest.mark.parametrize(
    "quantize",
    [
        quantize_int8_weight_only,
        quantize_int4_weight_only,
        quantize_int4_output_layer,
        quantize_int4_dual,
    ],
)
def test_greedy_speculation_with_a_weight_only_draft_equals_plain_decoding(
    gamma: int, quantize: Any
) -> None:
    draft = quantize(tiny_qwen(1))
    pair = TinyPair(draft, tiny_qwen(2, layers=3), ByteTokenizer(), frozenset({EOS_ID}))
    settings = GenerationSettings(gamma=gamma, max_new_tokens=40, stop_on_eos=False)
    cycles = list(speculative_generate(pair, PROMPT, settings, make_drafter(DEFAULT_DRAFTER, pair)))
    speculative = [token.token_id for cycle in cycles for token in cycle.emitted]
    plain = [step.token.token_id for step in autoregressive_generate(pair, PROMPT, settings)]
    assert speculative == plain
    assert sum(len(cycle.drafted) for cycle in cycles) > 0


# -- int4wo: 4-bit weights, a scale and a zero per group of 32 inputs ----------------------------


def _int4_reference(weight: torch.Tensor, group: int) -> torch.Tensor:
    """The weight rounded to 16 levels per group of *group* inputs, as the layer's docstring says."""
    groups = weight.float().reshape(-1, group)
    low, high = groups.amin(1, keepdim=True), groups.amax(1, keepdim=True)
    scale = (high - low) / 15
    return (torch.round((groups - low) / scale).clamp(0, 15) * scale + low).reshape_as(weight)


# (64, 64): the CPU kernel's path; (33, 40): a shape it does not take, multiplied unpacked.
@pytest.mark.parametrize(("out_features", "in_features"), [(64, 64), (33, 40)])
def test_int4_linear_matches_its_rounded_weights(out_features: int, in_features: int) -> None:
    torch.manual_seed(0)
    linear = torch.nn.Linear(in_features, out_features)
    layer = Int4WeightOnlyLinear(linear)
    rounded = _int4_reference(linear.weight, layer.group)
    inputs = torch.randn(2, 5, in_features)
    assert torch.allclose(layer(inputs), inputs @ rounded.T + linear.bias, atol=1e-4)
    step = (linear.weight.amax() - linear.weight.amin()) / 15
    assert (rounded - linear.weight).abs().max() <= step / 2 + 1e-6
    if out_features % 16 == 0:  # packed two levels to a byte
        assert layer.weight.numel() == out_features * in_features // 2


def test_int4_swaps_every_linear_and_stays_close() -> None:
    reference = last_log_probs_full(tiny_qwen(1), PROMPT)
    model = quantize_int4_weight_only(tiny_qwen(1))
    assert not [m for m in model.modules() if isinstance(m, torch.nn.Linear)]
    assert len([m for m in model.modules() if isinstance(m, Int4WeightOnlyLinear)]) == 2 * 7 + 1
    assert model.get_input_embeddings().weight.dtype == torch.float32
    quantized = last_log_probs_full(model, PROMPT)
    assert float((quantized - reference).abs().max()) < 0.5
    assert feeding_gap(model) < 1e-4  # weight-only: no position depends on the others


# -- int4head: the output layer in 4 bits, the decoder layers as they were ------------------------


def test_int4head_swaps_only_the_output_layer_and_stays_close() -> None:
    original = tiny_qwen(1)
    original.lm_head.weight = original.get_input_embeddings().weight  # tied, as the bundled draft
    reference = last_log_probs_full(original, PROMPT)
    embedding = original.get_input_embeddings().weight.detach().clone()
    model = quantize_int4_output_layer(original)
    assert isinstance(model.lm_head, Int4WeightOnlyLinear)
    swapped = [m for m in model.modules() if isinstance(m, Int4WeightOnlyLinear)]
    linears = [m for m in model.modules() if isinstance(m, torch.nn.Linear)]
    assert len(swapped) == 1 and len(linears) == 2 * 7  # q, k, v, o, gate, up, down per layer
    assert torch.equal(model.get_input_embeddings().weight, embedding)  # lookups keep it
    quantized = last_log_probs_full(model, PROMPT)
    assert 0 < float((quantized - reference).abs().max()) < 0.5
    assert feeding_gap(model) < 1e-4


# -- int4dual: 4-bit copies for few rows, the original weights for many -------------------------


def test_int4dual_keeps_every_decoder_layer_both_ways_and_the_output_layer_in_4_bits() -> None:
    original = tiny_qwen(1)
    original.lm_head.weight = original.get_input_embeddings().weight  # tied, as the bundled draft
    weights = [m.weight for m in original.modules() if type(m) is torch.nn.Linear][:-1]
    model = quantize_int4_dual(original)
    assert isinstance(model.lm_head, Int4WeightOnlyLinear)
    duals = [m for m in model.modules() if isinstance(m, Int4DualLinear)]
    assert len(duals) == 2 * 7  # q, k, v, o, gate, up, down per layer; not the output layer
    # The wide path is the model's own layer, not a copy: no bytes are duplicated there.
    assert all(dual.wide.weight is weight for dual, weight in zip(duals, weights, strict=True))
    assert all(isinstance(dual.narrow, Int4WeightOnlyLinear) for dual in duals)


@pytest.mark.parametrize("outputs", [160, 150])  # packed for the kernel; one level a byte
def test_4_bit_weights_quantized_a_chunk_of_rows_at_a_time_are_those_of_the_whole(
    outputs: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    torch.manual_seed(0)
    linear = torch.nn.Linear(64, outputs).to(torch.bfloat16)
    whole = Int4WeightOnlyLinear(linear)
    monkeypatch.setattr(quantize, "_QUANTIZE_VALUES", 64 * 64)  # rows 64 + 64 + the rest
    chunked = Int4WeightOnlyLinear(linear)
    assert torch.equal(chunked.weight, whole.weight)
    assert torch.equal(chunked.scales_and_zeros, whole.scales_and_zeros)
    inputs = torch.randn(3, 64).to(torch.bfloat16)
    assert torch.equal(chunked(inputs), whole(inputs))


def test_a_dual_layer_takes_the_4_bit_copy_up_to_its_rows_and_the_original_above() -> None:
    torch.manual_seed(0)
    linear = torch.nn.Linear(64, 48)
    dual = Int4DualLinear(linear)
    dual.int4_rows = 2
    for rows in (1, 2, 3, 7):
        inputs = torch.randn(rows, 64)
        expected = dual.narrow(inputs) if rows <= 2 else linear(inputs)
        assert torch.equal(dual(inputs), expected)
        assert not torch.equal(dual.narrow(inputs), linear(inputs))  # the two paths differ
    batched = torch.randn(1, 3, 64)  # (B, T, in): three rows, the original
    assert torch.equal(dual(batched), linear(batched))


def test_tuning_sets_each_shape_to_the_rows_where_the_4_bit_copy_is_still_as_fast() -> None:
    import time

    model = quantize_int4_dual(tiny_qwen(1))
    duals = [m for m in model.modules() if isinstance(m, Int4DualLinear)]

    def timed(seconds: float, rows_free: int) -> Any:
        def product(inputs: torch.Tensor) -> torch.Tensor:
            if inputs.shape[0] > rows_free:
                time.sleep(seconds)
            return inputs

        return product

    # A 4-bit copy that is free up to 3 rows and slower than the original above.
    for dual in duals:
        dual.narrow.forward_rows = timed(0.004, 3)  # type: ignore[method-assign]
        dual.wide = torch.nn.Module()
        dual.wide.forward_rows = timed(0.001, 0)  # type: ignore[assignment]
    chosen = tune_dual_layers(model)
    assert chosen and set(chosen.values()) == {3}
    assert all(dual.int4_rows == 3 and dual.tuned for dual in duals)
    assert tune_dual_layers(model) == {}  # a reused model keeps its rows


def test_crossovers_read_back_by_shape_are_what_a_fresh_model_is_set_to() -> None:
    model = quantize_int4_dual(tiny_qwen(1))
    assert dual_rows(model) == ()  # nothing tuned yet
    shapes = sorted({(m.in_features, m.out_features) for m in model.modules() if isinstance(m, Int4DualLinear)})  # fmt: skip
    for layer in model.modules():
        if isinstance(layer, Int4DualLinear):
            layer.int4_rows, layer.tuned = (
                shapes.index((layer.in_features, layer.out_features)),
                True,
            )
    crossovers = dual_rows(model)
    assert crossovers == tuple((i, o, shapes.index((i, o))) for i, o in shapes)

    fresh = quantize_int4_dual(tiny_qwen(1))
    known = crossovers[1:]  # one shape missing: left for tune_dual_layers
    duals = [m for m in fresh.modules() if isinstance(m, Int4DualLinear)]
    assert set_dual_rows(fresh, known) == sum((d.in_features, d.out_features) != shapes[0] for d in duals)  # fmt: skip
    for dual in duals:
        shape = (dual.in_features, dual.out_features)
        assert dual.tuned == (shape != shapes[0])
        assert not dual.tuned or dual.int4_rows == shapes.index(shape)
    # Tuned layers keep their rows: the whole list now sets only the shape left out.
    left_out = sum((d.in_features, d.out_features) == shapes[0] for d in duals)
    assert set_dual_rows(fresh, crossovers) == left_out > 0
    assert set_dual_rows(fresh, crossovers) == 0 and dual_rows(fresh) == crossovers


def test_int4dual_stays_close_whichever_way_the_context_is_fed() -> None:
    reference = last_log_probs_full(tiny_qwen(1), PROMPT)
    model = quantize_int4_dual(tiny_qwen(1))
    tune_dual_layers(model)
    assert float((last_log_probs_full(model, PROMPT) - reference).abs().max()) < 0.5
    assert float((last_log_probs_stepped(model, PROMPT) - reference).abs().max()) < 0.5
