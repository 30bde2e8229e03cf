"""Peak memory of a stretch of work: how much a run adds on top of what was resident before it.

On a CPU this is the process's resident set: Linux keeps its high-water mark (VmHWM in
/proc/self/status) and resets it to the current size when "5" is written to /proc/self/clear_refs,
so the peak of one run is readable without sampling. On a GPU it is torch's peak allocation.
Where neither is available (another OS, a kernel without clear_refs) the growth is unknown (None).
"""

from __future__ import annotations

import ctypes
import functools
import os
from collections.abc import Callable, Iterator
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


def return_freed_memory() -> bool:
    """Hand the memory the C allocator holds freed back to the OS (glibc's ``malloc_trim``);
    False where there is no glibc.

    A server's runs allocate KV caches and activations of every size from several worker threads,
    and glibc keeps what they free in per-thread arenas, so the resident set creeps up run after
    run although nothing is kept alive. Trimming after a run takes milliseconds.
    """
    trim = _libc_function("malloc_trim")
    if trim is None:
        return False
    trim(0)
    return True


# glibc's mallopt parameters (malloc.h).
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_M_ARENA_MAX = -8
MMAP_THRESHOLD = 1 << 20  # blocks from 1 MiB up are mapped on their own and unmapped when freed
ARENAS = 2  # one per core of the machines this is measured on; glibc's default is 8 per core
# Free memory at a heap's top is kept up to this much during a run (malloc_trim hands it back at
# the run's end): fixing the mmap threshold would otherwise leave glibc's 128 KiB trim threshold,
# and every forward would give its buffers back and fault them in again (9 % slower, measured).
TRIM_THRESHOLD = 64 << 20


def steady_allocator(
    mmap_threshold: int = MMAP_THRESHOLD, arenas: int = ARENAS, trim_threshold: int = TRIM_THRESHOLD
) -> bool:
    """Make the C allocator give freed memory back as a server's runs come and go; call it once,
    at start-up, before the server's threads exist. False where there is no glibc.

    glibc serves a block of 128 KiB or more with a mapping of its own, but each time it unmaps one
    it raises that threshold (up to 32 MiB), so after the first run the KV caches, logits and
    activations come from its heaps, and what a run frees there stays resident among the small,
    long-lived objects that outlive it (Gradio keeps one session per visitor); glibc also makes up
    to eight heaps per core for a server's many worker threads. A fixed threshold maps every large
    block on its own (unmapped when freed), two heaps serve every thread, and the trim threshold
    keeps a run's own buffers between forwards (TRIM_THRESHOLD). Measured on the hosted server
    (docs/hosting.md, "Memory over many runs"): the resident set grew 2.3 MB per visitor without
    these settings and 0.7 MB with them, at the same decoding speed. Where ``GLIBC_TUNABLES`` sets
    any of glibc's malloc tunables, they are left as set, so another setting can be measured the
    same way.
    """
    if "glibc.malloc." in os.environ.get("GLIBC_TUNABLES", ""):
        return False  # set by hand (to measure another setting): left as it is
    mallopt = _libc_function("mallopt")
    if mallopt is None:
        return False
    settings = (
        (_M_MMAP_THRESHOLD, mmap_threshold),
        (_M_TRIM_THRESHOLD, trim_threshold),
        (_M_ARENA_MAX, arenas),
    )
    applied = [bool(mallopt(parameter, value)) for parameter, value in settings]  # each one
    return all(applied)


@functools.cache
def _libc_function(name: str) -> Callable[..., int] | None:
    try:
        return getattr(ctypes.CDLL("libc.so.6"), name)  # type: ignore[no-any-return]
    except (OSError, AttributeError):  # not glibc (macOS, Windows, musl)
        return None


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
