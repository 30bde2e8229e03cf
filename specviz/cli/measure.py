"""`python -m specviz measure WHAT`: the measurements the README quotes, over package code.

    attention-kernels     one attention call, three kernels (µs), no model loaded
    attention-fidelity    each attention path of the target against float32 (KL, argmax)
    lean-step             one decoding step, transformers' forward vs the lean step (ms)
    draft-feeding         the draft's law, one forward vs prefill + one token, per quantization
    stop-rules            target passes and draft forwards with and without the cumulative stop
    compare-transformers  what specviz and transformers' assisted generation each do (counts)
    copy-headroom         tokens per target pass of prompt lookup against the most copying allows
    lookup-options        tokens per target pass of prompt lookup's options, on replayed answers
    app-speed             the app's tokens/s against the engine alone, first cycle shown
    bf16-rows             the target's forward of 1..n tokens: torch's bfloat16 product vs the kernel
    tree-drafting         a tree proposal's draft time: each depth's new nodes vs the whole tree
    tree-headroom         τ a draft tree could give over the chain at T > 0: rank rates per rule
    tree-rules            tokens per target pass of the two exact rules for drawn trees, same trees

Each prints a table, or JSON with --json.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, replace
from itertools import groupby
from typing import Any

from specviz.cli.options import add_model_options, load_pair_for, preset_for, print_json
from specviz.measure.bench import check_prompts, task_prompt_ids
from specviz.text import Phrase, UserError

_TASKS_FIDELITY = "story,code,rewriting"
# stop-rules' draft cost for a pair loaded without measured step costs: a draft step over a target
# step, as measured for the int8 draft on the development machine
# (docs/performance.md#the-draft-stops); a pair loaded with its costs uses its own.
DEFAULT_DRAFT_COST = 0.18


def add_measure_commands(commands: Any) -> None:
    """Register `measure` and its subcommands on the CLI's subparsers."""
    group = commands.add_parser(
        "measure", help="the measurements behind the README's numbers (timings, counts, fidelity)"
    )
    whats = group.add_subparsers(required=True, metavar="WHAT")

    def measurement(
        name: str, help_text: str, run: Any, *, model: bool = True
    ) -> argparse.ArgumentParser:
        """A measurement's parser: the pair options (unless it loads no model) and --json."""
        parser: argparse.ArgumentParser = whats.add_parser(name, help=help_text)
        if model:
            add_model_options(parser)
        parser.add_argument("--json", action="store_true", help="print the record as JSON")
        parser.set_defaults(run=run)
        return parser

    kernels = measurement(
        "attention-kernels",
        "one attention call, three kernels (µs)",
        _attention_kernels,
        model=False,
    )
    kernels.add_argument("--cached", default="100,300,600", help="comma-separated cache lengths")
    kernels.add_argument("--calls", type=int, default=100, help="calls per timed block")
    kernels.add_argument("--repeats", type=int, default=5, help="timed blocks per kernel")

    fidelity = measurement(
        "attention-fidelity",
        "each attention path of the target against float32",
        _attention_fidelity,
    )
    fidelity.add_argument("--tasks", default=_TASKS_FIDELITY, help="prompts fed as one sequence")

    lean = measurement("lean-step", "one decoding step: transformers' forward vs lean", _lean_step)
    lean.add_argument("--model", choices=["draft", "target"], default="draft")
    lean.add_argument("--blocks", type=int, default=3, help="timed blocks per path")
    lean.add_argument("--context", type=int, default=60, help="cached tokens before the step")
    lean.add_argument("--steps", type=int, default=20, help="steps per block")

    drafting = measurement(
        "tree-drafting",
        "a tree proposal's draft time: each depth's new nodes vs the whole tree again",
        _tree_drafting,
    )
    drafting.add_argument(
        "--drafter", default="tree", help="a tree drafter spec (tree:nodes=32, tree:shape=2x2x1)"
    )
    drafting.add_argument("--task", default="code", help="the preset's first prompt of this group")
    drafting.add_argument("--repeats", type=int, default=5, help="proposals timed each way")

    headroom_tree = measurement(
        "tree-headroom",
        "tokens per target pass a draft tree could give over the chain at T > 0, per rule",
        _tree_headroom,
    )
    _sampled_prompts(headroom_tree)
    headroom_tree.add_argument("--seed", type=int, default=0, help="the first prompt's; +1 each")
    headroom_tree.add_argument("--gamma", type=int, default=5, help="the chain's γ")
    headroom_tree.add_argument("--nodes", type=int, default=16, help="the tree's node budget")
    headroom_tree.add_argument(
        "--draft-temperatures",
        default="1,0.8,0.6",
        help="comma-separated: the draft's logits over T times each, for the drawn rule",
    )
    headroom_tree.add_argument("--draws", type=int, default=400, help="root tests a position")
    headroom_tree.add_argument("--max-new-tokens", type=int, default=128)

    rules = measurement(
        "tree-rules",
        "tokens per target pass of the two exact rules for drawn trees, on the same trees",
        _tree_rules,
    )
    _sampled_prompts(rules)
    rules.add_argument(
        "--drafter",
        default="tree",
        help="a drafter that draws trees: tree (tree:nodes=32) or medusa:q=heads",
    )
    rules.add_argument("--seed", type=int, default=0, help="each prompt's first run's")
    rules.add_argument("--seeds", type=int, default=2, help="runs of each prompt: seed, seed + 1…")
    rules.add_argument("--max-new-tokens", type=int, default=96)

    feeding = measurement(
        "draft-feeding", "the draft's law: one forward vs prefill + one token", _draft_feeding
    )
    feeding.add_argument(
        "--quantizations", default="none,int8,int8wo", help="comma-separated draft quantizations"
    )
    feeding.add_argument("--tasks", default="rewriting,code,story")

    stops = measurement(
        "stop-rules",
        "counts with the per-token stop alone and with the cumulative stop",
        _stop_rules,
    )
    stops.add_argument(
        "--cost",
        type=float,
        help="a draft step / a target step (default: as measured on this machine at load)",
    )
    stops.add_argument(
        "--tasks", help="comma-separated (default: every task of the preset or of --prompts-file)"
    )
    stops.add_argument(
        "--prompts-file",
        metavar="TOML",
        help="every prompt of each group in this file instead of the preset's first example",
    )
    stops.add_argument(
        "--thresholds",
        metavar="LIST",
        help="comma-separated cumulative stops to count, each against the per-token stop alone "
        "(default: the preset's)",
    )
    stops.add_argument("--max-new-tokens", type=int, default=64)

    compare = measurement(
        "compare-transformers",
        "specviz vs transformers' assisted generation, counted",
        _compare_transformers,
    )
    compare.add_argument("--task", default="rewriting")
    compare.add_argument(
        "--prompts-file",
        metavar="TOML",
        help="the task's first prompt in this file instead of the preset's first example",
    )
    compare.add_argument("--gamma", default="5", help="a number, or a5 for adaptive from 5")
    compare.add_argument("--max-new-tokens", type=int, default=64)
    compare.add_argument(
        "--cumulative", action="store_true", help="also apply specviz's cumulative stop"
    )

    headroom = measurement(
        "copy-headroom",
        "tokens per target pass of prompt lookup against the most copying could give",
        _copy_headroom,
    )
    _add_task_groups(headroom)
    headroom.add_argument("--gamma", type=int, default=16, help="the most tokens one copy holds")
    headroom.add_argument("--max-new-tokens", type=int, default=64)
    headroom.add_argument("--lookup", default="lookup", help="the lookup spec run for real")

    lookup = measurement(
        "lookup-options",
        "tokens per target pass of each prompt-lookup option, greedy answers replayed",
        _lookup_options,
    )
    _add_task_groups(lookup)
    lookup.add_argument("--max-new-tokens", type=int, default=96)

    products = measurement(
        "bf16-rows",
        "the target's forward of 1..n tokens: torch's bfloat16 product vs specviz's AVX2 kernel",
        _bf16_rows,
    )
    products.add_argument("--sizes", type=int, default=8, help="forwards of 1..N new tokens")
    products.add_argument("--rounds", type=int, default=3, help="timed runs each; the least counts")

    app = measurement("app-speed", "the app's tokens/s against the engine alone", _app_speed)
    app.add_argument("--task", default="code")
    app.add_argument("--max-new-tokens", type=int, default=64)
    app.add_argument("--repeats", type=int, default=3)


def _add_task_groups(parser: argparse.ArgumentParser) -> None:
    """--tasks (every prompt of each group, the editing group by default) and --prompts-file."""
    parser.add_argument("--tasks", default="editing", help="comma-separated task groups")
    parser.add_argument(
        "--prompts-file", metavar="TOML", help="prompts per task group instead of the preset's"
    )


def _sampled_prompts(parser: argparse.ArgumentParser) -> None:
    """The options of a measurement over sampled answers: task groups, a prompts file, T."""
    parser.add_argument("--tasks", default="story,code", help="comma-separated task groups")
    parser.add_argument(
        "--prompts-file", metavar="TOML", help="prompts per task group instead of the preset's"
    )
    parser.add_argument("--temperature", type=float, default=1.0)


def _report(args: argparse.Namespace, record: Any, head: str | None, lines: Iterable[str]) -> int:
    """The record as JSON with --json; else the head line (if any) and the lines. Exit status 0."""
    if args.json:
        print_json(record)
        return 0
    if head is not None:
        print(head)
    for line in lines:
        print(line)
    return 0


def _preset_and_tasks(
    args: argparse.Namespace,
) -> tuple[Any, list[str], Mapping[str, Sequence[str]]]:
    """The preset, the tasks of --tasks (every group of the prompt table, when empty), each
    checked to have a prompt, and the prompt table (_prompt_table)."""
    preset = preset_for(args)
    table = _prompt_table(args, preset)
    tasks = _csv(args.tasks) if args.tasks else list(table)
    check_prompts(preset, tasks, table)
    return preset, tasks, table


def _csv(text: str) -> list[str]:
    return [item.strip() for item in text.split(",") if item.strip()]


def _prompt_table(args: argparse.Namespace, preset: Any) -> Mapping[str, Sequence[str]]:
    """The prompts per task group: those of --prompts-file (where the command has it), else
    the preset's examples."""
    from specviz.models.presets import load_prompts_file

    path = getattr(args, "prompts_file", None)
    return load_prompts_file(path) if path else preset.prompts


def _encoded(pair: Any, preset: Any, text: str) -> Any:
    """A prompt's ids (1, T), with the preset's chat template if it uses one."""
    return pair.encode_prompt(text, chat=preset.chat_template)


def _attention_kernels(args: argparse.Namespace) -> int:
    from specviz.measure.attention import time_attention_kernels

    timings = time_attention_kernels(
        [int(size) for size in _csv(args.cached)], calls=args.calls, repeats=args.repeats
    )
    head = "one query, 12 query heads over 2 key/value heads, head size 128, bfloat16; median µs"
    return _report(
        args,
        timings,
        head,
        (
            f"{t.cached:5d} cached: SDPA {t.sdpa_us:6.0f} µs | eager {t.eager_us:6.0f} µs | "
            f"lean {t.lean_us:6.0f} µs"
            for t in timings
        ),
    )


def _attention_fidelity(args: argparse.Namespace) -> int:
    import torch

    from specviz.measure.attention import attention_fidelity
    from specviz.models.loader import ModelCache

    preset, tasks, _ = _preset_and_tasks(args)
    models = ModelCache()
    pair = models.load_pair(preset, device=args.device, dtype=args.dtype)
    ids = torch.cat([task_prompt_ids(pair, preset, task) for task in tasks], dim=1)
    reference = models.model(
        preset.target,
        pair.device,
        torch.float32,
        preset.trust_remote_code,
        Phrase("load.target", ref=preset.target.ref),
        _quiet,
    )
    rows = attention_fidelity(pair.target, reference, ids)
    dtype = str(pair.dtype).removeprefix("torch.")
    return _report(
        args,
        {"positions": ids.shape[1], "rows": rows},
        f"{ids.shape[1]} positions, {dtype} target against float32",
        (
            f"{row.path:>24}: mean KL {row.mean_kl:.5f}  largest {row.largest_kl:.4f}  "
            f"argmax agrees {100 * row.argmax_agreement:.1f} %"
            for row in rows
        ),
    )


def _lean_step(args: argparse.Namespace) -> int:
    from specviz.measure.lean_step import time_lean_step

    preset = preset_for(args)
    pair = load_pair_for(args, preset)
    model = pair.draft if args.model == "draft" else pair.target
    timing = time_lean_step(model, args.context, args.blocks, args.steps)
    return _report(
        args,
        timing,
        f"{args.model}: largest logit difference, transformers vs lean: "
        f"{timing.largest_logit_difference:.3f}",
        (
            f"{args.model} {path.name:>12}: {path.ms_per_step:6.1f} ms/step  "
            f"blocks {[round(ms, 1) for ms in path.blocks_ms]}"
            for path in timing.paths
        ),
    )


def _tree_drafting(args: argparse.Namespace) -> int:
    import statistics

    from specviz.drafters.base import DrafterSpec
    from specviz.drafters.tree_growth import growth_of
    from specviz.measure.tree_drafting import time_tree_drafting

    spec = DrafterSpec.parse(args.drafter)
    if spec.kind != "tree":
        raise UserError("error.measure.tree_drafter", got=repr(args.drafter))
    if args.repeats < 1:
        raise UserError("error.measure.repeats", got=args.repeats)
    growth = growth_of(spec)
    preset = preset_for(args)
    check_prompts(preset, [args.task])
    pair = load_pair_for(args, preset)
    timing = time_tree_drafting(
        pair.draft, task_prompt_ids(pair, preset, args.task), growth, args.repeats
    )
    new = statistics.median(timing.new_nodes_s) * 1000
    whole = statistics.median(timing.whole_tree_s) * 1000
    return _report(
        args,
        asdict(timing) | {"ratio": timing.ratio},
        f"{timing.growth}, {args.task} prompt ({timing.prompt_tokens} tokens), median of "
        f"{args.repeats}:",
        (
            f"  each depth reads its new nodes:     {new:7.0f} ms",
            f"  each depth reads the whole tree:    {whole:7.0f} ms  ({timing.ratio:.2f}x)",
            f"  the same tree both ways: {timing.same_trees} of {args.repeats}",
        ),
    )


def _tree_headroom(args: argparse.Namespace) -> int:
    from specviz.core.settings import GenerationSettings
    from specviz.drafters.tree_growth import MAX_NODES
    from specviz.labs.speedup.tree_headroom import check_headroom, tree_headroom

    preset, tasks, table = _preset_and_tasks(args)
    try:
        temperatures = [float(part) for part in _csv(args.draft_temperatures)]
    except ValueError:
        temperatures = []
    if not 1 <= args.nodes <= MAX_NODES:
        raise UserError("error.tree_lab.nodes", got=args.nodes, most=MAX_NODES)
    if args.draws < 1:
        raise UserError("error.measure.draws", got=args.draws)
    settings = GenerationSettings(
        gamma=args.gamma,
        temperature=args.temperature,
        max_new_tokens=args.max_new_tokens,
        seed=args.seed,
    )
    check_headroom(settings, temperatures, args.draft_temperatures)  # before any loading
    pair = load_pair_for(args, preset)
    prompts = [(task, _encoded(pair, preset, text)) for task in tasks for text in table[task]]
    reports = tree_headroom(
        pair, prompts, settings, nodes=args.nodes, draft_temperatures=temperatures, draws=args.draws
    )

    def lines() -> Iterable[str]:
        for report in reports:
            chain = report.chain_as_drawn
            yield (
                f"{report.task}: {report.prompts} answer{'s' if report.prompts != 1 else ''}, "
                f"{report.positions} tokens, "
                f"T = {report.temperature:g}; mass outside the tokens read {report.outside_mass:.2%}"
            )
            yield (
                f"  {'rule':<22} {'a[1..4]':<27} {'chain γ=' + str(report.gamma):>9} "
                f"{'tree ' + str(report.nodes):>8} {'tree / chain as drawn':>22}"
            )
            for row in report.rows:
                name = {
                    "drawn": f"drawn, draft T x {row.draft_temperature:g}",
                    "top": "top picks, one-hot",
                    "bound": "any exact rule, T x 1",
                }[row.rule]
                rates = " ".join(f"{rate:.3f}" for rate in row.rates)
                yield (
                    f"  {name:<22} {rates:<27} {row.chain_tau:9.2f} {row.tree_tau:8.2f} "
                    f"{row.tree_tau / chain:21.3f}x"
                )

    return _report(
        args,
        [asdict(report) for report in reports],
        "tokens per target pass by the rank model, from the rates at the root of each answer "
        "position (docs/performance.md, 'How far trees can go at T = 1'):",
        lines(),
    )


def _tree_rules(args: argparse.Namespace) -> int:
    from specviz.core.settings import GenerationSettings
    from specviz.measure.tree_rules import check_rules_settings, tree_rules

    preset, tasks, table = _preset_and_tasks(args)
    settings = GenerationSettings(
        temperature=args.temperature, max_new_tokens=args.max_new_tokens, seed=args.seed
    )
    check_rules_settings(settings, args.drafter, args.seeds)  # before any loading
    pair = load_pair_for(args, preset)
    prompts = [(task, _encoded(pair, preset, text)) for task in tasks for text in table[task]]
    rows = tree_rules(pair, prompts, settings, args.drafter, args.seeds)

    def lines() -> Iterable[str]:
        yield (
            f"  {'task':<10} {'prompt':>6} {'trees':>6} {'tokens':>7} "
            f"{'siblings in turn':>17} {'leaves up':>10} {'gain':>7} {'ms a tree, each':>16}"
        )
        for row in rows:
            prompt = "all" if row.prompt == 0 else str(row.prompt)
            yield (
                f"  {row.task:<10} {prompt:>6} {row.trees:>6} {row.new_tokens:>7} "
                f"{row.recursive:17.3f} {row.traversal:10.3f} {row.gain - 1:+7.1%} "
                f"{row.recursive_ms:8.2f} {row.traversal_ms:7.2f}"
            )

    return _report(
        args,
        [asdict(row) | {"gain": row.gain} for row in rows],
        f"expected tokens a target pass on the same trees ({args.drafter}, T = "
        f"{args.temperature:g}, {args.seeds} run(s) a prompt from seed {args.seed}), "
        "recursive sampling (siblings in turn) against the leaf-to-root walk:",
        lines(),
    )


def _draft_feeding(args: argparse.Namespace) -> int:
    from specviz.measure.draft_feeding import feeding_difference
    from specviz.models.loader import ModelCache, pick_device, pick_dtype
    from specviz.models.presets import DRAFT_QUANTIZATIONS

    preset, tasks, _ = _preset_and_tasks(args)
    modes = _csv(args.quantizations)
    unknown = [mode for mode in modes if mode not in DRAFT_QUANTIZATIONS]
    if unknown:
        raise UserError(
            "error.unknown_quantization", name=repr(unknown[0]), known=DRAFT_QUANTIZATIONS
        )
    models = ModelCache()
    pair = models.load_pair(replace(preset, draft_quantization="none"), args.device, args.dtype)
    device = pick_device(args.device)
    dtype = pick_dtype(args.dtype or preset.dtype, device)
    results: dict[str, dict[str, Any]] = {}
    for mode in modes:
        draft = models.model(
            preset.draft,
            device,
            dtype,
            preset.trust_remote_code,
            Phrase("load.draft", ref=preset.draft.ref),
            _quiet,
            mode,
        )
        results[mode] = {
            task: feeding_difference(draft, task_prompt_ids(pair, preset, task)) for task in tasks
        }
    lines: list[str] = []
    for mode, rows in results.items():
        lines.append(mode)
        lines.extend(
            f"  {task:10} T={d.prompt_tokens} max |Δ log p| = "
            f"{d.largest_logprob_difference:.4f}  top-token p: full {d.top_prob_full:.3f}, "
            f"stepped {d.top_prob_stepped:.3f}"
            for task, d in rows.items()
        )
    return _report(args, results, None, lines)


def _stop_rules(args: argparse.Namespace) -> int:
    from specviz.core.cost_model import step_costs_of
    from specviz.core.settings import GenerationSettings
    from specviz.measure.stop_rules import count_stop_rules, cumulative_stops, overall

    preset, tasks, table = _preset_and_tasks(args)
    if args.cost is not None and args.cost < 0:
        raise UserError("error.stop_rules.draft_cost", cost=args.cost)
    settings = GenerationSettings(
        max_new_tokens=args.max_new_tokens,
        draft_stop_below=preset.settings.draft_stop_below,
        draft_stop_cumulative=preset.settings.draft_stop_cumulative,
    )
    # Checked before the models load: a mistyped list should not cost a minute of loading.
    thresholds = cumulative_stops(_thresholds(args.thresholds), settings)
    pair = load_pair_for(args, preset)
    # The draft's cost on this machine, as the cost schedule reads it: the stops trade draft
    # forwards for target passes at that rate here, not at another machine's.
    costs = step_costs_of(pair)
    cost = args.cost if args.cost is not None else costs.draft if costs else DEFAULT_DRAFT_COST
    # Every prompt of a --prompts-file group, told apart by its place in it ("editing 2"); the
    # preset's first example of each group otherwise.
    chosen = {task: table[task] if args.prompts_file else table[task][:1] for task in tasks}
    prompts = [
        (task if len(texts) == 1 else f"{task} {n}", _encoded(pair, preset, text))
        for task, texts in chosen.items()
        for n, text in enumerate(texts, 1)
    ]
    rows = count_stop_rules(pair, prompts, settings, cost, thresholds=thresholds)
    lines = [
        f"{row.task:<12} γ={row.gamma:<12} "
        + " | ".join(
            f"{c.rule} P{c.target_passes} D{c.draft_forwards} {c.tokens_per_work:.2f}"
            for c in row.rules
        )
        for row in rows
    ]
    per_token, *cumulative = overall(rows)
    lines.append(
        f"geometric mean over {len(rows)} rows: per-token {per_token:.3f}, "
        + ", ".join(
            f"{count.rule} {mean:.3f} ({mean / per_token - 1:+.1%})"
            for count, mean in zip(rows[0].rules[1:], cumulative, strict=True)
        )
    )
    return _report(
        args,
        rows,
        f"per-token stop {settings.draft_stop_below}, cumulative "
        f"{', '.join(f'{stop:g}' for stop in thresholds)}; tokens / (P + {cost:.3f} D)",
        lines,
    )


def _thresholds(text: str | None) -> list[float]:
    """--thresholds as numbers (none given: an empty list, the preset's stop)."""
    try:
        return [float(item) for item in _csv(text or "")]
    except ValueError:
        raise UserError("error.stop_rules.threshold", values=text) from None


def _compare_transformers(args: argparse.Namespace) -> int:
    from specviz.core.settings import GenerationSettings
    from specviz.measure.compare_transformers import compare_with_transformers

    preset = preset_for(args)
    table = _prompt_table(args, preset)
    check_prompts(preset, [args.task], table)
    adaptive = args.gamma.startswith("a")
    try:
        gamma = int(args.gamma.removeprefix("a"))
    except ValueError:
        raise UserError("error.compare.gamma", value=repr(args.gamma)) from None
    settings = GenerationSettings(
        gamma=gamma,
        adaptive_gamma=adaptive,
        max_new_tokens=args.max_new_tokens,
        draft_stop_below=preset.settings.draft_stop_below,
        draft_stop_cumulative=preset.settings.draft_stop_cumulative if args.cumulative else 0.0,
    )
    pair = load_pair_for(args, preset)
    prompt_ids = _encoded(pair, preset, table[args.task][0])
    comparison = compare_with_transformers(pair, prompt_ids, settings)
    return _report(
        args,
        comparison,
        f"{args.task}, γ={'adaptive ' if adaptive else ''}{gamma}, "
        f"draft quantization {preset.draft_quantization}",
        (
            f"{work.method:>13}: {work.tokens_per_s:5.2f} tok/s | target verifying passes "
            f"{work.verifying_passes}, positions scored {work.positions_scored} | draft forwards "
            f"{work.draft_forwards} | same text as plain decoding: {work.same_as_plain}"
            for work in comparison.methods
        ),
    )


def _copy_headroom(args: argparse.Namespace) -> int:
    from specviz.core.settings import GenerationSettings
    from specviz.drafters.registry import check_drafter_spec
    from specviz.measure.copy_headroom import copy_headroom

    preset = preset_for(args)
    table = _prompt_table(args, preset)
    tasks = _csv(args.tasks)
    check_prompts(preset, tasks, table)
    check_drafter_spec(args.lookup)
    settings = GenerationSettings(gamma=args.gamma, max_new_tokens=args.max_new_tokens)
    pair = load_pair_for(args, preset)
    prompts = [(task, _encoded(pair, preset, text)) for task in tasks for text in table[task]]
    rows = copy_headroom(pair, prompts, settings, args.lookup)
    return _report(
        args,
        [
            {
                **asdict(row),
                "lookup_tau": row.lookup_tau,
                "best_occurrence_tau": row.best_occurrence_tau,
                "any_position_tau": row.any_position_tau,
            }
            for row in rows
        ],
        f"tokens per target pass, greedy, γ={args.gamma}, {args.max_new_tokens} new tokens at most",
        (
            f"{row.task:<12} {row.prompts} prompts, {row.new_tokens} tokens | {args.lookup} "
            f"{row.lookup_tau:.2f} | best occurrence {row.best_occurrence_tau:.2f} | "
            f"any position {row.any_position_tau:.2f}"
            for row in rows
        ),
    )


def _lookup_options(args: argparse.Namespace) -> int:
    from specviz.measure.lookup_options import compare_lookup_options, greedy_answers

    preset, tasks, table = _preset_and_tasks(args)
    settings = replace(preset.settings, max_new_tokens=args.max_new_tokens)
    pair = load_pair_for(args, preset)
    prompts = [_encoded(pair, preset, text) for task in tasks for text in table[task]]
    answers = greedy_answers(pair, prompts, settings)
    if not args.json:  # the answers the counts are on, to read
        for run in answers:
            print(
                f"--- {len(run.answer)} tokens:\n{pair.tokenizer.decode(run.answer)}\n", flush=True
            )
    rows = compare_lookup_options(answers)
    lines: list[str] = []
    for (gamma, adaptive), group in groupby(rows, key=lambda row: (row.gamma, row.adaptive)):
        lines.append(
            f"γ={gamma}{' adaptive' if adaptive else ''}: tokens per target forward per prompt"
        )
        lines += [
            f"  {row.options:44} mean {row.mean_tau:.2f}  {[round(tau, 2) for tau in row.taus]}"
            for row in group
        ]
    record = {
        "answers": [
            {"prompt_tokens": len(run.prompt), "new_tokens": len(run.answer)} for run in answers
        ],
        "rows": [asdict(row) | {"mean_tau": row.mean_tau} for row in rows],
    }
    return _report(args, record, None, lines)


def _app_speed(args: argparse.Namespace) -> int:
    import statistics

    from specviz.cli.app_speed import measure_app_speed
    from specviz.models.loader import ModelCache
    from specviz.models.presets import load_presets

    preset = preset_for(args)
    check_prompts(preset, [args.task])
    presets = load_presets()
    presets[preset.id] = preset  # with --draft-quantization applied
    speed = measure_app_speed(
        presets, ModelCache(), preset, args.task, args.max_new_tokens, args.repeats
    )
    runs = zip(speed.engine_tokens_per_s, speed.app_tokens_per_s, speed.first_cycle_s, strict=True)
    lines = [
        *(
            f"engine alone {engine:.2f} tok/s | app {app:.2f} tok/s | "
            f"first cycle shown after {first:.2f} s"
            for engine, app, first in runs
        ),
        f"median engine {statistics.median(speed.engine_tokens_per_s):.2f}  "
        f"app {statistics.median(speed.app_tokens_per_s):.2f}  ratio {speed.ratio:.3f}  "
        f"first-cycle median {statistics.median(speed.first_cycle_s):.2f} s "
        f"({speed.new_tokens} tokens)",
    ]
    return _report(args, asdict(speed) | {"ratio": speed.ratio}, None, lines)


def _bf16_rows(args: argparse.Namespace) -> int:
    from specviz.measure.bf16_products import time_products
    from specviz.models.step_costs import text_ids

    pair = load_pair_for(args, preset_for(args))
    timing = time_products(pair.target, text_ids(pair.tokenizer), args.sizes, args.rounds)
    torch_costs, kernel_costs = timing.verify_costs()
    return _report(
        args,
        timing,
        f"target, {timing.layers} layers on the kernel, after {timing.context_tokens} tokens; "
        f"logits of a {args.sizes}-token forward: largest difference "
        f"{timing.largest_logit_difference:.3f}, same argmax at {timing.same_argmax:.0%}\n"
        f"{'tokens':>6} {'torch ms':>9} {'kernel ms':>9} {'torch v(k)':>10} {'kernel v(k)':>11}",
        (
            f"{row.tokens:>6} {row.torch_ms:>9.1f} {row.kernel_ms:>9.1f} "
            f"{torch_v:>10.2f} {kernel_v:>11.2f}"
            for row, torch_v, kernel_v in zip(timing.rows, torch_costs, kernel_costs, strict=True)
        ),
    )


def _quiet(fraction: float, message: Phrase) -> None:
    """Loading progress nobody needs to see (the pair's own loading already reported)."""
