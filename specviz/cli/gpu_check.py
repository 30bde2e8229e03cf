"""`python -m specviz gpu-check`: the GPU path measured with random-weight models of real shapes."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import torch

from specviz.cli.options import say
from specviz.labs.speedup.fixed_cost import (
    Calibration,
    calibration_file,
    mode_words,
    write_calibration,
)
from specviz.labs.speedup.fixed_cost_check import (
    FIXED_COST_PAIR,
    TINY_FIXED_COST_PAIR,
    measure_fixed_costs,
)
from specviz.labs.speedup.gpu_check import REAL_PAIR, TINY_PAIR, run_gpu_check


def add_gpu_check_command(commands: Any) -> None:
    """Register ``gpu-check`` on the CLI's subcommands."""
    parser = commands.add_parser(
        "gpu-check",
        help="on a CUDA machine: exactness, draft step, verification cost v(1..16), lean step, "
        "and the fixed cost per forward (eager and CUDA graphs) the GPU projection uses",
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
    parser.add_argument(
        "--calibration-out",
        help="where to write the fixed-cost calibration the projection reads (default on a GPU: "
        f"specviz's cache, {calibration_file()}; on a CPU: nowhere but --out)",
    )
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

    def progress(message: str) -> None:
        print(f"gpu-check: {message}", file=sys.stderr, flush=True)

    record = run_gpu_check(device, shapes, args.max_new_tokens, progress=progress)
    fixed_shapes = TINY_FIXED_COST_PAIR if args.tiny else FIXED_COST_PAIR
    calibration = measure_fixed_costs(device, fixed_shapes, progress=progress)
    # A CPU's figures must not replace the published GPU ones unless asked for by name.
    calibration_path = Path(args.calibration_out) if args.calibration_out else None
    if calibration_path is None and device.type == "cuda":
        calibration_path = calibration_file()
    if calibration_path is not None:
        write_calibration(calibration, calibration_path)
    written = {**record.to_dict(), "fixed_cost": calibration.to_dict()}
    Path(args.out).write_text(json.dumps(written, indent=2) + "\n", encoding="utf-8")
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
    say_fixed_costs(calibration, calibration_path, args.out, args.lang)
    return 0 if record.exactness.equal else 1


def say_fixed_costs(calibration: Calibration, path: Path | None, out: str, lang: str) -> None:
    """One line per execution mode: the fitted fixed cost, or why it was not measured; then
    where the calibration went."""
    for mode, fit in calibration.fits.items():
        say(
            "cli.gpu_check.fixed",
            lang,
            mode=mode_words(mode).text(lang),
            per_forward_us=f"{fit.per_forward_s * 1e6:.0f}",
            per_layer_us=f"{fit.per_layer_s * 1e6:.1f}",
            error_us=f"{fit.rms_error_s * 1e6:.0f}",
        )
    for mode, why in calibration.unavailable.items():
        say("cli.gpu_check.fixed_unavailable", lang, mode=mode_words(mode).text(lang), why=why)
    if path is None:
        say("cli.gpu_check.calibration_kept", lang, out=out)
    else:
        say("cli.gpu_check.calibration", lang, path=str(path))
