"""Low-bit drafts on the CPU: three ways to store a model's Linear layers in 8 or 4 bits.

Drafting on a CPU is bound by reading weights from memory, so int8 weights make a draft step
cheaper. Either way the draft becomes a slightly different model; that can only change how often
its guesses are accepted, never the output distribution, because the drafter hands the verifier the
q computed from the quantized model's own logits.

- "int8" (dynamic): PyTorch's dynamic quantization. Activations are quantized too, with ONE scale
  per tensor per forward, so a position's numbers depend on every other position fed with it: the
  same context gives a different q when it arrives as one long prefill than one token at a time.
- "int8wo" (weight-only): int8 weights with one scale per output row, activations left in the
  model's dtype. Each output row is sum_k x[k] * w_int8[n, k] * scale[n], computed position by
  position, so no Linear layer depends on how many tokens the forward carried. In bfloat16 the
  attention kernels still round differently for 1 vs many queries: on the bundled draft the
  last-position log-probs of a full forward and of prefill + 1 token differ by at most ~0.2
  (as in plain bfloat16) against ~6 with dynamic int8; in float32 they agree to 1e-4.
- "int4wo" (weight-only, 4 bits): weights rounded to 16 levels per group of 32 inputs (a scale
  and a zero per group), activations in the model's dtype, multiplied by PyTorch's CPU int4
  kernel. Half of int8wo's bytes, the most saved in the 151,936-row output layer, for a little
  agreement with the target (docs/performance.md#a-4-bit-draft-int4wo-xeon-with-amx).
- "int4head": only the output layer in 4 bits, the decoder layers left in the model's dtype. The
  output layer carries one row per draft step (the drafter keeps one position's logits) and is the
  largest layer read per step (151,936 × 896 for the bundled draft); the decoder layers also
  carry the many rows of the prompt's reading, where torch's int4 kernel is compute-bound on an
  AVX2 CPU and a bfloat16 product (specviz's AVX2 kernel, specviz.models.bf16_rows) is faster.
- "int4dual": both. Each decoder Linear layer keeps its original weights and a 4-bit copy, and a
  forward of few rows (a draft step: one token, or two after a rejection) multiplies by the 4-bit
  copy while a forward of many (the prompt's reading, the catch-up after copied tokens) multiplies
  by the original; the output layer is 4-bit only, as in int4head. Where the two products cross is
  timed on this machine at load (tune_dual_layers), so a draft steps about as fast as int4wo and
  reads about as fast as int4head
  (docs/performance.md#int4dual-4-bit-steps-bfloat16-reads-avx2-epyc). It costs the original
  decoder weights' memory on top of int4wo's.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable

import torch

from specviz.models.lean_forward import rows_of

# The CPU kernel of torch._weight_int8pack_mm reads the input dimension in blocks of 16 and gives
# garbage (or crashes) otherwise; other layers multiply by the dequantized weight instead.
_KERNEL_BLOCK = 16


def quantize_int8(model: torch.nn.Module) -> torch.nn.Module:
    """Dynamic int8 quantization of every Linear layer (weights int8, activations float32).

    int8 weights are a quarter of float32's bytes and half of bfloat16's, so a draft step, which
    reads every weight, is cheaper
    (docs/performance.md#bfloat16-and-the-first-quantized-draft-int8wo). The model must be float32.
    """
    with warnings.catch_warnings():
        # torch.ao.quantization is deprecated in favour of torchao, but still ships in the pinned
        # torch and needs no extra package; the pin keeps it available.
        warnings.simplefilter("ignore")
        quantized = torch.ao.quantization.quantize_dynamic(  # type: ignore[no-untyped-call]
            model, {torch.nn.Linear}, dtype=torch.qint8, inplace=True
        )
    return quantized.eval()  # type: ignore[no-any-return]


class Int8WeightOnlyLinear(torch.nn.Module):
    """A Linear layer with int8 weights and a scale per output row; inputs keep their dtype.

    w ≈ weight_int8[n, :] * scales[n], with scales[n] = max_k |w[n, k]| / 127 (symmetric, no zero
    point). The weight is a frozen Parameter so weight counters see its bytes (1 per value).
    """

    scales: torch.Tensor  # (out,) a buffer, in the dtype the layer was built from

    def __init__(self, linear: torch.nn.Linear) -> None:
        super().__init__()
        self.in_features, self.out_features = linear.in_features, linear.out_features
        weight = linear.weight.detach().float()  # (out, in)
        scales = weight.abs().amax(dim=1).clamp(min=1e-12) / 127.0  # (out,)
        int8 = torch.round(weight / scales[:, None]).clamp(-127, 127).to(torch.int8)
        self.weight = torch.nn.Parameter(int8.contiguous(), requires_grad=False)
        dtype = linear.weight.dtype
        self.register_buffer("scales", scales.to(dtype).contiguous())
        self.bias = (
            None
            if linear.bias is None
            else torch.nn.Parameter(linear.bias.detach().clone(), requires_grad=False)
        )
        self._kernel = linear.weight.device.type == "cpu" and self.in_features % _KERNEL_BLOCK == 0

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        rows = inputs.reshape(-1, self.in_features)  # (B·T, in)
        return self.forward_rows(rows).view(*inputs.shape[:-1], self.out_features)

    def forward_rows(self, rows: torch.Tensor) -> torch.Tensor:
        """(tokens, in) -> (tokens, out): the layer without reshaping (the lean step calls this)."""
        rows = rows.contiguous()
        scales = self.scales.to(rows.dtype)
        if self._kernel:
            out = torch._weight_int8pack_mm(rows, self.weight, scales)
        else:
            out = torch.nn.functional.linear(rows, self.weight.to(rows.dtype) * scales[:, None])
        if self.bias is not None:
            out = out + self.bias.to(out.dtype)
        return out

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, int8 weights"


def quantize_int8_weight_only(model: torch.nn.Module) -> torch.nn.Module:
    """Swap every Linear layer (the output layer too) for an Int8WeightOnlyLinear, in place.

    A tied output layer gets its own int8 copy; the input embedding keeps the original table, so
    token lookups are unchanged.
    """
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if isinstance(child, torch.nn.Linear):
                setattr(parent, name, Int8WeightOnlyLinear(child))
    return model.eval()


# The CPU int4 kernel takes groups of 32, 64, 128 or 256 inputs and output counts divisible by 16.
# 32 kept the most agreement with the target (0.893 against int8wo's 0.901 on 2,221 positions of
# the bundled pair's answers; 64: 0.885, 128: 0.880) at about the same speed.
INT4_GROUP = 32
_INT4_ROWS = 16
_INT4_INNER_TILES = 8  # the packing's inner tiling; 2 and 8 timed alike at the draft's shapes
# About how many weights are quantized at once (a chunk of rows): 16 MiB of float32.
_QUANTIZE_VALUES = 1 << 22
# The CPU packing interleaves blocks of 64 rows: chunks of a multiple of 64 rows pack exactly as
# the whole matrix does (a last, shorter chunk too); chunks of 16 or 32 rows do not.
_INT4_PACK_BLOCK = 64


class Int4WeightOnlyLinear(torch.nn.Module):
    """A Linear layer with 4-bit weights, a scale and a zero per group of INT4_GROUP inputs.

    w ≈ (level - 8) · scale + zero, level in 0…15, with scale = (max - min) / 15 and zero =
    min + 8 · scale over the group (asymmetric: the 16 levels span the group's range). The levels
    are packed two to a byte for torch's CPU int4 kernel; a layer whose shape the kernel does not
    take keeps the levels one to a byte and multiplies by the dequantized weight.
    """

    scales_and_zeros: torch.Tensor  # (in / group, out, 2) a buffer, in the layer's dtype

    def __init__(self, linear: torch.nn.Linear) -> None:
        super().__init__()
        self.in_features, self.out_features = linear.in_features, linear.out_features
        self.group = INT4_GROUP if self.in_features % INT4_GROUP == 0 else self.in_features
        dtype = linear.weight.dtype
        self._kernel = (
            linear.weight.device.type == "cpu"
            and self.group == INT4_GROUP
            and self.out_features % _INT4_ROWS == 0
        )
        # Rows are quantized and packed a chunk at a time (each row's numbers depend on that row
        # only, and the packing on its block of 64 rows), so the float32 copies of a 151,936-row
        # output layer never exist whole: they took 2-4 GB beside the model at load.
        chunk = max(_INT4_PACK_BLOCK, _QUANTIZE_VALUES // self.in_features)
        chunk -= chunk % _INT4_PACK_BLOCK
        packed_rows, scale_rows, zero_rows = [], [], []
        for first in range(0, self.out_features, chunk):
            weight = linear.weight.detach()[first : first + chunk].float()  # (rows, in)
            groups = weight.reshape(-1, self.group)  # (rows · in / group, group)
            low, high = groups.amin(dim=1, keepdim=True), groups.amax(dim=1, keepdim=True)
            scales = (high - low).clamp(min=1e-12) / 15.0
            zeros = low + 8.0 * scales
            levels = torch.round((groups - low) / scales).clamp(0, 15).reshape_as(weight)
            if self._kernel:
                packed_rows.append(
                    torch.ops.aten._convert_weight_to_int4pack_for_cpu(
                        levels.to(torch.int32), _INT4_INNER_TILES
                    )
                )
            else:
                packed_rows.append(levels.to(torch.uint8))
            scale_rows.append(scales.reshape(weight.shape[0], -1, 1).to(dtype))
            zero_rows.append(zeros.reshape(weight.shape[0], -1, 1).to(dtype))
        # (in / group, out, 2): the kernel's layout of the scales and zeros.
        scales_and_zeros = torch.cat([torch.cat(scale_rows), torch.cat(zero_rows)], 2)
        self.register_buffer("scales_and_zeros", scales_and_zeros.transpose(0, 1).contiguous())
        packed = torch.cat(packed_rows)
        # A frozen Parameter, so weight counters see its bytes (half a byte per value, packed).
        self.weight = torch.nn.Parameter(packed.contiguous(), requires_grad=False)
        self.bias = (
            None
            if linear.bias is None
            else torch.nn.Parameter(linear.bias.detach().clone(), requires_grad=False)
        )

    def dequantized(self) -> torch.Tensor:
        """The weight the layer multiplies by, (out, in) in float32 (the unpacked path only)."""
        if self._kernel:
            raise RuntimeError("the packed int4 layout is the kernel's own; use forward()")
        scales_and_zeros = self.scales_and_zeros.float().transpose(0, 1)  # (out, in / group, 2)
        levels = self.weight.float().reshape(self.out_features, -1, self.group)
        weight = (levels - 8.0) * scales_and_zeros[..., :1] + scales_and_zeros[..., 1:]
        return weight.reshape(self.out_features, self.in_features)

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        rows = inputs.reshape(-1, self.in_features)  # (B·T, in)
        return self.forward_rows(rows).view(*inputs.shape[:-1], self.out_features)

    def forward_rows(self, rows: torch.Tensor) -> torch.Tensor:
        """(tokens, in) -> (tokens, out): the layer without reshaping (the lean step calls this)."""
        rows = rows.contiguous()
        if self._kernel:
            out: torch.Tensor = torch.ops.aten._weight_int4pack_mm_for_cpu(
                rows, self.weight, self.group, self.scales_and_zeros.to(rows.dtype)
            )
        else:
            out = torch.nn.functional.linear(rows, self.dequantized().to(rows.dtype))
        if self.bias is not None:
            out = out + self.bias.to(out.dtype)
        return out

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, int4 weights"


def quantize_int4_output_layer(model: torch.nn.Module) -> torch.nn.Module:
    """Swap only the output layer for an Int4WeightOnlyLinear, in place ("int4head"); a tied
    output layer gets its own 4-bit copy and token lookups keep the embedding."""
    head = model.get_output_embeddings()  # type: ignore[operator]
    if not isinstance(head, torch.nn.Linear):
        raise ValueError(f"int4head needs a Linear output layer, got {type(head).__name__}")
    model.set_output_embeddings(Int4WeightOnlyLinear(head))  # type: ignore[operator]
    return model.eval()


def quantize_int4_weight_only(model: torch.nn.Module) -> torch.nn.Module:
    """Swap every Linear layer (the output layer too) for an Int4WeightOnlyLinear, in place.

    As with int8wo, a tied output layer gets its own copy and token lookups keep the embedding.
    """
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if isinstance(child, torch.nn.Linear):
                setattr(parent, name, Int4WeightOnlyLinear(child))
    return model.eval()


# Rows a dual layer sends through its 4-bit copy until tune_dual_layers has timed both products:
# on the AVX2 EPYC torch's int4 kernel led at 1 row and the bfloat16 kernel from 2-3 rows on.
DUAL_INT4_ROWS = 2
# The row counts tune_dual_layers times (a draft step's feeds are 1-2 rows, a read is many), and
# how many runs of each; the least counts, so a busy moment on a shared machine does not.
_TUNE_ROWS = 8
_TUNE_RUNS = 3


class Int4DualLinear(torch.nn.Module):
    """A Linear layer kept twice: 4-bit for forwards of up to int4_rows rows, original otherwise.

    The 4-bit copy is an Int4WeightOnlyLinear; the original is the model's own Linear (its
    Parameters, not a copy), which use_rows_kernel may later swap for the AVX2 bfloat16 kernel.
    Which product a forward takes depends only on how many rows it carries, so a position's
    numbers can differ between a read of the prompt and a one-token step, as with bfloat16
    attention; the drafter hands the verifier the q it drew from either way.
    """

    def __init__(self, linear: torch.nn.Linear) -> None:
        super().__init__()
        self.in_features, self.out_features = linear.in_features, linear.out_features
        self.narrow = Int4WeightOnlyLinear(linear)
        self.wide: torch.nn.Module = linear
        self.int4_rows = DUAL_INT4_ROWS
        self.tuned = False  # set by tune_dual_layers: a model reused from the cache keeps its rows

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        rows = inputs.reshape(-1, self.in_features)  # (B·T, in)
        return self.forward_rows(rows).view(*inputs.shape[:-1], self.out_features)

    def forward_rows(self, rows: torch.Tensor) -> torch.Tensor:
        """(tokens, in) -> (tokens, out) through the product this many rows are fastest on."""
        if rows.shape[0] <= self.int4_rows:
            return self.narrow.forward_rows(rows)
        return rows_of(self.wide)(rows)

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"int4 weights up to {self.int4_rows} rows, the original above"
        )


def quantize_int4_dual(model: torch.nn.Module) -> torch.nn.Module:
    """Swap every decoder Linear layer for an Int4DualLinear and the output layer for an
    Int4WeightOnlyLinear, in place ("int4dual"). Call tune_dual_layers once the layers' final
    products are in place (after use_rows_kernel)."""
    quantize_int4_output_layer(model)
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if type(child) is torch.nn.Linear:
                setattr(parent, name, Int4DualLinear(child))
    return model.eval()


@torch.inference_mode()
def tune_dual_layers(model: torch.nn.Module) -> dict[tuple[int, int], int]:
    """Time both products of the model's dual layers at 1, 2, ... rows and set the layers of each
    (in, out) shape to the 4-bit copy up to the rows where it is still as fast; returns the rows
    per shape tuned now ({} when the model has no untuned dual layer).

    Each timing is a pass over every dual layer in the model's order, each layer timed on its own
    and summed per shape: a forward streams all the weights through the CPU's caches, and timing
    one layer again and again would find its weights cached, hiding the memory traffic the 4-bit
    copy saves. Rows are added until every shape has found its crossover (at most _TUNE_ROWS):
    a few seconds for the bundled draft on a 2-core CPU.
    """
    layers = [m for m in model.modules() if isinstance(m, Int4DualLinear) and not m.tuned]
    if not layers:
        return {}
    dtype = layers[0].narrow.scales_and_zeros.dtype
    shapes = [(layer.in_features, layer.out_features) for layer in layers]
    narrow: list[Callable[[torch.Tensor], torch.Tensor]] = [
        layer.narrow.forward_rows for layer in layers
    ]
    wide = [rows_of(layer.wide) for layer in layers]
    chosen = dict.fromkeys(shapes, 0)
    undecided = set(shapes)
    for rows in range(1, _TUNE_ROWS + 1):
        inputs = {width: torch.randn(rows, width).to(dtype) for width, _ in shapes}
        narrow_s, wide_s = _pass_seconds(shapes, (narrow, wide), inputs)
        for shape in sorted(undecided):
            if narrow_s[shape] > wide_s[shape]:
                undecided.discard(shape)
            else:
                chosen[shape] = rows
        if not undecided:
            break
    for layer, shape in zip(layers, shapes, strict=True):
        layer.int4_rows, layer.tuned = chosen[shape], True
    return chosen


def dual_rows(model: torch.nn.Module) -> tuple[tuple[int, int, int], ...]:
    """The tuned crossovers of the model's dual layers as (in, out, 4-bit rows) per shape, sorted;
    () when it has none tuned. What the cost cache keeps for the next load."""
    found = {
        (layer.in_features, layer.out_features): layer.int4_rows
        for layer in model.modules()
        if isinstance(layer, Int4DualLinear) and layer.tuned
    }
    return tuple(sorted((inputs, outputs, rows) for (inputs, outputs), rows in found.items()))


def set_dual_rows(model: torch.nn.Module, crossovers: tuple[tuple[int, int, int], ...]) -> int:
    """Give the model's untuned dual layers the crossovers dual_rows found before, by shape;
    returns how many layers were set (a shape not listed stays for tune_dual_layers)."""
    rows = {(inputs, outputs): count for inputs, outputs, count in crossovers}
    set_here = 0
    for layer in model.modules():
        shape = (getattr(layer, "in_features", 0), getattr(layer, "out_features", 0))
        if isinstance(layer, Int4DualLinear) and not layer.tuned and shape in rows:
            layer.int4_rows, layer.tuned = rows[shape], True
            set_here += 1
    return set_here


def _pass_seconds(
    shapes: list[tuple[int, int]],
    paths: tuple[list[Callable[[torch.Tensor], torch.Tensor]], ...],
    inputs: dict[int, torch.Tensor],
) -> tuple[dict[tuple[int, int], float], ...]:
    """Per path, per shape: the least over _TUNE_RUNS passes of the summed seconds of
    its layers. The paths' passes alternate, so a busy moment hits each alike; the first round may
    allocate or build and is not counted."""
    least = [dict.fromkeys(shapes, float("inf")) for _ in paths]
    for run in range(_TUNE_RUNS + 1):
        for products, best in zip(paths, least, strict=True):
            spent = dict.fromkeys(shapes, 0.0)
            for shape, product in zip(shapes, products, strict=True):
                began = time.perf_counter()
                product(inputs[shape[0]])
                spent[shape] += time.perf_counter() - began
            if run:
                for shape, seconds in spent.items():
                    best[shape] = min(best[shape], seconds)
    return tuple(least)
