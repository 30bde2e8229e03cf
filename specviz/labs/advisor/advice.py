"""The draft advisor: which drafter, draft format and γ to use on these prompts, by measurement.

"Which draft should I use, and why is my speculative decoding slower?" has no answer on paper: it
depends on how often the draft is right on the user's text (α), on what a draft step and a
verification cost on the user's machine, and on the prompts. The advisor runs plain decoding and
every candidate (each drafter available on the loaded models, the draft model at each draft format
loaded, at γ ∈ {2, 3, 5, 8} and with the adaptive schedule; on request also with the cost
schedule, which picks γ each cycle from the step costs measured at load) over the same prompts,
interleaved through the measurement harness, and ranks the candidates by their speedup over plain
decoding: wall-clock tokens per second, prompt included, as the benchmark measures them.

Under a time budget each proposer is screened first, at the preset's γ, with the budget shared
among those runs; the other γ rows follow, the rows of the best-screened proposer first
(`Method.ranked_by`), each started only while the budget left holds the longest whole run so far,
and skipped otherwise (`Method.only_whole`). On a slow CPU the table then
has fewer rows, all whole, instead of every row cut to the first tokens of the answer, where the
copies and the draft's agreement of the rest are not seen yet.

Each prompt is read once per model (all its tokens but the last, specviz.models.prompt_prefills),
after the warm-up, and that KV cache is copied into every run of it: on a CPU the reading can
cost more than the decoding compared (16.8 s for a 126-token editing prompt through the bundled
target in bfloat16 on a 2-core AVX2 EPYC, against 0.21 s a step). Each run's throughput counts
the seconds its models took for that one reading (Outcome.reused_s), so a drafter that reads the
prompt with a second model pays for it, as it would in a real request, while the measurement does
not repeat the reading for every candidate.

Per candidate, pooled over the prompts: α = Σ accepted / Σ tested, τ = Σ new tokens / Σ target
passes, tokens/s, time to first token (the seconds each model took to read the prompt, plus the
engine time until the first cycle's tokens; the mean over prompts) and the memory the drafter
adds: the draft model's weights when it drafts with one, plus how far memory peaked above its
level before the run beyond plain decoding's own peak (specviz.measure.memory).

Each candidate's speedup is judged firm, indicative or inconclusive (specviz.measure.firmness)
from the fewest new tokens one prompt's run made (its own or plain decoding's), the spread of its
paired repeats' ratios and the CPU share other programs took while the advisor ran; the
recommendation is as firm as the winner and runner-up it names, and an inconclusive one names no
winner but what would give one.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import torch

from specviz.core.device import device_of
from specviz.core.engine import (
    PREFILL_CHUNK,
    DraftModelPairLike,
    autoregressive_generate,
    speculative_generate,
)
from specviz.core.events import Cycle, Step, Totals
from specviz.core.settings import GenerationSettings
from specviz.drafters.base import DrafterSpec
from specviz.drafters.registry import drafter_entry, make_drafter
from specviz.engines.llama_server import LlamaServer
from specviz.measure.firmness import Judgement, judge_lab, weakest
from specviz.measure.harness import (
    Measurements,
    Method,
    MethodResult,
    Outcome,
    Progress,
    Trial,
    Update,
    drain,
    in_turn,
    iter_measurements,
    last_update,
    never,
    pooled,
    warm_up_settings,
)
from specviz.measure.llama_cpp import llama_cpp_decoding
from specviz.measure.memory import module_bytes, peak_growth
from specviz.measure.spread import Spread
from specviz.models.cpu_load import OthersShare
from specviz.models.prompt_prefills import PromptPrefills
from specviz.models.runner import ModelRunner
from specviz.text import DEFAULT_LANGUAGE, Phrase, UserError, t

__all__ = [
    "ADVISOR_GAMMAS",
    "DEFAULT_BUDGET_S",
    "DEFAULT_TOKENS",
    "Advice",
    "AdvicePlan",
    "AdviceUpdate",
    "Candidate",
    "Verdict",
    "advise",
    "candidates",
    "iter_advice",
    "preset_format_first",
]

ADVISOR_GAMMAS = (2, 3, 5, 8)
# The advisor's default size, for the CLI and the app alike: new tokens per run, and seconds of
# measuring at most, so that every drafter of the bundled pair is measured on a task group within
# about 2 minutes on a 2-core CPU (docs/performance.md#the-advisors-default-size-and-its-screen).
DEFAULT_TOKENS = 32
DEFAULT_BUDGET_S = 90.0
_PLAIN = "plain"
# Runner-up within this fraction of the winner's speedup: the recommendation says the two are a
# tie at this size of measurement: repeats of one candidate spread by as much
# (docs/performance.md#the-advisors-default-size-xeon-with-amx).
CLOSE = 0.05
# The warm-up runs read this much of the first prompt: every code path, little reading.
_WARM_UP_PROMPT_TOKENS = 16


@dataclass(frozen=True)
class Candidate:
    """One way to speculate: a drafter spec, the draft format it drafts with, and γ."""

    drafter: str  # a drafter spec, as --drafter takes it
    gamma: int  # the fixed γ, the adaptive schedule's starting γ, or the cost schedule's longest
    adaptive: bool = False
    # The draft model's quantization; "" when the drafter uses no draft model.
    draft_format: str = ""
    cost: bool = False  # γ each cycle from the measured step costs (specviz.drafters.policy)
    # In place of γ for a drafter that does not draft γ tokens: its size option ("nodes=16").
    size: str = ""

    @property
    def name(self) -> str:
        """A short unique name: "draft-model[int8wo] γ=5", "lookup γ=adaptive(5)", "… γ=cost(≤5)",
        "tree nodes=16"."""
        return f"{self.proposer} {self.setting_words}"

    @property
    def spec(self) -> str:
        """The drafter spec it runs: the drafter's, with its size option where it has one."""
        return f"{self.drafter}:{self.size}" if self.size else self.drafter

    @property
    def setting_words(self) -> str:
        """What sets its length, as the table and chart show it: "γ=5" or "nodes=16"."""
        return self.size or f"γ={self.gamma_words}"

    @property
    def proposer(self) -> str:
        """What drafts, whatever γ: the drafter spec with its draft format."""
        return f"{self.drafter}[{self.draft_format}]" if self.draft_format else self.drafter

    @property
    def gamma_words(self) -> str:
        """γ as the table shows it: "5", "adaptive(5)" or "cost(≤5)"."""
        if self.cost:
            return f"cost(≤{self.gamma})"
        return f"adaptive({self.gamma})" if self.adaptive else str(self.gamma)

    def settings(self, base: GenerationSettings) -> GenerationSettings:
        return replace(base, gamma=self.gamma, adaptive_gamma=self.adaptive, cost_gamma=self.cost)


@dataclass(frozen=True)
class EngineLane:
    """Another engine's way to decode, measured beside the candidates: llama.cpp's llama-server
    running one command (specviz.measure.llama_cpp)."""

    name: str  # "llama.cpp plain", "llama.cpp γ=5"
    server: LlamaServer
    gamma: int  # the γ its command drafts with; 0 for plain decoding
    baseline: str = ""  # the name of the same engine's plain lane ("" for that lane itself)


@dataclass(frozen=True)
class EngineVerdict:
    """One engine lane measured over the plan's prompts."""

    lane: EngineLane
    totals: Totals  # the engine's counts in specviz's record (specviz.measure.llama_cpp)
    tokens_per_s: float  # wall clock, prompt included; median over repeats
    speedup: float  # over specviz's plain decoding in the same run
    own_speedup: float | None  # over the same engine's plain decoding; None for that lane

    @property
    def alpha(self) -> float | None:
        return self.totals.acceptance_rate if self.totals.tested_positions else None

    @property
    def tau(self) -> float:
        return self.totals.tokens_per_target_pass

    def to_dict(self) -> dict[str, Any]:
        return {
            "lane": self.lane.name,
            "gamma": self.lane.gamma or None,
            "acceptance_rate": self.alpha,
            "tokens_per_target_pass": self.tau,
            "tokens_per_s": self.tokens_per_s,
            "speedup_over_specviz_plain": self.speedup,
            "speedup_over_own_plain": self.own_speedup,
        }


@dataclass(frozen=True)
class Verdict:
    """One candidate measured over the plan's prompts."""

    candidate: Candidate
    totals: Totals  # the engine's counters pooled over the prompts (the median repeat)
    tokens_per_s: float  # wall clock, prompt included; median over repeats
    speedup: float  # tokens_per_s / plain decoding's
    ttft_s: float  # engine seconds to the first cycle's tokens, mean over prompts
    memory_bytes: int | None  # what the drafter adds (weights + peak growth); None: not measurable
    complete: bool  # False when the time budget cut a run short or skipped a repeat
    # How far the speedup can be trusted: the fewest tokens of one prompt's run (its own or plain
    # decoding's), the paired repeats' ratios and the CPU other programs took.
    firmness: Judgement

    @property
    def alpha(self) -> float:
        return self.totals.acceptance_rate

    @property
    def tau(self) -> float:
        return self.totals.tokens_per_target_pass

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the candidate, then the measures."""
        return {
            "candidate": self.candidate.name,
            "drafter": self.candidate.drafter,
            "draft_format": self.candidate.draft_format,
            "gamma": None if self.candidate.size else self.candidate.gamma,
            "size": self.candidate.size or None,
            "adaptive": self.candidate.adaptive,
            "cost_schedule": self.candidate.cost,
            "acceptance_rate": self.alpha,
            "tokens_per_target_pass": self.tau,
            "tokens_per_s": self.tokens_per_s,
            "speedup": self.speedup,
            "ttft_s": self.ttft_s,
            "memory_bytes": self.memory_bytes,
            "complete": self.complete,
            "firmness": self.firmness.level.value,
        }


@dataclass(frozen=True)
class Advice:
    """Plain decoding and every candidate, measured; ranked() and recommendation() read them."""

    plain_tokens_per_s: float
    plain_ttft_s: float
    verdicts: tuple[Verdict, ...]  # in measurement order
    cut: tuple[str, ...] = ()  # what the time budget cut short or skipped
    stopped: bool = False  # should_stop ended the measurement early
    # The share of the machine's CPU other programs took while the advisor ran (0 to 1; None:
    # not measured); each verdict's firmness counts it.
    others_share: float | None = None
    engines: tuple[EngineVerdict, ...] = ()  # the plan's engine lanes, in plan order

    def ranked(self) -> tuple[Verdict, ...]:
        """Fastest first (by speedup over plain decoding; ties: the higher α first)."""
        return tuple(sorted(self.verdicts, key=lambda v: (-v.speedup, -v.alpha)))

    def winner_and_runner_up(self) -> tuple[Verdict | None, Verdict | None]:
        """The fastest candidate and the fastest that drafts with something else.

        The runner-up is another proposer (drafter or draft format), not the winner at another γ:
        a user choosing between methods wants the second-best method.
        """
        ranked = self.ranked()
        if not ranked:
            return None, None
        winner = ranked[0]
        others = [v for v in ranked[1:] if v.candidate.proposer != winner.candidate.proposer]
        return winner, others[0] if others else None

    def firmness(self) -> Judgement | None:
        """How firm the recommendation is: as the weakest of the winner and the runner-up it
        names (None before any candidate)."""
        winner, runner = self.winner_and_runner_up()
        return weakest(verdict.firmness for verdict in (winner, runner) if verdict is not None)

    def recommendation(self, lang: str = DEFAULT_LANGUAGE) -> str:
        """The winner and the runner-up with their numbers, or, from runs too short or too close
        to tell, what would give a recommendation; then how firm that is."""
        firmness = self.firmness()
        if firmness is None:
            return t("advisor.recommend.none", lang)
        if firmness.refusal is not None:
            refused = t("advisor.recommend.refused", lang, refusal=firmness.refusal)
            return t("labs.judged", lang, finding=refused, line=firmness.line)
        return t("labs.judged", lang, finding=self._recommended(lang), line=firmness.line)

    def _recommended(self, lang: str) -> str:
        winner, runner = self.winner_and_runner_up()
        assert winner is not None  # recommendation() saw a candidate
        values = {"winner": winner.candidate.name, "winner_measures": _measures(winner, lang)}
        if runner is not None:
            values |= {"runner": runner.candidate.name, "runner_measures": _measures(runner, lang)}
        if winner.speedup >= 1.0:
            key = "advisor.recommend.only" if runner is None else "advisor.recommend.winner"
            if runner is not None and runner.speedup >= (1 - CLOSE) * winner.speedup:
                return t("advisor.recommend.close", lang, close=f"{CLOSE:.0%}", **values)
            return t(key, lang, **values)
        key = "advisor.recommend.plain_only" if runner is None else "advisor.recommend.plain"
        return t(key, lang, plain=f"{self.plain_tokens_per_s:.2f}", **values)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: plain decoding's numbers, the ranked candidates and the recommendation."""
        return {
            "plain_tokens_per_s": self.plain_tokens_per_s,
            "plain_ttft_s": self.plain_ttft_s,
            "ranked": [verdict.to_dict() for verdict in self.ranked()],
            "recommendation": self.recommendation(),
            "cut": list(self.cut),
            "stopped": self.stopped,
            "others_share": self.others_share,
            "engines": [verdict.to_dict() for verdict in self.engines],
        }


@dataclass(frozen=True)
class AdvicePlan:
    """What to measure: the loaded pairs, the prompts, the drafters and γ values, and how long."""

    # The loaded pair for each draft format ("none", "int8wo", ...), all with the same target; the
    # first is the preset's and drafts for every drafter that uses no draft model, or one only.
    pairs: Mapping[str, DraftModelPairLike]
    prompt_ids: Sequence[torch.Tensor]  # each (1, T), chat template applied or not
    settings: GenerationSettings  # every setting but γ and the schedule, which candidates set
    drafters: Sequence[str]  # drafter specs
    gammas: Sequence[int] = ADVISOR_GAMMAS
    adaptive: bool = True  # also an adaptive row per proposer, starting from the preset's γ
    cost: bool = False  # also a cost-schedule row per proposer, its γ at most the preset's
    repeats: int = 1
    time_budget_s: float | None = None
    warm_up: bool = True
    # Another engine's lanes measured beside the candidates, interleaved, on the same prompt ids
    # (llama.cpp's plain decoding and its speculative decoding at each γ): reported apart from the
    # ranking, which stays specviz's own.
    engines: Sequence[EngineLane] = ()


def preset_format_first(own: str, wanted: Sequence[str]) -> list[str]:
    """The draft formats to load, *own* (the preset's) first when wanted: AdvicePlan.pairs takes
    its first format as the one every drafter but the draft model's own rows drafts with."""
    return ([own] if own in wanted else []) + [item for item in wanted if item != own]


def candidates(plan: AdvicePlan) -> list[Candidate]:
    """Every candidate of the plan: proposers in the order given, each at every γ, then adaptive,
    then the cost schedule.

    A drafter is a proposer per draft format loaded when its registry entry is compared at
    every format (the draft model); another that drafts with the draft model (the hybrid) drafts
    with the first format, the preset's, so the table grows by one row set per format.
    """
    if not plan.pairs:
        raise ValueError("the advisor needs at least one loaded pair")
    if not plan.drafters:
        raise UserError("error.advisor.no_drafters")
    if not plan.gammas and not plan.adaptive and not plan.cost:
        raise UserError("error.advisor.no_gammas")
    formats = list(plan.pairs)
    found: list[Candidate] = []
    for drafter in plan.drafters:
        kind, sizes = _sizes_of(drafter)
        for draft_format in _formats_of(drafter, formats):
            if sizes:  # its sizes take γ's place: no γ, adaptive or cost rows
                gamma = plan.settings.gamma
                found += [Candidate(kind, gamma, False, draft_format, size=s) for s in sizes]
                continue
            found += [Candidate(drafter, gamma, False, draft_format) for gamma in plan.gammas]
            if plan.adaptive:
                found.append(Candidate(drafter, plan.settings.gamma, True, draft_format))
            if plan.cost:
                found.append(Candidate(drafter, plan.settings.gamma, False, draft_format, True))
    return found


@dataclass(frozen=True)
class AdviceUpdate:
    """Where the advisor stands: sent before the warm-up, before each run and at the end."""

    fraction: float  # runs done / runs planned
    message: Phrase  # what runs next, "done" or "stopped"
    advice: Advice  # everything measured so far (candidates appear once plain decoding has run)
    finished: bool = False


def advise(
    plan: AdvicePlan,
    progress: Progress | None = None,
    should_stop: Callable[[], bool] = never,
) -> Advice:
    """Measure plain decoding and every candidate on the plan's prompts; the ranked advice."""
    return last_update(iter_advice(plan, should_stop), progress).advice


def iter_advice(
    plan: AdvicePlan, should_stop: Callable[[], bool] = never
) -> Iterator[AdviceUpdate]:
    """advise() as a stream of updates, so a UI can show the table fill in and stop between runs.

    The plan is checked here, before the first run, not on the first next().
    """
    if not plan.prompt_ids:
        raise UserError("error.advisor.no_prompts")
    chosen = candidates(plan)
    default_pair = next(iter(plan.pairs.values()))
    reads = PromptPrefills(plan.prompt_ids, PREFILL_CHUNK)
    records: dict[str, _Records] = {}
    plain = _over_prompts(
        _PLAIN,
        plan.settings,
        plan.prompt_ids,
        _plain(default_pair),
        records.setdefault(_PLAIN, _Records()),
        _Reading(reads, (default_pair.target,)),
    )
    methods = [plain]
    read_models: dict[int, torch.nn.Module] = {id(default_pair.target): default_pair.target}
    screens = _screens(chosen, plan.settings.gamma)
    screen_of = {screen.proposer: screen.name for screen in screens}
    for candidate in sorted(chosen, key=lambda c: c not in screens):  # stable: screens first
        pair = plan.pairs[candidate.draft_format] if candidate.draft_format else default_pair
        own = records.setdefault(candidate.name, _Records())
        models = (pair.target, pair.draft) if candidate.draft_format else (pair.target,)
        read_models.update((id(model), model) for model in models)
        if candidate.draft_format:
            own.weights = module_bytes(pair.draft)
        methods.append(
            _over_prompts(
                candidate.name,
                candidate.settings(plan.settings),
                plan.prompt_ids,
                _speculative(pair, candidate.spec),
                own,
                _Reading(reads, models),
                only_whole=candidate not in screens,
                ranked_by=None if candidate in screens else screen_of[candidate.proposer],
            )
        )
    for lane in plan.engines:
        lane_settings = replace(plan.settings, gamma=lane.gamma or plan.settings.gamma)
        methods.append(_engine_over_prompts(lane, lane_settings, plan.prompt_ids))
    # The prompts are read as the warm-up's last step, once each path has run (so the reading,
    # which every run's throughput counts, is timed warm): every measured run copies them.
    warm_up = _warm_ups(plan, chosen, reads) if plan.warm_up else []
    warm_up.append(_reading_prompts(reads, list(read_models.values())))
    if plan.warm_up:
        short = warm_up_settings(plan.settings)
        first = [plan.prompt_ids[0][:, :_WARM_UP_PROMPT_TOKENS]]
        warm_up += [_engine_over_prompts(lane, short, first) for lane in plan.engines]
    updates = iter_measurements(methods, plan.repeats, warm_up, plan.time_budget_s, should_stop)
    return _updates(chosen, updates, records, plan.engines)


def _engine_over_prompts(
    lane: EngineLane, settings: GenerationSettings, prompts: Sequence[torch.Tensor]
) -> Method:
    """An engine lane as a harness method: one request per prompt in turn, pooled."""
    parts = [llama_cpp_decoding(lane.server, ids, settings, lane.name) for ids in prompts]
    method = parts[0] if len(parts) == 1 else in_turn(lane.name, parts)
    return replace(method, name=lane.name, settings=settings)


def _updates(
    chosen: Sequence[Candidate],
    updates: Iterator[Update],
    records: Mapping[str, _Records],
    engines: Sequence[EngineLane] = (),
) -> Iterator[AdviceUpdate]:
    """The harness's updates as advice, with the CPU share other programs took so far."""
    others = OthersShare()  # from the warm-up to each update: the whole measurement so far
    for update in updates:
        advice = _advice(chosen, update.measurements, records, others.share())
        advice = replace(advice, engines=_engine_verdicts(engines, update.measurements))
        yield AdviceUpdate(update.fraction, update.message, advice, update.finished)


def _engine_verdicts(
    engines: Sequence[EngineLane], measured: Measurements
) -> tuple[EngineVerdict, ...]:
    """Each engine lane measured so far, its speed over specviz's plain decoding and over its
    own engine's."""
    plain_rate = measured[_PLAIN].tokens_per_s
    verdicts = []
    for lane in engines:
        result = measured[lane.name]
        if plain_rate <= 0 or not result.samples or result.totals is None:
            continue
        own = None
        if lane.baseline:
            base = measured[lane.baseline]
            own = result.tokens_per_s / base.tokens_per_s if base.tokens_per_s > 0 else None
        speedup = result.tokens_per_s / plain_rate
        verdicts.append(EngineVerdict(lane, result.totals, result.tokens_per_s, speedup, own))
    return tuple(verdicts)


def _screens(chosen: Sequence[Candidate], gamma: int) -> set[Candidate]:
    """One candidate per proposer, measured first and always: at the preset's fixed γ where it is
    a candidate, else the proposer's first. The other γ rows are measured only whole, while the
    budget holds them, so on a slow machine every proposer is compared on whole runs and no
    ranking rests on the first tokens of an answer (module docstring)."""
    first: dict[str, Candidate] = {}
    for candidate in chosen:
        first.setdefault(candidate.proposer, candidate)
        if candidate.gamma == gamma and not (
            candidate.adaptive or candidate.cost or candidate.size
        ):
            first[candidate.proposer] = candidate
    return set(first.values())


def _advice(
    chosen: Sequence[Candidate],
    measured: Measurements,
    records: Mapping[str, _Records],
    others_share: float | None,
) -> Advice:
    """The advice from what the harness has measured so far."""
    plain_rate = measured[_PLAIN].tokens_per_s
    plain_peak = records[_PLAIN].peak()
    plain_fewest = records[_PLAIN].fewest_tokens()
    verdicts = []
    for candidate in chosen:
        result = measured[candidate.name]
        if plain_rate <= 0 or not result.samples or result.totals is None:
            continue
        own = records[candidate.name]
        peak = own.peak()
        memory = None
        if peak is not None and plain_peak is not None:
            memory = own.weights + max(0, peak - plain_peak)
        speedup = result.tokens_per_s / plain_rate
        spread = _paired_speedups(result, measured[_PLAIN], speedup)
        tokens = min(own.fewest_tokens(), plain_fewest)
        verdicts.append(
            Verdict(
                candidate,
                result.totals,
                result.tokens_per_s,
                speedup,
                own.ttft(),
                memory,
                result.complete,
                judge_lab(tokens, spread, others_share),
            )
        )
    return Advice(
        plain_rate,
        records[_PLAIN].ttft(),
        tuple(verdicts),
        tuple(measured.cut),
        measured.stopped,
        others_share,
    )


def _paired_speedups(result: MethodResult, plain: MethodResult, speedup: float) -> Spread:
    """*speedup* (the median speeds' ratio) with the range of each repeat's own ratio to plain
    decoding's run of the same repeat."""
    plain_rates = {sample.repeat: sample.tokens_per_s for sample in plain.samples}
    ratios = [
        sample.tokens_per_s / plain_rates[sample.repeat]
        for sample in result.samples
        if plain_rates.get(sample.repeat, 0.0) > 0
    ]
    if not ratios:
        return Spread(speedup, speedup, speedup, 1)
    return Spread(speedup, min(ratios), max(ratios), len(ratios))


@dataclass
class _Records:
    """What the harness does not keep: per run, time to first token and peak memory growth."""

    weights: int = 0  # bytes of the draft model the candidate drafts with (0: none)
    first_token_s: list[float] = field(default_factory=list)
    peaks: list[int] = field(default_factory=list)
    unknown_peak: bool = False
    new_tokens: list[int] = field(default_factory=list)  # each prompt's run, cut ones included

    def fewest_tokens(self) -> int:
        return min(self.new_tokens, default=0)

    def ttft(self) -> float:
        return statistics.fmean(self.first_token_s) if self.first_token_s else 0.0

    def peak(self) -> int | None:
        if self.unknown_peak or not self.peaks:
            return None
        return max(self.peaks)


Events = Callable[[torch.Tensor, GenerationSettings], Iterator[Cycle | Step]]


# The engine gets the whole prompt in its first forward (no chunks of its own): the runner finds
# the prompt's head read already and feeds the last token only.
def _plain(pair: DraftModelPairLike) -> Events:
    def events(ids: torch.Tensor, settings: GenerationSettings) -> Iterator[Step]:
        return autoregressive_generate(pair, ids, settings, prefill_chunk=ids.shape[1])

    return events


def _speculative(pair: DraftModelPairLike, drafter: str) -> Events:
    def events(ids: torch.Tensor, settings: GenerationSettings) -> Iterator[Cycle]:
        drafts = make_drafter(drafter, pair)
        return speculative_generate(pair, ids, settings, drafts, prefill_chunk=ids.shape[1])

    return events


@dataclass(frozen=True)
class _Reading:
    """The prompts read once, and the models a method's runs copy them into."""

    reads: PromptPrefills
    models: tuple[torch.nn.Module, ...]

    def seconds(self, ids: torch.Tensor) -> float:
        """What reading this prompt took the method's models, for its time to first token."""
        return sum(self.reads.seconds(model, ids) for model in self.models)


def _reading_prompts(reads: PromptPrefills, models: Sequence[torch.nn.Module]) -> Method:
    """A warm-up method that reads every prompt's head into every model, stopping between
    two chunks when asked."""

    def run(trial: Trial) -> Outcome | None:
        for model in models:
            for _ in reads.read(ModelRunner(model)):
                if trial.should_stop():
                    return None
        return Outcome(0)

    return Method("reading prompts", run)


def _over_prompts(
    name: str,
    settings: GenerationSettings,
    prompts: Sequence[torch.Tensor],
    events: Events,
    records: _Records,
    reading: _Reading,
    only_whole: bool = False,
    ranked_by: str | None = None,
) -> Method:
    """A harness method that decodes every prompt in turn; its outcome pools them."""
    device = device_of(reading.models[0])

    def run(trial: Trial) -> Outcome | None:
        outcomes: list[Outcome] = []
        for ids in prompts:
            with peak_growth(device) as growth, reading.reads.installed():
                outcome = drain(events(ids, trial.settings), trial)
            if outcome is None:
                return None
            # The prompt was read once for every run; this run's throughput counts that reading
            # by each model it uses, as if it had read the prompt itself (the benchmark's does).
            read_s = reading.seconds(ids)
            outcome = replace(outcome, reused_s=outcome.reused_s + read_s)
            outcomes.append(outcome)
            _record(records, outcome, growth.bytes, read_s)
            if not outcome.complete:
                break
        return pooled(outcomes)

    label = Phrase("advisor.progress", name=name)
    return Method(name, run, settings, label, only_whole, ranked_by)


def _record(records: _Records, outcome: Outcome, growth: int | None, read_s: float) -> None:
    records.new_tokens.append(outcome.new_tokens)
    if outcome.events:
        first = outcome.events[0].totals
        records.first_token_s.append(read_s + first.prefill_s + first.elapsed_s)
    if growth is None:
        records.unknown_peak = True
    else:
        records.peaks.append(growth)


def _warm_ups(plan: AdvicePlan, chosen: Sequence[Candidate], reads: PromptPrefills) -> list[Method]:
    """One short unmeasured run of plain decoding and of each proposer, on the first prompt's
    first tokens (not the prompt itself, which is read after the warm-up)."""
    short = warm_up_settings(plan.settings)
    first = [plan.prompt_ids[0][:, :_WARM_UP_PROMPT_TOKENS]]
    default_pair = next(iter(plan.pairs.values()))
    reading = _Reading(reads, (default_pair.target,))
    warm = [_over_prompts("warm-up plain", short, first, _plain(default_pair), _Records(), reading)]
    seen: set[str] = set()
    for candidate in chosen:
        if candidate.proposer in seen:
            continue
        seen.add(candidate.proposer)
        pair = plan.pairs[candidate.draft_format] if candidate.draft_format else default_pair
        events = _speculative(pair, candidate.spec)
        name = f"warm-up {candidate.proposer}"
        warm.append(_over_prompts(name, short, first, events, _Records(), reading))
    return warm


def _sizes_of(drafter: str) -> tuple[str, tuple[str, ...]]:
    """For a drafter whose length is not γ (a tree): its kind, and the sizes the advisor
    measures it at in place of γ, its registry entry's for the bare kind, else the spec's own
    options as one size ("tree:depth=8" -> ("tree", ("depth=8",))). (drafter, ()) for one that
    drafts γ tokens."""
    sizes = drafter_entry(drafter).advisor_sizes
    spec = DrafterSpec.parse(drafter)
    if not sizes:
        return drafter, ()
    if spec.options:
        return spec.kind, (",".join(f"{name}={value}" for name, value in spec.options),)
    return spec.kind, sizes


def _formats_of(drafter: str, formats: Sequence[str]) -> Sequence[str]:
    """The draft formats the drafter spec is measured at, as its registry entry says: every
    one loaded, the preset's (the first) only, or none ("") when it drafts without the model."""
    entry = drafter_entry(drafter)
    if not entry.uses_draft_model:
        return [""]
    return formats if entry.compared_at_every_format else formats[:1]


def _measures(verdict: Verdict, lang: str) -> str:
    return t(
        "advisor.measures",
        lang,
        speedup=f"{verdict.speedup:.2f}",
        tokens_per_s=f"{verdict.tokens_per_s:.2f}",
        alpha=f"{verdict.alpha:.0%}",
        tau=f"{verdict.tau:.2f}",
    )
