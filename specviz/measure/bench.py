"""Benchmark: plain decoding vs specviz speculative decoding vs transformers' counterpart.

Each drafter (draft model, prompt lookup, hybrid) is measured against transformers' own method for
it where one exists (assisted generation, prompt lookup). All run in one process on the same loaded
pair, prompts and settings, through the measurement harness: after a warm-up, every method of one
task and temperature (plain, then specviz and transformers at each γ and drafter) runs once per
repeat in turn, so their ratios are comparable even on a noisy machine. Throughput is wall-clock
tokens per second of the whole call (prefill included) for every method alike; each cell is the
median of repeats. A task's rows decode its first example prompt, or several prompts in turn
(BenchGrid.prompts_per_task; BenchGrid.prompts replaces the preset's examples, as
`bench --prompts-file` does), pooled: their tokens over their seconds. At temperature > 0
repeat r uses seed + r for every method: one seed is one random trajectory, and its acceptance
luck would otherwise decide a row.

With `BenchGrid.engines` naming "llama.cpp" (and its servers passed in), each task also gets
llama-server's plain decoding of the same GGUF target and, per fixed-γ row, its speculative
decoding by the configs tab's command (specviz.measure.llama_cpp), interleaved with the rest.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from specviz.core.settings import GenerationSettings
from specviz.engines.llama_server import LlamaServer
from specviz.measure.harness import Method, MethodResult, Progress, in_turn, measure
from specviz.measure.llama_cpp import (
    LlamaLanes,
    llama_command,
    llama_cpp_decoding,
    plain_command,
)
from specviz.measure.methods import (
    assisted_generation,
    plain_decoding,
    speculative_decoding,
    transformers_counterpart,
)
from specviz.models.presets import DEFAULT_DRAFTER
from specviz.text import Phrase, UserError

__all__ = [
    "BenchGrid",
    "BenchResult",
    "Measurement",
    "Row",
    "check_prompts",
    "run_bench_grid",
    "task_prompt_ids",
    "task_prompts",
]

_WARM_UP_PROMPT = "Say hello."
_WARM_UP_TOKENS = 8


@dataclass
class Measurement:
    """Median throughput over repeats, with the acceptance statistics of the median run."""

    tokens_per_s: float  # wall clock of the whole call, prefill included
    new_tokens: int
    engine_tokens_per_s: float | None = None  # the engine's own compute time, as the app reports
    acceptance_rate: float | None = None
    tokens_per_target_pass: float | None = None
    runs: list[float] = field(default_factory=list)

    @classmethod
    def of(cls, result: MethodResult) -> Measurement:
        """The bench's cell for one method's harness result."""
        totals = result.totals
        return cls(
            tokens_per_s=result.tokens_per_s,
            new_tokens=result.new_tokens,
            engine_tokens_per_s=totals.tokens_per_s if totals else None,
            acceptance_rate=totals.acceptance_rate if totals else None,
            tokens_per_target_pass=totals.tokens_per_target_pass if totals else None,
            runs=[round(rate, 3) for rate in result.rates],
        )


@dataclass
class Row:
    """One task, temperature, γ and drafter: plain, specviz and transformers' counterpart."""

    task: str
    temperature: float
    gamma: str  # "5", "adaptive(5)" or "cost(≤5)"
    plain: Measurement
    specviz: Measurement
    transformers: Measurement | None  # None: not run, or transformers has no such drafter
    drafter: str = DEFAULT_DRAFTER  # the drafter spec specviz drafted with
    # llama.cpp's llama-server on the same GGUF pair (None: not run): plain decoding of the
    # target, and its speculative decoding by the configs tab's command for this row (None where
    # llama.cpp has no equivalent of the drafter).
    llama_cpp_plain: Measurement | None = None
    llama_cpp: Measurement | None = None

    @property
    def speedup(self) -> float:
        return self.specviz.tokens_per_s / self.plain.tokens_per_s

    @property
    def transformers_speedup(self) -> float | None:
        if self.transformers is None:
            return None
        return self.transformers.tokens_per_s / self.plain.tokens_per_s

    @property
    def llama_cpp_speedup(self) -> float | None:
        """llama.cpp's speculative decoding over its own plain decoding, in the same run."""
        if self.llama_cpp is None or self.llama_cpp_plain is None:
            return None
        return self.llama_cpp.tokens_per_s / self.llama_cpp_plain.tokens_per_s


@dataclass(frozen=True)
class BenchGrid:
    """What the benchmark measures: every task × temperature, each at every γ."""

    tasks: tuple[str, ...]
    gammas: tuple[int, ...]
    adaptive_start: int  # the starting γ of the adaptive row; 0: no adaptive row
    temperatures: tuple[float, ...]
    repeats: int
    # Every other setting (token budget, seed, top-k/p, the draft stops: transformers gets the
    # per-token one, and has no cumulative stop); γ and temperature are the grid's.
    base: GenerationSettings
    transformers: bool = True  # also run transformers' counterpart of each drafter
    time_budget_s: float | None = None  # None: no limit
    drafters: tuple[str, ...] = (DEFAULT_DRAFTER,)  # drafter specs: a row each per γ
    # The longest γ of the cost-schedule row (γ chosen per cycle from the step costs measured at
    # load); 0: no such row.
    cost_cap: int = 0
    # The prompts per task group (None: the preset's examples), and how many of each group every
    # method decodes in turn per repeat, pooled into one row (0: all of them).
    prompts: Mapping[str, Sequence[str]] | None = None
    prompts_per_task: int = 1
    engines: tuple[str, ...] = ()  # other engines' lanes: "llama.cpp"

    def prompt_table(self, preset: Any) -> Mapping[str, Sequence[str]]:
        """The prompts per task group the grid measures: its own, or the preset's."""
        return preset.prompts if self.prompts is None else self.prompts

    def variants(self, base: GenerationSettings) -> list[tuple[str, GenerationSettings]]:
        """(γ label, settings) of each row of one task and temperature: the fixed γs, then the
        heuristic schedule, then the cost schedule."""
        fixed = replace(base, adaptive_gamma=False, cost_gamma=False)
        rows = [(str(gamma), replace(fixed, gamma=gamma)) for gamma in self.gammas]
        if self.adaptive_start:
            adaptive = replace(fixed, gamma=self.adaptive_start, adaptive_gamma=True)
            rows.append((f"adaptive({self.adaptive_start})", adaptive))
        if self.cost_cap:
            rows.append(
                (f"cost(≤{self.cost_cap})", replace(fixed, gamma=self.cost_cap, cost_gamma=True))
            )
        return rows


@dataclass
class BenchResult:
    """The rows measured, and what the time budget cut."""

    rows: list[Row]
    cut: list[str]


def run_bench_grid(
    pair: Any,
    preset: Any,
    grid: BenchGrid,
    on_row: Callable[[Row], None] | None = None,
    progress: Progress | None = None,
    lanes: LlamaLanes | None = None,
) -> BenchResult:
    """Measure the grid on the loaded pair with the preset's prompts; on_row gets each new row.

    One harness measurement per task and temperature interleaves plain decoding with specviz and
    transformers at every γ, and with llama.cpp's plain and speculative lanes when *lanes* (its
    servers) is given. Once the time budget is spent, the remaining groups are skipped and
    named in `cut`.
    """
    table = grid.prompt_table(preset)
    check_prompts(preset, grid.tasks, table)
    began = time.perf_counter()
    warm_up = _warm_up_methods(pair, preset)
    rows: list[Row] = []
    cut: list[str] = []
    for temperature in grid.temperatures:
        for task in grid.tasks:
            left = None
            if grid.time_budget_s is not None:
                left = grid.time_budget_s - (time.perf_counter() - began)
                if left <= 0:
                    cut.append(f"{task} T={temperature:g}: skipped")
                    continue
            prompts = task_prompts(table, task, grid.prompts_per_task)
            prompt_ids = [pair.encode_prompt(text, chat=preset.chat_template) for text in prompts]
            base = replace(grid.base, temperature=temperature)
            variants = grid.variants(base)
            where = f"{task} T={temperature:g}"
            methods = [_each_prompt(plain_decoding, pair, prompt_ids, base, f"{where} plain")]
            llama_plain_index = None
            if lanes is not None:
                llama_plain_index = len(methods)
                plain_server = lanes.server(plain_command(preset))
                methods.append(
                    _each_prompt(
                        _llama(plain_server), pair, prompt_ids, base, f"{where} llama.cpp plain"
                    )
                )
                warm_up += _llama_warm_up(plain_server, pair, preset)
            # Each row's specviz method, transformers' counterpart and llama.cpp's (None: none),
            # by index.
            planned: list[tuple[str, str, int, int | None, int | None]] = []
            for label, settings in variants:
                for drafter in grid.drafters:
                    row_name = f"{where} γ={label} {drafter}"
                    spec_index = len(methods)
                    methods.append(
                        _each_prompt(
                            _specviz(drafter), pair, prompt_ids, settings, f"{row_name} specviz"
                        )
                    )
                    counterpart = None
                    # transformers has no cost schedule: the fixed rows hold its runs.
                    if grid.transformers and not settings.cost_gamma:
                        counterpart = _each_prompt(
                            _transformers(drafter),
                            pair,
                            prompt_ids,
                            settings,
                            f"{row_name} transformers",
                        )
                    hf_index = None if counterpart is None else len(methods)
                    if counterpart is not None:
                        methods.append(counterpart)
                    llama_index = None
                    command = None
                    # llama.cpp has no γ schedule: its lanes are the fixed rows'.
                    if (
                        lanes is not None
                        and not settings.adaptive_gamma
                        and not settings.cost_gamma
                    ):
                        command = llama_command(preset, drafter, settings)
                    if lanes is not None and command is not None:
                        server = lanes.server(command)
                        llama_index = len(methods)
                        methods.append(
                            _each_prompt(
                                _llama(server),
                                pair,
                                prompt_ids,
                                settings,
                                f"{row_name} llama.cpp",
                            )
                        )
                        warm_up += _llama_warm_up(server, pair, preset)
                    planned.append((label, drafter, spec_index, hf_index, llama_index))
            measured = measure(methods, grid.repeats, warm_up, left, progress)
            warm_up = []  # once per process
            cut.extend(measured.cut)
            plain = Measurement.of(measured.methods[0])
            llama_plain = (
                None
                if llama_plain_index is None
                else Measurement.of(measured.methods[llama_plain_index])
            )
            for label, drafter, spec_index, hf_index, llama_index in planned:
                spec = Measurement.of(measured.methods[spec_index])
                hf = None if hf_index is None else Measurement.of(measured.methods[hf_index])
                llama = (
                    None if llama_index is None else Measurement.of(measured.methods[llama_index])
                )
                row = Row(task, temperature, label, plain, spec, hf, drafter, llama_plain, llama)
                rows.append(row)
                if on_row is not None:
                    on_row(row)
    return BenchResult(rows, cut)


def check_prompts(
    preset: Any, tasks: Sequence[str], table: Mapping[str, Sequence[str]] | None = None
) -> None:
    """Refuse an empty task list or a task there is no prompt for (in *table*, default the
    preset's examples)."""
    table = preset.prompts if table is None else table
    unknown = [task for task in tasks if task not in table]
    if unknown or not tasks:
        missing = ", ".join(unknown) if unknown else Phrase("error.bench.no_task")
        raise UserError("error.bench.no_prompts", preset=preset.id, tasks=missing)


def task_prompts(table: Mapping[str, Sequence[str]], task: str, count: int) -> list[str]:
    """The first *count* prompts of the task group (0: all): what every method of the task's
    rows decodes in turn."""
    if count < 0:
        raise UserError("error.tasks.per_task", count=count)
    prompts = list(table[task])
    return prompts[:count] if count else prompts


def task_prompt_ids(pair: Any, preset: Any, task: str) -> Any:
    """The task's first example prompt as ids (1, T), with the chat template if the preset uses it."""
    return pair.encode_prompt(preset.prompts[task][0], chat=preset.chat_template)


Build = Callable[[Any, Any, GenerationSettings, str], Method | None]


def _each_prompt(
    build: Build, pair: Any, prompt_ids: Sequence[Any], settings: GenerationSettings, name: str
) -> Any:
    """build's method for one prompt, or one that runs it on each prompt in turn (None where
    build has no method, as for a drafter transformers has no counterpart of)."""
    built = [build(pair, ids, settings, f"{name} #{n}") for n, ids in enumerate(prompt_ids, 1)]
    parts = [part for part in built if part is not None]
    if len(parts) < len(built):
        return None
    if len(parts) == 1:
        return replace(parts[0], name=name)
    return in_turn(name, parts)


def _specviz(drafter: str) -> Build:
    def build(pair: Any, ids: Any, settings: GenerationSettings, name: str) -> Method:
        return speculative_decoding(pair, ids, settings, name, drafter)

    return build


def _transformers(drafter: str) -> Build:
    def build(pair: Any, ids: Any, settings: GenerationSettings, name: str) -> Method | None:
        return transformers_counterpart(drafter, pair, ids, settings, name)

    return build


def _llama(server: LlamaServer) -> Build:
    def build(pair: Any, ids: Any, settings: GenerationSettings, name: str) -> Method:
        return llama_cpp_decoding(server, ids, settings, name)

    return build


def _llama_warm_up(server: LlamaServer, pair: Any, preset: Any) -> list[Method]:
    """One short request to a server the first time a measurement uses it (its first request
    pages the model in)."""
    if server.warmed:
        return []
    server.warmed = True
    prompt_ids = pair.encode_prompt(_WARM_UP_PROMPT, chat=preset.chat_template)
    settings = GenerationSettings(max_new_tokens=_WARM_UP_TOKENS)
    return [llama_cpp_decoding(server, prompt_ids, settings, "warm-up llama.cpp")]


def _warm_up_methods(pair: Any, preset: Any) -> list[Method]:
    """One short run of each path, so one-time costs (allocations, kernels) are not measured."""
    prompt_ids = pair.encode_prompt(_WARM_UP_PROMPT, chat=preset.chat_template)
    settings = GenerationSettings(max_new_tokens=_WARM_UP_TOKENS)
    return [
        plain_decoding(pair, prompt_ids, settings, "warm-up plain"),
        speculative_decoding(pair, prompt_ids, settings, "warm-up specviz"),
        assisted_generation(pair, prompt_ids, settings, "warm-up transformers"),
    ]
