"""A stand-in llama-server for tests: an executable that runs engines/fake_llama_server.py (the
HTTP surface specviz reads) with this Python, so the process handling, the lanes and the race
are tested without a C++ build.

Not a test module: tests import it by name (pytest puts tests/ on sys.path).
"""

from __future__ import annotations

import stat
import sys
from pathlib import Path

FAKE = Path(__file__).resolve().parent / "engines" / "fake_llama_server.py"


def fake_llama_binary(folder: Path) -> Path:
    """An executable llama-server in *folder* that runs the stand-in."""
    binary = folder / "llama-server"
    binary.write_text(f'#!/bin/sh\nexec {sys.executable} {FAKE} "$@"\n')
    binary.chmod(binary.stat().st_mode | stat.S_IXUSR)
    return binary
