"""The teaching labs on the command line: `python -m specviz inspect|exactness|speedup|tasks`.

Each command loads the preset's pair, runs the same lab function the app's tab runs, and prints its
record as a table (or JSON with --json). Parsing helpers are shared with ``specviz.cli``.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from typing import Any


def add_lab_commands(commands: Any, add_model: Any, add_settings: Any) -> None:
    """Register the lab subcommands on the CLI's subparsers."""
    inspect = commands.add_parser(
        "inspect", help="the dice roll: q, p, min(1, p/q) and u at every drafted position"
    )
    add_model(inspect)
    inspect.add_argument("--prompt", required=True)
    add_settings(inspect)
    inspect.add_argument(
        "--cycle", type=int, action="append", help="cycle number(s) to show (default: all)"
    )
    inspect.set_defaults(run=_inspect)

    tasks = commands.add_parser(
        "tasks", help="α, τ and speedup per task group (code, story, ...) at the same settings"
    )
    add_model(tasks)
    add_settings(tasks)
    tasks.add_argument("--prompts-per-task", type=int, default=1)
    tasks.add_argument("--json", action="store_true", help="print the report as JSON")
    tasks.set_defaults(run=_tasks)


def _prepared(args: argparse.Namespace) -> tuple[Any, Any, Any, Any]:
    """Preset, settings, loaded pair and encoded prompt for a lab command."""
    from specviz.cli import load_pair_for, preset_for, settings_for

    preset = preset_for(args)
    settings = settings_for(args, preset)  # bad values fail here, before minutes of loading
    if not args.prompt.strip():
        raise ValueError("the prompt is empty")
    pair = load_pair_for(args, preset)
    prompt_ids = pair.encode_prompt(args.prompt, chat=preset.chat_template and not args.raw)
    return preset, settings, pair, prompt_ids


def _inspect(args: argparse.Namespace) -> int:
    from specviz.drafters import ModelDrafter
    from specviz.engine import speculative_generate
    from specviz.inspector import inspector_lines

    _, settings, pair, prompt_ids = _prepared(args)
    cycles = list(speculative_generate(pair, prompt_ids, settings, ModelDrafter(pair.draft)))
    wanted = args.cycle or range(1, len(cycles) + 1)
    unknown = [number for number in wanted if not 1 <= number <= len(cycles)]
    if unknown:
        raise ValueError(f"the run has cycles 1..{len(cycles)}; no cycle {unknown[0]}")
    for number in wanted:
        print("\n".join(inspector_lines(cycles[number - 1])))
    return 0


def _tasks(args: argparse.Namespace) -> int:
    from specviz.cli import load_pair_for, preset_for, settings_for
    from specviz.task_dependence import measure_tasks

    preset = preset_for(args)
    settings = settings_for(args, preset)
    pair = load_pair_for(args, preset)
    report = measure_tasks(
        pair,
        preset.prompts,
        lambda text: pair.encode_prompt(text, chat=preset.chat_template and not args.raw),
        settings,
        args.prompts_per_task,
        progress=_progress_line,
    )
    if args.json:
        _print_json(report.to_dict())
        return 0
    print(f"{'task':12} {'α':>6} {'τ':>6} {'spec tok/s':>11} {'plain tok/s':>12} {'speedup':>8}")
    for result in report.tasks:
        print(
            f"{result.task:12} {result.acceptance_rate:>6.0%} {result.tokens_per_target_pass:>6.2f}"
            f" {result.speculative.tokens_per_s:>11.1f} {result.plain.tokens_per_s:>12.1f}"
            f" {result.speedup:>7.2f}×"
        )
    print(report.narrative())
    return 0


def _progress_line(fraction: float, message: str) -> None:
    print(f"[{fraction:4.0%}] {message}", file=sys.stderr, flush=True)


def _print_json(record: Any) -> None:
    """A lab record (a dataclass, or the dict its to_dict() gives) as JSON on stdout."""
    json.dump(record if isinstance(record, dict) else asdict(record), sys.stdout, indent=1)
    print()
