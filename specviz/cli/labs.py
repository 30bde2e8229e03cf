"""The teaching labs on the command line:
`python -m specviz inspect|exactness|speedup|trees|self-draft|tasks`.

Each command loads the preset's pair, runs the same lab function the app's tab runs, and prints its
record as a table (or JSON with --json) in the language of ``--lang``. Parsing helpers are shared
with ``specviz.cli.main``.
"""

from __future__ import annotations

import argparse
from dataclasses import asdict
from typing import Any

from specviz.cli.options import (
    add_drafter_option,
    drafter_spec_for,
    prepared_run,
    print_json,
    progress_line,
    say,
)
from specviz.drafters.tree_growth import COMPARED_BUDGETS, budgets_of
from specviz.measure.firmness import FIRM_REPEATS
from specviz.measure.spread import DEFAULT_REPEATS
from specviz.text import UserError, t


def add_lab_commands(commands: Any, add_model: Any, add_settings: Any) -> None:
    """Register the lab subcommands on the CLI's subparsers."""

    def prompt_lab(name: str, help_text: str) -> argparse.ArgumentParser:
        """A lab that runs the preset's pair on one prompt at the given settings."""
        parser: argparse.ArgumentParser = commands.add_parser(name, help=help_text)
        add_model(parser)
        parser.add_argument("--prompt", required=True)
        add_settings(parser)
        return parser

    inspect = prompt_lab(
        "inspect", "the dice roll: q, p, min(1, p/q) and u at every drafted position"
    )
    add_drafter_option(inspect)
    inspect.add_argument(
        "--cycle", type=int, action="append", help="cycle number(s) to show (default: all)"
    )
    inspect.set_defaults(run=_inspect)

    exact = prompt_lab(
        "exactness", "is it lossless? plain vs speculative samples, chi-square tested"
    )
    add_drafter_option(exact)
    exact.add_argument("--samples", type=int, default=2000, help="per arm")
    exact.add_argument("--tokens", type=int, default=2, help="tokens per continuation (1-3)")
    exact.add_argument("--rule", choices=["exact", "accept_draft"], default="exact")
    exact.add_argument("--json", action="store_true", help="print the report as JSON")
    exact.set_defaults(run=_exactness)

    speedup = prompt_lab(
        "speedup", "measured vs predicted speedup over γ (τ = (1 − α^(γ+1)) / (1 − α))"
    )
    speedup.add_argument("--gammas", default="1,3,5,8", help="comma-separated γ to measure")
    speedup.add_argument("--time-budget", type=float, default=90.0, help="seconds, at most")
    speedup.add_argument(
        "--repeats",
        type=int,
        default=1,
        help="each γ and plain decoding this many times, interleaved; the median speedup is "
        f"shown (firm needs {FIRM_REPEATS} and a quiet CPU)",
    )
    speedup.add_argument("--gpu", help="also project onto this GPU preset (see `project --list`)")
    add_fixed_cost_options(speedup)
    speedup.add_argument("--json", action="store_true")
    speedup.set_defaults(run=_speedup)

    trees = prompt_lab(
        "trees", "trees against the chain: predicted, then measured, speedup per tree budget"
    )
    trees.add_argument(
        "--nodes", default=",".join(map(str, COMPARED_BUDGETS)), help="comma-separated tree budgets"
    )
    trees.add_argument(
        "--tree", default="tree", help="the dynamic tree's other options, e.g. tree:depth=8"
    )
    trees.add_argument("--time-budget", type=float, default=150.0, help="seconds, at most")
    trees.add_argument(
        "--repeats",
        type=int,
        default=1,
        help="runs of each method, interleaved; each speedup is the median over them",
    )
    trees.add_argument("--json", action="store_true")
    trees.set_defaults(run=_trees)

    self_draft = prompt_lab(
        "self-draft",
        "Medusa's acceptance per head or lookahead's accepted n-gram length, the τ its paper's "
        "model gives, and the speedup predicted and measured",
    )
    self_draft.add_argument(
        "--drafter",
        metavar="SPEC",
        default="lookahead",
        help="medusa or lookahead, with options as kind:name=value,... (default: lookahead; "
        "Medusa's heads are trained on first use)",
    )
    self_draft.add_argument("--time-budget", type=float, default=90.0, help="seconds, at most")
    self_draft.add_argument("--json", action="store_true")
    self_draft.set_defaults(run=_self_draft)

    project = commands.add_parser(
        "project", help="what-if: the speedup a GPU would give (a roofline model, not measured)"
    )
    project.add_argument("--gpu", default="NVIDIA H100 SXM", help="a GPU preset name")
    project.add_argument("--list", action="store_true", help="list the GPU presets")
    project.add_argument("--alpha", type=float, default=0.8, help="acceptance rate α")
    project.add_argument("--target-gb", type=float, default=3.087, help="target weights, bf16")
    project.add_argument("--draft-gb", type=float, default=0.988, help="draft weights, bf16")
    project.add_argument("--target-layers", type=int, default=28, help="target decoder layers")
    project.add_argument("--draft-layers", type=int, default=24, help="draft decoder layers")
    add_fixed_cost_options(project)
    project.set_defaults(run=_project)

    tasks = commands.add_parser(
        "tasks", help="α, τ and speedup per task group (code, story, ...) at the same settings"
    )
    add_model(tasks)
    add_settings(tasks)
    add_drafter_option(tasks)
    tasks.add_argument("--prompts-per-task", type=int, default=1)
    tasks.add_argument(
        "--repeats",
        type=int,
        default=DEFAULT_REPEATS,
        help="every prompt both ways this many times, interleaved; the median speedup is shown",
    )
    tasks.add_argument("--json", action="store_true", help="print the report as JSON")
    tasks.set_defaults(run=_tasks)


def _inspect(args: argparse.Namespace) -> int:
    from specviz.core.engine import speculative_generate
    from specviz.drafters.registry import make_drafter
    from specviz.labs.inspector import inspector_lines

    preset, settings, pair, prompt_ids = prepared_run(args)
    drafter = make_drafter(drafter_spec_for(args, preset), pair)
    cycles = list(speculative_generate(pair, prompt_ids, settings, drafter))
    wanted = args.cycle or range(1, len(cycles) + 1)
    unknown = [number for number in wanted if not 1 <= number <= len(cycles)]
    if unknown:
        raise UserError("error.no_cycle", count=len(cycles), number=unknown[0])
    for number in wanted:
        print("\n".join(inspector_lines(cycles[number - 1], args.lang)))
    return 0


def _exactness(args: argparse.Namespace) -> int:
    from specviz.drafters.registry import drafter_entry
    from specviz.labs.exactness.experiment import iter_exactness_lab
    from specviz.labs.exactness.greedy import greedy_equality
    from specviz.measure.harness import staged_result

    lang = args.lang
    preset, settings, pair, prompt_ids = prepared_run(args)
    drafter = drafter_spec_for(args, preset)
    if settings.temperature <= 0:
        greedy = greedy_equality(pair, prompt_ids, settings, drafter)
        if args.json:
            print_json(greedy)
            return 0
        where = (
            t("cli.exactness.identical", lang)
            if greedy.identical
            else t("cli.exactness.part_at", lang, index=(greedy.first_difference or 0) + 1)
        )
        say("cli.exactness.greedy", lang, dtype=greedy.target_dtype, where=where)
        say("cli.exactness.greedy_speculative", lang, text=f"{greedy.speculative_text!r}")
        say("cli.exactness.greedy_plain", lang, text=f"{greedy.plain_text!r}")
        return 0
    if not drafter_entry(drafter).samples_in_exactness_lab:
        raise UserError("error.exactness_drafter", drafter=drafter)
    stages = iter_exactness_lab(pair, prompt_ids, settings, args.samples, args.tokens, args.rule)
    report = staged_result(stages, progress_line(args.lang))
    if args.json:
        print_json(report)
        return 0
    say(
        "cli.exactness.run",
        lang,
        samples=report.samples,
        tokens=report.tokens,
        rule=report.rule,
        seconds=f"{report.elapsed_s:.1f}",
        prefixes=report.target_prefixes,
        forwards=report.target_forwards,
    )
    for comparison in report.comparisons:
        say(
            "cli.exactness.comparison",
            lang,
            n=comparison.length,
            tv=f"{comparison.tv_distance:.3f}",
            noise=f"{comparison.tv_if_equal:.3f}",
            homogeneity=f"{comparison.homogeneity.p_value:.3g}",
            fit=f"{comparison.speculative_fit.p_value:.3g}",
        )
        for outcome in comparison.outcomes[:5]:
            say(
                "cli.exactness.outcome",
                lang,
                text=f"{''.join(outcome.token_texts)!r:24}",
                plain=f"{outcome.plain:5d}",
                spec=f"{outcome.speculative:5d}",
                exact=f"{outcome.exact_prob:.3f}",
            )
    say(
        "cli.exactness.analytic",
        lang,
        error=f"{report.emission_max_error:.1e}",
        tv=f"{report.draft_target_tv:.3f}",
    )
    return 0


def _speedup(args: argparse.Namespace) -> int:
    from specviz.labs.speedup.panel import model_values
    from specviz.labs.speedup.theory import iter_speedup_lab
    from specviz.measure.harness import staged_result

    gammas = tuple(int(part) for part in args.gammas.split(",") if part.strip())
    gpu = _gpu(args.gpu) if args.gpu else None  # a typo fails before minutes of loading
    _, settings, pair, prompt_ids = prepared_run(args)
    stages = iter_speedup_lab(
        pair,
        prompt_ids,
        settings,
        gammas,
        time_budget_s=args.time_budget,
        repeats=args.repeats,
    )
    lab = staged_result(stages, progress_line(args.lang))
    projections = None
    if gpu is not None:
        from specviz.labs.speedup.gpu_projection import model_footprint

        target, draft = model_footprint(pair.target), model_footprint(pair.draft)
        projections = _projections(args, lab.theory.alpha, gpu, target, draft)
    if args.json:
        projection = projections and projections[0].to_dict(args.lang)
        print_json({"measured": asdict(lab), "projection": projection})
        return 0
    lang = args.lang
    theory = lab.theory
    predicted = {row.gamma: row for row in theory.rows}
    say(
        "cli.speedup.head",
        lang,
        tps=f"{lab.plain_tokens_per_s:.2f}",
        seconds=f"{lab.elapsed_s:.0f}",
    )
    print_header(
        lang,
        ("speedup.column.gamma", 3),
        ("speedup.column.alpha", 6),
        ("tasks.column.tau", 6),
        ("cli.speedup.column.tau_predicted", 7),
        ("speedup.column.speedup", 8),
        ("speedup.column.predicted", 10),
    )
    for run in lab.runs:
        row = predicted[run.gamma]
        cut = "" if run.complete else t("cli.speedup.cut", lang)
        print(
            f"{run.gamma:>3} {run.alpha:>6.2f} {run.tau:>6.2f} {row.tau:>7.2f} "
            f"{run.speedup:>7.2f}× {row.speedup:>9.2f}×{cut}"
        )
    say("cli.speedup.theory", lang, **model_values(theory, digits=3))
    if projections is not None:
        _print_projection(*projections, lang)
    return 0


def _trees(args: argparse.Namespace) -> int:
    from specviz.labs.speedup.panel import tree_lab_paragraphs, tree_lab_rows
    from specviz.labs.speedup.tree_lab import iter_tree_lab
    from specviz.measure.harness import staged_result

    budgets = budgets_of(args.nodes)
    _, settings, pair, prompt_ids = prepared_run(args)
    stages = iter_tree_lab(
        pair,
        prompt_ids,
        settings,
        gamma=settings.gamma,
        budgets=budgets,
        tree_spec=args.tree,
        time_budget_s=args.time_budget,
        repeats=args.repeats,
    )
    lab = staged_result(stages, progress_line(args.lang))
    if args.json:
        print_json(lab)
        return 0
    lang = args.lang
    print_header(
        lang,
        ("tree_lab.column.method", 22),
        ("speedup.column.tau", 10),
        ("speedup.column.tau_predicted", 11),
        ("speedup.column.speedup", 8),
        ("speedup.column.predicted", 10),
    )
    for name, tau, tau_predicted, speedup, predicted, _, cut in tree_lab_rows(lab, lang):
        print(f"{name:>22} {tau:>10} {tau_predicted:>11} {speedup:>8} {predicted:>10} {cut}")
    for paragraph in tree_lab_paragraphs(lab, lang):
        print(paragraph)
    return 0


def _self_draft(args: argparse.Namespace) -> int:
    from specviz.cli.heads import throttled
    from specviz.drafters.registry import prepare_drafter
    from specviz.labs.speedup.self_draft_lab import check_modelled, iter_self_draft_lab
    from specviz.labs.speedup.self_draft_panel import self_draft_paragraphs, table_of
    from specviz.measure.harness import staged_result

    spec = check_modelled(args.drafter)  # a wrong drafter fails before minutes of loading
    _, settings, pair, prompt_ids = prepared_run(args)
    lang = args.lang
    prepare_drafter(spec, pair, throttled(lang))  # Medusa's heads, trained on first use
    stages = iter_self_draft_lab(
        pair, prompt_ids, settings, spec=spec, time_budget_s=args.time_budget
    )
    lab = staged_result(stages, progress_line(lang))
    if args.json:
        print_json(lab.to_dict())
        return 0
    keys, rows = table_of(lab)
    widths = [max(len(t(key, lang)), *(len(row[i]) for row in rows)) for i, key in enumerate(keys)]
    print_header(lang, *zip(keys, widths, strict=True))
    for row in rows:
        print(" ".join(f"{cell:>{width}}" for cell, width in zip(row, widths, strict=True)))
    for paragraph in self_draft_paragraphs(lab, lang):
        print(paragraph)
    return 0


def print_header(lang: str, *columns: tuple[str, int]) -> None:
    """A table's header line: each column's word from the catalogue, right-aligned to its width."""
    print(" ".join(f"{t(key, lang):>{width}}" for key, width in columns))


def add_fixed_cost_options(parser: Any) -> None:
    """--mode and --calibration: which fixed cost per forward the GPU projection adds."""
    from specviz.labs.speedup.fixed_cost import EAGER, MODES

    parser.add_argument(
        "--mode",
        choices=MODES,
        default=EAGER,
        help="execution mode whose fixed cost per forward the projection adds: eager PyTorch "
        "(what specviz runs), CUDA graphs, or none (the bare roofline)",
    )
    parser.add_argument(
        "--calibration",
        help="fixed costs measured by `gpu-check` (default: its cache file when there is one; "
        "else published figures)",
    )


def _project(args: argparse.Namespace) -> int:
    from specviz.labs.speedup.gpu_projection import GPU_PRESETS, Footprint

    if args.list:
        for spec in GPU_PRESETS.values():
            print(f"{spec.name:24} {spec.bandwidth_gb_s:>6.0f} GB/s {spec.tflops:>6.0f} TFLOPS")
        return 0
    # bf16: two bytes per weight, so the weight count follows from the bytes.
    target = Footprint(int(args.target_gb * 1e9 / 2), int(args.target_gb * 1e9), args.target_layers)
    draft = Footprint(int(args.draft_gb * 1e9 / 2), int(args.draft_gb * 1e9), args.draft_layers)
    _print_projection(*_projections(args, args.alpha, _gpu(args.gpu), target, draft), args.lang)
    return 0


def _gpu(name: str) -> Any:
    from specviz.labs.speedup.gpu_projection import GPU_PRESETS

    if name not in GPU_PRESETS:
        raise UserError("error.unknown_gpu", name=f"{name!r}", known=", ".join(GPU_PRESETS))
    return GPU_PRESETS[name]


def _projections(
    args: argparse.Namespace, alpha: float, gpu: Any, target: Any, draft: Any
) -> tuple[Any, tuple[Any, ...]]:
    """The projection in --mode, with the other modes beside it, fixed costs from
    --calibration (or gpu-check's cache file, or the published figures)."""
    from pathlib import Path

    from specviz.labs.speedup.fixed_cost import load_fixed_costs
    from specviz.labs.speedup.gpu_projection import project_each_mode

    costs = load_fixed_costs(Path(args.calibration) if args.calibration else None)
    return project_each_mode(alpha, gpu, target, draft, costs, costs[args.mode])


def _print_projection(projection: Any, others: tuple[Any, ...], lang: str) -> None:
    from specviz.labs.speedup.fixed_cost import mode_words

    say("cli.projection.head", lang, gpu=projection.gpu.name)
    speedups = "  ".join(f"γ={row.gamma}: {row.speedup:.2f}×" for row in projection.rows[:8])
    print(f"  {speedups}")
    say(
        "cli.projection.best",
        lang,
        gamma=projection.best_gamma,
        speedup=f"{projection.best_speedup:.2f}",
        cost=f"{projection.draft_cost:.3f}",
    )
    say(
        "cli.projection.fixed",
        lang,
        fixed=projection.fixed.words().text(lang),
        target_ms=f"{projection.target_fixed_s * 1000:.2f}",
        target_share=f"{projection.target_fixed_share:.0%}",
        draft_ms=f"{projection.draft_fixed_s * 1000:.2f}",
        draft_share=f"{projection.draft_fixed_share:.0%}",
    )
    for other in others:
        line = t(
            "speedup.projection.other",
            lang,
            mode=mode_words(other.fixed.mode).text(lang),
            cost=f"{other.draft_cost:.3f}",
            gamma=other.best_gamma,
            speedup=f"{other.best_speedup:.2f}",
        )
        print(f"  {line}")
    if any(shown.fixed.published for shown in (projection, *others)):
        print(t("speedup.projection.published_note", lang))
    for assumption in projection.assumptions:
        say("cli.projection.assumes", lang, assumption=assumption.text(lang))


def _tasks(args: argparse.Namespace) -> int:
    from specviz.cli.options import load_pair_for, preset_for, settings_for
    from specviz.labs.tasks.experiment import TaskPlan, measure_tasks
    from specviz.labs.tasks.panel import speedup_cell
    from specviz.measure.spread import NOISY_SPREAD
    from specviz.models.presets import task_label

    preset = preset_for(args)
    settings = settings_for(args, preset)
    drafter = drafter_spec_for(args, preset)
    pair = load_pair_for(args, preset)
    plan = TaskPlan(
        pair,
        preset.prompts,
        lambda text: pair.encode_prompt(text, chat=preset.chat_template and not args.raw),
        settings,
        args.prompts_per_task,
        drafter=drafter,
        repeats=args.repeats,
    )
    report = measure_tasks(plan, progress=progress_line(args.lang))
    if args.json:
        print_json(report.to_dict())
        return 0
    lang = args.lang
    print(f"{t('tasks.column.task', lang):12} ", end="")
    print_header(
        lang,
        ("tasks.column.alpha", 6),
        ("tasks.column.tau", 6),
        ("tasks.column.spec_tps", 11),
        ("tasks.column.plain_tps", 12),
        ("tasks.column.speedup", 8),
    )
    for result in report.tasks:
        print(
            f"{task_label(result.task, lang):12} {result.acceptance_rate:>6.0%} {result.tokens_per_target_pass:>6.2f}"
            f" {result.speculative.tokens_per_s:>11.1f} {result.plain.tokens_per_s:>12.1f}"
            f" {speedup_cell(result, lang):>8}"
        )
    print(report.narrative(lang))
    if args.repeats > 1:
        print(t("tasks.repeats_note", lang, repeats=args.repeats))
    if report.complete and report.noisy:
        widest, threshold = f"{100 * report.widest_spread:.0f}", f"{100 * NOISY_SPREAD:.0f}"
        print(t("tasks.noisy", lang, percent=widest, threshold=threshold))
    return 0
