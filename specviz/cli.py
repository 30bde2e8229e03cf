"""Command line over the same engine the app uses: `python -m specviz generate|bench|presets`."""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import asdict
from typing import Any

from specviz.events import Cycle


def main(argv: list[str] | None = None) -> int:
    """Parse arguments and run a subcommand; returns the process exit code."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return int(args.run(args))
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    except (ValueError, RuntimeError, OSError) as error:
        # Bad input or a model that cannot load: a plain message, never a traceback.
        print(f"error: {error}", file=sys.stderr)
        return 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m specviz", description="Speculative decoding, run for real and shown."
    )
    commands = parser.add_subparsers(required=True, metavar="COMMAND")

    listing = commands.add_parser("presets", help="list the model-pair presets")
    listing.set_defaults(run=_list_presets)

    generate = commands.add_parser("generate", help="generate text and show every cycle")
    _add_model_options(generate)
    generate.add_argument("--prompt", required=True, help="the prompt text")
    _add_setting_options(generate)
    generate.add_argument("--json", action="store_true", help="print the full event trace as JSON")
    generate.add_argument(
        "--plain", action="store_true", help="also run plain decoding of the target and compare"
    )
    generate.set_defaults(run=_generate)

    cost = commands.add_parser(
        "cost-curve", help="time one target forward over 1, 2, ... new tokens (verification cost)"
    )
    _add_model_options(cost)
    cost.add_argument("--model", choices=["target", "draft"], default="target")
    cost.add_argument("--max-new-tokens", type=int, default=16)
    cost.add_argument("--repeats", type=int, default=5)
    cost.add_argument("--time-budget", type=float, default=120.0, help="seconds, at most")
    cost.add_argument("--json", action="store_true")
    cost.set_defaults(run=_cost_curve)

    from specviz.bench import add_bench_arguments, run_bench
    from specviz.cli_labs import add_lab_commands

    add_lab_commands(commands, _add_model_options, _add_setting_options)

    bench = commands.add_parser(
        "bench", help="measure plain vs speculative vs transformers assisted generation"
    )
    _add_model_options(bench)
    add_bench_arguments(bench)
    bench.set_defaults(run=run_bench)
    return parser


def _add_model_options(parser: argparse.ArgumentParser) -> None:
    from specviz.presets import DRAFT_QUANTIZATIONS

    parser.add_argument("--preset", help="preset id (default: the bundled offline pair)")
    parser.add_argument("--device", help="cpu, cuda, cuda:1 ... (default: GPU if present)")
    parser.add_argument("--dtype", choices=["auto", "bfloat16", "float16", "float32"])
    parser.add_argument(
        "--draft-quantization",
        choices=DRAFT_QUANTIZATIONS,
        help="override the preset's setting (int8: dynamic; int8wo: int8 weights only)",
    )


def _add_setting_options(parser: argparse.ArgumentParser) -> None:
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

    from specviz.presets import default_preset, load_presets

    presets = load_presets()
    if args.preset:
        if args.preset not in presets:
            raise ValueError(f"unknown preset {args.preset!r}; known: {', '.join(presets)}")
        preset = presets[args.preset]
    else:
        preset = default_preset(presets)
    if args.draft_quantization:
        preset = replace(preset, draft_quantization=args.draft_quantization)
    return preset


def load_pair_for(args: argparse.Namespace, preset: Any, quiet: bool = False) -> Any:
    """Load the preset's pair, printing loading progress to stderr."""
    from specviz.models import ModelCache

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
    from specviz.engine import GenerationSettings

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
        raise ValueError("the prompt is empty")
    pair = load_pair_for(args, preset)
    prompt_ids = pair.encode_prompt(args.prompt, chat=preset.chat_template and not args.raw)
    return preset, settings, pair, prompt_ids


def _list_presets(args: argparse.Namespace) -> int:
    from specviz.presets import load_presets

    for preset in load_presets().values():
        marker = "*" if preset.default else " "
        print(f"{marker} {preset.id:28} {preset.label}")
        print(f"  {'':28} draft {preset.draft}  target {preset.target}")
    return 0


def _generate(args: argparse.Namespace) -> int:
    from specviz.drafters import ModelDrafter
    from specviz.engine import autoregressive_generate, speculative_generate

    preset, settings, pair, prompt_ids = prepared_run(args)
    cycles: list[Cycle] = []
    for cycle in speculative_generate(pair, prompt_ids, settings, ModelDrafter(pair.draft)):
        cycles.append(cycle)
        if not args.json:
            print(_cycle_line(cycle), flush=True)
    text = "".join(token.text for cycle in cycles for token in cycle.emitted)
    totals = cycles[-1].totals
    summary: dict[str, Any] = cycles[-1].to_dict()["totals"]  # counters plus α, τ, tokens/s
    summary["stop_reason"] = cycles[-1].stop_reason
    plain: dict[str, Any] | None = None
    if args.plain:
        steps = list(autoregressive_generate(pair, prompt_ids, settings))
        plain_totals = steps[-1].totals
        plain = {
            "text": "".join(step.token.text for step in steps),
            "new_tokens": plain_totals.new_tokens,
            "tokens_per_s": plain_totals.tokens_per_s,
            "identical_tokens": [s.token.token_id for s in steps]
            == [t.token_id for c in cycles for t in c.emitted],
        }
        summary["speedup"] = totals.tokens_per_s / max(plain_totals.tokens_per_s, 1e-9)
    if args.json:
        trace = {
            "preset": preset.id,
            "device": str(pair.device),
            "dtype": str(pair.dtype).removeprefix("torch."),
            "draft_quantization": preset.draft_quantization,
            "settings": asdict(settings),
            "prompt": args.prompt,
            "prompt_tokens": int(prompt_ids.shape[1]),
            "text": text,
            "totals": summary,
            "plain": plain,
            "cycles": [cycle.to_dict() for cycle in cycles],
        }
        json.dump(trace, sys.stdout, ensure_ascii=False, indent=1)
        print()
        return 0
    print("\n" + text)
    print(
        f"\n{totals.new_tokens} tokens in {cycles[-1].index + 1} cycles · "
        f"α {totals.acceptance_rate:.2f} · τ {totals.tokens_per_target_pass:.2f} tokens/target pass · "
        f"{totals.tokens_per_s:.2f} tok/s (engine time, prefill excluded) · stop: {cycles[-1].stop_reason}"
    )
    if plain is not None:
        same = "identical tokens" if plain["identical_tokens"] else "different tokens (sampling)"
        print(
            f"plain decoding: {plain['tokens_per_s']:.2f} tok/s · speedup "
            f"{summary['speedup']:.2f}x · {same}"
        )
    return 0


def _cost_curve(args: argparse.Namespace) -> int:
    from specviz.cost_curve import measure_verification_cost

    preset = preset_for(args)
    pair = load_pair_for(args, preset)
    prompt = preset.prompts_flat()[0][1]
    context = pair.encode_prompt(prompt, chat=preset.chat_template)
    model = pair.target if args.model == "target" else pair.draft
    curve = measure_verification_cost(
        model, context, args.max_new_tokens, args.repeats, args.time_budget
    )
    if args.json:
        json.dump(asdict(curve) | {"relative": curve.relative()}, sys.stdout, indent=1)
        print()
        return 0
    print(f"{args.model} forward time on {curve.device}, after a {curve.context_len}-token cache")
    print(f"{'new tokens':>10} {'median ms':>10} {'× one token':>12}")
    for point, ratio in zip(curve.points, curve.relative(), strict=True):
        print(f"{point.new_tokens:>10} {point.median_s * 1000:>10.1f} {ratio:>12.2f}")
    if not curve.complete:
        print("(stopped early: time budget reached)")
    return 0


def _cycle_line(cycle: Cycle) -> str:
    """One line per cycle: what was drafted and what happened to it."""
    marks = []
    for draft in cycle.drafted:
        mark = "✓" if draft.accepted else ("✗" if draft.tested else "·")
        marks.append(f"{mark}{draft.text!r}")
    extra = (
        cycle.emitted[-1]
        if cycle.emitted and cycle.emitted[-1].origin.value != "accepted"
        else None
    )
    tail = f" → {extra.origin.value} {extra.text!r}" if extra else ""
    return f"cycle {cycle.index:3d} γ={cycle.gamma:2d} accepted {cycle.accepted_len}/{cycle.gamma}: {' '.join(marks)}{tail}"


if __name__ == "__main__":  # pragma: no cover
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    sys.exit(main())
