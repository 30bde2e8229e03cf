"""Peak memory of a stretch of work: how much a run adds on top of what was resident before it.

On a CPU this is the process's resident set: Linux keeps its high-water mark (VmHWM in
/proc/self/status) and resets it to the current size when "5" is written to /proc/self/clear_refs,
so the peak of one run is readable without sampling. On a GPU it is torch's peak allocation.
Where neither is available (another OS, a kernel without clear_refs) the growth is unknown (None).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import torch

_STATUS = Path("/proc/self/status")
_CLEAR_REFS = Path("/proc/self/clear_refs")


@dataclass
class PeakGrowth:
    """Filled in when the measured block ends: bytes the peak rose above the start (None: unknown)."""

    bytes: int | None = None


@contextmanager
def peak_growth(device: torch.device) -> Iterator[PeakGrowth]:
    """Measure how far memory peaked above its level at the start of the block."""
    result = PeakGrowth()
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        torch.cuda.reset_peak_memory_stats(device)
        before = torch.cuda.memory_allocated(device)
        yield result
        torch.cuda.synchronize(device)
        result.bytes = max(0, torch.cuda.max_memory_allocated(device) - before)
        return
    start = resident_bytes() if _reset_peak() else None
    yield result
    peak = _status_bytes("VmHWM")
    if start is not None and peak is not None:
        result.bytes = max(0, peak - start)


def module_bytes(module: torch.nn.Module) -> int:
    """Bytes held by a module's parameters and buffers (int8 weights count one byte each)."""
    tensors = [*module.parameters(), *module.buffers()]
    return sum(tensor.numel() * tensor.element_size() for tensor in tensors)


def _reset_peak() -> bool:
    try:
        _CLEAR_REFS.write_text("5")
    except OSError:
        return False
    return True


def resident_bytes() -> int | None:
    """The process's resident set now, in bytes (None where /proc/self/status is not there)."""
    return _status_bytes("VmRSS")


def _status_bytes(field: str) -> int | None:
    try:
        lines = _STATUS.read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024  # reported in kB
    return None
