"""The command line as tests drive it: in a subprocess, as a user runs it (``run_cli``), or in
process on the tiny pair, which commands load in place of the preset's (``EncodingPair``,
``COMMAND_PRESET``).

Not a test module: tests and conftest files import from here (pytest puts tests/ on sys.path).
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import torch
from tiny_models import TinyPair

from specviz.core.settings import GenerationSettings
from specviz.measure.bench import BenchGrid

ROOT = Path(__file__).resolve().parent.parent


def run_cli(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """``python -m specviz *args`` in a subprocess from the repository root, offline."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    return subprocess.run(
        [sys.executable, "-m", "specviz", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def assert_plain_error(args: list[str], message: str) -> None:
    """The command exits with status 2 and says message on stderr, with no traceback."""
    result = run_cli(*args, timeout=120)
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr


@dataclass
class EncodingPair(TinyPair):
    """The tiny pair with what commands read of a loaded pair: prompts to ids, device, dtype."""

    device: torch.device = field(default_factory=lambda: torch.device("cpu"))
    dtype: torch.dtype = torch.float32
    cost_report: None = None  # no step costs measured for the tiny pair

    def encode_prompt(self, text: str, chat: bool = True) -> torch.Tensor:
        return torch.tensor([self.tokenizer.encode(text)])


# The preset as bench and measure read it, for the tiny pair: its prompts, drafter and settings.
COMMAND_PRESET = SimpleNamespace(
    id="tiny",
    prompts={"code": ("def add(a, b):",), "story": ("Once upon a time",)},
    chat_template=False,
    draft_quantization="none",
    drafter="draft-model",
    settings=GenerationSettings(),
)


def small_grid(**changes: Any) -> BenchGrid:
    """A small bench grid (one task, γ 3 and adaptive from 2, greedy, two repeats, 8 tokens),
    with *changes* applied."""
    base: dict[str, Any] = {
        "tasks": ("code",),
        "gammas": (3,),
        "adaptive_start": 2,
        "temperatures": (0.0,),
        "repeats": 2,
        "base": GenerationSettings(max_new_tokens=8),
    }
    return BenchGrid(**(base | changes))
