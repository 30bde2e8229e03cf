"""The allocator settings a server starts with (``steady_allocator``): a large block freed after a
run goes back to the OS at once, where glibc's default keeps it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]

# A fresh process (the settings are process-wide and glibc moves its threshold once per process):
# a first run's 8 MiB block freed, then a 4 MiB block allocated and freed; prints the MiB still
# resident after that, over the level before the 4 MiB block.
PROBE = """
import sys
import torch
from specviz.measure.memory import resident_bytes
from specviz.models.allocator import steady_allocator
if sys.argv[1] == "steady":
    assert steady_allocator()
MiB = 1 << 20
first = torch.ones(8 * MiB, dtype=torch.uint8)
del first
before = resident_bytes()
block = torch.ones(4 * MiB, dtype=torch.uint8)
del block
print((resident_bytes() - before) / MiB)
"""


def kept_mib(mode: str) -> float:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, mode], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return float(done.stdout.split()[-1])


@pytest.mark.skipif(sys.platform != "linux", reason="glibc's allocator")
def test_a_freed_large_block_goes_back_to_the_os_with_the_steady_allocator() -> None:
    # glibc's default: freeing the 8 MiB mapping raised its threshold, so the 4 MiB block came
    # from the heap and stays there when freed (the control: without it this test proves nothing).
    assert kept_mib("default") >= 2
    assert kept_mib("steady") < 1


def test_malloc_tunables_set_by_hand_are_left_as_they_are(monkeypatch: pytest.MonkeyPatch) -> None:
    from specviz.models.allocator import steady_allocator

    monkeypatch.setenv("GLIBC_TUNABLES", "glibc.malloc.arena_max=4")
    assert steady_allocator() is False
