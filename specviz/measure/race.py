"""The race: plain decoding and up to a few drafters on one prompt, timed as repeats.

Every lane decodes the same prompt with the same settings and seed on the loaded pair, through the
engine the app runs (`methods.plain_decoding`, `methods.speculative_decoding`), and the harness
interleaves the repeats (plain, A, B, plain, A, B, ...) so drift on a shared machine hits every
lane alike. A lane's speed is its engine time: the sum of its cycles' (or steps') compute time
plus a drafter's own preparation, the clock the replay plays back. Each lane reports the median
tokens/s of its repeats with their range; a drafter's speedup is its median tokens/s over plain
decoding's, with the range of each repeat's own ratio (race_records.LaneGain). The share of the
CPU other programs took while the race ran is recorded with it, for the result's firmness
(specviz.measure.firmness).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace

import torch

from specviz.core.engine import DraftModelPairLike
from specviz.core.settings import GenerationSettings
from specviz.drafters.registry import drafter_entry, drafter_words
from specviz.engines.llama_server import LlamaServer
from specviz.measure.harness import Update, iter_measurements, never, warm_up_settings
from specviz.measure.llama_cpp import llama_cpp_decoding
from specviz.measure.methods import plain_decoding, speculative_decoding
from specviz.measure.race_records import (
    LLAMA_PLAIN_LANE,
    LLAMA_SPEC_LANE,
    PLAIN_LANE,
    Lane,
    LaneRun,
    RaceProgress,
    RaceResult,
)
from specviz.measure.spread import DEFAULT_REPEATS
from specviz.models.cpu_load import OthersShare
from specviz.text import Phrase

__all__ = ["iter_race"]

_LLAMA_WORDS = {LLAMA_PLAIN_LANE: "race.llama.plain", LLAMA_SPEC_LANE: "race.llama.spec"}


def iter_race(
    pair: DraftModelPairLike,
    prompt_ids: torch.Tensor,
    settings: GenerationSettings,
    drafters: Sequence[str],
    repeats: int = DEFAULT_REPEATS,
    *,
    warm_up: bool = True,
    should_stop: Callable[[], bool] = never,
    llama: Sequence[tuple[str, LlamaServer]] = (),
) -> Iterator[RaceProgress]:
    """Race plain decoding against each drafter spec, *repeats* times interleaved; a stream.

    *llama* adds llama.cpp's lanes after the drafters: (lane name, its running llama-server),
    LLAMA_PLAIN_LANE and LLAMA_SPEC_LANE, fed the same prompt ids and settings.
    The arguments are checked here (at least one drafter, distinct specs, repeats ≥ 1), before
    the first run.
    """
    if not drafters and not llama:
        raise ValueError("a race needs at least one drafter")
    methods = [
        replace(
            plain_decoding(pair, prompt_ids, settings, PLAIN_LANE),
            label=Phrase("race.progress.plain"),
        )
    ] + [
        replace(
            speculative_decoding(pair, prompt_ids, settings, spec, spec),
            label=_lane_words(spec),
        )
        for spec in drafters
    ]
    methods += [
        replace(
            llama_cpp_decoding(server, prompt_ids, settings, name),
            label=Phrase("race.progress.llama", lane=Phrase(_LLAMA_WORDS[name])),
        )
        for name, server in llama
    ]
    short = warm_up_settings(settings)
    warm_ups = [replace(method, settings=short) for method in methods] if warm_up else []
    updates = iter_measurements(methods, repeats, warm_ups, should_stop=should_stop)
    return _progress(updates, repeats)


def _lane_words(spec: str) -> Phrase:
    """A drafter lane in progress messages: its kind's name in the reader's language, then the
    spec it runs ("Prompt lookup (copies) [lookup:n=3]"); an unknown kind is refused here. A
    drafter without a label in the text tables (the label is optional) is named by its kind."""
    return Phrase("race.progress.lane", drafter=drafter_words(drafter_entry(spec).kind), spec=spec)


def _progress(updates: Iterator[Update], repeats: int) -> Iterator[RaceProgress]:
    others = OthersShare()  # from the warm-up to each update: the whole race so far
    for update in updates:
        measured = update.measurements
        lanes = tuple(
            Lane(
                result.name,
                tuple(LaneRun(sample.repeat, sample.outcome) for sample in result.samples),
            )
            for result in measured.methods
        )
        complete = update.finished and measured.complete
        result = RaceResult(lanes, repeats, complete, others.share())
        yield RaceProgress(update.fraction, update.message, result, update.finished)
