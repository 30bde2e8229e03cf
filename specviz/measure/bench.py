"""Benchmark: plain decoding vs specviz speculative decoding vs transformers' assisted generation.

All three run in one process on the same loaded pair, prompts and settings, after a warm-up, and
specviz and transformers alternate run by run, so their ratios are comparable even on a noisy
machine. Throughput is wall-clock tokens per second
of the whole call (prefill included) for every method alike; each cell is the median of repeats.
At temperature > 0 repeat r uses seed + r for every method: one seed is one random trajectory, and
its acceptance luck would otherwise decide a row.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import torch

from specviz.core.engine import GenerationSettings, autoregressive_generate, speculative_generate
from specviz.drafters.registry import DEFAULT_DRAFTER, make_drafter
from specviz.models.presets import TASKS


@dataclass
class Measurement:
    """Median throughput over repeats, with the acceptance statistics of the median run."""

    tokens_per_s: float  # wall clock of the whole call, prefill included
    new_tokens: int
    engine_tokens_per_s: float | None = None  # the engine's own compute time, as the app reports
    acceptance_rate: float | None = None
    tokens_per_target_pass: float | None = None
    runs: list[float] = field(default_factory=list)


@dataclass
class Row:
    task: str
    temperature: float
    gamma: str  # "5" or "adaptive(5)"
    plain: Measurement
    specviz: Measurement
    transformers: Measurement | None

    @property
    def speedup(self) -> float:
        return self.specviz.tokens_per_s / self.plain.tokens_per_s

    @property
    def transformers_speedup(self) -> float | None:
        if self.transformers is None:
            return None
        return self.transformers.tokens_per_s / self.plain.tokens_per_s


def add_bench_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags of `python -m specviz bench`."""
    parser.add_argument("--tasks", default=",".join(TASKS), help="comma-separated task groups")
    parser.add_argument("--gammas", default="3,5,7", help="comma-separated fixed γ values")
    parser.add_argument(
        "--adaptive-start", type=int, default=5, help="starting γ of the adaptive row (0: none)"
    )
    parser.add_argument("--temperatures", default="0", help="comma-separated; 0 = greedy")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--max-new-tokens", type=int, default=64)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-transformers", action="store_true", help="skip assisted generation")
    parser.add_argument(
        "--draft-stop-below",
        type=float,
        help="specviz and transformers both end a draft below this draft probability "
        "(default: the preset's value)",
    )
    parser.add_argument(
        "--draft-stop-cumulative",
        type=float,
        help="specviz's own stop: end a draft once the product of the draft's top probabilities "
        "falls below this; transformers has no such rule (default: the preset's value)",
    )
    parser.add_argument("--out", default="bench-results/bench.json", help="JSON output path")


def run_bench(args: argparse.Namespace) -> int:
    """Run the benchmark grid, print the table, write JSON."""
    from specviz.cli.options import load_pair_for, preset_for

    preset = preset_for(args)
    pair = load_pair_for(args, preset)
    tasks = [task.strip() for task in args.tasks.split(",") if task.strip()]
    unknown = [task for task in tasks if task not in preset.prompts]
    if unknown:
        raise ValueError(f"preset {preset.id} has no prompts for {', '.join(unknown)}")
    gammas = [int(g) for g in args.gammas.split(",") if g.strip()]
    temperatures = [float(t) for t in args.temperatures.split(",") if t.strip()]
    stop_below = preset.draft_stop_below if args.draft_stop_below is None else args.draft_stop_below
    stop_cumulative = (
        preset.draft_stop_cumulative
        if args.draft_stop_cumulative is None
        else args.draft_stop_cumulative
    )
    _warm_up(pair, preset)
    rows: list[Row] = []
    print(_header(), flush=True)
    for temperature in temperatures:
        for task in tasks:
            prompt = preset.prompts[task][0]
            prompt_ids = pair.encode_prompt(prompt, chat=preset.chat_template)
            base = GenerationSettings(
                max_new_tokens=args.max_new_tokens,
                temperature=temperature,
                seed=args.seed,
                draft_stop_below=stop_below,
                draft_stop_cumulative=stop_cumulative,
            )
            plain = _measure(_plain_once, pair, prompt_ids, base, args.repeats)
            variants = [
                (str(g), GenerationSettings(**{**asdict(base), "gamma": g})) for g in gammas
            ]
            if args.adaptive_start:
                adaptive = GenerationSettings(
                    **{**asdict(base), "gamma": args.adaptive_start, "adaptive_gamma": True}
                )
                variants.append((f"adaptive({args.adaptive_start})", adaptive))
            methods = [_specviz_once] if args.no_transformers else [_specviz_once, _assisted_once]
            for label, settings in variants:
                spec, *others = _measure_interleaved(
                    methods, pair, prompt_ids, settings, args.repeats
                )
                row = Row(task, temperature, label, plain, spec, others[0] if others else None)
                rows.append(row)
                print(_format_row(row), flush=True)
    _write_json(args, preset, pair, rows, (stop_below, stop_cumulative))
    print(_summary(rows))
    return 0


def _warm_up(pair: Any, preset: Any) -> None:
    """One short run of each path so one-time costs (allocations, kernels) are not measured."""
    prompt_ids = pair.encode_prompt("Say hello.", chat=preset.chat_template)
    settings = GenerationSettings(max_new_tokens=8)
    for once in (_plain_once, _specviz_once, _assisted_once):
        once(pair, prompt_ids, settings)


def _timed(run: Any) -> tuple[float, Any]:
    began = time.perf_counter()
    result = run()
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    return time.perf_counter() - began, result


def _median_measurement(samples: list[tuple[float, int, Any]]) -> Measurement:
    """samples: (seconds, new tokens, engine totals or None); the median by throughput."""
    rates = [tokens / seconds for seconds, tokens, _ in samples]
    order = sorted(range(len(samples)), key=lambda i: rates[i])
    middle = order[len(order) // 2]
    _, tokens, totals = samples[middle]
    return Measurement(
        tokens_per_s=statistics.median(rates),
        new_tokens=tokens,
        engine_tokens_per_s=totals.tokens_per_s if totals else None,
        acceptance_rate=totals.acceptance_rate if totals else None,
        tokens_per_target_pass=totals.tokens_per_target_pass if totals else None,
        runs=[round(rate, 3) for rate in rates],
    )


Once = Callable[[Any, torch.Tensor, GenerationSettings], tuple[int, Any]]


def repeat_settings(settings: GenerationSettings, repeat: int) -> GenerationSettings:
    """The settings of one repeat: greedy runs are identical; sampled runs draw seed + repeat."""
    if settings.temperature == 0.0:
        return settings
    return replace(settings, seed=settings.seed + repeat)


def _measure_interleaved(
    methods: list[Once],
    pair: Any,
    prompt_ids: torch.Tensor,
    settings: GenerationSettings,
    repeats: int,
) -> list[Measurement]:
    """Time several methods in alternation (A B A B ...), so drift on a shared machine hits each
    alike; the median of each."""
    samples: list[list[tuple[float, int, Any]]] = [[] for _ in methods]
    for repeat in range(repeats):
        run_settings = repeat_settings(settings, repeat)
        for once, method_samples in zip(methods, samples, strict=True):
            seconds, (tokens, totals) = _timed(
                lambda once=once, run_settings=run_settings: once(pair, prompt_ids, run_settings)
            )
            method_samples.append((seconds, tokens, totals))
    return [_median_measurement(method_samples) for method_samples in samples]


def _measure(
    once: Once, pair: Any, prompt_ids: torch.Tensor, settings: GenerationSettings, repeats: int
) -> Measurement:
    """Time one method (returning new tokens and engine totals or None) repeatedly; the median."""
    return _measure_interleaved([once], pair, prompt_ids, settings, repeats)[0]


def _plain_once(
    pair: Any, prompt_ids: torch.Tensor, settings: GenerationSettings
) -> tuple[int, Any]:
    totals = list(autoregressive_generate(pair, prompt_ids, settings))[-1].totals
    return totals.new_tokens, totals


def _specviz_once(
    pair: Any, prompt_ids: torch.Tensor, settings: GenerationSettings
) -> tuple[int, Any]:
    cycles = list(
        speculative_generate(pair, prompt_ids, settings, make_drafter(DEFAULT_DRAFTER, pair))
    )
    return cycles[-1].totals.new_tokens, cycles[-1].totals


def _assisted_once(
    pair: Any, prompt_ids: torch.Tensor, settings: GenerationSettings
) -> tuple[int, None]:
    """transformers' own speculative decoding: generate(assistant_model=draft), same settings."""
    draft_config = pair.draft.generation_config
    draft_config.num_assistant_tokens = settings.gamma
    draft_config.num_assistant_tokens_schedule = (
        "heuristic" if settings.adaptive_gamma else "constant"
    )
    # The same confidence stop as specviz (transformers' own default is 0.4; None turns it off).
    draft_config.assistant_confidence_threshold = settings.draft_stop_below or None
    sampling: dict[str, Any] = {"do_sample": False}
    if settings.temperature > 0:
        sampling = {
            "do_sample": True,
            "temperature": settings.temperature,
            "top_k": settings.top_k or None,
            "top_p": settings.top_p,
        }
    torch.manual_seed(settings.seed)
    ids = prompt_ids.to(pair.device)
    with torch.inference_mode():
        output = pair.target.generate(
            ids,
            attention_mask=torch.ones_like(ids),
            assistant_model=pair.draft,
            max_new_tokens=settings.max_new_tokens,
            eos_token_id=sorted(pair.eos_token_ids),
            pad_token_id=pair.tokenizer.pad_token_id or sorted(pair.eos_token_ids)[0],
            **sampling,
        )
    return int(output.shape[1] - ids.shape[1]), None


def _header() -> str:
    return (
        f"{'task':12} {'T':>4} {'γ':>12} | {'plain':>7} | {'specviz':>7} {'α':>5} {'τ':>5} "
        f"{'speedup':>7} | {'HF assist':>9} {'speedup':>7}\n" + "-" * 98
    )


def _format_row(row: Row) -> str:
    hf = row.transformers
    hf_cells = (
        f"{hf.tokens_per_s:9.2f} {row.transformers_speedup:6.2f}x" if hf else f"{'-':>9} {'-':>7}"
    )
    alpha = row.specviz.acceptance_rate or 0.0
    tau = row.specviz.tokens_per_target_pass or 0.0
    return (
        f"{row.task:12} {row.temperature:4.1f} {row.gamma:>12} | {row.plain.tokens_per_s:7.2f} | "
        f"{row.specviz.tokens_per_s:7.2f} {alpha:5.2f} {tau:5.2f} {row.speedup:6.2f}x | {hf_cells}"
    )


def _summary(rows: list[Row]) -> str:
    lines = ["", "tokens/s are wall-clock, prefill included, median of repeats; speedup = / plain."]
    for temperature in sorted({row.temperature for row in rows}):
        group = [row for row in rows if row.temperature == temperature]
        best = max(group, key=lambda row: row.speedup)
        losing = [row for row in group if row.speedup < 1.0]
        lines.append(
            f"T={temperature:g}: best speedup {best.speedup:.2f}x ({best.task}, γ={best.gamma}); "
            f"rows where speculation loses: {len(losing)}"
        )
    beaten = [
        row
        for row in rows
        if row.transformers and row.specviz.tokens_per_s <= row.transformers.tokens_per_s
    ]
    if any(row.transformers for row in rows):
        lines.append(
            f"rows where transformers' assisted generation is not slower than specviz: {len(beaten)}"
        )
    return "\n".join(lines)


def _write_json(
    args: argparse.Namespace,
    preset: Any,
    pair: Any,
    rows: list[Row],
    stops: tuple[float, float],
) -> None:
    """stops: the per-token and the cumulative draft stop (transformers gets only the first)."""
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    report = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": "python -m specviz bench " + " ".join(sys.argv[2:]),
        "preset": preset.id,
        "draft_quantization": preset.draft_quantization,
        "device": str(pair.device),
        "dtype": str(pair.dtype).removeprefix("torch."),
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "machine": platform.processor() or platform.machine(),
        "max_new_tokens": args.max_new_tokens,
        "draft_stop_below": stops[0],
        "draft_stop_cumulative": stops[1],
        "repeats": args.repeats,
        "seeds": "seed + repeat at temperature > 0",
        "rows": [
            {
                **asdict(row),
                "speedup": row.speedup,
                "transformers_speedup": row.transformers_speedup,
            }
            for row in rows
        ],
    }
    out.write_text(json.dumps(report, indent=1))
    print(f"\nwrote {out}", file=sys.stderr)
