"""Command line over the same engine the app uses: `python -m specviz generate|bench|measure|presets|...`."""

from __future__ import annotations

import argparse
import functools
import os
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from specviz.cli.advise import add_advise_command
from specviz.cli.bench import add_bench_command
from specviz.cli.configs import add_configs_command
from specviz.cli.engines import add_engines_command
from specviz.cli.gpu_check import add_gpu_check_command
from specviz.cli.heads import add_heads_command
from specviz.cli.labs import add_lab_commands
from specviz.cli.loadtest import add_loadtest_command
from specviz.cli.measure import add_measure_commands
from specviz.cli.options import (
    add_drafter_option,
    add_model_options,
    add_setting_options,
    check_device,
    check_output_paths,
    drafter_spec_for,
    load_pair_for,
    prepared_run,
    preset_for,
    print_json,
    say,
)
from specviz.cli.screenshots import add_screenshots_command
from specviz.cli.watch import add_watch_command
from specviz.core.events import Cycle, Origin, Step, Totals
from specviz.measure.race_records import engine_seconds
from specviz.text import DEFAULT_LANGUAGE, TABLES, UserError, supported_language, t
from specviz.views.fable import narrate, story_text


def main(argv: list[str] | None = None) -> int:
    """Parse arguments and run a subcommand; returns the process exit code."""
    argv = _language_first(sys.argv[1:] if argv is None else argv)
    parser = _parser(_requested_language(argv))
    args = parser.parse_args(argv)
    lang = args.lang
    try:
        if getattr(args, "checks_device", False):  # a command that loads models (--device)
            check_device(args.device)
        return int(args.run(args))
    except KeyboardInterrupt:
        print("\n" + t("cli.interrupted", lang), file=sys.stderr)
        return 130
    except UserError as error:
        print(t("cli.error", lang, message=error.message(lang)), file=sys.stderr)
        return 2
    except (ValueError, RuntimeError, OSError) as error:
        # A model that cannot load, or a check not yet worded in the catalogue: still a plain
        # message, never a traceback.
        print(t("cli.error", lang, message=error), file=sys.stderr)
        return 2


def _language_first(argv: list[str]) -> list[str]:
    """*argv* with its --lang moved to the front, where the top-level parser reads it: so every
    command, a measure's sub-command too, takes ``--lang ja`` before or after its own flags."""
    for index, item in enumerate(argv):
        if item == "--lang" and index + 1 < len(argv):
            return [item, argv[index + 1], *argv[:index], *argv[index + 2 :]]
        if item.startswith("--lang="):
            return [item, *argv[:index], *argv[index + 1 :]]
    return argv


def _requested_language(argv: list[str]) -> str:
    """The --lang asked for, read before the parser is built so that the catalogue's parts of
    the help (the description, the setting flags) are worded in it; the other flags' help is
    English."""
    early = argparse.ArgumentParser(add_help=False)
    early.add_argument("--lang", default=DEFAULT_LANGUAGE)
    return supported_language(early.parse_known_args(argv)[0].lang)


def _parser(lang: str = DEFAULT_LANGUAGE) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m specviz", description=t("cli.description", lang)
    )
    parser.add_argument(
        "--lang",
        choices=sorted(TABLES),
        default=DEFAULT_LANGUAGE,
        help="language of the messages and tables, before or after the command (default: en)",
    )
    commands = parser.add_subparsers(required=True, metavar="COMMAND")

    listing = commands.add_parser("presets", help="list the model-pair presets")
    listing.set_defaults(run=_list_presets)

    generate = commands.add_parser("generate", help="generate text and show every cycle")
    add_model_options(generate)
    generate.add_argument("--prompt", required=True, help="the prompt text")
    add_setting_options(generate, lang)
    add_drafter_option(generate)
    generate.add_argument(
        "--json",
        action="store_true",
        help="print the run as its trace (JSON, as --trace writes it)",
    )
    generate.add_argument(
        "--plain", action="store_true", help="also run plain decoding of the target and compare"
    )
    generate.add_argument(
        "--fable",
        action="store_true",
        help="tell each cycle as the story of a master scribe and an apprentice (with --lang ja)",
    )
    generate.add_argument(
        "--trace", type=Path, metavar="FILE", help="write the run as a trace (JSON) that replays"
    )
    generate.add_argument(
        "--csv", type=Path, metavar="FILE", help="write one CSV row per drafted token"
    )
    generate.add_argument(
        "--report",
        type=Path,
        metavar="FILE",
        help="write a one-page, self-contained HTML report (with --plain: the speedup too)",
    )
    generate.set_defaults(run=_generate)

    cost = commands.add_parser(
        "cost-curve", help="time one target forward over 1, 2, ... new tokens (verification cost)"
    )
    add_model_options(cost)
    cost.add_argument("--model", choices=["target", "draft"], default="target")
    cost.add_argument("--max-new-tokens", type=int, default=16)
    cost.add_argument("--repeats", type=int, default=5)
    cost.add_argument("--time-budget", type=float, default=120.0, help="seconds, at most")
    cost.add_argument("--json", action="store_true")
    cost.set_defaults(run=_cost_curve)

    add_lab_commands(commands, add_model_options, functools.partial(add_setting_options, lang=lang))
    add_bench_command(commands, lang)
    add_advise_command(commands, lang)
    add_configs_command(commands, lang)
    add_engines_command(commands)
    add_loadtest_command(commands)
    add_gpu_check_command(commands)
    add_heads_command(commands)
    add_measure_commands(commands)
    add_screenshots_command(commands)
    add_watch_command(commands)
    return parser


def _list_presets(args: argparse.Namespace) -> int:
    from specviz.models.presets import load_presets, warn_bad_preset

    warn = functools.partial(warn_bad_preset, lang=args.lang)
    for preset in load_presets(on_bad_file=warn).values():
        marker = "*" if preset.default else " "
        print(f"{marker} {preset.id:28} {preset.label}")
        print(
            f"  {'':28} "
            + t("cli.presets.models", args.lang, draft=preset.draft, target=preset.target)
        )
    return 0


def _generate(args: argparse.Namespace) -> int:
    from specviz.cli.heads import throttled
    from specviz.core.engine import autoregressive_generate, speculative_generate
    from specviz.drafters.registry import make_drafter, prepare_drafter

    lang = args.lang
    check_output_paths(args, ("trace", "csv", "report"))  # written after the run: checked first
    preset, settings, pair, prompt_ids = prepared_run(args)
    cycles: list[Cycle] = []
    prepare_drafter(drafter_spec_for(args, preset), pair, throttled(lang))
    drafter = make_drafter(drafter_spec_for(args, preset), pair)
    for cycle in speculative_generate(pair, prompt_ids, settings, drafter):
        cycles.append(cycle)
        if args.json:
            continue
        if args.fable:
            story = story_text(narrate(cycle), lang)
            print(
                "\n".join([t("cards.cycle", lang, cycle=cycle.index + 1), *story, ""]), flush=True
            )
        else:
            print(_cycle_line(cycle, lang), flush=True)
    text = "".join(token.text for cycle in cycles for token in cycle.emitted)
    totals = cycles[-1].totals
    speed = _engine_speed(totals)
    plain: dict[str, Any] | None = None
    steps: list[Step] = []
    if args.plain:
        steps = list(autoregressive_generate(pair, prompt_ids, settings))
        plain_speed = _engine_speed(steps[-1].totals)
        plain = {
            "tokens_per_s": plain_speed,
            "identical_tokens": [s.token.token_id for s in steps]
            == [t.token_id for c in cycles for t in c.emitted],
            "speedup": speed / max(plain_speed, 1e-9),
        }
    if args.json or args.trace or args.csv or args.report:
        trace = _run_trace(args, preset, pair, settings, int(prompt_ids.shape[1]), cycles, steps)
        _write_exports(args, trace)
    if args.json:  # the versioned trace (docs/exports.md), as --trace writes it
        from specviz.export.trace import trace_text

        print(trace_text(trace), end="")
        return 0
    print("\n" + text)
    print(
        "\n"
        + t(
            "cli.generate.summary",
            lang,
            tokens=totals.new_tokens,
            cycles=cycles[-1].index + 1,
            alpha=f"{totals.acceptance_rate:.2f}",
            tau=f"{totals.tokens_per_target_pass:.2f}",
            tps=f"{speed:.2f}",
            stop=cycles[-1].stop_reason,
        )
    )
    if plain is not None:
        same = "cli.generate.identical" if plain["identical_tokens"] else "cli.generate.different"
        say(
            "cli.generate.plain",
            lang,
            tps=f"{plain['tokens_per_s']:.2f}",
            speedup=f"{plain['speedup']:.2f}",
            same=t(same, lang),
        )
    return 0


def _engine_speed(totals: Totals) -> float:
    """New tokens over engine seconds (every forward, the prompt's reading included, plus a
    drafter's own preparation): the tokens/s the report and the race count."""
    seconds = engine_seconds(totals)
    return totals.new_tokens / seconds if seconds > 0 else 0.0


def _run_trace(
    args: argparse.Namespace,
    preset: Any,
    pair: Any,
    settings: Any,
    prompt_tokens: int,
    cycles: list[Cycle],
    steps: list[Step],
) -> dict[str, Any]:
    """The run as the versioned trace (``specviz.export.trace``): what --json prints and --trace
    writes."""
    from specviz.export.trace import build_trace, run_setup

    chat = preset.chat_template and not args.raw
    drafter = drafter_spec_for(args, preset)
    setup = run_setup(preset, pair, settings, drafter, args.prompt, chat, prompt_tokens)
    return build_trace(setup, cycles, steps)


def _write_exports(args: argparse.Namespace, trace: dict[str, Any]) -> None:
    """Write the trace, CSV and report that --trace, --csv and --report ask for, if any."""
    from specviz.export.files import ExportPaths, write_exports

    paths = ExportPaths(trace=args.trace, csv=args.csv, report=args.report)
    if paths == ExportPaths():
        return
    for path in write_exports(trace, paths, args.lang):
        print(t("cli.export.wrote", args.lang, path=str(path)), file=sys.stderr, flush=True)


def _cost_curve(args: argparse.Namespace) -> int:
    from specviz.cli.labs import print_header
    from specviz.core.settings import GenerationSettings
    from specviz.labs.speedup.cost_curve import measure_verification_cost
    from specviz.labs.speedup.pass_costs import pass_costs

    preset = preset_for(args)
    pair = load_pair_for(args, preset)
    prompt = preset.prompts_flat()[0][1]
    context = pair.encode_prompt(prompt, chat=preset.chat_template)
    model = pair.target if args.model == "target" else pair.draft
    curve = measure_verification_cost(
        model, context, args.max_new_tokens, args.repeats, args.time_budget
    )
    # Where each drafter's largest pass sits on the target's curve (a draft's curve prices none).
    passes = pass_costs(curve, GenerationSettings().gamma) if args.model == "target" else []
    if args.json:
        print_json(
            asdict(curve) | {"relative": curve.relative(), "passes": [asdict(p) for p in passes]}
        )
        return 0
    lang = args.lang
    say("cli.cost.head", lang, model=args.model, device=curve.device, context=curve.context_len)
    print_header(
        lang,
        ("cli.cost.column.tokens", 10),
        ("cli.cost.column.median", 10),
        ("cli.cost.column.ratio", 12),
    )
    for point, ratio in zip(curve.points, curve.relative(), strict=True):
        print(f"{point.new_tokens:>10} {point.median_s * 1000:>10.1f} {ratio:>12.2f}")
    if not curve.complete:
        say("cli.cost.stopped", lang)
    if passes:
        say("speedup.pass.intro", lang)
        for row in passes:
            fitted = " " + t("speedup.pass.fitted", lang) if row.fitted else ""
            print(f"{row.spec:>16} M={row.tokens:<3} v(M)={row.cost:.2f}{fitted}")
        say("speedup.pass.gain", lang)
    return 0


_EXTRA_ORIGINS = {Origin.RESAMPLED: "origin.resampled", Origin.BONUS: "origin.bonus"}


def _cycle_line(cycle: Cycle, lang: str) -> str:
    """One line per cycle: what was drafted and what happened to it."""
    marks = []
    for draft in cycle.drafted:
        mark = "✓" if draft.accepted else ("✗" if draft.tested else "·")
        marks.append(f"{mark}{draft.text!r}")
    extra = cycle.emitted[-1] if cycle.emitted else None
    origin = _EXTRA_ORIGINS.get(extra.origin) if extra is not None else None
    tail = (
        t("cli.cycle.extra", lang, origin=t(origin, lang), token=f"{extra.text!r}")
        if extra is not None and origin is not None
        else ""
    )
    return t(
        "cli.cycle",
        lang,
        index=f"{cycle.index:3d}",
        gamma=f"{cycle.draft_len:2d}",
        accepted=cycle.accepted_len,
        drafted=cycle.draft_len,
        marks=" ".join(marks),
        extra=tail,
    )


if __name__ == "__main__":  # pragma: no cover
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    sys.exit(main())
