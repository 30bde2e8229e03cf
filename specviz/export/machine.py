"""Where a run was recorded: the processor, its vector units, the GPU, and the software versions.

A trace carries these so that a replay can say where its speeds were measured: the same run is
several times faster on a GPU, and on a CPU the vector units (AVX2, AVX-512, AMX) decide which
kernels torch runs. The CPU's facts are specviz.core.machine's; torch adds its threads and the
GPU's name.
"""

from __future__ import annotations

import platform
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

from specviz.core.machine import read_machine, vector_flags

__all__ = ["hardware", "specviz_commit", "vector_flags", "versions"]

_PACKAGE_ROOT = Path(__file__).resolve().parents[2]


def hardware(device: str) -> dict[str, Any]:
    """The machine a run used: CPU model and vector flags, cores, torch's threads, the GPU's
    name when *device* is a CUDA device (None otherwise), and the device string itself."""
    import torch

    machine = read_machine()
    gpu = None
    if device.startswith("cuda") and torch.cuda.is_available():
        gpu = torch.cuda.get_device_name(torch.device(device))
    return {
        "device": device,
        "cpu": machine.cpu_name,
        "cpu_flags": vector_flags(machine.cpu_flags),
        "cores": machine.cores,
        "torch_threads": torch.get_num_threads(),
        "gpu": gpu,
        "system": machine.system,
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
