"""The options every command shares: which pair to load, the generation settings, and the
preset, settings, pair and prompt they resolve to. Commands and the benchmark import this module;
it imports none of them."""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
from collections.abc import Callable
from dataclasses import asdict, is_dataclass
from typing import Any

from specviz.text import DEFAULT_LANGUAGE, Phrase, UserError, t


def add_model_options(parser: argparse.ArgumentParser) -> None:
    from specviz.models.presets import DRAFT_QUANTIZATIONS

    parser.add_argument("--preset", help="preset id (default: the bundled offline pair)")
    parser.add_argument("--device", help="cpu, cuda, cuda:1 ... (default: GPU if present)")
    parser.set_defaults(checks_device=True)  # main() checks --device before any work
    parser.add_argument("--dtype", choices=["auto", "bfloat16", "float16", "float32"])
    parser.add_argument(
        "--draft-quantization",
        choices=DRAFT_QUANTIZATIONS,
        help="override the preset's setting (int8: dynamic; int8wo / int4wo: int8 / 4-bit weights "
        "only; int4head: 4-bit output layer only; int4dual: 4-bit steps, full-width reads of many "
        "tokens; auto: of those that keep the draft's agreement, the quickest to read a prompt "
        "and draft, measured on this machine)",
    )
    parser.add_argument(
        "--remeasure-costs",
        action="store_true",
        help="measure the step costs on this machine again instead of reading them from the cache",
    )


def check_device(name: str | None) -> None:
    """Refuse a --device this machine does not have, in one line, before any work (torch would
    only fail when the first model moves there, after loading it, with a long traceback)."""
    if not name:
        return
    import torch

    try:
        device = torch.device(name)
    except (RuntimeError, ValueError):
        raise UserError("error.cli.device_name", device=name) from None
    if device.type == "cpu":
        return
    backend = getattr(torch, device.type, None)  # torch.cuda, torch.mps, torch.xpu
    available = getattr(backend, "is_available", None)
    if available is None or not available():
        raise UserError("error.cli.device_none", device=name, kind=device.type)
    count = int(getattr(backend, "device_count", lambda: 1)())
    if device.index is not None and device.index >= count:
        raise UserError("error.cli.device_index", device=name, kind=device.type, count=count)


def check_output_paths(args: argparse.Namespace, flags: tuple[str, ...]) -> None:
    """Refuse an output file (--trace, --csv, --report: *flags* by their dest) whose folder is
    missing or not writable, or that is a folder, in one line, before any model is loaded (the
    file is written only after the whole run)."""
    for flag in flags:
        path = getattr(args, flag, None)
        if path is None:
            continue
        option, folder = f"--{flag}", path.parent
        if path.is_dir():
            raise UserError("error.cli.output_is_folder", option=option, path=str(path))
        if not folder.is_dir():
            raise UserError("error.cli.output_folder", option=option, folder=str(folder))
        writable = os.access(folder, os.W_OK | os.X_OK)
        if not writable or (path.exists() and not os.access(path, os.W_OK)):
            raise UserError("error.cli.output_unwritable", option=option, path=str(path))


def add_setting_options(parser: argparse.ArgumentParser, lang: str = DEFAULT_LANGUAGE) -> None:
    """The generation settings' flags, derived from the schema (their help in *lang*), and --raw."""
    from specviz.core.settings import add_setting_arguments

    add_setting_arguments(parser, lang=lang)
    parser.add_argument("--raw", action="store_true", help="send the prompt without chat template")


def add_drafter_option(parser: argparse.ArgumentParser) -> None:
    """--drafter SPEC: which drafter proposes (default: the preset's)."""
    from specviz.drafters.registry import DRAFTERS

    parser.add_argument(
        "--drafter",
        metavar="SPEC",
        help=f"the drafter: {', '.join(DRAFTERS)}, with options as kind:name=value,... "
        "(e.g. lookup:max_ngram=3); default: the preset's",
    )


def drafter_spec_for(args: argparse.Namespace, preset: Any) -> str:
    """The drafter spec --drafter names (or the preset's), checked without loading a model."""
    from specviz.drafters.registry import check_drafter_spec

    spec = getattr(args, "drafter", None) or preset.drafter
    return str(check_drafter_spec(spec))


def preset_for(args: argparse.Namespace) -> Any:
    """The preset named by --preset (or the default), with command-line overrides applied."""
    from dataclasses import replace

    from specviz.models.presets import default_preset, load_presets, warn_bad_preset

    presets = load_presets(on_bad_file=functools.partial(warn_bad_preset, lang=args.lang))
    if args.preset:
        if args.preset not in presets:
            raise UserError(
                "error.unknown_preset", name=f"{args.preset!r}", known=", ".join(presets)
            )
        preset = presets[args.preset]
    else:
        preset = default_preset(presets)
    if args.draft_quantization:
        preset = replace(preset, draft_quantization=args.draft_quantization)
    return preset


def load_pair_for(
    args: argparse.Namespace, preset: Any, quiet: bool = False, cache: Any = None
) -> Any:
    """Load the preset's pair, printing loading progress and its step costs to stderr.

    cache: a ModelCache to load through, so several pairs share the models they have in common.
    """
    from specviz.models.loader import ModelCache

    last: list[Phrase] = []
    show = progress_line(args.lang)

    def progress(fraction: float, message: Phrase) -> None:
        if quiet or (
            last and last[0] == message and 0.0 < fraction < 1.0 and fraction % 0.25 > 0.02
        ):
            return
        last[:] = [message]
        show(fraction, message)

    models = cache if cache is not None else ModelCache()
    pair = models.load_pair(
        preset,
        device=args.device,
        dtype=args.dtype,
        progress=progress,
        remeasure_costs=getattr(args, "remeasure_costs", False),
    )
    if not quiet and pair.cost_report is not None:
        print(pair.cost_report.phrase().text(args.lang), file=sys.stderr, flush=True)
    return pair


def progress_line(lang: str) -> Callable[[float, Phrase], None]:
    """A progress callback that prints "[ 40%] what runs next" to stderr, worded in *lang*."""

    def show(fraction: float, message: Phrase) -> None:
        print(f"[{fraction:4.0%}] {message.text(lang)}", file=sys.stderr, flush=True)

    return show


def settings_for(args: argparse.Namespace, preset: Any) -> Any:
    """GenerationSettings from the preset's defaults, overridden by the flags given."""
    from specviz.core.settings import settings_from_args

    return settings_from_args(args, preset.settings)


def prepared_run(args: argparse.Namespace) -> tuple[Any, Any, Any, Any]:
    """Preset, settings, loaded pair and encoded --prompt: what every command with a prompt needs.

    Settings and the prompt are checked first, so bad values fail before minutes of loading.
    """
    preset = preset_for(args)
    settings = settings_for(args, preset)
    if not args.prompt.strip():
        raise UserError("error.prompt_empty")
    drafter_spec_for(args, preset)  # a bad --drafter fails here, before loading
    pair = load_pair_for(args, preset)
    prompt_ids = pair.encode_prompt(args.prompt, chat=preset.chat_template and not args.raw)
    return preset, settings, pair, prompt_ids


def say(key: str, lang: str, **values: object) -> None:
    """Print the catalogue's sentence ``key`` in ``lang`` (a command's output line)."""
    print(t(key, lang, **values))


def print_json(record: Any) -> None:
    """A record (dataclasses anywhere inside it are turned into dicts) as JSON on stdout."""
    json.dump(
        asdict(record) if is_dataclass(record) and not isinstance(record, type) else record,
        sys.stdout,
        indent=1,
        default=asdict,
    )
    print()
