"""A pair's step costs on this machine, measured at load and cached: v(k), c, and the draft format.

Whether speculation pays depends on the machine: a target forward of several new tokens costs
about one single step on a CPU with AVX512-BF16 and several on an AVX2-only one without specviz's
kernel, so the best γ and the best draft format differ from machine to machine
(docs/performance.md#step-costs-measured-at-load).
This module measures, through each model's ModelRunner (the forward the app runs):

- the target's v(k) for k = 1, 2, ...: one forward of k new tokens after a cached context, over
  one of a single token (the least of ROUNDS runs each, so a busy moment on a shared machine does
  not count). Sizes are added until GAMMA_MEASURED + 1 or until the first round has spent
  SIZES_BUDGET_S (at least MIN_SIZES): a fast device measures long drafts' costs in a fraction of
  a second, a slow CPU, where long drafts never pay, stops after a few seconds;
- each draft format's step cost c: its one-token step over the target's, both the least of
  ROUNDS runs timed back to back, so a ratio of times taken under the same load;
- each draft format's read cost: its forward of READ_ROWS new tokens (as when it reads a prompt,
  keeping one position's logits) over the target's one-token step, timed in the same rounds;
- each draft format's agreement with the target: the fraction of positions of a short text where
  the draft's most likely next token, fed one token at a time as it drafts, is the target's.

With draft_quantization = "auto" the loader tries every format this device runs and keeps, among
those whose agreement is within AGREEMENT_SLACK of the best, the one that drafts a reference
answer soonest: a REFERENCE_PROMPT-token prompt read once, then REFERENCE_STEPS one-token steps
(choose_draft_format). A step alone would miss that some formats read many tokens at once at twice
the others' speed (on an AVX2 CPU, 4-bit weights are fast to step with and slow to read with).
CostMeasurer measures the target once and then one format at a time, so the loader need hold only
the candidate and the choice so far (loader.measure_in_turn). An int4dual draft's crossovers (the
row count up to which each layer shape steps in 4 bits) are kept with the costs, so a later load
sets them instead of timing them again.
The result is cached as a small JSON file under the user's cache folder, keyed by the machine (CPU
model and flags or GPU name, threads, torch version), the model sources, the dtype and the
requested draft format; a later load reads it, and --remeasure-costs measures again.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch

from specviz.core.cost_model import StepCosts
from specviz.core.device import sync
from specviz.core.machine import read_machine
from specviz.models.bundled import cache_root
from specviz.models.cpu_load import BUSY_SHARE
from specviz.models.runner import ModelRunner
from specviz.text import Joined, Phrase

# Bump when what is measured or how changes, so cached costs from older code are not trusted.
COST_VERSION = 4  # 2: the read cost; 3: int4dual's crossovers; 4: v(k) on the final products
# The longest draft whose verification is measured: v(k) up to k = GAMMA_MEASURED + 1.
GAMMA_MEASURED = 8
ROUNDS = 3  # timed runs per size; the least counts
SIZES_BUDGET_S = 2.0  # the first round adds sizes until it has spent this long ...
MIN_SIZES = 3  # ... measuring at least v(1..3)
# The agreement text's first PREFILL tokens are fed at once; each later one is a one-token draft
# step, timed, whose prediction is compared with the target's.
PREFILL = 16
TEXT_TOKENS = 64
# A format may agree with the target on this fraction fewer positions than the best and still be
# chosen (at least one position): teacher-forced agreement on one short text moves by a position
# or two between formats that decode alike.
AGREEMENT_SLACK = 0.02
# The read cost's forward: this many new tokens after the text, one position's logits kept.
READ_ROWS = 32
# The reference answer "auto" weighs formats by: a prompt of REFERENCE_PROMPT tokens read once,
# then REFERENCE_STEPS one-token draft steps (about what the bundled preset's 96-token answers
# take at γ = 5 with τ near 3.5). The bundled presets' example prompts run from 20 to 150 tokens.
REFERENCE_PROMPT = 128
REFERENCE_STEPS = 128
# Formats "auto" tries on a CPU (int8 kernels are CPU-only); elsewhere only "none".
CPU_FORMATS = ("none", "int8", "int8wo", "int4wo", "int4head", "int4dual")

# Code and prose, as the bundled presets' tasks mix them: the text the agreement is measured on.
AGREEMENT_TEXT = (
    "def moving_average(values, window):\n"
    '    """Return the averages of each run of `window` consecutive values."""\n'
    "    if window <= 0:\n"
    '        raise ValueError("window must be positive")\n'
    "    total = sum(values[:window])\n"
    "    averages = [total / window]\n"
    "    for index in range(window, len(values)):\n"
    "        total += values[index] - values[index - window]\n"
    "        averages.append(total / window)\n"
    "    return averages\n\n"
    "The lighthouse keeper climbed the stairs one last time. Below him the sea was calm, and "
    "the boats of the village were coming home before the storm that the radio had promised."
)


@dataclass(frozen=True)
class DraftTrial:
    """One draft format as measured: its step cost and how often it agrees with the target."""

    # "none" (the preset's dtype), "int8", "int8wo", "int4wo", "int4head" or "int4dual"
    draft_format: str
    draft_cost: float  # c: one draft step over one target step
    draft_step_s: float
    agreement: float  # fraction of the text's positions where the draft's argmax is the target's
    positions: int
    read_cost: float  # a forward of READ_ROWS new tokens over one target step

    @property
    def reference_read(self) -> float:
        """Target steps' worth of reading a REFERENCE_PROMPT-token prompt (reads scale about
        linearly with their tokens)."""
        return self.read_cost * REFERENCE_PROMPT / READ_ROWS

    @property
    def reference_cost(self) -> float:
        """Target steps' worth of drafting for the reference answer: the prompt's read, then
        REFERENCE_STEPS draft steps."""
        return self.reference_read + REFERENCE_STEPS * self.draft_cost


@dataclass(frozen=True)
class CostReport:
    """The step costs a pair runs with, every draft format tried, and where the numbers came from."""

    costs: StepCosts  # of the chosen format
    trials: tuple[DraftTrial, ...]  # every format measured (one when the preset fixed it)
    auto: bool  # the format was chosen by measurement (draft_quantization = "auto")
    cached: bool = False  # read from the cache file rather than measured by this load
    # What multiplied the bfloat16 weights while measuring: "torch" or "rows" (bf16_rows' kernel).
    products: str = "torch"
    # An int4dual draft's crossovers as tuned at the first load, (in, out, 4-bit rows) per layer
    # shape: later loads set them rather than time them again, so every process on this machine
    # takes the same product at each size (and a sampled run's path for a seed is the same).
    dual_rows: tuple[tuple[int, int, int], ...] = ()
    # The share of the machine's CPU time other programs took while these costs were timed
    # (cpu_load.OthersShare); None when not known (read from the cache, a GPU, no /proc/stat).
    others_share: float | None = None

    @property
    def busy(self) -> bool:
        """Timed while other programs held more than BUSY_SHARE of the CPU: not to be cached."""
        return self.others_share is not None and self.others_share > BUSY_SHARE

    @property
    def draft_format(self) -> str:
        """The draft format the pair runs."""
        return self.costs.draft_format

    def phrase(self) -> Phrase:
        """The costs and the choice in words, for the app's model info and the CLI's load line."""
        costs = self.costs
        verify = ", ".join(f"{v:.2f}" for v in costs.verify)
        choice: Phrase | str = ""
        if self.auto:
            tried = tuple(
                Phrase(
                    "costs.trial",
                    format=format_words(trial.draft_format),
                    cost=f"{trial.draft_cost:.2f}",
                    read=f"{trial.reference_read:.1f}",
                    reference=REFERENCE_PROMPT,
                    agreement=f"{trial.agreement:.0%}",
                )
                for trial in self.trials
            )
            choice = Phrase(
                "costs.choice",
                trials=Joined("costs.separator", tried),
                reference=REFERENCE_PROMPT,
                steps=REFERENCE_STEPS,
            )
        how = Phrase("costs.how.cached" if self.cached else "costs.how.measured")
        if self.busy:
            how = Phrase("costs.how.busy", share=f"{self.others_share:.0%}")
        return Phrase(
            "costs.summary",
            how=how,
            target_ms=f"{costs.target_step_s * 1000:.0f}",
            verify=verify,
            k_max=len(costs.verify),
            format=format_words(costs.draft_format),
            draft=f"{costs.draft:.2f}",
            choice=choice,
            products=Phrase("costs.products.rows") if self.products == "rows" else "",
        )

    def to_json(self) -> dict[str, Any]:
        """A plain dict for the cache file and the bench's JSON."""
        trials = [asdict(trial) for trial in self.trials]
        return {
            "costs": asdict(self.costs),
            "trials": trials,
            "auto": self.auto,
            "products": self.products,
            "dual_rows": [list(shape_rows) for shape_rows in self.dual_rows],
            "others_share": self.others_share,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CostReport:
        """The report to_json wrote, marked as cached; KeyError/TypeError/ValueError if malformed."""
        costs = dict(data["costs"])
        costs["verify"] = tuple(float(v) for v in costs["verify"])
        return cls(
            StepCosts(**costs),
            tuple(DraftTrial(**trial) for trial in data["trials"]),
            bool(data["auto"]),
            cached=True,
            products=str(data.get("products", "torch")),
            dual_rows=tuple(
                (int(inputs), int(outputs), int(rows))
                for inputs, outputs, rows in data["dual_rows"]
            ),
        )


def format_words(draft_format: str) -> Phrase | str:
    """A draft format in words: "unquantized" for "none", else its name (int8, int4wo, ...)."""
    return Phrase("costs.format.none") if draft_format == "none" else draft_format


def draft_formats(requested: str, device: torch.device) -> tuple[str, ...]:
    """The draft formats to load: every one this device runs for "auto", else the one asked for."""
    if requested != "auto":
        return (requested,)
    return CPU_FORMATS if device.type == "cpu" else ("none",)


def choose_draft_format(trials: tuple[DraftTrial, ...]) -> DraftTrial:
    """Among the drafts whose agreement is within AGREEMENT_SLACK of the best, the one with the
    least reference cost (a prompt's read and REFERENCE_STEPS steps)."""
    best = max(trial.agreement for trial in trials)
    positions = max(trial.positions for trial in trials)
    slack = max(AGREEMENT_SLACK, 1 / positions) if positions else AGREEMENT_SLACK
    keeps = [trial for trial in trials if trial.agreement >= best - slack - 1e-9]
    return min(keeps, key=lambda trial: trial.reference_cost)


# --- measuring ------------------------------------------------------------------------------


def text_ids(tokenizer: Any) -> torch.Tensor:
    """The agreement text as ids (T,), at most TEXT_TOKENS of them."""
    ids = tokenizer.encode(AGREEMENT_TEXT)
    return torch.tensor(list(ids)[:TEXT_TOKENS], dtype=torch.long)


class CostMeasurer:
    """Measures a target's v(k) once, then each draft format handed to trial, one at a time.

    A draft is needed only while its trial runs, so "auto" can hold one candidate beside the
    chosen-so-far instead of every format at once (six drafts of the bundled pair: 12.1 GB).
    Each trial times the target's one-token step in the same rounds as the draft's step and read,
    so its c and read cost are ratios of times taken under the same load.
    """

    @torch.inference_mode()
    def __init__(
        self,
        target: torch.nn.Module,
        ids: torch.Tensor,
        gamma_measured: int = GAMMA_MEASURED,
        rounds: int = ROUNDS,
        budget_s: float = SIZES_BUDGET_S,
    ) -> None:
        if ids.dim() != 1 or ids.shape[0] < PREFILL + 2:
            raise ValueError(f"the cost text needs at least {PREFILL + 2} tokens, got {ids.shape}")
        self.rounds = rounds
        self.target = ModelRunner(target)
        self.feed = ids.to(self.target.device).view(1, -1)  # (1, T)
        # The target's prediction after each position PREFILL..T-2 (the last logits predict past
        # the text and are dropped); its cache then holds the text, the context steps are timed
        # after.
        logits = self.target.forward(self.feed, logits_to_keep=ids.shape[0] - PREFILL)
        self.predicted = logits[:-1].argmax(-1)
        self.target_s = _target_times(
            self.target, self.feed[0], gamma_measured + 1, rounds, budget_s
        )

    @torch.inference_mode()
    def trial(self, draft_format: str, draft: torch.nn.Module) -> DraftTrial:
        """One format's agreement, step cost and read cost against the target."""
        runner = ModelRunner(draft)
        agreement, positions = _agreement(runner, self.feed, self.predicted)
        target_s, draft_s, read_s = _draft_times(self.target, runner, self.feed[0], self.rounds)
        return DraftTrial(
            draft_format, draft_s / target_s, draft_s, agreement, positions, read_s / target_s
        )

    def report(
        self,
        trials: tuple[DraftTrial, ...],
        auto: bool,
        products: str = "torch",
        dual_rows: tuple[tuple[int, int, int], ...] = (),
    ) -> CostReport:
        """The report of the format chosen among trials (the only one unless auto)."""
        chosen = choose_draft_format(trials) if auto else trials[0]
        verify = tuple(seconds / self.target_s[0] for seconds in self.target_s)
        costs = StepCosts(verify, chosen.draft_cost, self.target_s[0], chosen.draft_format)
        return CostReport(costs, trials, auto, products=products, dual_rows=dual_rows)


def measure_costs(
    target: torch.nn.Module,
    drafts: Mapping[str, torch.nn.Module],
    ids: torch.Tensor,
    auto: bool,
    gamma_measured: int = GAMMA_MEASURED,
    rounds: int = ROUNDS,
    budget_s: float = SIZES_BUDGET_S,
    products: str = "torch",
) -> CostReport:
    """Measure v(k) and every draft's c and agreement on ids (T,); the report keeps the chosen one.

    drafts maps each format to try to its loaded draft; with one format there is nothing to choose.
    """
    measurer = CostMeasurer(target, ids, gamma_measured, rounds, budget_s)
    trials = tuple(measurer.trial(name, draft) for name, draft in drafts.items())
    return measurer.report(trials, auto, products)


def _agreement(
    runner: ModelRunner, feed: torch.Tensor, predicted: torch.Tensor
) -> tuple[float, int]:
    """The fraction of positions PREFILL..T-2 where the draft, fed as it drafts (a prefill, then
    one token per forward), predicts the target's next token; and how many positions."""
    feed = feed.to(runner.device)
    guesses = [runner.forward(feed[:, : PREFILL + 1]).argmax(-1)[-1]]
    for position in range(PREFILL + 1, feed.shape[1] - 1):
        guesses.append(runner.forward(feed[:, position : position + 1]).argmax(-1)[-1])
    agree = int((torch.stack(guesses).to(predicted.device) == predicted).sum())
    return agree / len(guesses), len(guesses)


def _target_times(
    target: ModelRunner, pool: torch.Tensor, sizes: int, rounds: int, budget_s: float
) -> list[float]:
    """Seconds of the target's forward of 1..n new tokens (n ≤ sizes, see SIZES_BUDGET_S), each
    the least of rounds runs."""
    target_s: list[float] = []
    began = time.perf_counter()
    for round_index in range(rounds):
        for size in range(1, sizes + 1):
            if round_index == 0 and size > MIN_SIZES and time.perf_counter() - began > budget_s:
                sizes = size - 1  # the first round decides how many sizes are measured
                break
            seconds = time_forward(target, pool, size)
            if round_index == 0:
                target_s.append(seconds)
            target_s[size - 1] = min(target_s[size - 1], seconds)
    return target_s


def _draft_times(
    target: ModelRunner, draft: ModelRunner, pool: torch.Tensor, rounds: int
) -> tuple[float, float, float]:
    """Seconds of the target's one-token step, the draft's one-token step and the draft's read of
    READ_ROWS tokens, each the least of rounds runs; each round times the three back to back."""
    reads = pool.repeat(-(-READ_ROWS // pool.shape[0]))[:READ_ROWS]
    target_s = draft_s = read_s = float("inf")
    for _ in range(rounds):
        target_s = min(target_s, time_forward(target, pool, 1))
        draft_s = min(draft_s, time_forward(draft, pool, 1))
        read_s = min(read_s, time_forward(draft, reads, READ_ROWS, 1))
    return target_s, draft_s, read_s


def time_forward(
    runner: ModelRunner, pool: torch.Tensor, size: int, logits_to_keep: int | None = None
) -> float:
    """Seconds of one forward of size tokens after the cache, which is then rolled back; logits
    are kept for every fed position unless logits_to_keep says fewer (a verify step keeps them
    all, a read one). The token values (the first of pool) do not change the cost."""
    sync(runner.device)
    began = time.perf_counter()
    keep = size if logits_to_keep is None else logits_to_keep
    runner.forward(pool[:size].view(1, size), logits_to_keep=keep)
    sync(runner.device)
    seconds = time.perf_counter() - began
    runner.rollback(size)
    return seconds


# --- the cache ------------------------------------------------------------------------------


def machine_key(device: torch.device) -> dict[str, Any]:
    """What the costs depend on besides the models: the processor, threads and torch."""
    key: dict[str, Any] = {"torch": torch.__version__, "threads": torch.get_num_threads()}
    if device.type == "cuda":
        key["gpu"] = torch.cuda.get_device_name(device)
    else:
        machine = read_machine()
        key["cpu"] = machine.cpu_name
        # The flags decide which kernels run (avx512_bf16, amx...); a hash keeps the key short.
        flags = " ".join(sorted(machine.cpu_flags))
        key["cpu_flags"] = hashlib.sha256(flags.encode()).hexdigest()[:16]
    return key


def cost_key(
    draft: str,
    target: str,
    dtype: torch.dtype,
    draft_format: str,
    device: torch.device,
    products: str = "torch",
) -> dict[str, Any]:
    """The cache key of one pair's costs: the machine, the sources, dtype, requested format and
    what multiplies bfloat16 weights (bf16_rows: "torch" or "rows")."""
    return {
        "version": COST_VERSION,
        **machine_key(device),
        "draft": draft,
        "target": target,
        "dtype": str(dtype).removeprefix("torch."),
        "draft_format": draft_format,
        "products": products,
    }


def costs_folder() -> Path:
    """Where the cost files live: the step-costs folder of the user's specviz cache."""
    return cache_root() / "step-costs"


def cost_file(key: Mapping[str, Any], folder: Path) -> Path:
    """Where the costs of key are cached in folder: one small JSON file per key."""
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:20]
    return folder / f"{digest}.json"


def read_cached(key: Mapping[str, Any], folder: Path) -> CostReport | None:
    """The cached report for key, None when there is none (or it is unreadable or for another key)."""
    path = cost_file(key, folder)
    try:
        data = json.loads(path.read_text())
        if data.get("key") != dict(key):
            return None
        return CostReport.from_json(data["report"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def write_cached(key: Mapping[str, Any], report: CostReport, folder: Path) -> None:
    """Cache report under key; a folder that cannot be written only means measuring next time."""
    path = cost_file(key, folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(f".{os.getpid()}.tmp")
        temporary.write_text(json.dumps({"key": dict(key), "report": report.to_json()}, indent=1))
        temporary.replace(path)  # atomic: a reader never sees half a file
    except OSError:
        pass
