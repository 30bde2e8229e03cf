"""The probability inspector: tables and panels read back from real and hand-built cycles."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch
from tiny_models import TinyPair, eos_heavy_pair
from ui_events import XSS, XSS_IMG, sample_run

from specviz.core.engine import GenerationSettings, speculative_generate
from specviz.core.events import Cycle
from specviz.drafters.registry import make_drafter
from specviz.labs.inspector import (
    draft_end_text,
    extra_text,
    inspector_figure,
    inspector_html,
    inspector_lines,
)
from specviz.models.presets import DEFAULT_DRAFTER
from specviz.views.numbers import prob, prob_pair
from specviz.views.verdicts import draft_sentence

PROMPT = torch.tensor([list(b"def fib(n):")])


def real_cycles(pair: TinyPair, temperature: float) -> list[Cycle]:
    settings = GenerationSettings(
        gamma=4, temperature=temperature, max_new_tokens=40, stop_on_eos=False
    )
    return list(speculative_generate(pair, PROMPT, settings, make_drafter(DEFAULT_DRAFTER, pair)))


def test_panels_show_q_and_p_with_the_drafted_token_marked(tiny_pair: TinyPair) -> None:
    cycles = real_cycles(tiny_pair, 1.0)
    cycle = next(c for c in cycles if c.rejection is not None and c.draft_len >= 2)
    fig = inspector_figure(cycle)
    bars = [trace for trace in fig.data if trace.type == "bar"]
    # q and p on every position, plus the residual on the rejected one.
    assert len(bars) == 2 * cycle.draft_len + 1
    q_bars = [trace for trace in bars if trace.name == "q (draft)"]
    p_bars = [trace for trace in bars if trace.name == "p (target)"]
    for token, q_bar, p_bar in zip(cycle.drafted, q_bars, p_bars, strict=True):
        marked = [i for i, label in enumerate(q_bar.x) if label.startswith("▶")]
        assert len(marked) == 1
        assert q_bar.y[marked[0]] == pytest.approx(token.q_draft)
        assert p_bar.y[marked[0]] == pytest.approx(token.p_target)
    residual = next(trace for trace in bars if trace.name.startswith("residual"))
    assert max(residual.y) == pytest.approx(cycle.rejection.top_residual[0].prob)
    resampled = cycle.emitted[cycle.accepted_len]
    replacement_labels = [label for label in residual.x if label.endswith("↻")]
    assert len(replacement_labels) == (
        1 if resampled.token_id in {e.token_id for e in cycle.rejection.top_residual} else 0
    )
    titles = [annotation.text for annotation in fig.layout.annotations]
    assert any("rejected: the die showed" in title for title in titles)


def test_table_states_each_decision(tiny_pair: TinyPair) -> None:
    cycle = next(c for c in real_cycles(tiny_pair, 1.0) if c.rejection is not None)
    page = inspector_html(cycle, 9)
    assert f"Cycle {cycle.index + 1}</b> of 9" in page
    assert page.count("<tr class=") == cycle.draft_len
    rejected = cycle.drafted[cycle.accepted_len]
    u, accept = prob_pair(rejected.uniform, rejected.accept_prob)
    assert f"rejected: the die showed {u}, above the {accept} chance of keeping it" in page
    assert f"<td>{u}</td>" in page and f"<td>{accept}</td>" in page
    assert "residual norm(max(0, p − q))" in page


def test_greedy_cycles_compare_argmaxes(tiny_pair: TinyPair) -> None:
    cycles = real_cycles(tiny_pair, 0.0)
    token = next(t for c in cycles for t in c.drafted if t.tested and not t.accepted)
    cycle = next(c for c in cycles if token in c.drafted)
    assert draft_sentence(cycle, token).startswith("rejected: the target's top choice is ")
    assert "top choice" in extra_text(cycle)
    lines = inspector_lines(cycle)
    # The head, three lines a position, the extra token, why the draft ended, who drafted.
    assert len(lines) == 1 + 3 * cycle.draft_len + 1 + (1 if draft_end_text(cycle) else 0) + 1
    assert lines[-1] == "  Drafted by Draft model (guesses): " + (
        "a draft model's guesses, q(x) its probability of each."
    )
    assert lines[0].endswith("(greedy)")


@pytest.mark.parametrize(
    ("stops", "end", "words"),
    [
        ({"draft_stop_cumulative": 0.5}, "cumulative", "estimate that every guess is right"),
        ({"draft_stop_below": 0.5}, "confidence", "per-token confidence stop"),
    ],
)
def test_the_inspector_says_why_a_draft_stopped_itself(
    tiny_pair: TinyPair, stops: dict[str, float], end: str, words: str
) -> None:
    settings = GenerationSettings(
        gamma=8, temperature=1.0, max_new_tokens=40, stop_on_eos=False, **stops
    )
    cycles = list(
        speculative_generate(tiny_pair, PROMPT, settings, make_drafter(DEFAULT_DRAFTER, tiny_pair))
    )
    cycle = next(c for c in cycles if c.draft_end == end)
    text = draft_end_text(cycle)
    assert words in text and f"after {cycle.draft_len}:" in text
    if end == "cumulative":  # the product is written out and matches the records
        product = 1.0
        for token in cycle.drafted:
            product *= token.top_q[0].prob
        assert f"= {prob(product)}, fell below" in text
    assert any(text in line for line in inspector_lines(cycle))
    assert "sv-inspect-note" in inspector_html(cycle)
    # A draft that simply reached γ gets no note.
    full = next(c for c in real_cycles(tiny_pair, 1.0) if c.draft_end == "gamma")
    assert draft_end_text(full) == "" and "sv-inspect-note" not in inspector_html(full)


def test_the_inspector_writes_out_a_lowered_doubt_scale(tiny_pair: TinyPair) -> None:
    settings = GenerationSettings(
        gamma=8, temperature=1.0, max_new_tokens=40, stop_on_eos=False, draft_stop_cumulative=0.5
    )
    runs = speculative_generate(
        tiny_pair, PROMPT, settings, make_drafter(DEFAULT_DRAFTER, tiny_pair)
    )
    cycle = replace(next(c for c in runs if c.draft_end == "cumulative"), draft_doubt_scale=0.5)
    factors = [1.0 - 0.5 * (1.0 - token.top_q[0].prob) for token in cycle.drafted]
    text = draft_end_text(cycle)
    assert " × ".join(prob(factor) for factor in factors) in text
    assert "Each factor is 1 − 0.50 × (1 − its top probability)" in text


def test_the_inspector_says_a_draft_ended_at_an_end_of_sequence_guess() -> None:
    pair = eos_heavy_pair()
    settings = GenerationSettings(gamma=8, temperature=1.0, max_new_tokens=40)
    cycle = next(
        cycle
        for seed in range(40)
        for cycle in speculative_generate(
            pair, PROMPT, replace(settings, seed=seed), make_drafter(DEFAULT_DRAFTER, pair)
        )
        if cycle.draft_end == "eos"
    )
    assert f"stopped after {cycle.draft_len}: its last guess ends the text" in draft_end_text(cycle)
    assert "sv-inspect-note" in inspector_html(cycle)


def test_token_text_cannot_inject_markup() -> None:
    cycle = sample_run()[0]  # drafts and a resampled token made of script and img tags
    page = inspector_html(cycle)
    assert "<script" not in page and "<img" not in page
    fig = inspector_figure(cycle)
    shown = " ".join(
        [annotation.text for annotation in fig.layout.annotations]
        + [str(label) for trace in fig.data for label in trace.x]
    )
    assert "<script" not in shown and "<img" not in shown
    assert XSS and XSS_IMG  # the fixtures really carry markup


def test_placeholders_without_a_cycle() -> None:
    assert "pick a cycle" in inspector_html(None)
    assert inspector_figure(None).layout.annotations[0].text == "no cycle selected"
