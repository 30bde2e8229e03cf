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

    exact = commands.add_parser(
        "exactness", help="is it lossless? plain vs speculative samples, chi-square tested"
    )
    add_model(exact)
    exact.add_argument("--prompt", required=True)
    add_settings(exact)
    exact.add_argument("--samples", type=int, default=2000, help="per arm")
    exact.add_argument("--tokens", type=int, default=2, help="tokens per continuation (1-3)")
    exact.add_argument("--rule", choices=["exact", "accept_draft"], default="exact")
    exact.add_argument("--json", action="store_true", help="print the report as JSON")
    exact.set_defaults(run=_exactness)

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


def _exactness(args: argparse.Namespace) -> int:
    from specviz.exactness import greedy_equality, run_exactness_lab

    _, settings, pair, prompt_ids = _prepared(args)
    if settings.temperature <= 0:
        greedy = greedy_equality(pair, prompt_ids, settings)
        if args.json:
            _print_json(greedy)
            return 0
        where = (
            "identical"
            if greedy.identical
            else f"part at token {(greedy.first_difference or 0) + 1}"
        )
        print(f"greedy ({greedy.target_dtype}): speculative and plain outputs are {where}")
        print(f"speculative: {greedy.speculative_text!r}\nplain:       {greedy.plain_text!r}")
        return 0
    report = run_exactness_lab(
        pair, prompt_ids, settings, args.samples, args.tokens, args.rule, _progress_line
    )
    if args.json:
        _print_json(report)
        return 0
    print(
        f"{report.samples} samples per arm, {report.tokens} token(s), rule {report.rule}, "
        f"{report.elapsed_s:.1f} s ({report.target_prefixes} target prefixes in "
        f"{report.target_forwards} forwards)"
    )
    for comparison in report.comparisons:
        print(
            f"first {comparison.length} token(s): TV {comparison.tv_distance:.3f} "
            f"(noise alone ≈ {comparison.tv_if_equal:.3f}), chi-square p plain vs spec "
            f"{comparison.homogeneity.p_value:.3g}, spec vs exact {comparison.speculative_fit.p_value:.3g}"
        )
        for outcome in comparison.outcomes[:5]:
            print(
                f"    {''.join(outcome.token_texts)!r:24} plain {outcome.plain:5d}  "
                f"spec {outcome.speculative:5d}  exact p {outcome.exact_prob:.3f}"
            )
    print(
        f"analytic first-token law vs p: max error {report.emission_max_error:.1e}; "
        f"TV(p, q) = {report.draft_target_tv:.3f}"
    )
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
