"""How much of the CPU other programs took while something was being timed.

Step costs are ratios of times taken under the same load, but a load that comes and goes while
they are timed (a test suite, another benchmark, a browser) skews them, and cached costs are
trusted at every later load: costs timed beside two other busy Python processes came out several
times too dear (docs/performance.md#step-costs-measured-at-load). So the loader watches the
measurement and does not cache a busy one.

Linux's /proc/stat counts the busy time of every CPU of the machine (a hypervisor's steal
included; specviz.core.machine.machine_busy_seconds reads it); this process's own CPU time
(os.times) is taken out, and what is left over the interval's wall time and the CPU count is the
share of the machine other programs took. Where /proc/stat cannot be read nothing is known (None).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from specviz.core.machine import machine_busy_seconds

__all__ = ["BUSY_SHARE", "OthersShare", "own_cpu_seconds"]

# Other programs held more than this share of the machine's CPUs: timings taken then are not
# kept. One other busy process (a test suite) on a 2-core machine takes more
# (docs/performance.md#step-costs-measured-at-load).
BUSY_SHARE = 0.25


def own_cpu_seconds() -> float:
    """CPU seconds this process has used, all its threads together."""
    times = os.times()
    return times.user + times.system


class OthersShare:
    """Started when made; share() is the part of the machine's CPU time since then that other
    programs took (0 to 1), or None where the machine's counters cannot be read."""

    def __init__(
        self,
        machine: Callable[[], tuple[float, int] | None] = machine_busy_seconds,
        own: Callable[[], float] = own_cpu_seconds,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self._machine, self._own, self._clock = machine, own, clock
        self._start = (machine(), own(), clock())

    def share(self) -> float | None:
        """Other programs' share of the machine's CPU time since the start."""
        machine_then, own_then, wall_then = self._start
        machine_now = self._machine()
        if machine_then is None or machine_now is None:
            return None
        wall = self._clock() - wall_then
        cpus = machine_now[1]
        if wall <= 0:
            return None
        others = (machine_now[0] - machine_then[0]) - (self._own() - own_then)
        return min(1.0, max(0.0, others / (wall * cpus)))
