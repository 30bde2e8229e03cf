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


def _print_json(record: Any) -> None:
    json.dump(asdict(record), sys.stdout, ensure_ascii=False, indent=1)
    print()
