"""Where a run was recorded: the processor, its vector units, the GPU, and the software versions.

A trace carries these so that a replay can say where its speeds were measured: the same run is
several times faster on a GPU, and on a CPU the vector units (AVX2, AVX-512, AMX) decide which
kernels torch runs.
"""

from __future__ import annotations

import os
import platform
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

# The /proc/cpuinfo flags that decide which matrix kernels run: x86's vector and matrix units,
# Arm's SIMD and SVE.
_VECTOR_FLAG_PREFIXES = ("avx", "amx", "fma", "f16c", "asimd", "sve", "bf16", "i8mm")
_PACKAGE_ROOT = Path(__file__).resolve().parents[2]


def vector_flags(flags: list[str]) -> list[str]:
    """The flags among *flags* that name vector or matrix units (avx2, avx512_bf16, amx_tile...),
    sorted."""
    return sorted({flag for flag in flags if flag.startswith(_VECTOR_FLAG_PREFIXES)})


def hardware(device: str) -> dict[str, Any]:
    """The machine a run used: CPU model and vector flags, cores, torch's threads, the GPU's
    name when *device* is a CUDA device (None otherwise), and the device string itself."""
    import torch

    from specviz.models.step_costs import cpu_model_and_flags

    cpu, flags = cpu_model_and_flags()
    gpu = None
    if device.startswith("cuda") and torch.cuda.is_available():
        gpu = torch.cuda.get_device_name(torch.device(device))
    return {
        "device": device,
        "cpu": cpu,
        "cpu_flags": vector_flags(flags),
        "cores": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "gpu": gpu,
        "system": f"{platform.system()} {platform.machine()}",
    }


def versions() -> dict[str, str | None]:
    """Python, torch, transformers and Gradio versions, and specviz's git commit (None when the
    package is not in a git checkout)."""
    return {
        "python": platform.python_version(),
        "torch": _installed("torch"),
        "transformers": _installed("transformers"),
        "gradio": _installed("gradio"),
        "specviz_commit": specviz_commit(),
    }


def specviz_commit() -> str | None:
    """The commit the package's checkout is at, with "+dirty" when files differ from it; None
    outside a git checkout or without git."""
    if not (_PACKAGE_ROOT / ".git").exists():
        return None
    try:
        head = _git("rev-parse", "HEAD")
        dirty = _git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return None
    return f"{head}+dirty" if dirty else head


def _git(*args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=_PACKAGE_ROOT, capture_output=True, text=True, timeout=10, check=True
    )
    return done.stdout.strip()


def _installed(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None
