"""Greedy equality: greedy speculative decoding against greedy plain decoding, token for token,
staged between forwards so the app can stop it."""

from __future__ import annotations

import torch
from tiny_models import TinyPair

from specviz.core.settings import GenerationSettings
from specviz.labs.exactness.greedy import greedy_equality, iter_greedy_equality

PROMPT = torch.tensor([list(b"def fib(n):")])  # 11 byte tokens


def test_greedy_speculative_equals_plain_in_float32(tiny_pair: TinyPair) -> None:
    settings = GenerationSettings(gamma=4, max_new_tokens=40, stop_on_eos=False, temperature=0.9)
    report = greedy_equality(tiny_pair, PROMPT, settings)
    assert report.identical and report.first_difference is None
    assert len(report.plain_ids) == 40 and report.speculative_ids == report.plain_ids
    assert report.speculative_text == report.plain_text
    assert report.target_dtype == "float32" and not report.reduced_precision


def test_greedy_equality_is_staged_after_every_cycle_step_and_prompt_chunk(
    tiny_pair: TinyPair,
) -> None:
    settings = GenerationSettings(gamma=3, max_new_tokens=12, stop_on_eos=False)
    stages = list(iter_greedy_equality(tiny_pair, PROMPT, settings, prefill_chunk=4))
    report = stages[-1].result
    assert report is not None and report == greedy_equality(tiny_pair, PROMPT, settings)
    assert [stage.finished for stage in stages] == [False] * (len(stages) - 1) + [True]
    fractions = [stage.fraction for stage in stages]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    by_run = {
        run: [s for s in stages if s.message.key == f"exactness.greedy.progress.{run}"]
        for run in ("speculative", "plain")
    }
    # Each run reads the 11-token prompt's first 8 in two chunks of 4 (a stage after each),
    # then stages once per cycle (speculative, up to 3 drafts each) or per token (plain).
    assert [s.message.values["done"] for s in by_run["plain"]] == [0, 0, *range(1, 13)]
    speculative = [s.message.values["done"] for s in by_run["speculative"]]
    assert speculative[:2] == [0, 0] and speculative[-1] == 12
    assert 12 / 4 <= len(speculative) - 2 <= 12
