"""The options every command shares: which pair to load, the generation settings, and the
preset, settings, pair and prompt they resolve to. Commands and the benchmark import this module;
it imports none of them."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from specviz.text import UserError


def add_model_options(parser: argparse.ArgumentParser) -> None:
    from specviz.models.presets import DRAFT_QUANTIZATIONS

    parser.add_argument("--preset", help="preset id (default: the bundled offline pair)")
    parser.add_argument("--device", help="cpu, cuda, cuda:1 ... (default: GPU if present)")
    parser.add_argument("--dtype", choices=["auto", "bfloat16", "float16", "float32"])
    parser.add_argument(
        "--draft-quantization",
        choices=DRAFT_QUANTIZATIONS,
        help="override the preset's setting (int8: dynamic; int8wo: int8 weights only)",
    )


def add_setting_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--gamma", type=int, help="tokens drafted per cycle, 1-16")
    parser.add_argument(
        "--adaptive",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="adapt γ to acceptance",
    )
    parser.add_argument("--temperature", type=float, help="0 = greedy")
    parser.add_argument("--top-k", type=int)
    parser.add_argument("--top-p", type=float)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-new-tokens", type=int)
    parser.add_argument("--raw", action="store_true", help="send the prompt without chat template")
    parser.add_argument("--no-stop", action="store_true", help="do not stop at end-of-sequence")
    parser.add_argument(
        "--draft-stop-below",
        type=float,
        help="end a draft early after a token the draft gave less probability (0 = never)",
    )
    parser.add_argument(
        "--draft-stop-cumulative",
        type=float,
        help="end a draft once the product of the draft's top probabilities in the cycle (doubts "
        "scaled down when the run shows the draft right more often than it expects) falls below "
        "this (0 = never)",
    )


def preset_for(args: argparse.Namespace) -> Any:
    """The preset named by --preset (or the default), with command-line overrides applied."""
    from dataclasses import replace

    from specviz.models.presets import default_preset, load_presets

    presets = load_presets()
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


def load_pair_for(args: argparse.Namespace, preset: Any, quiet: bool = False) -> Any:
    """Load the preset's pair, printing loading progress to stderr."""
    from specviz.models.loader import ModelCache

    last: list[str] = []

    def progress(message: str, fraction: float) -> None:
        if quiet or (
            last and last[0] == message and 0.0 < fraction < 1.0 and fraction % 0.25 > 0.02
        ):
            return
        last[:] = [message]
        print(f"[{fraction:4.0%}] {message}", file=sys.stderr, flush=True)

    return ModelCache().load_pair(preset, device=args.device, dtype=args.dtype, progress=progress)


def settings_for(args: argparse.Namespace, preset: Any) -> Any:
    """GenerationSettings from the preset's recommendations, overridden by the flags given."""
    from specviz.core.engine import GenerationSettings

    def pick(flag: Any, default: Any) -> Any:
        return default if flag is None else flag

    return GenerationSettings(
        gamma=pick(args.gamma, preset.gamma),
        adaptive_gamma=pick(args.adaptive, preset.adaptive_gamma),
        max_new_tokens=pick(args.max_new_tokens, preset.max_new_tokens),
        temperature=pick(args.temperature, preset.temperature),
        top_k=pick(args.top_k, preset.top_k),
        top_p=pick(args.top_p, preset.top_p),
        seed=args.seed,
        stop_on_eos=not args.no_stop,
        draft_stop_below=pick(args.draft_stop_below, preset.draft_stop_below),
        draft_stop_cumulative=pick(args.draft_stop_cumulative, preset.draft_stop_cumulative),
    )


def prepared_run(args: argparse.Namespace) -> tuple[Any, Any, Any, Any]:
    """Preset, settings, loaded pair and encoded --prompt: what every command with a prompt needs.

    Settings and the prompt are checked first, so bad values fail before minutes of loading.
    """
    preset = preset_for(args)
    settings = settings_for(args, preset)
    if not args.prompt.strip():
        raise UserError("error.prompt_empty")
    pair = load_pair_for(args, preset)
    prompt_ids = pair.encode_prompt(args.prompt, chat=preset.chat_template and not args.raw)
    return preset, settings, pair, prompt_ids
