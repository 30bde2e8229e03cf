"""`python -m specviz advise`: which drafter, draft format and γ to use, measured on your prompts.

Loads the preset's target once and its draft at each draft format asked for, runs the advisor
(specviz.labs.advisor) on the prompts given (typed, a file, or a task group of the preset's
examples) and prints the ranked table and the recommendation. `--tokenizers A B` only checks that
two model sources share a vocabulary, loading no model.
"""

from __future__ import annotations

import argparse
import contextlib
from pathlib import Path
from typing import Any

from specviz.cli.bench import split_drafter_specs, split_engines
from specviz.cli.options import (
    add_model_options,
    add_setting_options,
    load_pair_for,
    preset_for,
    print_json,
    progress_line,
    say,
    settings_for,
)
from specviz.engines.llama_build import find_llama_server
from specviz.text import DEFAULT_LANGUAGE, UserError, t


def add_advise_command(commands: Any, lang: str = DEFAULT_LANGUAGE) -> None:
    """Register `advise` on the CLI's subparsers."""
    from specviz.drafters.registry import DRAFTERS, default_drafters
    from specviz.labs.advisor.advice import DEFAULT_BUDGET_S
    from specviz.models.presets import DRAFT_QUANTIZATIONS

    advise = commands.add_parser(
        "advise", help="which drafter, draft format and γ to use, measured on your prompts"
    )
    add_model_options(advise)
    add_setting_options(advise, lang)
    advise.add_argument(
        "--task", help="a task group of the preset's example prompts (default: code)"
    )
    advise.add_argument("--prompt", action="append", help="a prompt of yours (repeat for more)")
    advise.add_argument(
        "--prompts-file",
        help="a .toml file of prompts per task group (a preset's [prompts] layout), or a text "
        "file of prompts separated by blank lines",
    )
    advise.add_argument("--prompts-per-task", type=int, default=1, help="with --task (default 1)")
    advise.add_argument(
        "--drafters",
        metavar="SPECS",
        default=",".join(default_drafters()),
        help=f"comma-separated drafter specs to compare, any of {', '.join(DRAFTERS)} "
        f"(default: {','.join(default_drafters())})",
    )
    advise.add_argument(
        "--draft-formats",
        help="comma-separated draft quantizations to compare with the draft model, any of "
        f"{','.join(name for name in DRAFT_QUANTIZATIONS if name != 'auto')} on a CPU (default: "
        "the preset's, or the one 'auto' chose at load)",
    )
    advise.add_argument("--gammas", default="2,3,5,8", help="comma-separated fixed γ values")
    advise.add_argument(
        "--fixed-only", action="store_true", help="fixed γ only: no adaptive or cost-schedule rows"
    )
    advise.add_argument(
        "--cost-schedule",
        action="store_true",
        help="also a row per drafter with γ chosen each cycle from the step costs measured at load",
    )
    advise.add_argument("--repeats", type=int, default=1)
    advise.add_argument(
        "--time-budget", type=float, default=DEFAULT_BUDGET_S, help="seconds of measuring, at most"
    )
    advise.add_argument(
        "--tokenizers",
        nargs=2,
        metavar="SOURCE",
        help="only check that two model sources (kind:ref) share a vocabulary; loads no model",
    )
    advise.add_argument(
        "--engines",
        default="",
        help="other engines to measure beside the candidates (not ranked): llama.cpp (its plain "
        "decoding and its speculative decoding at each fixed γ, by the configs tab's command)",
    )
    advise.add_argument("--llama-server", metavar="PATH", help="the llama-server to run")
    advise.add_argument("--json", action="store_true", help="print the advice as JSON")
    advise.set_defaults(run=run_advise)


def run_advise(args: argparse.Namespace) -> int:
    """Measure every candidate on the prompts; print the ranked table and the recommendation."""
    if args.tokenizers:
        return _check_tokenizers(args)
    from specviz.labs.advisor.advice import DEFAULT_TOKENS
    from specviz.labs.advisor.setup import format_pairs, llama_engine_lanes
    from specviz.measure.llama_cpp import LlamaLanes
    from specviz.models.loader import ModelCache

    preset = preset_for(args)
    if args.max_new_tokens is None:
        args.max_new_tokens = DEFAULT_TOKENS
    settings = settings_for(args, preset)
    prompts = advice_prompts(args, preset)
    drafters = split_drafter_specs(args.drafters)
    gammas = tuple(int(item) for item in args.gammas.split(",") if item.strip())
    engines = split_engines(args.engines)
    llama = None
    if engines:
        llama = find_llama_server(args.llama_server)
        if llama is None:
            raise UserError("error.llama.missing")
    cache = ModelCache()
    pairs = format_pairs(
        preset,
        advice_draft_formats(args, preset),
        lambda formatted: load_pair_for(args, formatted, cache=cache),
    )
    with contextlib.ExitStack() as stack:
        engine_lanes = []
        if llama is not None:
            lanes = stack.enter_context(LlamaLanes(llama))
            engine_lanes = llama_engine_lanes(lanes, preset, settings, gammas)
        advice = _advise(args, pairs, prompts, preset, settings, drafters, gammas, engine_lanes)
    return _print_advice(args, advice, prompts, settings)


def _advise(
    args: argparse.Namespace,
    pairs: Any,
    prompts: list[str],
    preset: Any,
    settings: Any,
    drafters: Any,
    gammas: tuple[int, ...],
    engines: Any,
) -> Any:
    from specviz.labs.advisor.advice import advise
    from specviz.labs.advisor.setup import advice_plan

    plan = advice_plan(
        pairs,
        prompts,
        chat=preset.chat_template and not args.raw,
        settings=settings,
        drafters=drafters,
        gammas=gammas,
        adaptive=not args.fixed_only,
        cost=args.cost_schedule and not args.fixed_only,
        repeats=args.repeats,
        time_budget_s=args.time_budget,
        engines=engines,
    )
    return advise(plan, progress=progress_line(args.lang))


def _print_advice(args: argparse.Namespace, advice: Any, prompts: list[str], settings: Any) -> int:
    lang = args.lang
    if args.json:
        print_json(advice.to_dict())
        return 0
    say(
        "advisor.cli.plain",
        lang,
        prompts=len(prompts),
        tokens=settings.max_new_tokens,
        plain=f"{advice.plain_tokens_per_s:.2f}",
        ttft=f"{advice.plain_ttft_s:.2f}",
    )
    print(
        f"{t('advisor.column.rank', lang):>3} {t('advisor.column.candidate', lang):32} "
        f"{t('advisor.column.alpha', lang):>5} {t('advisor.column.tau', lang):>5} "
        f"{t('advisor.column.tps', lang):>8} {t('advisor.column.speedup', lang):>8} "
        f"{t('advisor.column.ttft', lang):>8} {t('advisor.column.memory', lang):>10}"
    )
    for rank, verdict in enumerate(advice.ranked(), start=1):
        memory = "-" if verdict.memory_bytes is None else f"{verdict.memory_bytes / 2**20:.0f} MiB"
        cut = "" if verdict.complete else " *"
        print(
            f"{rank:>3} {verdict.candidate.name:32} {verdict.alpha:5.2f} {verdict.tau:5.2f} "
            f"{verdict.tokens_per_s:8.2f} {verdict.speedup:7.2f}× {verdict.ttft_s:7.2f}s "
            f"{memory:>10}{cut}"
        )
    if advice.cut:
        say("advisor.cli.cut", lang, count=len(advice.cut))
    print(advice.recommendation(lang))
    if advice.engines:
        from specviz.labs.advisor.panel import ENGINE_HEADERS, engine_row

        print("\n" + t("advisor.engines.intro", lang))
        print("  ".join(f"{t(key, lang):>16}" for key in ENGINE_HEADERS))
        for verdict in advice.engines:
            print("  ".join(f"{cell:>16}" for cell in engine_row(verdict)))
    return 0


def advice_prompts(args: argparse.Namespace, preset: Any) -> list[str]:
    """The prompts to measure on: --prompt, --prompts-file, or the task group (code by default).

    A .toml prompts file is read like a preset's [prompts] table: with --task, its prompts of
    that group, otherwise all of them; any other file holds prompts separated by blank lines.
    """
    prompts = list(args.prompt or [])
    task_table = preset.prompts
    if args.prompts_file and Path(args.prompts_file).suffix == ".toml":
        from specviz.models.presets import load_prompts_file

        task_table = load_prompts_file(args.prompts_file)
        if not args.task:
            prompts += [prompt for group in task_table.values() for prompt in group]
    elif args.prompts_file:
        try:
            text = Path(args.prompts_file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise UserError(
                "error.advisor.file", path=args.prompts_file, reason=str(error)
            ) from error
        prompts += [block.strip() for block in text.split("\n\n") if block.strip()]
    if args.task or not prompts:
        task = args.task or "code"
        if task not in task_table:
            known = ", ".join(task_table)
            raise UserError("error.advisor.task", task=repr(task), preset=preset.id, known=known)
        if args.prompts_per_task < 1:
            raise UserError("error.tasks.per_task", count=args.prompts_per_task)
        prompts += list(task_table[task][: args.prompts_per_task])
    if any(not prompt.strip() for prompt in prompts):
        raise UserError("error.prompt_empty")
    return prompts


def advice_draft_formats(args: argparse.Namespace, preset: Any) -> list[str]:
    """The draft formats to compare, the preset's first: those --draft-formats names, or the
    preset's alone (with "auto", the one the step costs measured at load choose)."""
    from specviz.models.loader import pick_device
    from specviz.models.step_costs import draft_formats

    known = draft_formats("auto", pick_device(args.device))
    if not args.draft_formats:
        return [preset.draft_quantization]
    asked = [item.strip() for item in args.draft_formats.split(",") if item.strip()]
    unknown = [item for item in asked if item not in known]
    if unknown or not asked:
        raise UserError(
            "error.advisor.formats", formats=", ".join(unknown) or "-", known=", ".join(known)
        )
    from specviz.labs.advisor.advice import preset_format_first

    return preset_format_first(preset.draft_quantization, asked)


def _check_tokenizers(args: argparse.Namespace) -> int:
    """Load two sources' tokenizers only and say whether their vocabularies are identical."""
    from specviz.models.loader import vocabulary_difference
    from specviz.models.presets import ModelSource

    first, second = (ModelSource.parse(text) for text in args.tokenizers)
    difference = vocabulary_difference(first, second)
    if difference is None:
        say("advisor.tokenizers.same", args.lang, first=first.ref, second=second.ref)
        return 0
    say("advisor.tokenizers.differ", args.lang, reason=difference)
    return 1
