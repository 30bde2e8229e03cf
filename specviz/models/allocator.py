"""The C allocator's settings and trims: what a process holding large models does so that memory
it frees goes back to the system (glibc; a no-op elsewhere).

Used at start-up by the server (steady_allocator), after each run (return_freed_memory, in
App.one_run) and by the loader after it releases a draft format that `auto` measured and did not
choose.
"""

from __future__ import annotations

import ctypes
import functools
import os
from collections.abc import Callable


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
