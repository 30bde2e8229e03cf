"""The AVX2 bfloat16 kernel: the same product as torch's up to rounding, independent of how many rows
are multiplied together, swapped in without copying weights, chosen by SPECVIZ_BF16_KERNEL."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from tiny_models import tiny_qwen

from specviz.models import bf16_rows
from specviz.models.bf16_rows import (
    Bf16RowsLinear,
    choose_products,
    kernel,
    kernel_problem,
    row_by_row_cpu,
    torch_products,
    use_rows_kernel,
)
from specviz.text import UserError

needs_kernel = pytest.mark.skipif(
    kernel() is None, reason=f"the kernel cannot be built here: {kernel_problem()}"
)
CPU = torch.device("cpu")


def _quiet(*_: object) -> None:
    pass


def _linear(in_features: int, out_features: int, bias: bool) -> torch.nn.Linear:
    torch.manual_seed(in_features * 7 + out_features)
    return torch.nn.Linear(in_features, out_features, bias=bias).to(torch.bfloat16)


@needs_kernel
@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("out_features", [64, 7])  # 7: an odd column left over from the pairs
@pytest.mark.parametrize("rows", [1, 2, 5, 6, 7, 13, 70])
def test_kernel_matches_torch_up_to_one_rounding(rows: int, out_features: int, bias: bool) -> None:
    linear = _linear(256, out_features, bias)
    swapped = Bf16RowsLinear(linear, kernel())
    inputs = torch.randn(rows, 256).to(torch.bfloat16)
    # Both sum the same float32 products of exact bfloat16 values, in different orders, and
    # round once: a float32 reference bounds each by half an ulp of bfloat16 plus the sums' error.
    exact = F.linear(
        inputs.float(), linear.weight.float(), None if linear.bias is None else linear.bias.float()
    )
    got = swapped.forward_rows(inputs)
    assert got.dtype == torch.bfloat16 and got.shape == (rows, out_features)
    ulp = exact.abs().clamp_min(2.0**-20) * 2.0**-8
    assert ((got.float() - exact).abs() <= ulp + 1e-5).all()
    assert (
        (got.float() - F.linear(inputs, linear.weight, linear.bias).float()).abs() <= 2 * ulp + 1e-5
    ).all()


@needs_kernel
def test_wrong_weights_would_be_caught() -> None:
    """The comparison above can fail: a kernel fed another layer's weight is far off."""
    linear, other = _linear(256, 64, False), _linear(256, 65, False)
    swapped = Bf16RowsLinear(other, kernel())
    inputs = torch.randn(3, 256).to(torch.bfloat16)
    assert (
        swapped.forward_rows(inputs)[:, :64].float() - F.linear(inputs, linear.weight).float()
    ).abs().max() > 0.1


@needs_kernel
def test_a_row_comes_out_the_same_alone_or_among_others() -> None:
    swapped = Bf16RowsLinear(_linear(512, 96, True), kernel())
    inputs = torch.randn(9, 512).to(torch.bfloat16)
    together = swapped.forward_rows(inputs)
    for row in range(9):
        assert torch.equal(swapped.forward_rows(inputs[row : row + 1])[0], together[row])


@needs_kernel
def test_kernel_off_runs_torch_exactly() -> None:
    linear = _linear(64, 32, True)
    swapped = Bf16RowsLinear(linear, kernel())
    rows = torch.randn(5, 64).to(torch.bfloat16)
    with torch_products(swapped) as layers:
        assert layers == 1
        assert torch.equal(swapped.forward_rows(rows), F.linear(rows, linear.weight, linear.bias))
    assert swapped.kernel_on
    batched = torch.randn(2, 3, 64).to(torch.bfloat16)
    assert swapped(batched).shape == (2, 3, 32)
    assert torch.equal(swapped(batched)[1], swapped.forward_rows(batched[1]))


@needs_kernel
def test_swap_keeps_tied_weights_and_skips_what_it_cannot_run() -> None:
    model = tiny_qwen(1).to(torch.bfloat16)
    model.lm_head.weight = model.get_input_embeddings().weight  # tied, as the bundled draft is
    before = sum(p.numel() for p in model.parameters())
    swapped = use_rows_kernel(model)
    assert swapped == 2 * 7 + 1  # q, k, v, o, gate, up, down per layer, plus lm_head
    assert not [m for m in model.modules() if type(m) is torch.nn.Linear]
    assert model.lm_head.weight is model.get_input_embeddings().weight
    assert sum(p.numel() for p in model.parameters()) == before
    assert use_rows_kernel(model) == 0  # a second call finds nothing left to swap
    assert use_rows_kernel(tiny_qwen(1)) == 0  # float32 layers stay torch's


@needs_kernel
def test_swapped_model_decodes_as_torch_does() -> None:
    model = tiny_qwen(1).to(torch.bfloat16)
    ids = torch.tensor([list(b"def fib(n):")])
    with torch.inference_mode():
        before = model(input_ids=ids).logits.float()
        use_rows_kernel(model)
        after = model(input_ids=ids).logits.float()
    assert (before - after).abs().max() < 0.05 * before.abs().max()
    assert torch.equal(before.argmax(-1), after.argmax(-1))


@needs_kernel
def test_one_openmp_runtime_is_loaded() -> None:
    """The kernel's OpenMP loop must use torch's libgomp, not a second pool competing for cores."""
    maps = Path("/proc/self/maps")
    if not maps.exists():
        pytest.skip("no /proc/self/maps")
    kernel()
    runtimes = {line.split()[-1] for line in maps.read_text().splitlines() if "libgomp" in line}
    assert len(runtimes) <= 1, runtimes


def test_setting_chooses(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPECVIZ_BF16_KERNEL", "torch")
    assert choose_products(CPU, torch.bfloat16, _quiet) == "torch"
    monkeypatch.setenv("SPECVIZ_BF16_KERNEL", "rows")
    assert choose_products(CPU, torch.float32, _quiet) == "torch"  # float32 is torch's
    expected = "torch" if kernel() is None else "rows"
    assert choose_products(CPU, torch.bfloat16, _quiet) == expected
    monkeypatch.setenv("SPECVIZ_BF16_KERNEL", "auto")
    auto = "rows" if row_by_row_cpu() and kernel() is not None else "torch"
    assert choose_products(CPU, torch.bfloat16, _quiet) == auto
    monkeypatch.setenv("SPECVIZ_BF16_KERNEL", "fast")
    with pytest.raises(UserError) as raised:
        choose_products(CPU, torch.bfloat16, _quiet)
    assert "SPECVIZ_BF16_KERNEL=fast" in raised.value.message("en")


def test_auto_wants_the_kernel_only_where_torch_is_row_by_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(bf16_rows, "_cpu_flags", lambda: {"avx2", "fma"})
    assert row_by_row_cpu() is (bf16_rows.platform.machine() in ("x86_64", "AMD64"))
    avx512 = {"avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512dq"}
    monkeypatch.setattr(bf16_rows, "_cpu_flags", lambda: avx512)  # oneDNN's path
    assert not row_by_row_cpu()
    monkeypatch.setattr(bf16_rows, "_cpu_flags", lambda: avx512 | {"avx512_bf16", "amx_bf16"})
    assert not row_by_row_cpu()
    monkeypatch.setattr(bf16_rows, "_cpu_flags", lambda: {"avx", "sse4_2"})
    assert not row_by_row_cpu()


def test_a_missing_compiler_leaves_torch_in_charge(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bf16_rows, "_KERNEL", bf16_rows._Kernel())
    monkeypatch.setenv("CXX", "/nonexistent/c++")
    monkeypatch.setenv("SPECVIZ_BF16_KERNEL", "rows")
    said: list[object] = []
    assert choose_products(CPU, torch.bfloat16, lambda _, phrase: said.append(phrase)) == "torch"
    assert kernel_problem()
    assert [getattr(p, "key", "") for p in said][-1] == "load.kernel_unbuilt"
    assert use_rows_kernel(tiny_qwen(1).to(torch.bfloat16)) == 0


@needs_kernel
def test_products_timing_runs_both_paths_on_the_same_layers() -> None:
    from specviz.measure.bf16_products import time_products

    model = tiny_qwen(1).to(torch.bfloat16)
    use_rows_kernel(model)
    context = torch.tensor(list(b"def fibonacci(n): return n"))
    timing = time_products(model, context, sizes=4, rounds=1)
    assert [row.tokens for row in timing.rows] == [1, 2, 3, 4]
    assert timing.layers == 2 * 7 + 1 and timing.context_tokens == context.numel()
    assert all(row.torch_ms > 0 and row.kernel_ms > 0 for row in timing.rows)
    torch_costs, kernel_costs = timing.verify_costs()
    assert torch_costs[0] == kernel_costs[0] == 1.0
    assert timing.same_argmax == 1.0 and timing.largest_logit_difference < 0.1
    assert all(isinstance(m, Bf16RowsLinear) and m.kernel_on for m in [model.lm_head])
    with pytest.raises(UserError):
        time_products(model, context, sizes=context.numel() + 1)
    with pytest.raises(UserError, match="no layer"):
        time_products(tiny_qwen(1).to(torch.bfloat16), context, sizes=2, rounds=1)


def test_no_kernel_on_a_cpu_without_avx2(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bf16_rows, "_KERNEL", bf16_rows._Kernel())
    monkeypatch.setattr(bf16_rows, "_cpu_flags", lambda: {"sse4_2", "avx"})
    assert kernel() is None and "AVX2" in (kernel_problem() or "")


@needs_kernel
def test_a_damaged_cached_kernel_is_built_again_not_loaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    monkeypatch.setenv("SPECVIZ_CACHE", str(tmp_path))
    library = bf16_rows._build(None)
    good = library.read_bytes()
    info = library.stat()
    damaged = bytearray(good)
    damaged[len(damaged) // 2] ^= 0xFF  # one flipped byte, the mtime kept (as bit rot does)
    library.write_bytes(bytes(damaged))
    os.utime(library, ns=(info.st_atime_ns, info.st_mtime_ns))
    assert bf16_rows._build(None) == library
    assert library.read_bytes() != bytes(damaged)
    assert library.with_suffix(".so.sha256").read_text() == bf16_rows.file_sha256(library)
