"""bfloat16 products on CPUs without native bfloat16: a small AVX2 kernel.

Why: on an x86 CPU with AVX2 but neither AVX512-BF16 nor AMX, torch 2.13 multiplies a bfloat16
weight by k rows at about k times the cost of one row, so verifying γ drafts costs about γ + 1
plain steps and speculation cannot gain. bf16_rows.cpp reads each weight row once per group of up
to 6 rows and widens it to float32 in registers, so a verification forward costs little more than
one step, as on CPUs that compute bfloat16 natively, and a prompt's prefill gains too
(docs/performance.md#why-specviz-multiplies-bfloat16-with-its-own-kernel-on-avx2).

The kernel computes the same product as torch (float32 sums of exact bfloat16 values, the result
rounded to bfloat16); only the order of the additions differs, by at most a unit in the last place
of an output. Its order does not depend on the number of rows, so a token's logits are the same
whether it is decoded alone or verified among drafts. Plain decoding and speculative decoding of a
pair both run it, so the speedups compare the same target.

SPECVIZ_BF16_KERNEL chooses: "auto" (the default: the kernel where torch's product is row by row,
i.e. AVX2 + FMA without AVX-512, and the kernel builds), "rows" (on any AVX2 CPU where it builds)
or "torch" (never). On an AVX-512 CPU without avx512_bf16 (Skylake to Ice Lake Xeons) torch's
product goes through oneDNN, not measured here: `python -m specviz measure bf16-rows` with
SPECVIZ_BF16_KERNEL=rows times both side by side on any machine.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import os
import platform
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

from specviz.core.machine import read_machine
from specviz.models.bundled import cache_root, file_sha256
from specviz.text import Phrase, UserError
from specviz.text.progress import Progress

SOURCE = Path(__file__).with_name("bf16_rows.cpp")
SETTING = "SPECVIZ_BF16_KERNEL"
CHOICES = ("auto", "rows", "torch")
_FLAGS = ("-O3", "-mavx2", "-mfma", "-fopenmp", "-shared", "-fPIC")


def _cpu_flags() -> set[str]:
    return set(read_machine().cpu_flags)


def _avx2_cpu() -> bool:
    return platform.machine() in ("x86_64", "AMD64") and {"avx2", "fma"} <= _cpu_flags()


def row_by_row_cpu() -> bool:
    """True on an x86 CPU with AVX2 + FMA where torch's bfloat16 product costs in proportion to its
    rows: torch hands bfloat16 products to oneDNN only with avx512bw, avx512vl and avx512dq
    (mkldnn_bf16_device_check in ATen), and oneDNN computes them natively with avx512_bf16 or
    amx_bf16; without AVX-512 it falls back to a loop measured row by row (module docstring)."""
    onednn = {"avx512bw", "avx512vl", "avx512dq"} <= _cpu_flags()
    return _avx2_cpu() and not onednn


class _Kernel:
    """The built library, or why there is none; built once per process, cached per machine."""

    def __init__(self) -> None:
        self.function: Any = None
        self.problem: str | None = None
        self.tried = False
        self.lock = threading.Lock()  # the app loads pairs from worker threads

    def get(self, progress: Progress | None = None) -> Any:
        with self.lock:
            if not self.tried:
                self.tried = True
                try:
                    if not _avx2_cpu():  # the library would die of an illegal instruction
                        raise OSError("this CPU is not x86 with AVX2 and FMA")
                    self.function = _load(_build(progress))
                except (OSError, subprocess.SubprocessError, ValueError) as error:
                    text = str(error).strip()
                    self.problem = text.splitlines()[-1] if text else repr(error)
            return self.function


_KERNEL = _Kernel()


def _build(progress: Progress | None) -> Path:
    """The compiled library under the specviz cache, compiled on first use (about 2 s)."""
    compiler = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++")
    if compiler is None:
        raise OSError("no C++ compiler (c++ or g++) on PATH")
    version = subprocess.run(
        [compiler, "--version"], capture_output=True, text=True, check=True, timeout=30
    ).stdout
    source = SOURCE.read_bytes()
    digest = hashlib.sha256(source + version.encode() + " ".join(_FLAGS).encode()).hexdigest()
    library = cache_root() / "kernels" / f"bf16_rows-{digest[:16]}.so"
    # The weights pass through this library: a cached copy whose bytes no longer match the
    # digest written when it was built is built again, never loaded.
    recorded = library.with_suffix(".so.sha256")
    if library.exists() and recorded.is_file() and recorded.read_text() == file_sha256(library):
        return library
    if progress is not None:
        progress(0.0, Phrase("load.kernel"))
    library.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=library.parent) as folder:
        built = Path(folder) / library.name
        result = subprocess.run(
            [compiler, *_FLAGS, str(SOURCE), "-o", str(built)],
            capture_output=True,
            text=True,
            timeout=300,
        )
        if result.returncode != 0:
            raise ValueError(f"{compiler} failed: {result.stderr.strip()[-500:]}")
        built.replace(library)  # atomic: another process never loads half a library
    recorded.write_text(file_sha256(library))
    return library


def _load(library: Path) -> Any:
    function = ctypes.CDLL(str(library)).specviz_bf16_rows
    pointer, size = ctypes.c_void_p, ctypes.c_int64
    function.argtypes = [pointer, pointer, pointer, pointer, size, size, size, ctypes.c_int]
    function.restype = None
    return function


def kernel(progress: Progress | None = None) -> Any:
    """The kernel's entry point, or None when it cannot be built here (kernel_problem says why);
    progress hears when it is being compiled."""
    return _KERNEL.get(progress)


def kernel_problem() -> str | None:
    """Why the kernel could not be built (compiler missing, compile error), after kernel()."""
    return _KERNEL.problem


def choose_products(device: torch.device, dtype: torch.dtype, progress: Progress) -> str:
    """What multiplies this pair's bfloat16 weights: "rows" (the kernel) or "torch".

    Reads SPECVIZ_BF16_KERNEL and the CPU's flags; builds the kernel when it is wanted (reporting
    it, and reporting why not when it cannot be built).
    """
    setting = os.environ.get(SETTING, "auto").strip().lower() or "auto"
    if setting not in CHOICES:
        choices = ", ".join(CHOICES)
        raise UserError("error.bf16_kernel_setting", name=SETTING, value=setting, choices=choices)
    wanted = setting == "rows" or (setting == "auto" and row_by_row_cpu())
    if not wanted or device.type != "cpu" or dtype != torch.bfloat16:
        return "torch"
    if kernel(progress) is None:
        progress(0.0, Phrase("load.kernel_unbuilt", problem=kernel_problem() or "?"))
        return "torch"
    return "rows"


class Bf16RowsLinear(torch.nn.Module):
    """A bfloat16 Linear layer whose products run the kernel.

    The weight and bias are the original layer's Parameters, not copies: an output layer tied to
    the input embeddings stays tied, and the model's memory does not grow.
    """

    def __init__(self, linear: torch.nn.Linear, function: Any) -> None:
        super().__init__()
        self.in_features, self.out_features = linear.in_features, linear.out_features
        self.weight = linear.weight
        self.bias = linear.bias
        self._function = function
        self.kernel_on = True  # torch_products() turns it off to time torch's product beside it

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        rows = self.forward_rows(inputs.reshape(-1, self.in_features))
        return rows.view(*inputs.shape[:-1], self.out_features)

    def forward_rows(self, rows: torch.Tensor) -> torch.Tensor:
        """(tokens, in) -> (tokens, out), as the lean forward calls it."""
        count = rows.shape[0]
        runs = self.kernel_on and count > 0 and rows.dtype == torch.bfloat16
        if not runs or rows.requires_grad:
            return F.linear(rows, self.weight, self.bias)
        inputs = rows.to(torch.float32).contiguous()  # exact: bfloat16 widens without rounding
        out = torch.empty(count, self.out_features, dtype=torch.bfloat16)
        bias = None if self.bias is None else self.bias.data_ptr()
        self._function(
            inputs.data_ptr(),
            self.weight.data_ptr(),
            bias,
            out.data_ptr(),
            count,
            self.in_features,
            self.out_features,
            torch.get_num_threads(),
        )
        return out

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bf16 rows kernel"


def use_rows_kernel(model: torch.nn.Module) -> int:
    """Swap every bfloat16 Linear layer on the CPU the kernel can run for a Bf16RowsLinear.

    Returns how many layers were swapped (0 when the kernel cannot be built). Safe to call again:
    swapped layers are no longer torch.nn.Linear.
    """
    function = kernel()
    if function is None:
        return 0
    swapped = 0
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if type(child) is torch.nn.Linear and _runs(child):
                setattr(parent, name, Bf16RowsLinear(child, function))
                swapped += 1
    return swapped


@contextlib.contextmanager
def torch_products(model: torch.nn.Module) -> Iterator[int]:
    """Within the block the model's swapped layers run torch's product (yields how many there are):
    the same weights through both paths, for measurements side by side."""
    layers = [module for module in model.modules() if isinstance(module, Bf16RowsLinear)]
    for layer in layers:
        layer.kernel_on = False
    try:
        yield len(layers)
    finally:
        for layer in layers:
            layer.kernel_on = True


def _runs(linear: torch.nn.Linear) -> bool:
    weight, bias = linear.weight, linear.bias
    return (
        weight.dtype == torch.bfloat16
        and weight.device.type == "cpu"
        and weight.is_contiguous()
        and linear.in_features % 8 == 0
        and (bias is None or (bias.dtype == torch.bfloat16 and bias.is_contiguous()))
    )
