"""Other programs' share of the CPU while something is timed (specviz.models.cpu_load)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from specviz.core.machine import machine_busy_seconds
from specviz.models.cpu_load import OthersShare

STAT = """cpu  1000 20 300 5000 40 0 10 70 0 0
cpu0 500 10 150 2500 20 0 5 35 0 0
cpu1 500 10 150 2500 20 0 5 35 0 0
intr 12345
ctxt 678
"""


def test_the_machines_busy_time_leaves_out_idle_and_iowait(tmp_path: Path) -> None:
    stat = tmp_path / "stat"
    stat.write_text(STAT)
    ticks = os.sysconf("SC_CLK_TCK")
    # user + nice + system + irq + softirq + steal; idle (5000) and iowait (40) are not busy.
    assert machine_busy_seconds(stat) == ((1000 + 20 + 300 + 0 + 10 + 70) / ticks, 2)


@pytest.mark.parametrize(
    "text", ["", "intr 1\n", "cpu  1 2 3\ncpu0 1 2 3\n", "cpu  1 2 3 4 5 6 7 8\n"]
)
def test_an_unreadable_or_foreign_stat_file_is_unknown(tmp_path: Path, text: str) -> None:
    stat = tmp_path / "stat"
    stat.write_text(text)
    assert machine_busy_seconds(stat) is None
    assert machine_busy_seconds(tmp_path / "missing") is None


class Clocks:
    """Hand-moved counters: the machine's busy seconds, this process's CPU seconds, the wall."""

    def __init__(self, cpus: int = 2) -> None:
        self.busy, self.own, self.wall, self.cpus = 0.0, 0.0, 0.0, cpus
        self.readable = True

    def machine(self) -> tuple[float, int] | None:
        return (self.busy, self.cpus) if self.readable else None

    def share(self) -> OthersShare:
        return OthersShare(self.machine, lambda: self.own, lambda: self.wall)


def test_others_share_is_the_machines_busy_time_less_this_process_over_its_capacity() -> None:
    clocks = Clocks(cpus=2)
    watch = clocks.share()
    # 4 s of wall on 2 CPUs: 8 CPU-seconds; this process used 3.5, the machine 6.7 in all.
    clocks.wall, clocks.own, clocks.busy = 4.0, 3.5, 6.7
    assert watch.share() == pytest.approx((6.7 - 3.5) / 8)
    # Alone on the machine (its counters a tick behind this process's): no one else, never < 0.
    alone = clocks.share()
    clocks.wall, clocks.own, clocks.busy = 8.0, 7.5, 10.6
    assert alone.share() == 0.0


def test_others_share_is_unknown_without_the_machines_counters() -> None:
    clocks = Clocks()
    clocks.readable = False
    watch = clocks.share()
    clocks.readable, clocks.wall = True, 1.0
    assert watch.share() is None
    assert Clocks().share().share() is None  # no time passed


def test_the_real_counters_read_on_linux() -> None:
    if machine_busy_seconds() is None:
        pytest.skip("no /proc/stat here")
    share = OthersShare()
    sum(range(200_000))  # some time passes
    found = share.share()
    assert found is not None and 0.0 <= found <= 1.0
