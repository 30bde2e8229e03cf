"""The tests that fork the test process (marked ``forks``: the ZeroGPU stand-in), run in a fresh
process of their own, where no thread from another test can hold a lock across the fork
(conftest.py skips them in a run with other tests)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).parent


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
