"""Task dependence: how much speculation buys on code, stories, explanations, translation, rewriting.

A draft model guesses well where the text is predictable (code, translation) and badly where it is
open-ended (stories), so α, τ and the speedup depend on the task as much as on the pair. This runs
each task's example prompts both ways at the same settings, speculative and plain, repeated and
interleaved (every prompt both ways, then again), and pools the engine's own counters per task:
α = Σ accepted / Σ tested, τ = Σ new tokens / Σ target passes, tokens/s = Σ new tokens / Σ engine
seconds (the prompt read in the first pass, as the app's counters). The speedup is speculative
tokens/s ÷ plain tokens/s pooled within each repeat, reported as the median over the repeats with
their range; a range wider than NOISY_SPREAD of the median says the machine was noisy.

How firm each task's speedup is, and the ranking of the tasks by α, follows
specviz.measure.firmness from the fewest tokens a run made, the spread of the repeats and the CPU
share other programs took while the lab ran; a ranking from runs too short to rank is not drawn.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

import torch

from specviz.core.engine import DraftModelPairLike
from specviz.core.events import Totals
from specviz.core.settings import GenerationSettings
from specviz.measure.firmness import Judgement, judge_lab
from specviz.measure.harness import (
    Method,
    Outcome,
    Progress,
    iter_measurements,
    never,
    warm_up_settings,
)
from specviz.measure.methods import plain_decoding, speculative_decoding
from specviz.measure.spread import DEFAULT_REPEATS, Spread
from specviz.models.cpu_load import OthersShare
from specviz.models.presets import DEFAULT_DRAFTER, TASKS, task_label, task_words
from specviz.text import DEFAULT_LANGUAGE, Phrase, UserError, t

__all__ = [
    "PromptRun",
    "TaskPlan",
    "TaskProgress",
    "TaskReport",
    "TaskResult",
    "iter_task_measurements",
    "measure_tasks",
]

_SAMPLE_CHARS = 80  # enough of the output to recognise the task, short enough for a table cell


@dataclass(frozen=True)
class PromptRun:
    """One prompt decoded both ways at the same settings and seed."""

    prompt: str
    speculative: Totals
    plain: Totals
    speculative_text: str
    plain_text: str  # greedy: equal to speculative_text up to rounding in low-precision forwards
    repeat: int = 0  # which repeat (0-based): both runs of a prompt share it, and its seed


@dataclass(frozen=True)
class TaskResult:
    """One task's prompts, with the counters pooled over them (longer runs weigh more)."""

    task: str
    runs: tuple[PromptRun, ...]

    @property
    def speculative(self) -> Totals:
        return Totals.pooled([run.speculative for run in self.runs])

    @property
    def plain(self) -> Totals:
        return Totals.pooled([run.plain for run in self.runs])

    @property
    def acceptance_rate(self) -> float:
        """α over all the task's cycles: accepted / tested draft positions."""
        return self.speculative.acceptance_rate

    @property
    def tokens_per_target_pass(self) -> float:
        """τ over all the task's cycles: new tokens per target forward."""
        return self.speculative.tokens_per_target_pass

    @property
    def speedups(self) -> Spread:
        """Speculative tokens/s ÷ plain tokens/s (engine time, the same for both), pooled over
        the task's prompts within each repeat: the median over repeats and its range."""
        ratios = []
        for repeat in sorted({run.repeat for run in self.runs}):
            runs = [run for run in self.runs if run.repeat == repeat]
            plain = Totals.pooled([run.plain for run in runs]).tokens_per_s
            speculative = Totals.pooled([run.speculative for run in runs]).tokens_per_s
            ratios.append(speculative / plain if plain > 0 else 0.0)
        return Spread.of(ratios) if ratios else Spread(0.0, 0.0, 0.0, 0)

    @property
    def speedup(self) -> float:
        """The median speedup over the repeats."""
        return self.speedups.median

    @property
    def fewest_tokens(self) -> int:
        """The fewest new tokens any one run of the task made, speculative or plain."""
        return min(
            (min(run.speculative.new_tokens, run.plain.new_tokens) for run in self.runs),
            default=0,
        )

    @property
    def prompts(self) -> tuple[str, ...]:
        """The task's prompts, each once, in order."""
        return tuple(dict.fromkeys(run.prompt for run in self.runs))

    @property
    def sample(self) -> str:
        """The start of the first non-blank speculative output, on one line."""
        lines = (" ".join(run.speculative_text.split()) for run in self.runs)
        text = next((line for line in lines if line), "")
        return text if len(text) <= _SAMPLE_CHARS else text[: _SAMPLE_CHARS - 1] + "…"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict with the pooled measures first."""
        return {
            "task": self.task,
            "acceptance_rate": self.acceptance_rate,
            "tokens_per_target_pass": self.tokens_per_target_pass,
            "speculative_tokens_per_s": self.speculative.tokens_per_s,
            "plain_tokens_per_s": self.plain.tokens_per_s,
            "speedup": self.speedup,
            "speedup_low": self.speedups.low,
            "speedup_high": self.speedups.high,
            "new_tokens": self.speculative.new_tokens,
            "sample": self.sample,
            "runs": [asdict(run) for run in self.runs],
        }


@dataclass(frozen=True)
class TaskReport:
    """Every measured task, in TASKS order; complete is False when the run was stopped early."""

    settings: GenerationSettings
    tasks: tuple[TaskResult, ...]
    complete: bool
    # The share of the machine's CPU other programs took while the lab ran (0 to 1; None: not
    # measured), for the firmness of its speedups and ranking.
    others_share: float | None = None

    def task_firmness(self, result: TaskResult) -> Judgement:
        """How firm *result*'s speedup over plain decoding is."""
        return judge_lab(result.fewest_tokens, result.speedups, self.others_share)

    def ranking_firmness(self) -> Judgement | None:
        """How firm the ranking by α is (None before any task): from the fewest tokens of any
        run and the widest-spread task's speedups. Speedups on both sides of 1 leave a ranking
        by α standing, so they do not refuse it."""
        if not self.tasks:
            return None
        tokens = min(result.fewest_tokens for result in self.tasks)
        widest = max((result.speedups for result in self.tasks), key=lambda s: s.relative)
        return judge_lab(tokens, widest, self.others_share, against_plain=False)

    @property
    def noisy(self) -> bool:
        """Some task's speedup scattered over the repeats past the noise threshold."""
        return any(result.speedups.noisy for result in self.tasks)

    @property
    def widest_spread(self) -> float:
        """The largest relative range of any task's speedup over the repeats."""
        return max((result.speedups.relative for result in self.tasks), default=0.0)

    def ranked(self) -> tuple[TaskResult, ...]:
        """Tasks from the highest α to the lowest."""
        return tuple(sorted(self.tasks, key=lambda result: -result.acceptance_rate))

    def narrative(self, lang: str = DEFAULT_LANGUAGE) -> str:
        """For the audience: which task the draft guesses best and worst, or, from runs too short
        to rank, what would give a ranking; then how firm that is."""
        firmness = self.ranking_firmness()
        if firmness is None:
            return t("tasks.narrative.none", lang)
        line = firmness.line
        if firmness.refusal is not None:
            refused = t("tasks.narrative.refused", lang, refusal=firmness.refusal)
            return t("labs.judged", lang, finding=refused, line=line)
        return t("labs.judged", lang, finding=self._finding(lang), line=line)

    def _finding(self, lang: str) -> str:
        ranked = self.ranked()
        best, worst = ranked[0], ranked[-1]
        if len(ranked) == 1:
            task = task_label(best.task, lang)
            return t("tasks.narrative.one", lang, task=task, measures=_measures(best, lang))
        return t(
            "tasks.narrative.ranked",
            lang,
            best=task_label(best.task, lang),
            best_measures=_measures(best, lang),
            worst=task_label(worst.task, lang),
            worst_measures=_measures(worst, lang),
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict: the settings, then one entry per task."""
        firmness = self.ranking_firmness()
        return {
            "settings": asdict(self.settings),
            "complete": self.complete,
            "noisy": self.noisy,
            "others_share": self.others_share,
            "firmness": firmness.level.value if firmness is not None else None,
            "tasks": [
                {**result.to_dict(), "firmness": self.task_firmness(result).level.value}
                for result in self.tasks
            ],
        }


@dataclass(frozen=True)
class TaskProgress:
    """Where the measurement stands: sent before each run and once at the end."""

    fraction: float  # runs finished / runs planned
    message: Phrase  # the run about to start ("story 2/5: plain decoding"), or "done"
    report: TaskReport  # everything measured so far


@dataclass(frozen=True)
class TaskPlan:
    """What the task lab measures: each task's first prompts, both ways, at these settings,
    *repeats* times interleaved."""

    pair: DraftModelPairLike
    prompts: Mapping[str, Sequence[str]]  # example prompts by task (a preset's prompts)
    encode: Callable[[str], torch.Tensor]  # prompt text -> ids (1, T), chat template or not
    settings: GenerationSettings
    prompts_per_task: int = 1
    warm_up: bool = True  # one short unmeasured run of each kind first (first runs are slow)
    drafter: str = DEFAULT_DRAFTER  # the drafter spec the speculative runs draft with
    repeats: int = DEFAULT_REPEATS  # every prompt both ways, this many times, interleaved


def measure_tasks(
    plan: TaskPlan,
    progress: Progress | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> TaskReport:
    """Run each task's first prompts speculatively (drafting with the drafter spec given) and
    plainly; α, τ and speedup per task.

    progress(fraction, message) is called before each run and once at the end; should_stop is
    polled between cycles, and a stop drops the unfinished prompt and returns what was finished.
    """
    report = TaskReport(plan.settings, (), complete=False)
    for update in iter_task_measurements(plan, should_stop):
        if progress is not None:
            progress(update.fraction, update.message)
        report = update.report
    return report


def iter_task_measurements(
    plan: TaskPlan, should_stop: Callable[[], bool] | None = None
) -> Iterator[TaskProgress]:
    """measure_tasks as a stream, so a UI can redraw the chart as each prompt finishes.

    The plan is checked here, before the first run, not on the first next().
    """
    if plan.prompts_per_task < 1:
        raise UserError("error.tasks.per_task", count=plan.prompts_per_task)
    if plan.repeats < 1:
        raise UserError("error.harness.repeats", repeats=plan.repeats)
    chosen = _chosen_prompts(plan.prompts, plan.prompts_per_task)
    return _measure(plan, chosen, should_stop or never)


def _chosen_prompts(
    prompts: Mapping[str, Sequence[str]], prompts_per_task: int
) -> list[tuple[str, tuple[str, ...]]]:
    """(task, its first prompts) in TASKS order, then any other tasks in the order given."""
    for task, items in prompts.items():
        if isinstance(items, str):
            # A bare string is a Sequence too, and would be measured one character at a time.
            raise ValueError(f"the prompts of task {task!r} must be a list of strings, not one")
    order = sorted(prompts, key=lambda task: TASKS.index(task) if task in TASKS else len(TASKS))
    plan = [(task, tuple(prompts[task][:prompts_per_task])) for task in order if prompts[task]]
    if not plan:
        raise ValueError("there are no prompts to measure: no task has any")
    return plan


def _measure(
    plan: TaskPlan, chosen: list[tuple[str, tuple[str, ...]]], should_stop: Callable[[], bool]
) -> Iterator[TaskProgress]:
    # One harness measurement: speculative then plain decoding of each prompt, in plan order.
    pair, settings = plan.pair, plan.settings
    prompts = [(task, prompt) for task, task_prompts in chosen for prompt in task_prompts]
    methods: list[Method] = []
    for task_index, (task, task_prompts) in enumerate(chosen):
        for prompt_index, prompt in enumerate(task_prompts):
            where = _where(task, task_index, len(chosen), prompt_index, len(task_prompts))
            prompt_ids = plan.encode(prompt)
            name = f"{task} {prompt_index + 1}"
            spec_method = speculative_decoding(
                pair, prompt_ids, settings, f"{name} speculative", plan.drafter
            )
            plain_method = plain_decoding(pair, prompt_ids, settings, f"{name} plain")
            methods += [
                replace(spec_method, label=Phrase("tasks.progress.speculative", where=where)),
                replace(plain_method, label=Phrase("tasks.progress.plain", where=where)),
            ]
    short = warm_up_settings(settings)
    first_ids = plan.encode(prompts[0][1])
    warm_ups = [
        speculative_decoding(pair, first_ids, short, "warm-up speculative", plan.drafter),
        plain_decoding(pair, first_ids, short, "warm-up plain"),
    ]
    updates = iter_measurements(
        methods, plan.repeats, warm_ups if plan.warm_up else (), should_stop=should_stop
    )
    others = OthersShare()  # from the warm-up to each update: the whole lab so far
    for update in updates:
        results = update.measurements.methods
        runs: dict[str, list[PromptRun]] = {task: [] for task, _ in chosen}
        for index, (task, prompt) in enumerate(prompts):
            speculative, plain = results[2 * index].samples, results[2 * index + 1].samples
            for spec_sample, plain_sample in zip(speculative, plain, strict=False):
                runs[task].append(
                    _prompt_run(
                        prompt, spec_sample.outcome, plain_sample.outcome, spec_sample.repeat
                    )
                )
        finished = tuple(TaskResult(task, tuple(done)) for task, done in runs.items() if done)
        complete = update.finished and not update.measurements.stopped
        report = TaskReport(settings, finished, complete, others.share())
        yield TaskProgress(update.fraction, update.message, report)


def _where(task: str, index: int, count: int, prompt: int, prompts: int) -> Phrase:
    """Which prompt runs, in words: "story 2/5", or "story 2/5, prompt 1/3"."""
    label = task_words(task)
    if prompts == 1:
        return Phrase("tasks.progress.where", task=label, index=index + 1, count=count)
    return Phrase(
        "tasks.progress.where_prompt",
        task=label,
        index=index + 1,
        count=count,
        prompt=prompt + 1,
        prompts=prompts,
    )


def _prompt_run(prompt: str, speculative: Outcome, plain: Outcome, repeat: int) -> PromptRun:
    if speculative.totals is None or plain.totals is None:  # pragma: no cover - engine runs
        raise RuntimeError("an engine run reported no counters")
    return PromptRun(prompt, speculative.totals, plain.totals, speculative.text, plain.text, repeat)


def _measures(result: TaskResult, lang: str) -> str:
    return t(
        "tasks.measures",
        lang,
        alpha=f"{result.acceptance_rate:.0%}",
        tau=f"{result.tokens_per_target_pass:.2f}",
        speedup=f"{result.speedup:.2f}",
    )
