"""`python -m specviz watch --url URL`: attach to a running llama-server, vLLM or SGLang,
send it prompts and print what it reports about speculation, a row per request and the totals.

The work is specviz.engines.watch; this module turns flags into a WatchPlan and records into
lines. Loads no model (the prompts come from the preset's task groups or a --prompts-file).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import asdict
from typing import Any

from specviz.cli.options import print_json, say
from specviz.engines.records import RequestResult
from specviz.engines.watch import (
    DEFAULT_TIMEOUT_S,
    DEFAULT_TOKENS,
    WatchPlan,
    WatchUpdate,
    iter_watch,
    task_prompts,
)


def add_watch_command(commands: Any) -> None:
    """Register `watch` on the CLI's subparsers."""
    watch = commands.add_parser(
        "watch",
        help="send prompts to a running llama-server, vLLM or SGLang and chart its speculation",
    )
    watch.add_argument("--url", required=True, help="the server, e.g. http://127.0.0.1:8080")
    watch.add_argument(
        "--baseline-url",
        help="the same model served with speculation off: each prompt goes there too, for the "
        "speedup",
    )
    watch.add_argument(
        "--preset", help="whose task groups' prompts to send (default: the bundled pair)"
    )
    watch.add_argument("--tasks", help="comma-separated task groups (default: code)")
    watch.add_argument(
        "--prompts-file",
        metavar="TOML",
        help="prompts of your own per task group, in a preset's [prompts] layout "
        "(e.g. docs/unseen-prompts.toml)",
    )
    watch.add_argument(
        "--prompts-per-task", type=int, default=1, help="prompts of each group (0: all; default 1)"
    )
    watch.add_argument(
        "--max-tokens", type=int, default=DEFAULT_TOKENS, help="new tokens per request"
    )
    watch.add_argument("--temperature", type=float, default=0.0, help="0 = greedy")
    watch.add_argument("--seed", type=int, default=0)
    watch.add_argument(
        "--raw",
        action="store_true",
        help="send the prompt as it is (/v1/completions) instead of through the chat template",
    )
    watch.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT_S,
        help="seconds each HTTP request may take",
    )
    watch.add_argument(
        "--no-warm-up",
        action="store_true",
        help="measure from the first request (no short one first)",
    )
    watch.add_argument("--json", action="store_true", help="print the records as JSON at the end")
    watch.set_defaults(run=run_watch)


def watch_plan(args: argparse.Namespace) -> WatchPlan:
    """The plan the flags describe, with the prompts read from the preset or --prompts-file."""
    from specviz.models.presets import load_prompts_file

    if args.prompts_file:
        table = load_prompts_file(args.prompts_file)
    else:
        from specviz.cli.options import preset_for

        args.draft_quantization = None  # preset_for's override, which watch has no flag for
        table = preset_for(args).example_prompts(args.lang)
    tasks = [task.strip() for task in (args.tasks or "code").split(",") if task.strip()]
    return WatchPlan(
        url=args.url,
        prompts=task_prompts(table, tasks, args.prompts_per_task),
        max_tokens=args.max_tokens,
        temperature=args.temperature,
        seed=args.seed,
        chat=not args.raw,
        baseline_url=args.baseline_url,
        timeout_s=args.timeout,
        warm_up=not args.no_warm_up,
    )


def run_watch(args: argparse.Namespace) -> int:
    """Watch the server: progress on stderr, a row per request, then the totals."""
    from specviz.views.watch_view import baseline_line, server_line, table_rows

    lang = args.lang
    last: WatchUpdate | None = None
    widths: list[int] = []
    printed = 0
    for update in iter_watch(watch_plan(args)):
        if last is None and not args.json:
            print(server_line(update, lang))
            if update.baseline is not None:
                print(baseline_line(update, lang))
            for warning in update.warnings:
                say("watch.cli.warning", lang, warning=warning)
        last = update
        if not update.finished:
            print(
                f"[{update.fraction:4.0%}] {update.message.text(lang)}", file=sys.stderr, flush=True
            )
        if args.json or not update.results:
            continue
        headers, rows = table_rows(update.results, update.totals, lang)
        if not widths:
            widths = [max(len(header), 6) for header in headers]
            widths[1] = max(widths[1], 12)  # the task's name
            print(_line(headers, widths))
        for row in rows[printed:-1]:  # the requests not printed yet; the last row is the totals
            print(_line(row, widths), flush=True)
        printed = len(rows) - 1
        if update.finished:
            print(_line(rows[-1], widths))
    assert last is not None
    if args.json:
        print_json(_json_record(last))
        return 0
    _print_notes(last, lang)
    return 0


def _line(cells: list[str], widths: list[int]) -> str:
    return " ".join(
        f"{cell:<{width}}" if column == 1 else f"{cell:>{width}}"
        for column, (cell, width) in enumerate(zip(cells, widths, strict=False))
    )


def _print_notes(update: WatchUpdate, lang: str) -> None:
    """What the table cannot show: acceptance by position, and where the counts may mislead."""
    rates = update.totals.counts.position_rates
    if rates:
        say("watch.cli.positions", lang, rates=" ".join(f"{rate:.0%}" for rate in rates))
    for result in update.results:
        _result_notes(result, lang)


def _result_notes(result: RequestResult, lang: str) -> None:
    reported, counts = result.reply.reported, result.counts
    if (
        reported is not None
        and counts.drafted is not None
        and ((reported.drafted, reported.accepted) != (counts.drafted, counts.accepted))
    ):
        say(
            "watch.cli.reported_differs",
            lang,
            index=result.index,
            reported=f"{reported.accepted}/{reported.drafted}",
            counted=f"{counts.accepted}/{counts.drafted}",
        )
    if result.other_requests:
        say("watch.cli.others", lang, index=result.index, count=result.other_requests)


def _json_record(update: WatchUpdate) -> dict[str, Any]:
    totals = update.totals
    return {
        "server": asdict(update.server),
        "baseline": asdict(update.baseline) if update.baseline is not None else None,
        "results": [
            asdict(result)
            | {
                "alpha": result.counts.alpha,
                "mean_acceptance_length": result.counts.mean_acceptance_length,
                "position_rates": result.counts.position_rates,
                "wall_tps": result.reply.wall_tps,
                "speedup": result.speedup,
            }
            for result in update.results
        ],
        "totals": {
            "requests": totals.requests,
            "counts": asdict(totals.counts),
            "alpha": totals.counts.alpha,
            "mean_acceptance_length": totals.counts.mean_acceptance_length,
            "position_rates": totals.counts.position_rates,
            "tokens": totals.speeds.tokens,
            "wall_tps": totals.speeds.wall_tps,
            "server_tps": totals.speeds.server_tps,
            "baseline_wall_tps": totals.baseline.wall_tps if totals.baseline else None,
            "speedup": totals.speedup,
        },
        "warnings": [warning.text() for warning in update.warnings],
    }
