"""The tests that fork the test process (marked ``forks``: the ZeroGPU stand-in), run in a fresh
process of their own (conftest.py skips them in a run with other tests).

Opt-in (SPECVIZ_FORK_TESTS=1) for now: even in a fresh process a forked child sometimes hung at
0 % CPU (a lock held by one of the test servers' threads at the fork stays held in the child), so
in the full suite it would hang CI. Until the stand-in forks before any server thread starts,
run them by hand: ``SPECVIZ_FORK_TESTS=1 pytest tests/test_forks_isolated.py``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).parent


@pytest.mark.skipif(
    os.environ.get("SPECVIZ_FORK_TESTS") != "1",
    reason="the forking ZeroGPU tests hang intermittently; SPECVIZ_FORK_TESTS=1 runs them",
)
def test_the_forking_tests_pass_in_a_process_of_their_own() -> None:
    command = [sys.executable, "-m", "pytest", "-m", "forks", "-q", "-p", "no:cacheprovider"]
    files = [str(TESTS / "test_zerogpu.py"), str(TESTS / "test_hosted.py")]
    done = subprocess.run(
        [*command, *files],
        cwd=TESTS.parent,
        env=os.environ | {"HF_HUB_OFFLINE": "1"},
        capture_output=True,
        text=True,
        timeout=900,
    )
    report = done.stdout[-4000:] + done.stderr[-2000:]
    assert done.returncode == 0, report
    assert " passed" in done.stdout and "skipped" not in done.stdout.splitlines()[-1], report
