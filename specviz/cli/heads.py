"""`python -m specviz heads train|show|export`: Medusa heads for the preset's target, trained on
this machine within a time budget (specviz.models.heads), their agreement with the target, and
the checkpoint vLLM serves them from."""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from specviz.cli.options import add_model_options, preset_for, progress_line, say
from specviz.models.heads import DEFAULT_HEADS
from specviz.text import Phrase


def add_heads_command(commands: Any) -> None:
    """Register ``heads`` and its actions on the CLI's subcommands."""
    heads = commands.add_parser("heads", help="Medusa heads for the target: train them, show them")
    actions = heads.add_subparsers(required=True, metavar="ACTION")
    train = actions.add_parser(
        "train",
        help="train the target's heads on offline text (resumes a training cut short)",
    )
    add_model_options(train)
    train.add_argument(
        "--minutes", type=float, default=15.0, help="the whole budget: reading, training, measuring"
    )
    train.add_argument(
        "--heads",
        type=int,
        default=DEFAULT_HEADS,
        help="how many heads (head k guesses k + 1 ahead)",
    )
    train.add_argument(
        "--max-tokens",
        type=int,
        help="read at most this many training tokens (default: as time allows)",
    )
    train.add_argument("--json", action="store_true", help="print the report as JSON")
    train.set_defaults(run=_train)
    show = actions.add_parser("show", help="print the report of the target's trained heads")
    add_model_options(show)
    show.add_argument("--json", action="store_true", help="print the report as JSON")
    show.set_defaults(run=_show)
    export = actions.add_parser(
        "export",
        help='write the trained heads as the Medusa checkpoint vLLM serves (method "medusa")',
    )
    add_model_options(export)
    export.add_argument("folder", help="the folder to write (config.json, model.safetensors)")
    export.add_argument(
        "--heads", type=int, help="write only the first N heads (default: every trained head)"
    )
    export.set_defaults(run=_export)


def load_target(args: argparse.Namespace) -> tuple[Any, Any]:
    """The preset's target and tokenizer alone (no draft model), loading progress on stderr."""
    from specviz.models.loader import ModelCache, pick_device, pick_dtype

    preset = preset_for(args)
    device = pick_device(args.device)
    dtype = pick_dtype(args.dtype or preset.dtype, device)
    show = progress_line(args.lang)
    cache = ModelCache()
    tokenizer = cache.tokenizer(preset.target, preset.trust_remote_code, show)
    loading = Phrase("load.target", ref=preset.target.ref)
    model = cache.model(preset.target, device, dtype, preset.trust_remote_code, loading, show)
    return model, tokenizer


def throttled(lang: str, every_s: float = 10.0) -> Any:
    """A progress callback printing a line when the message's kind changes, or every *every_s*."""
    show = progress_line(lang)
    last: list[Any] = [None, 0.0]

    def progress(fraction: float, message: Phrase) -> None:
        now = time.perf_counter()
        if message.key != last[0] or now - last[1] >= every_s or fraction >= 1.0:
            last[:] = [message.key, now]
            show(fraction, message)

    return progress


def _train(args: argparse.Namespace) -> int:
    from specviz.models.heads.store import heads_folder
    from specviz.models.heads.train import TrainingOptions, train_heads

    model, tokenizer = load_target(args)
    options = TrainingOptions(heads=args.heads, minutes=args.minutes, max_tokens=args.max_tokens)
    report = train_heads(model, tokenizer, heads_folder(model), options, throttled(args.lang))
    _print_report(args, report, str(heads_folder(model)))
    return 0


def _trained(args: argparse.Namespace, read: Any) -> tuple[Any, Any]:
    """The target and what *read* finds in its heads folder (None, said in words, when no
    heads are trained for it)."""
    from specviz.models.heads.store import heads_folder

    model, _ = load_target(args)
    found = read(heads_folder(model))
    if found is None:
        say("cli.heads.none", args.lang, command="python -m specviz heads train")
    return model, found


def _show(args: argparse.Namespace) -> int:
    from specviz.models.heads.store import heads_folder, read_report

    model, report = _trained(args, read_report)
    if report is None:
        return 1
    _print_report(args, report, str(heads_folder(model)))
    return 0


def _export(args: argparse.Namespace) -> int:
    from pathlib import Path

    from specviz.models.heads.store import load_heads
    from specviz.models.heads.train import output_weight_of
    from specviz.models.heads.vllm_export import export_vllm_medusa, first_heads

    model, trained = _trained(args, load_heads)
    if trained is None:
        return 1
    if args.heads is not None and not 1 <= args.heads <= trained.count:
        say("cli.heads.too_many", args.lang, asked=args.heads, trained=trained.count)
        return 2
    heads = first_heads(trained, args.heads)
    folder = export_vllm_medusa(heads, output_weight_of(model), Path(args.folder))
    config = {"method": "medusa", "model": str(folder), "num_speculative_tokens": heads.count}
    say(
        "cli.heads.exported",
        args.lang,
        folder=str(folder),
        heads=heads.count,
        config=json.dumps(config),
    )
    return 0


def _print_report(args: argparse.Namespace, report: dict[str, Any], folder: str) -> None:
    if args.json:
        json.dump(report, sys.stdout, indent=1, sort_keys=True)
        print()
        return
    lang = args.lang
    say(
        "cli.heads.trained",
        lang,
        heads=report["heads"],
        folder=folder,
        positions=report["training_positions"],
        steps=report["steps"],
        features=report["features_seconds"],
        training=report["training_seconds"],
        total=report["total_seconds"],
    )
    say("cli.heads.columns", lang)
    for group, measured in report["agreement"].items():
        for head, (top1, top5) in enumerate(zip(measured["top1"], measured["top5"], strict=True)):
            print(f"{group:>8} {head + 1:>5} {top1:>8.1%} {top5:>8.1%} {measured['positions']:>10}")
