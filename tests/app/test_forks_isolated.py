"""The tests that fork the test process (marked ``forks``: the ZeroGPU stand-in), run in a fresh
process of their own in every full run (conftest.py skips them in a run with other tests).

They were opt-in while a forked child sometimes hung at 0 % CPU: torch's OpenMP pool, used by the
thread that forked, is copied without its threads (fake_spaces says more). The stand-in now runs
torch on one thread in the child, and kills a worker that sends nothing for two minutes, so a
hang fails a test. The fresh process is kept as well, so that no server or thread other tests
leave running can hold something at a fork; it costs about ten seconds. Should the whole run
still stall, it is killed after ``LIMIT_S`` with every process it forked."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent  # tests/app, beside the forking tests
ROOT = HERE.parents[1]
LIMIT_S = 600  # the forking tests take under a minute; a hung call fails in two (QUIET_S)


def test_the_forking_tests_pass_in_a_process_of_their_own() -> None:
    command = [sys.executable, "-m", "pytest", "-m", "forks", "-q", "-p", "no:cacheprovider"]
    files = [str(HERE / "test_zerogpu.py"), str(HERE / "test_hosted.py")]
    with subprocess.Popen(
        [*command, *files],
        cwd=ROOT,
        env=os.environ | {"HF_HUB_OFFLINE": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, so its forked workers go with it
    ) as run:
        try:
            out, err = run.communicate(timeout=LIMIT_S)
        except subprocess.TimeoutExpired:
            os.killpg(run.pid, signal.SIGKILL)
            out, err = run.communicate()
            pytest.fail(f"the forking tests ran past {LIMIT_S} s\n{out[-4000:]}{err[-2000:]}")
    report = out[-4000:] + err[-2000:]
    assert run.returncode == 0, report
    assert " passed" in out and "skipped" not in out.splitlines()[-1], report
