"""`python -m specviz gpu-check`: the GPU path measured with random-weight models of real shapes."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import torch

from specviz.cli.options import say
from specviz.labs.speedup.gpu_check import REAL_PAIR, TINY_PAIR, run_gpu_check


def add_gpu_check_command(commands: Any) -> None:
    """Register ``gpu-check`` on the CLI's subcommands."""
    parser = commands.add_parser(
        "gpu-check",
        help="on a CUDA machine: exactness, draft step, verification cost v(1..16), lean step",
    )
    parser.add_argument(
        "--device", default="cuda", help="cuda (default), cuda:N, or cpu to check the code path"
    )
    parser.add_argument(
        "--tiny",
        action="store_true",
        help="small random shapes instead of Qwen2.5-0.5B and 7B (a quick check of this command)",
    )
    parser.add_argument("--max-new-tokens", type=int, default=16, help="largest k timed in v(k)")
    parser.add_argument("--out", default="gpu-check.json", help="where to write the JSON record")
    parser.set_defaults(run=run_gpu_check_command)


def run_gpu_check_command(args: argparse.Namespace) -> int:
    """Run the check and write its JSON; a machine without the asked device is told so."""
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        say("cli.gpu_check.no_cuda", args.lang)
        return 2
    if not 1 <= args.max_new_tokens <= 64:
        say("cli.gpu_check.bad_tokens", args.lang)
        return 2
    shapes = TINY_PAIR if args.tiny else REAL_PAIR
    record = run_gpu_check(
        device,
        shapes,
        args.max_new_tokens,
        progress=lambda message: print(f"gpu-check: {message}", file=sys.stderr, flush=True),
    )
    Path(args.out).write_text(json.dumps(record.to_dict(), indent=2) + "\n", encoding="utf-8")
    say(
        "cli.gpu_check.done",
        args.lang,
        device=record.device_name,
        equal="yes" if record.exactness.equal else "NO",
        draft_ms=f"{record.draft_step['paths'][1]['ms_per_step']:.2f}",
        target_ms=f"{record.target_step['paths'][1]['ms_per_step']:.2f}",
        cost=f"{record.draft_cost:.3f}",
        out=args.out,
    )
    return 0 if record.exactness.equal else 1
