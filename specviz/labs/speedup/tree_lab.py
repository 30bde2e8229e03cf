"""Trees against the chain: how many tokens a draft tree gives per target pass on this machine,
what each pass costs, and which size of tree, if any, beats the chain here.

The prediction is the chain's speedup model (specviz.labs.speedup.theory) with a tree in place
of the chain. Per cycle a tree of N nodes gives τ(N) tokens: the best N-node tree's under the
rank model of specviz.labs.speedup.tree_theory, with the acceptance per sibling rank and depth
measured in this lab's tree runs, times the share of it the drafter's own trees gave in those
runs (read between the budgets run; the best tree's own below them). The drafter's trees are
not the best tree: a drawn tree (T > 0) spends its budget where the draft's q points, not where
the rates say a node is most likely kept, and the rates, averaged over easy and hard stretches
of text, price a confident draft's deep line as if it were drawn in an average stretch. On the
bundled pair (64 tokens, eight labs on a 2-core Zen 4) the share ran from 0.89 (32 nodes drawn
on a story at T = 1) to 1.17 (32 nodes on code, greedy), which the best tree alone had
predicted 9 % too slow (docs/performance.md, "The tree lab's prediction against its runs"). A
tree of N nodes costs

    D_c + v_tree(N + 1)

where v_tree(k) is the target's tree forward over the root and k − 1 nodes, timed here through
the runner the engine verifies with, and D_c the draft's work: a forward over the committed
tokens it has not read, the root's, then one per further depth over its widest frontier
(specviz.drafters.draft_tree), each priced by the draft's own timed forwards. How many depths
a cycle's tree grows and how many nodes it holds are counted in the lab's tree runs, as the
acceptance is, and read between the budgets run: the greedy drafter goes past its spec's depth
while its own q stays confident, which no rate measured on the target's side predicts, and at
T > 0 its drawn trees are not the best tree of their budget. The chain at γ is
τ = (1 − α^(γ+1)) / (1 − α) over γ·c + v(γ + 1) with α from its own run (Leviathan et al. 2023,
eq. 1).

A run of N tokens then takes N/τ cycles, N the run's own length (at T > 0 a run may end its
text early) and τ taken over a run that long (it stops at its token limit inside its last
pass, which costs a whole pass for part of its tokens: specviz.core.cost_model.
tokens_per_pass_over; a 64-token run of a tree that gives 7.9 tokens a pass takes 9 passes, not
8.1), plus what it pays once for its prompt beyond plain decoding: the target's read of it
(plain decoding's first step less its others) and the draft's (timed). Plain decoding took N
steps of the seconds per token it measured in this lab, the denominator of every
measured speedup; its own read of the prompt is inside that unit. A one-token forward timed
alone is not plain decoding's step: on this 2-core Zen 4 it ran at 0.18 s in one plain run and
0.22 s in the next. On a GPU v barely grows with k, so wide trees cost little; on a 2-core CPU
every node costs arithmetic, and the prediction says where that stops paying before the runs
at other sizes do.

The same runs are measured: plain decoding, the chain and a tree at each budget, interleaved by
the measurement harness, each against plain decoding's tokens/s of the same repeat. The forwards
are timed in every repeat too, after that repeat's runs, and each repeat is predicted from its
own plain run and its own forwards: this machine's speed drifts by a tenth or more over a few
minutes, and forwards timed after all the runs once predicted a chain 31 % faster than it ran.
"""

from __future__ import annotations

import itertools
import math
import statistics
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace

import torch

from specviz.core.cost_model import expected_tokens_per_pass, tokens_per_pass_over
from specviz.core.engine import DraftModelPairLike
from specviz.core.events import Cycle, Step, Totals
from specviz.core.settings import GAMMA_MAX, GAMMA_MIN, GenerationSettings
from specviz.drafters.base import DrafterSpec
from specviz.drafters.draft_tree import tokens_above_floor
from specviz.drafters.tree_growth import (
    COMPARED_BUDGETS,
    DRAWN_TREE_RULES,
    MAX_NODES,
    TreeGrowth,
    growth_of,
    rule_of,
)
from specviz.labs.speedup.cost_curve import CostCurve, CostPoint, iter_verification_cost
from specviz.labs.speedup.fixed_cost import EAGER, PUBLISHED, FixedCost, load_fixed_costs
from specviz.labs.speedup.gpu_projection import (
    GPU_PRESETS,
    Footprint,
    GpuSpec,
    model_footprint,
    roofline_forward_s,
)
from specviz.labs.speedup.theory import (
    engine_totals,
    fixed_gamma,
    lower_middle,
    median_outcome,
    median_repeat,
)
from specviz.labs.speedup.tree_theory import BestTree, RankAcceptance, best_tree
from specviz.measure.firmness import Judgement, judge_lab
from specviz.measure.harness import (
    Method,
    Outcome,
    Sample,
    Staged,
    Trial,
    iter_measurements,
    staged_measurements,
    warm_up_settings,
)
from specviz.measure.methods import plain_decoding, speculative_decoding
from specviz.measure.spread import Spread
from specviz.models.cpu_load import OthersShare
from specviz.models.runner import ModelRunner
from specviz.models.step_costs import time_forward
from specviz.text import Phrase, UserError

DEFAULT_NODES = COMPARED_BUDGETS  # the tree budgets measured, as the advisor's tree rows
PREDICTED_NODES = (1, 2, 4, 8, 12, 16, 24, 32, 48, 64)  # the budgets predicted
# Predictions this near each other name no winner: on a quiet 2-core CPU the runs differed
# from their predictions by about a tenth at the median (docs/performance.md).
CLOSE = 0.10
_PLAIN = "plain"
_CHAIN = "chain"
_FORWARDS = "forwards"  # the harness method that times the forwards, once a repeat


@dataclass(frozen=True)
class MeasuredMethod:
    """One decoding method's runs: the chain at γ (nodes = γ) or a tree of at most *nodes*
    nodes; the median repeat's counters, the median of the repeats' speedups."""

    name: str  # "γ = 5" or the drafter spec, "tree:nodes=16"
    nodes: int
    tau: float  # new tokens per target pass
    speedup: float  # tokens/s over plain decoding's of the same repeat, the median of repeats
    tokens_per_s: float
    new_tokens: int
    complete: bool
    speedups: tuple[float, ...] = ()  # each repeat's


@dataclass(frozen=True)
class Predicted:
    """The model at one tree budget (or for the chain, at its γ)."""

    nodes: int
    tau: float  # tokens per pass over a run as long as the lab's (module doc)
    draft_cost: float  # the draft's work per cycle, in plain decoding's steps
    verify_cost: float  # the target's pass over the root and the nodes, likewise
    speedup: float
    prompt_cost: float = 0.0  # a run's one read of its prompt beyond plain decoding's, likewise
    read: int = 0  # the tokens the target's pass reads: the root and the nodes (or guesses)


@dataclass(frozen=True)
class TreeLab:
    """Measured runs, the forward timings they are predicted from, and the predictions."""

    gamma: int
    tree_spec: str  # the growth every tree run used, but its node budget
    plain_tokens_per_s: float
    plain_new_tokens: int
    chain: MeasuredMethod
    trees: tuple[MeasuredMethod, ...]
    acceptance: RankAcceptance  # pooled over the tree runs
    # (budget, the share of the best tree's tokens a pass its runs' trees gave), each budget run
    reached: tuple[tuple[int, float], ...]
    chain_alpha: float
    chain_predicted: Predicted
    predicted: tuple[Predicted, ...]  # at PREDICTED_NODES and each measured budget
    best: Predicted  # the tree budget predicted fastest here
    target_tree_curve: CostCurve
    target_chain_curve: CostCurve
    draft_curve: CostCurve
    elapsed_s: float
    complete: bool
    others_share: float | None
    # The same model on a GPU through the roofline model: a projection, never a measurement.
    gpu: GpuProjection | None = None

    def predicted_at(self, nodes: int) -> Predicted:
        return next(row for row in self.predicted if row.nodes == nodes)

    def firmness(self, run: MeasuredMethod) -> Judgement:
        """How firm a run's measured speedup is (tokens, its repeats, the CPU others took)."""
        tokens = min(run.new_tokens, self.plain_new_tokens)
        return judge_lab(tokens, Spread.of(run.speedups or [run.speedup]), self.others_share)

    @property
    def chain_wins(self) -> bool:
        """Whether the chain is predicted faster than the best tree on this machine."""
        return self.chain_predicted.speedup >= self.best.speedup

    @property
    def too_close(self) -> bool:
        """Whether the chain's and the best tree's predictions lie within CLOSE of each other,
        nearer than the prediction can tell apart (its runs differ from it by about as much)."""
        high = max(self.chain_predicted.speedup, self.best.speedup)
        return abs(self.chain_predicted.speedup - self.best.speedup) < CLOSE * high


def forward_s(curve: CostCurve, size: int) -> float:
    """The curve's median forward time at *size* tokens: measured, interpolated between the
    measured sizes, or grown in proportion to the size past the largest (a CPU's cost is about
    linear there)."""
    by_size = {point.new_tokens: point.median_s for point in curve.points}
    if size in by_size:
        return by_size[size]
    below = max((s for s in by_size if s < size), default=min(by_size))
    above = min((s for s in by_size if s > size), default=None)
    if above is None:
        return by_size[below] * max(1.0, size / below)
    share = (size - below) / (above - below)
    return by_size[below] + share * (by_size[above] - by_size[below])


def predict_tree(
    acceptance: RankAcceptance,
    nodes: int,
    depth: int,
    width: int,
    target_tree: CostCurve,
    draft: CostCurve,
    plain_step_s: float,
    new_tokens: int | None = None,
    depths: float | None = None,
    prompt_s: float = 0.0,
    sent: float | None = None,
    reached: float | None = None,
) -> Predicted:
    """τ(N) over a cycle's forwards for the best tree of *nodes* nodes (module doc), in plain
    decoding's steps of *plain_step_s*; *depth*: the depths the drafter grows at least; *width*:
    the most nodes a depth's draft forward reads; *new_tokens*: the run's length (None: τ of
    an unlimited run); *depths*: the draft forwards a cycle's tree took in the lab's runs at this
    budget (None: as many as the best tree is deep); *prompt_s*: what a run pays once for its
    prompt beyond plain decoding (counted only with *new_tokens*); *sent*: the nodes a cycle's
    tree held in those runs (None: the best tree's), which the target's pass reads; *reached*:
    the share of the best tree's tokens a pass that the drafter's trees gave in those runs
    (None: all of it)."""
    tree = best_tree_for(acceptance, nodes, depth)
    # The committed tokens not yet read (about τ − 1 of them), the root, then every further
    # depth: the drafter grows at least *depth* depths (no more than its budget of nodes could
    # keep) whatever its budget, and keeps the best.
    unread = max(1, round(tree.tau - 1))
    grown = depths if depths is not None else max(min(depth, nodes), tree.depth)
    draft_s = (
        forward_s(draft, unread)
        + forward_s(draft, 1)
        + max(0.0, grown - 1) * forward_s(draft, width)
    )
    read = tree.nodes if sent is None else max(1, round(sent))
    verify_s = forward_s(target_tree, read + 1)
    tau = tokens_per_pass_over(tree.tau * (1.0 if reached is None else reached), new_tokens)
    return _predicted(nodes, tau, draft_s, verify_s, plain_step_s, new_tokens, prompt_s, read + 1)


def best_tree_for(acceptance: RankAcceptance, nodes: int, depth: int) -> BestTree:
    """The best tree of *nodes* nodes under the rank model, as deep as the drafter would go
    (reach, from the spec's *depth*)."""
    return best_tree(acceptance, nodes, max_depth=min(reach(acceptance, depth), nodes))


def reach(acceptance: RankAcceptance, depth: int) -> int:
    """How deep the drafter's trees go: past *depth* while a line of first guesses stays likely,
    as the drafter's LINE_FLOOR rule does with its own q, here with the first guess's measured
    rate a[1] (a line of k first guesses is kept with a[1]^k), at most GAMMA_MAX."""
    first = acceptance.rate(1)
    if first <= 0.0:
        return depth
    if first >= 1.0:
        return max(depth, GAMMA_MAX)
    return min(GAMMA_MAX, max(depth, int(tokens_above_floor(math.log(first)))))


def predict_chain(
    alpha: float,
    gamma: int,
    target_chain: CostCurve,
    draft: CostCurve,
    plain_step_s: float,
    new_tokens: int | None = None,
    prompt_s: float = 0.0,
) -> Predicted:
    """S = τ / (γ·c + v(γ + 1)), Leviathan et al.'s model with this lab's timings, c and v in
    plain decoding's steps, τ over a run of *new_tokens* (None: unlimited), which pays
    *prompt_s* once for its prompt beyond plain decoding."""
    tau = tokens_per_pass_over(
        expected_tokens_per_pass(min(max(alpha, 0.0), 1.0), gamma), new_tokens
    )
    draft_s = gamma * forward_s(draft, 1)
    verify_s = forward_s(target_chain, gamma + 1)
    return _predicted(gamma, tau, draft_s, verify_s, plain_step_s, new_tokens, prompt_s, gamma + 1)


def _predicted(
    nodes: int,
    tau: float,
    draft_s: float,
    verify_s: float,
    plain_step_s: float,
    new_tokens: int | None = None,
    prompt_s: float = 0.0,
    read: int = 0,
) -> Predicted:
    """A run of N tokens takes N/τ cycles and its prompt's extra read against plain decoding's
    N steps (plain's own prompt read is inside its step); without N, one cycle's τ tokens
    against τ steps."""
    step = max(plain_step_s, 1e-9)
    cycle_s = max(draft_s + verify_s, 1e-9)
    if new_tokens:
        speedup = new_tokens * step / (prompt_s + new_tokens / tau * cycle_s)
    else:
        speedup = tau * step / cycle_s
    prompt = prompt_s / step if new_tokens else 0.0
    return Predicted(nodes, tau, draft_s / step, verify_s / step, speedup, prompt, read)


@dataclass(frozen=True)
class GpuProjection:
    """The chain and the best tree on a GPU: this lab's acceptance with each forward's time from
    the roofline model (specviz.labs.speedup.gpu_projection). A projection, NOT a measurement."""

    gpu: str
    chain: Predicted
    best: Predicted
    fixed: FixedCost  # the fixed cost every forward paid (eager PyTorch unless said otherwise)
    kind: str = "projection"  # never "measurement"


def project_trees(
    acceptance: RankAcceptance,
    chain_alpha: float,
    gamma: int,
    depth: int,
    width: int,
    gpu: GpuSpec,
    target: Footprint,
    draft: Footprint,
    fixed: FixedCost = PUBLISHED[EAGER],
    reached: Mapping[int, float | None] | None = None,
) -> GpuProjection:
    """The lab's prediction with roofline forward times in bfloat16 on *gpu*, each forward paying
    *fixed* for its layers, in place of the timed ones, plain decoding's step being the target's
    one-token forward there; *reached*: by budget, the share of the best tree's tokens a pass
    the drafter's trees gave in the lab's runs (read_between), as the CPU prediction takes it."""

    def curve(footprint: Footprint, sizes: Sequence[int]) -> CostCurve:
        points = []
        for size in sizes:
            seconds = roofline_forward_s(
                gpu, footprint.bytes_at(2), footprint.params, size, fixed.seconds(footprint.layers)
            )
            points.append(CostPoint(size, seconds, (seconds,)))
        return CostCurve(gpu.name, 0, tuple(points), True)

    target_curve = curve(target, sorted({1, gamma + 1, *(n + 1 for n in PREDICTED_NODES)}))
    draft_curve = curve(draft, range(1, 9))
    step = target_curve.points[0].median_s
    trees = [
        predict_tree(
            acceptance,
            n,
            depth,
            width,
            target_curve,
            draft_curve,
            step,
            reached=read_between(n, reached or {}),
        )
        for n in PREDICTED_NODES
    ]
    return GpuProjection(
        gpu.name,
        predict_chain(chain_alpha, gamma, target_curve, draft_curve, step),
        max(trees, key=lambda row: (row.speedup, -row.nodes)),
        fixed,
    )


def tree_specs(tree_spec: str, budgets: Sequence[int]) -> tuple[TreeGrowth, list[str]]:
    """*tree_spec*'s growth, and the drafter spec for each budget: its options with nodes set
    (and its verification rule, where it names one other than the default)."""
    spec = DrafterSpec.parse(tree_spec)
    growth = growth_of(spec)
    if spec.kind != "tree" or growth.widths:
        raise UserError("error.tree_lab.spec", spec=repr(tree_spec))
    return growth, [f"tree:nodes={n},{_options_but_nodes(growth, spec)}" for n in budgets]


def _options_but_nodes(growth: TreeGrowth, spec: DrafterSpec) -> str:
    """The options every tree run of the lab shares: the growth's depth and topk, and the
    verification rule where the spec names one other than the default."""
    rule = rule_of(spec)
    named = "" if rule == DRAWN_TREE_RULES[0] else f",rule={rule}"
    return f"depth={growth.depth},topk={growth.topk}{named}"


def iter_tree_lab(
    pair: DraftModelPairLike,
    prompt_ids: torch.Tensor,
    settings: GenerationSettings,
    gamma: int = 5,
    budgets: Sequence[int] = DEFAULT_NODES,
    tree_spec: str = "tree",
    cost_repeats: int = 3,
    time_budget_s: float = 150.0,
    gpu: GpuSpec | None = GPU_PRESETS["NVIDIA H100 SXM"],
    repeats: int = 1,
) -> Iterator[Staged[TreeLab]]:
    """Decode plainly, with the chain at γ and with a tree at each budget, and time the forwards
    the prediction needs (*cost_repeats* times a size in all, shared among the repeats), all of
    it *repeats* times interleaved within *time_budget_s*; a stage before each run, the lab in
    the last. Each method's speedup is the median over its repeats of its run against the same
    repeat's plain run: on a 2-core CPU one 64-token run's speed moves by a fifth between
    identical runs. Checked on the first next()."""
    budgets = tuple(sorted(set(budgets)))
    if not GAMMA_MIN <= gamma <= GAMMA_MAX:
        raise UserError("error.speedup.gammas", low=GAMMA_MIN, high=GAMMA_MAX, gammas=(gamma,))
    if not budgets or not all(1 <= n <= MAX_NODES for n in budgets):
        raise UserError("error.tree_lab.nodes", most=MAX_NODES, got=repr(budgets))
    if prompt_ids.dim() != 2 or prompt_ids.shape[1] < 2:
        raise UserError("error.prompt_too_short")
    growth, specs = tree_specs(tree_spec, budgets)
    began = time.perf_counter()
    others = OthersShare()
    fixed = fixed_gamma(settings, gamma)  # the chain's model assumes γ drafts every cycle
    methods = [
        replace(
            plain_decoding(pair, prompt_ids, settings, _PLAIN),
            label=Phrase("speedup.progress.plain"),
        ),
        replace(
            speculative_decoding(pair, prompt_ids, fixed, _CHAIN),
            label=Phrase("speedup.progress.gamma", gamma=gamma),
        ),
        *(
            replace(
                speculative_decoding(pair, prompt_ids, settings, spec, drafter_spec=spec),
                label=Phrase("tree_lab.progress.tree", nodes=n),
            )
            for n, spec in zip(budgets, specs, strict=True)
        ),
    ]
    # The forwards the prediction prices, timed once a repeat, in the round of that repeat's
    # runs: on a shared 2-core machine the speed drifts by a tenth or more over minutes, so
    # forwards timed after every run predicted runs made at another speed.
    tree_sizes = sorted({1, *(n + 1 for n in (*PREDICTED_NODES, *budgets))})
    timings: dict[int, RoundTimings] = {}
    per_round = max(1, math.ceil(cost_repeats / max(repeats, 1)))  # the harness refuses 0
    methods.append(
        Method(
            _FORWARDS,
            lambda trial: _time_forwards(
                pair, prompt_ids, gamma, tree_sizes, per_round, trial, timings
            ),
            settings,
            Phrase("tree_lab.progress.forwards"),
        )
    )
    warm = warm_up_settings(settings)
    warm_up = [
        plain_decoding(pair, prompt_ids, warm, "warm-up plain"),
        speculative_decoding(pair, prompt_ids, warm, "warm-up tree", drafter_spec=specs[-1]),
    ]
    measured = yield from staged_measurements(
        iter_measurements(methods, repeats, warm_up=warm_up, time_budget_s=time_budget_s), 1.0
    )
    plain_by_repeat = {sample.repeat: sample.outcome for sample in measured[_PLAIN].samples}
    plain = engine_totals(median_outcome(list(plain_by_repeat.values())))
    chain = _repeated(f"γ = {gamma}", gamma, measured[_CHAIN].samples, plain_by_repeat)
    trees = [
        _repeated(spec, n, measured[spec].samples, plain_by_repeat)
        for n, spec in zip(budgets, specs, strict=True)
    ]
    acceptance = RankAcceptance.measure(
        event
        for spec in specs
        for sample in measured[spec].samples
        for event in sample.outcome.events
        if isinstance(event, Cycle) and not event.finished
    )
    chain_counts = [engine_totals(sample.outcome) for sample in measured[_CHAIN].samples]
    tested = sum(totals.tested_positions for totals in chain_counts)
    chain_alpha = sum(t.accepted_positions for t in chain_counts) / tested if tested else 0.0

    # Each repeat is predicted from its own plain run and its own forwards, timed in the same
    # round as its runs, and the lab predicts the median repeat, as it measures the median.
    first = next(iter(plain_by_repeat.values()))
    plain_of = {r: plain_by_repeat.get(r, first) for r in timings}  # its first where skipped
    steps = {r: _step_s(engine_totals(outcome)) for r, outcome in plain_of.items()}
    # What a speculative run pays once beyond plain decoding: the draft's read of the prompt
    # (the target's, in plain decoding's first step, is inside plain's unit and the run's).
    prompts = {
        r: _target_prompt_s(plain_of[r]) + timed.draft_prompt_s for r, timed in timings.items()
    }
    # How the drafter's trees came out in the runs, at each budget: the depths it grew (draft
    # forwards) and the nodes the target read. At T > 0 the drawn trees are not the best tree
    # of the budget, and the greedy ones grow as deep as the draft's own q allows.
    shapes = {
        n: _run_trees(sample.outcome for sample in measured[spec].samples)
        for n, spec in zip(budgets, specs, strict=True)
    }
    depths = {n: shape.forwards for n, shape in shapes.items()}
    # The nodes held as a share of the budget, so a size past the largest run scales with it.
    held = {n: _share(shape.nodes, n) for n, shape in shapes.items()}
    # What the drafter's trees gave against the best tree of their budget under the same rates
    # (module doc: below 1 where it drew its nodes where q pointed, above where its confident
    # deep lines were kept more often than the averaged rates say).
    reached = {
        n: _share(shape.tokens, best_tree_for(acceptance, n, growth.depth).tau)
        for n, shape in shapes.items()
    }
    # Each run is predicted at its own length: at T > 0 a run may end its text early, and a
    # short run spends more of its time on the prompt and its last, cut pass.
    lengths = {
        (name, sample.repeat): sample.outcome.new_tokens
        for name in (_CHAIN, *specs)
        for sample in measured[name].samples
    }
    sizes = sorted({*PREDICTED_NODES, *budgets})
    spec_of = dict(zip(budgets, specs, strict=True))
    by_round = {
        r: [
            predict_tree(
                acceptance,
                n,
                growth.depth,
                growth.topk,
                timed.target_tree,
                timed.draft,
                steps[r],
                lengths.get((spec_of.get(n, ""), r), plain_of[r].new_tokens),
                read_between(n, depths),
                prompts[r],
                _times(read_between(n, held), n),
                read_between(n, reached),
            )
            for n in sizes
        ]
        for r, timed in timings.items()
    }
    predicted = tuple(
        _median_prediction([rows[index] for rows in by_round.values()])
        for index in range(len(sizes))
    )
    chain_predicted = _median_prediction(
        [
            predict_chain(
                chain_alpha,
                gamma,
                timed.target_chain,
                timed.draft,
                steps[r],
                lengths.get((_CHAIN, r), plain_of[r].new_tokens),
                prompts[r],
            )
            for r, timed in timings.items()
        ]
    )
    rounds = list(timings.values())
    best = max(predicted, key=lambda row: (row.speedup, -row.nodes))
    projection = None
    if gpu is not None:
        target_fp, draft_fp = model_footprint(pair.target), model_footprint(pair.draft)
        eager = load_fixed_costs()[EAGER]  # what specviz runs: measured if gpu-check has been
        projection = project_trees(
            acceptance,
            chain_alpha,
            gamma,
            growth.depth,
            growth.topk,
            gpu,
            target_fp,
            draft_fp,
            eager,
            reached,
        )
    yield Staged(
        1.0,
        Phrase("progress.done"),
        TreeLab(
            gamma=gamma,
            tree_spec=_options_but_nodes(growth, DrafterSpec.parse(tree_spec)),
            plain_tokens_per_s=plain.tokens_per_s,
            plain_new_tokens=plain.new_tokens,
            chain=chain,
            trees=tuple(trees),
            acceptance=acceptance,
            reached=tuple((n, share) for n, share in reached.items() if share is not None),
            chain_alpha=chain_alpha,
            chain_predicted=chain_predicted,
            predicted=predicted,
            best=best,
            target_tree_curve=merged_curve([timed.target_tree for timed in rounds]),
            target_chain_curve=merged_curve([timed.target_chain for timed in rounds]),
            draft_curve=merged_curve([timed.draft for timed in rounds]),
            elapsed_s=time.perf_counter() - began,
            complete=measured.complete,
            others_share=others.share(),
            gpu=projection,
        ),
    )


@dataclass(frozen=True)
class RoundTimings:
    """The forwards one repeat's prediction prices, each as the engine runs it."""

    target_tree: CostCurve  # the tree verification forward over 1 to 65 positions
    target_chain: CostCurve  # the chain's verification forward over 1 and γ + 1 positions
    draft: CostCurve  # the draft's forwards over 1 to 8 positions (a tree depth's frontier)
    draft_prompt_s: float = 0.0  # the draft's forward over the prompt, which a run pays once


def _time_forwards(
    pair: DraftModelPairLike,
    prompt_ids: torch.Tensor,
    gamma: int,
    tree_sizes: Sequence[int],
    repeats: int,
    trial: Trial,
    timings: dict[int, RoundTimings],
) -> Outcome | None:
    """The harness run that times one repeat's forwards within its share of the budget; the
    curves go to *timings* under the repeat, the Outcome says only whether they are whole."""
    parts = (
        (pair.target, tree_sizes, True),
        (pair.target, [1, gamma + 1], False),
        (pair.draft, list(range(1, 9)), True),
    )
    curves = []
    for model, sizes, tree in parts:
        stages = iter_verification_cost(
            model,
            prompt_ids,
            repeats=repeats,
            time_budget_s=max(0.0, trial.deadline - time.perf_counter()),
            sizes=sizes,
            tree=tree,
        )
        for stage in stages:
            if trial.should_stop():
                return None
            if stage.result is not None:
                curves.append(stage.result)
    tree_curve, chain_curve, draft_curve = curves
    timings[trial.repeat] = RoundTimings(
        tree_curve, chain_curve, draft_curve, _prompt_read_s(pair, prompt_ids)
    )
    return Outcome(new_tokens=0, complete=all(curve.complete for curve in curves))


@torch.inference_mode()
def _prompt_read_s(pair: DraftModelPairLike, prompt_ids: torch.Tensor) -> float:
    """Seconds the draft takes to read the prompt, as a run's first draft forward does (the
    second of two reads: the first settles allocations)."""
    runner = ModelRunner(pair.draft)
    prompt = prompt_ids[0].to(runner.device)
    reads = [time_forward(runner, prompt, prompt.shape[0], logits_to_keep=1) for _ in range(2)]
    return reads[-1]


def merged_curve(curves: Sequence[CostCurve]) -> CostCurve:
    """One curve from several timings of the same forwards: every run of a size pooled, its
    median the size's time; only the sizes every timing reached."""
    reached = set.intersection(*({point.new_tokens for point in c.points} for c in curves))
    points = []
    for size in sorted(reached):
        runs = tuple(
            p_s for c in curves for p in c.points if p.new_tokens == size for p_s in p.runs_s
        )
        points.append(CostPoint(size, statistics.median(runs), runs))
    first = curves[0]
    complete = all(curve.complete for curve in curves)
    return CostCurve(first.device, first.context_len, tuple(points), complete, first.forward)


def _target_prompt_s(plain: Outcome) -> float:
    """What plain decoding's first step took beyond its others: the target reading the prompt,
    which a speculative run's first target pass pays as well."""
    steps = [event.time_s for event in plain.events if isinstance(event, Step)]
    if len(steps) < 2:
        return 0.0
    return max(0.0, steps[0] - statistics.median(steps[1:]))


@dataclass(frozen=True)
class RunTrees:
    """How a budget's trees came out in the lab's runs, each a mean over their cycles (None
    where there were none)."""

    forwards: float | None  # draft forwards a cycle spent growing its depths
    nodes: float | None  # nodes a tree held, which the target's pass read
    tokens: float | None  # tokens a pass gave: the kept path and the target's own token


def _run_trees(outcomes: Iterable[Outcome]) -> RunTrees:
    """The forwards and nodes over every cycle but each run's first (which read the prompt),
    the forwards less the one over the committed tokens the draft had not read (there are some
    whenever a guess was kept); the tokens over every tree cycle but the one that ended the
    run (cut at the token limit)."""
    forwards, nodes, tokens = [], [], []
    for outcome in outcomes:
        cycles = [event for event in outcome.events if isinstance(event, Cycle)]
        for before, cycle in itertools.pairwise(cycles):
            spent = cycle.totals.draft_forwards - before.totals.draft_forwards
            forwards.append(spent - (1 if before.accepted_len else 0))
            nodes.append(len(cycle.tree.nodes) if cycle.tree is not None else cycle.draft_len)
        tokens += [len(c.tree.path) + 1 for c in cycles if c.tree is not None and not c.finished]
    return RunTrees(
        statistics.mean(forwards) if forwards else None,
        statistics.mean(nodes) if nodes else None,
        statistics.mean(tokens) if tokens else None,
    )


def read_between(nodes: int, measured: Mapping[int, float | None]) -> float | None:
    """A quantity measured at the lab's budgets, at *nodes*: interpolated between them, the
    largest's above them; None (the model's own) below the smallest, where the drafter was not
    seen."""
    known = sorted((n, value) for n, value in measured.items() if value is not None)
    if not known or nodes < known[0][0]:
        return None
    for (low, low_value), (high, high_value) in itertools.pairwise(known):
        if low <= nodes <= high:
            return low_value + (nodes - low) / (high - low) * (high_value - low_value)
    return known[-1][1]


def _times(share: float | None, nodes: int) -> float | None:
    return None if share is None else share * nodes


def _share(part: float | None, whole: float) -> float | None:
    return None if part is None or whole <= 0 else part / whole


def _step_s(totals: Totals) -> float:
    return 1.0 / totals.tokens_per_s if totals.tokens_per_s else 0.0


def _median_prediction(rows: Sequence[Predicted]) -> Predicted:
    """The repeat whose predicted speedup is the median, as median_repeat takes its run."""
    return lower_middle(rows, lambda row: row.speedup)


def _repeated(
    name: str, nodes: int, samples: Iterable[Sample], plain: Mapping[int, Outcome]
) -> MeasuredMethod:
    """A method's repeats as one: the median of their speedups over the same repeat's plain
    run, with the median repeat's counters (theory.median_repeat)."""
    middle, speedups = median_repeat(
        samples, plain, lambda outcome, totals: _measured(name, nodes, outcome, totals)
    )
    return replace(middle, speedup=Spread.of(speedups).median, speedups=speedups)


def _measured(name: str, nodes: int, outcome: Outcome, plain: Totals) -> MeasuredMethod:
    totals = engine_totals(outcome)
    return MeasuredMethod(
        name=name,
        nodes=nodes,
        tau=totals.tokens_per_target_pass,
        speedup=totals.tokens_per_s / plain.tokens_per_s if plain.tokens_per_s else 0.0,
        tokens_per_s=totals.tokens_per_s,
        new_tokens=totals.new_tokens,
        complete=outcome.complete,
    )


def median_error(lab: TreeLab) -> float:
    """The median relative gap between predicted and measured speedup over the lab's runs."""
    pairs = [(lab.chain_predicted.speedup, lab.chain.speedup)]
    pairs += [(lab.predicted_at(run.nodes).speedup, run.speedup) for run in lab.trees]
    return statistics.median(abs(p - m) / m for p, m in pairs if m > 0)
