"""`python -m specviz advise`: which drafter, draft format and γ to use, measured on your prompts.

Loads the preset's target once and its draft at each draft format asked for, runs the advisor
(specviz.labs.advisor) on the prompts given (typed, a file, or a task group of the preset's
examples) and prints the ranked table and the recommendation. `--tokenizers A B` only checks that
two model sources share a vocabulary, loading no model.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path
from typing import Any

from specviz.cli.bench import split_drafter_specs
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
from specviz.text import DEFAULT_LANGUAGE, UserError, t

# The advisor's default size: short runs of one prompt, so a whole task group fits in minutes.
DEFAULT_TOKENS = 16
DEFAULT_BUDGET_S = 100.0


def add_advise_command(commands: Any, lang: str = DEFAULT_LANGUAGE) -> None:
    """Register `advise` on the CLI's subparsers."""
    from specviz.drafters.registry import DRAFTERS
    from specviz.labs.advisor.advice import DEFAULT_DRAFTERS

    advise = commands.add_parser(
        "advise", help="which drafter, draft format and γ to use, measured on your prompts"
    )
    add_model_options(advise)
    add_setting_options(advise, lang)
    advise.add_argument(
        "--task", help="a task group of the preset's example prompts (default: code)"
    )
    advise.add_argument("--prompt", action="append", help="a prompt of yours (repeat for more)")
    advise.add_argument("--prompts-file", help="a text file of prompts separated by blank lines")
    advise.add_argument("--prompts-per-task", type=int, default=1, help="with --task (default 1)")
    advise.add_argument(
        "--drafters",
        metavar="SPECS",
        default=",".join(DEFAULT_DRAFTERS),
        help=f"comma-separated drafter specs to compare, any of {', '.join(DRAFTERS)} "
        f"(default: {','.join(DEFAULT_DRAFTERS)})",
    )
    advise.add_argument(
        "--draft-formats",
        help="comma-separated draft quantizations to try with the draft model (default: "
        "none,int8wo,int8 on a CPU; the preset's elsewhere)",
    )
    advise.add_argument("--gammas", default="2,3,5,8", help="comma-separated fixed γ values")
    advise.add_argument(
        "--fixed-only", action="store_true", help="fixed γ only: no adaptive or cost-schedule rows"
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
    advise.add_argument("--json", action="store_true", help="print the advice as JSON")
    advise.set_defaults(run=run_advise)


def run_advise(args: argparse.Namespace) -> int:
    """Measure every candidate on the prompts; print the ranked table and the recommendation."""
    if args.tokenizers:
        return _check_tokenizers(args)
    from specviz.labs.advisor.advice import AdvicePlan, advise
    from specviz.models.loader import ModelCache

    lang = args.lang
    preset = preset_for(args)
    if args.max_new_tokens is None:
        args.max_new_tokens = DEFAULT_TOKENS
    settings = settings_for(args, preset)
    prompts = advice_prompts(args, preset)
    drafters = split_drafter_specs(args.drafters)
    gammas = tuple(int(item) for item in args.gammas.split(",") if item.strip())
    cache = ModelCache()
    pairs = {}
    for draft_format in advice_draft_formats(args, preset):
        formatted = replace(preset, draft_quantization=draft_format)
        pairs[draft_format] = load_pair_for(args, formatted, cache=cache)
    first = next(iter(pairs.values()))
    chat = preset.chat_template and not args.raw
    plan = AdvicePlan(
        pairs=pairs,
        prompt_ids=[first.encode_prompt(prompt, chat=chat) for prompt in prompts],
        settings=settings,
        drafters=drafters,
        gammas=gammas,
        adaptive=not args.fixed_only,
        cost=not args.fixed_only,
        repeats=args.repeats,
        time_budget_s=args.time_budget,
    )
    advice = advise(plan, progress=progress_line(lang))
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
    return 0


def advice_prompts(args: argparse.Namespace, preset: Any) -> list[str]:
    """The prompts to measure on: --prompt, --prompts-file, or the task group (code by default)."""
    prompts = list(args.prompt or [])
    if args.prompts_file:
        try:
            text = Path(args.prompts_file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise UserError(
                "error.advisor.file", path=args.prompts_file, reason=str(error)
            ) from error
        prompts += [block.strip() for block in text.split("\n\n") if block.strip()]
    if args.task or not prompts:
        task = args.task or "code"
        if task not in preset.prompts:
            known = ", ".join(preset.prompts)
            raise UserError("error.advisor.task", task=repr(task), preset=preset.id, known=known)
        if args.prompts_per_task < 1:
            raise UserError("error.tasks.per_task", count=args.prompts_per_task)
        prompts += list(preset.prompts[task][: args.prompts_per_task])
    if any(not prompt.strip() for prompt in prompts):
        raise UserError("error.prompt_empty")
    return prompts


def advice_draft_formats(args: argparse.Namespace, preset: Any) -> list[str]:
    """The draft formats to compare, the preset's first (every format this device runs, unless
    --draft-formats names some)."""
    from specviz.models.loader import pick_device
    from specviz.models.step_costs import draft_formats

    known = draft_formats("auto", pick_device(args.device))
    if args.draft_formats:
        asked = [item.strip() for item in args.draft_formats.split(",") if item.strip()]
    else:
        asked = list(known)
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
