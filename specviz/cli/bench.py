"""`python -m specviz bench`: its flags, the table it prints and the JSON it writes.

The measurement itself is specviz.measure.bench; this module turns flags into a BenchGrid and the
rows into text. `--markdown` also prints the run as a Markdown table, `--from-json` renders saved
runs without loading a model, and `--render-doc` re-renders a document's marked tables from the
JSON they name (specviz.measure.bench_markdown; docs/performance.md's tables are made this way).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import platform
import shlex
import sys
from dataclasses import asdict, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import torch

from specviz.cli.options import add_model_options, load_pair_for, preset_for, progress_line
from specviz.core.machine import read_machine, vector_flags
from specviz.core.settings import add_setting_arguments, settings_from_args
from specviz.drafters.registry import check_drafter_spec
from specviz.engines.llama_build import find_llama_server
from specviz.measure.bench import (
    BenchGrid,
    BenchResult,
    Row,
    check_prompts,
    run_bench_grid,
    task_prompts,
)
from specviz.measure.bench_markdown import ALPHA_TAU, render_document, render_report
from specviz.measure.llama_cpp import LlamaLanes
from specviz.models.presets import TASKS, load_prompts_file
from specviz.production.engines import LLAMA_CPP
from specviz.text import DEFAULT_LANGUAGE, UserError

# The settings each row sets itself, and the bench's defaults where they differ from the preset's.
_SWEPT = ("gamma", "adaptive_gamma", "cost_gamma", "temperature")
_BENCH_DEFAULTS = {"max_new_tokens": 64, "seed": 0}


def add_bench_command(commands: Any, lang: str = DEFAULT_LANGUAGE) -> None:
    """Register `bench` on the CLI's subparsers."""
    bench = commands.add_parser(
        "bench", help="measure plain vs speculative vs transformers assisted generation"
    )
    add_model_options(bench)
    add_bench_arguments(bench, lang)
    bench.set_defaults(run=run_bench)


def add_bench_arguments(parser: argparse.ArgumentParser, lang: str = DEFAULT_LANGUAGE) -> None:
    """Flags of `python -m specviz bench` (the setting flags' help in *lang*)."""
    parser.add_argument(
        "--tasks",
        help="comma-separated task groups (default: every group with prompts: "
        + ",".join(TASKS)
        + ", or those in --prompts-file)",
    )
    parser.add_argument(
        "--prompts-file",
        metavar="TOML",
        help="prompts of your own per task group, in a preset's [prompts] layout "
        "(e.g. docs/unseen-prompts.toml), instead of the preset's examples",
    )
    parser.add_argument(
        "--prompts-per-task",
        type=int,
        help="prompts of each group every method decodes in turn, pooled into one row "
        "(0: all; default: 1 of the preset's examples, all of a --prompts-file)",
    )
    parser.add_argument("--gammas", default="3,5,7", help="comma-separated fixed γ values")
    parser.add_argument(
        "--adaptive-start", type=int, default=5, help="starting γ of the adaptive row (0: none)"
    )
    parser.add_argument(
        "--cost-cap",
        type=int,
        default=0,
        help="longest γ of a row whose γ is chosen per cycle from the step costs measured at load "
        "(0: none)",
    )
    parser.add_argument("--temperatures", default="0", help="comma-separated; 0 = greedy")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--drafters",
        metavar="SPECS",
        help="comma-separated drafter specs, a row each per γ, e.g. draft-model,lookup,hybrid "
        "(options follow their kind: lookup:max_ngram=3,min_ngram=2,hybrid); default: the preset's",
    )
    parser.add_argument(
        "--no-transformers", action="store_true", help="skip transformers' counterparts"
    )
    parser.add_argument(
        "--engines",
        default="",
        help="other engines to measure beside specviz, comma-separated: llama.cpp (its "
        "llama-server on the same GGUF pair, plain and speculative by the configs tab's command; "
        "get it with `python -m specviz engines setup llama.cpp`)",
    )
    parser.add_argument(
        "--llama-server",
        metavar="PATH",
        help="the llama-server binary to run (default: $SPECVIZ_LLAMA_SERVER, the one built by "
        "`engines setup`, or llama-server on PATH)",
    )
    # Every other setting from the schema; γ and temperature are swept by the flags above. The
    # bench's own defaults: 64 new tokens and seed 0 (see bench_grid).
    add_setting_arguments(parser, exclude=_SWEPT, lang=lang)
    parser.add_argument(
        "--time-budget",
        type=float,
        help="seconds, at most; measurements past it are cut and listed (default: no limit)",
    )
    parser.add_argument("--out", default="bench-results/bench.json", help="JSON output path")
    parser.add_argument(
        "--markdown",
        action="store_true",
        help="also print the results as a Markdown table with its caption and command",
    )
    parser.add_argument(
        "--" + ALPHA_TAU,
        dest="alpha_tau",
        action="store_true",
        help="with a Markdown table: α and τ in every cell",
    )
    parser.add_argument(
        "--from-json",
        nargs="+",
        metavar="JSON",
        help="print the Markdown table of each saved bench JSON instead of measuring "
        "(no model is loaded)",
    )
    parser.add_argument(
        "--render-doc",
        metavar="MARKDOWN",
        help="re-render, in place, every table of a Markdown file marked "
        "'<!-- bench-table: JSON [alpha-tau] -->' ... '<!-- /bench-table -->' from the JSON it "
        "names (relative to the file's folder), instead of measuring",
    )


def bench_grid(args: argparse.Namespace, preset: Any) -> BenchGrid:
    """The grid the flags describe, with the preset's draft stops where no flag overrides them."""

    def numbers(text: str, kind: type[Any]) -> tuple[Any, ...]:
        return tuple(kind(item) for item in text.split(",") if item.strip())

    prompts = load_prompts_file(args.prompts_file) if args.prompts_file else None
    per_task = args.prompts_per_task
    if per_task is None:
        per_task = 0 if prompts is not None else 1
    tasks = args.tasks or ",".join(prompts or TASKS)
    return BenchGrid(
        tasks=tuple(task.strip() for task in tasks.split(",") if task.strip()),
        gammas=numbers(args.gammas, int),
        adaptive_start=args.adaptive_start,
        temperatures=numbers(args.temperatures, float),
        repeats=args.repeats,
        base=settings_from_args(args, replace(preset.settings, **_BENCH_DEFAULTS)),
        transformers=not args.no_transformers,
        time_budget_s=args.time_budget,
        drafters=split_drafter_specs(args.drafters) if args.drafters else (preset.drafter,),
        cost_cap=args.cost_cap,
        prompts=prompts,
        prompts_per_task=per_task,
        engines=split_engines(args.engines),
    )


def split_engines(text: str) -> tuple[str, ...]:
    """The --engines list, each checked: llama.cpp is the one other engine the bench runs."""
    engines = tuple(part.strip() for part in text.split(",") if part.strip())
    for engine in engines:
        if engine != LLAMA_CPP:
            raise UserError("error.bench.engine", engine=engine, known=LLAMA_CPP)
    return engines


def split_drafter_specs(text: str) -> tuple[str, ...]:
    """Drafter specs from a comma-separated list, each checked (ValueError in plain words).

    Options are comma-separated too, so a part holding "=" but no ":" is one more option of the
    spec before it: "lookup:max_ngram=3,min_ngram=2,hybrid" is two specs.
    """
    specs: list[str] = []
    for part in filter(None, (item.strip() for item in text.split(","))):
        if "=" in part and ":" not in part and specs:
            specs[-1] += "," + part
        else:
            specs.append(part)
    if not specs:
        raise ValueError("--drafters names no drafter")
    return tuple(str(check_drafter_spec(spec)) for spec in specs)


def run_bench(args: argparse.Namespace) -> int:
    """Run the benchmark grid, print the table, write JSON (or render saved results only)."""
    if args.from_json or args.render_doc:
        return render_saved(args)
    preset = preset_for(args)
    grid = bench_grid(args, preset)
    check_prompts(preset, grid.tasks, grid.prompt_table(preset))  # before minutes of loading
    if grid.prompts_per_task < 0:
        raise UserError("error.tasks.per_task", count=grid.prompts_per_task)
    llama = None
    if LLAMA_CPP in grid.engines:
        llama = find_llama_server(args.llama_server)
        if llama is None:
            raise UserError("error.llama.missing")
    pair = load_pair_for(args, preset)
    with contextlib.ExitStack() as stack:
        lanes = stack.enter_context(LlamaLanes(llama)) if llama is not None else None
        print(header(lanes is not None), flush=True)
        result = run_bench_grid(
            pair,
            preset,
            grid,
            on_row=lambda row: print(format_row(row), flush=True),
            progress=progress_line(args.lang),
            lanes=lanes,
        )
    report = bench_report(grid, preset, pair, result)
    if llama is not None and lanes is not None:
        report["engines"] = {LLAMA_CPP: {**asdict(llama), "threads": lanes.threads}}
    _write_json(Path(args.out), report)
    print(summary(result))
    if args.markdown:
        print("\n" + render_report(report, args.alpha_tau))
    return 0


def render_saved(args: argparse.Namespace) -> int:
    """Print each --from-json file's Markdown table, then re-render the --render-doc file."""
    tables = [
        render_report(_read_json(Path(path)), args.alpha_tau, path) for path in args.from_json or ()
    ]
    if tables:
        print("\n\n".join(tables))
    if args.render_doc:
        doc = Path(args.render_doc)
        text = doc.read_text()
        updated = render_document(text, lambda source: _read_json(doc.parent / source))
        if updated != text:
            doc.write_text(updated)
        print(f"{doc}: {'re-rendered' if updated != text else 'up to date'}", file=sys.stderr)
    return 0


def _read_json(path: Path) -> dict[str, Any]:
    report = json.loads(path.read_text())
    if not isinstance(report, dict) or not isinstance(report.get("rows"), list):
        raise ValueError(f"{path} is not a bench JSON (no rows)")
    return report


def header(llama: bool = False) -> str:
    """The table's column titles and rule (with llama.cpp's columns when its lanes run)."""
    line = (
        f"{'task':12} {'T':>4} {'γ':>12} {'drafter':>12} | {'plain':>7} | {'specviz':>7} "
        f"{'α':>5} {'τ':>5} {'speedup':>7} | {'HF assist':>9} {'speedup':>7}"
    )
    if llama:
        line += f" | {'llama plain':>11} {'llama spec':>10} {'α':>5} {'speedup':>7}"
    return line + "\n" + "-" * len(line)


def format_row(row: Row) -> str:
    """One table line: tokens/s of each method, α, τ and the speedups over plain ("-" where
    transformers was not run or has no counterpart of the drafter)."""
    hf = row.transformers
    hf_cells = (
        f"{hf.tokens_per_s:9.2f} {row.transformers_speedup:6.2f}x" if hf else f"{'-':>9} {'-':>7}"
    )
    alpha = row.specviz.acceptance_rate or 0.0
    tau = row.specviz.tokens_per_target_pass or 0.0
    line = (
        f"{row.task:12} {row.temperature:4.1f} {row.gamma:>12} {row.drafter:>12} | "
        f"{row.plain.tokens_per_s:7.2f} | {row.specviz.tokens_per_s:7.2f} {alpha:5.2f} {tau:5.2f} "
        f"{row.speedup:6.2f}x | {hf_cells}"
    )
    if row.llama_cpp_plain is not None:
        line += f" | {row.llama_cpp_plain.tokens_per_s:11.2f}"
        spec = row.llama_cpp
        if spec is None or row.llama_cpp_speedup is None:
            line += f" {'-':>10} {'-':>5} {'-':>7}"
        else:
            llama_alpha = spec.acceptance_rate or 0.0
            line += f" {spec.tokens_per_s:10.2f} {llama_alpha:5.2f} {row.llama_cpp_speedup:6.2f}x"
    return line


def summary(result: BenchResult) -> str:
    """The best speedup per temperature, the losing rows, and the rows transformers wins."""
    rows = result.rows
    lines = ["", "tokens/s are wall-clock, prefill included, median of repeats; speedup = / plain."]
    for temperature in sorted({row.temperature for row in rows}):
        group = [row for row in rows if row.temperature == temperature]
        best = max(group, key=lambda row: row.speedup)
        losing = [row for row in group if row.speedup < 1.0]
        lines.append(
            f"T={temperature:g}: best speedup {best.speedup:.2f}x "
            f"({best.task}, γ={best.gamma}, {best.drafter}); "
            f"rows where speculation loses: {len(losing)}"
        )
        lines += drafter_ranking(group)
    beaten = [
        row
        for row in rows
        if row.transformers and row.specviz.tokens_per_s <= row.transformers.tokens_per_s
    ]
    if any(row.transformers for row in rows):
        lines.append(
            f"rows where transformers' assisted generation is not slower than specviz: {len(beaten)}"
        )
    if result.cut:
        lines.append("cut by the time budget: " + "; ".join(result.cut))
    return "\n".join(lines)


def drafter_ranking(rows: list[Row]) -> list[str]:
    """Per task with more than one drafter: each drafter's best row, fastest first, and whether
    the runner-up is within CLOSE of the best (then one measurement cannot tell them apart)."""
    from specviz.labs.advisor.advice import CLOSE

    lines = []
    for task in dict.fromkeys(row.task for row in rows):
        best: dict[str, Row] = {}
        for row in rows:
            if row.task == task and (
                row.drafter not in best or row.speedup > best[row.drafter].speedup
            ):
                best[row.drafter] = row
        if len(best) < 2:
            continue
        order = sorted(best.values(), key=lambda row: -row.speedup)
        cells = ", ".join(f"{row.drafter} {row.speedup:.2f}x (γ={row.gamma})" for row in order)
        tie = order[1].speedup >= (1 - CLOSE) * order[0].speedup
        note = f"; {order[0].drafter} and {order[1].drafter} within {CLOSE:.0%}" if tie else ""
        lines.append(f"  {task}: best per drafter: {cells}{note}")
    return lines


def _costs_json(pair: Any) -> dict[str, Any] | None:
    """The step costs measured at load, for the JSON (None for a pair that has none)."""
    report = getattr(pair, "cost_report", None)
    return None if report is None else report.to_json()


def bench_report(grid: BenchGrid, preset: Any, pair: Any, result: BenchResult) -> dict[str, Any]:
    """What a run writes as JSON: the settings, the machine and every row."""
    return {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": "python -m specviz bench " + shlex.join(sys.argv[2:]),
        "preset": preset.id,
        "draft_quantization": preset.draft_quantization,
        "step_costs": _costs_json(pair),
        "device": str(pair.device),
        "dtype": str(pair.dtype).removeprefix("torch."),
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "machine": platform.machine(),  # the architecture; "cpu" names the processor
        "cpu": cpu_json(),
        "max_new_tokens": grid.base.max_new_tokens,
        "prompts": {
            task: list(task_prompts(grid.prompt_table(preset), task, grid.prompts_per_task))
            for task in grid.tasks
        },
        "draft_stop_below": grid.base.draft_stop_below,
        "draft_stop_cumulative": grid.base.draft_stop_cumulative,
        "repeats": grid.repeats,
        "drafters": list(grid.drafters),
        "seeds": "seed + repeat at temperature > 0",
        "cut": result.cut,
        "rows": [
            {
                **asdict(row),
                "speedup": row.speedup,
                "transformers_speedup": row.transformers_speedup,
                "llama_cpp_speedup": row.llama_cpp_speedup,
            }
            for row in result.rows
        ],
    }


def cpu_json() -> dict[str, Any]:
    """The CPU as /proc/cpuinfo names it: model name, family and model numbers (None where it
    does not say), and the flags of its vector and matrix units."""
    machine = read_machine()
    return {
        "name": machine.cpu_name,
        "family": machine.cpu_family,
        "model": machine.cpu_model_number,
        "flags": vector_flags(machine.cpu_flags),
    }


def _write_json(out: Path, report: dict[str, Any]) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1))
    print(f"\nwrote {out}", file=sys.stderr)
