"""The exactness lab on models whose law is known in closed form: exact rule passes, wrong fails."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
import torch
from scipy.stats import chi2_contingency, chisquare
from tiny_models import ByteTokenizer, MarkovLM, TinyPair, random_transition

import specviz.labs.exactness.experiment
from specviz.core.sampling import logits_to_probs
from specviz.core.settings import GenerationSettings
from specviz.labs.exactness.charts import distribution_chart, samples_needed_chart
from specviz.labs.exactness.experiment import ExactnessReport, iter_exactness_lab
from specviz.labs.exactness.panel import exactness_html
from specviz.labs.exactness.significance import samples_needed, samples_needed_for_shift
from specviz.measure.harness import staged_result

LETTERS = list(range(ord("a"), ord("a") + 8))  # the chains below only ever emit these bytes
PROMPT = torch.tensor([list(b"ab")])
SAMPLED = GenerationSettings(gamma=2, temperature=1.0, seed=7)


def run_exactness_lab(*args: Any, progress: Any = None, **kwargs: Any) -> ExactnessReport:
    """The exactness lab run to its end."""
    return staged_result(iter_exactness_lab(*args, **kwargs), progress)


class BatchMarkovLM(MarkovLM):
    """MarkovLM that also takes a batch of rows on a repeated cache, and records every row fed."""

    def __init__(self, transition: torch.Tensor) -> None:
        super().__init__(transition)
        self.law: torch.Tensor = transition  # (V, V) P(next | last)
        self.rows: list[tuple[int, ...]] = []

    def forward(
        self,
        input_ids: torch.Tensor,
        past_key_values: Any = None,
        use_cache: bool = True,
        logits_to_keep: int = 0,
    ) -> Any:
        batch, length = input_ids.shape
        if past_key_values is not None:
            dummy = torch.zeros(batch, 1, length, 1, dtype=torch.float64)
            past_key_values.update(dummy, dummy, 0)
        self.rows += [tuple(row) for row in input_ids.tolist()]
        logits = self.law.clamp_min(1e-300).log()[input_ids]  # (B, T, V), as MarkovLM
        return SimpleNamespace(logits=logits[:, -logits_to_keep:] if logits_to_keep else logits)


def letter_chain(seed: int) -> torch.Tensor:
    """A 257 x 257 Markov chain that moves among 8 letters only (every other token has p = 0)."""
    small = random_transition(len(LETTERS), seed)
    full = torch.zeros(257, 257, dtype=torch.float64)
    full[:, LETTERS] = small[torch.arange(257) % len(LETTERS)]
    return full


@dataclass
class ChainPair(TinyPair):
    draft: BatchMarkovLM
    target: BatchMarkovLM


def chain_pair() -> ChainPair:
    return ChainPair(
        BatchMarkovLM(letter_chain(21)),
        BatchMarkovLM(letter_chain(22)),
        ByteTokenizer(),
        frozenset(),
    )


def exact_law(
    pair: ChainPair, settings: GenerationSettings, length: int
) -> dict[tuple[int, ...], float]:
    """P(first `length` tokens) from the target's transition matrix under the settings' transform."""
    step = logits_to_probs(
        pair.target.law.log(), settings.temperature, settings.top_k, settings.top_p
    ).double()
    law = {}
    for cell in itertools.product(LETTERS, repeat=length):
        prob, last = 1.0, int(PROMPT[0, -1])
        for token in cell:
            prob, last = prob * float(step[last, token]), token
        law[cell] = prob
    return law


def fit_p_value(report: ExactnessReport, pair: ChainPair, length: int) -> float:
    """Goodness of fit of the speculative counts to the law computed here, independently."""
    law = exact_law(pair, report.settings, length)
    counts = {o.token_ids: o.speculative for o in report.comparisons[length - 1].outcomes}
    cells = [cell for cell in law if law[cell] * report.samples >= 5]
    rest = [cell for cell in law if cell not in cells]
    observed = [counts.get(cell, 0) for cell in cells] + [sum(counts.get(c, 0) for c in rest)]
    expected = [law[cell] * report.samples for cell in cells]
    expected.append(report.samples - sum(expected))
    assert sum(observed) == report.samples
    return float(chisquare(observed, expected).pvalue)


@pytest.mark.parametrize(
    "settings",
    [
        SAMPLED,
        GenerationSettings(gamma=1, temperature=1.0, seed=3),  # the bonus token inside the window
        GenerationSettings(gamma=4, temperature=0.7, top_k=5, seed=4),
        GenerationSettings(gamma=3, temperature=1.3, top_p=0.8, draft_stop_below=0.3, seed=6),
    ],
)
def test_exact_rule_reproduces_the_target_law(settings: GenerationSettings) -> None:
    pair = chain_pair()
    report = run_exactness_lab(pair, PROMPT, settings, samples=20_000, tokens=2)
    assert fit_p_value(report, pair, 1) > 1e-3
    assert fit_p_value(report, pair, 2) > 1e-3
    for comparison in report.comparisons:
        assert comparison.homogeneity.p_value > 1e-3
        assert comparison.speculative_fit.p_value > 1e-3
        assert sum(o.plain for o in comparison.outcomes) == 20_000
        assert sum(o.speculative for o in comparison.outcomes) == 20_000
        # The report's exact probabilities are the closed-form law.
        law = exact_law(pair, settings, comparison.length)
        for outcome in comparison.outcomes:
            assert outcome.exact_prob == pytest.approx(law[outcome.token_ids], abs=1e-6)
    assert report.emission_max_error < 1e-9


def test_the_wrong_rule_is_caught() -> None:
    pair = chain_pair()
    report = run_exactness_lab(pair, PROMPT, SAMPLED, samples=20_000, tokens=2, rule="accept_draft")
    assert fit_p_value(report, pair, 1) < 1e-6
    assert fit_p_value(report, pair, 2) < 1e-6
    for comparison in report.comparisons:
        assert comparison.homogeneity.p_value < 1e-6
        assert comparison.speculative_fit.p_value < 1e-6
        assert comparison.plain_fit.p_value > 1e-3  # the plain arm is still right
    # The analysis predicted it: the shift TV(p_1, q_1) is visible well below 20,000 samples.
    assert report.wrong_rule_samples_needed is not None
    assert report.wrong_rule_samples_needed < 20_000
    assert report.comparisons[0].tv_distance == pytest.approx(report.draft_target_tv, abs=0.03)


def test_a_wrong_residual_in_the_rule_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The classic bug, resampling from p after a rejection, breaks the law and the lab sees it."""
    monkeypatch.setattr(specviz.labs.exactness.experiment, "residual_distribution", lambda p, q: p)
    pair = chain_pair()
    report = run_exactness_lab(pair, PROMPT, SAMPLED, samples=20_000, tokens=1)
    assert fit_p_value(report, pair, 1) < 1e-6


def test_distributions_are_computed_once_per_prefix_in_batches() -> None:
    pair = chain_pair()
    report = run_exactness_lab(pair, PROMPT, SAMPLED, samples=5_000, tokens=3, batch_size=16)
    fed = [row for row in pair.target.rows if len(row) <= 3][1:]  # after the prompt prefill
    prefixes = {row[1:] for row in fed}
    assert len(fed) == len(prefixes) == report.target_prefixes  # each prefix scored once
    reached = {o.token_ids for comparison in report.comparisons[:2] for o in comparison.outcomes}
    assert prefixes == {(), *reached}  # every prefix some sample stood at before its last token
    assert report.target_prefixes <= 1 + 8 + 64 < 5_000
    depth_2 = len(report.comparisons[1].outcomes)
    assert report.target_forwards == 1 + 1 + -(-depth_2 // 16)  # blocks of 16 rows per depth
    assert report.draft_prefixes <= report.target_prefixes


def test_runs_are_reproducible_and_report_progress() -> None:
    seen: list[float] = []
    first = run_exactness_lab(chain_pair(), PROMPT, SAMPLED, samples=500, tokens=2)
    again = run_exactness_lab(
        chain_pair(), PROMPT, SAMPLED, samples=500, tokens=2, progress=lambda f, _: seen.append(f)
    )
    assert first.comparisons == again.comparisons
    assert seen == sorted(seen) and seen[-1] == pytest.approx(1.0)
    other_seed = run_exactness_lab(
        chain_pair(), PROMPT, replace(SAMPLED, seed=8), samples=500, tokens=2
    )
    assert other_seed.comparisons != first.comparisons


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"samples": 5}, "samples must be between 10 and 20,000"),
        ({"tokens": 4}, "tokens must be between 1 and 3"),
        ({"settings": GenerationSettings()}, "greedy_equality"),
        ({"rule": "nope"}, "rule must be one of exact, accept_draft"),
        ({"prompt_ids": torch.tensor([1, 2])}, "shape (1, T)"),
    ],
)
def test_bad_inputs_are_refused_in_plain_words(kwargs: dict[str, Any], message: str) -> None:
    arguments = {"pair": chain_pair(), "prompt_ids": PROMPT, "settings": SAMPLED, **kwargs}
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        run_exactness_lab(**arguments)


# -- sample size -------------------------------------------------------------------------------


def test_samples_needed_matches_the_two_proportion_formula_and_a_simulation() -> None:
    # Two bins, 0.5 vs 0.6: the classic two-proportion sample size is about 388 per arm.
    needed = samples_needed([0.5, 0.5], [0.6, 0.4])
    assert needed == pytest.approx(388, abs=4)
    rng = np.random.default_rng(0)
    rejections = 0
    for _ in range(400):
        a, b = rng.binomial(needed, 0.5), rng.binomial(needed, 0.6)
        table = [[a, needed - a], [b, needed - b]]
        rejections += chi2_contingency(table, correction=False).pvalue < 0.05
    assert 0.72 < rejections / 400 < 0.88  # the promised power, 0.8


def test_samples_needed_falls_as_the_difference_grows() -> None:
    law = [0.5, 0.2, 0.15, 0.1, 0.05]
    sizes = [samples_needed_for_shift(law, tv) for tv in (0.01, 0.02, 0.05, 0.1, 0.2)]
    assert sizes == sorted(sizes, reverse=True) and sizes[0] > 10 * sizes[2]
    assert samples_needed(law, law[::-1], power=0.9) > samples_needed(law, law[::-1], power=0.5)
    with pytest.raises(ValueError, match="the same"):
        samples_needed(law, law)
    with pytest.raises(ValueError, match="shift"):
        samples_needed_for_shift(law, 0.6)


def test_report_carries_the_analytic_first_token_check() -> None:
    pair = chain_pair()
    report = run_exactness_lab(pair, PROMPT, SAMPLED, samples=200, tokens=1)
    p1 = pair.target.law[PROMPT[0, -1]]
    q1 = pair.draft.law[PROMPT[0, -1]]
    assert report.draft_target_tv == pytest.approx(0.5 * float((p1 - q1).abs().sum()), abs=1e-6)
    assert report.wrong_rule_samples_needed == samples_needed(p1, q1)
    assert sum(report.first_token_law) == pytest.approx(1.0)
    assert [tv for tv, _ in report.samples_needed_by_tv] == [0.01, 0.02, 0.05, 0.1]
    assert len(report.comparisons) == 1


# -- real transformer: batched cache, greedy equality ------------------------------------------


def test_batched_prefixes_match_one_sequence_forwards(tiny_pair: TinyPair) -> None:
    """The repeated prompt cache gives the same p as feeding each continuation on its own."""
    prompt = torch.tensor([list(b"def fib(n):")])
    report = run_exactness_lab(tiny_pair, prompt, SAMPLED, samples=100, tokens=2, batch_size=8)
    with torch.no_grad():
        for outcome in report.comparisons[1].outcomes[:10]:
            ids = torch.cat([prompt, torch.tensor([outcome.token_ids[:1]])], dim=1)
            logits = tiny_pair.target(input_ids=ids).logits[0, -2:]
            p1, p2 = logits_to_probs(logits, SAMPLED.temperature).double()
            expected = float(p1[outcome.token_ids[0]] * p2[outcome.token_ids[1]])
            assert outcome.exact_prob == pytest.approx(expected, rel=1e-4)


# -- charts ------------------------------------------------------------------------------------


def test_distribution_chart_carries_counts_and_the_exact_law() -> None:
    report = run_exactness_lab(chain_pair(), PROMPT, SAMPLED, samples=1_000, tokens=2)
    fig = distribution_chart(report, 1)
    plain, spec, exact = fig.data
    outcomes = report.comparisons[0].outcomes
    assert list(plain.customdata) == [o.plain for o in outcomes]
    assert list(spec.customdata) == [o.speculative for o in outcomes]
    assert list(spec.y) == pytest.approx([o.speculative / 1_000 for o in outcomes])
    assert list(exact.y) == pytest.approx([o.exact_prob for o in outcomes])
    assert "χ² p =" in fig.layout.title.text
    pairs = distribution_chart(report, 2)
    assert list(pairs.data[0].x)[-1] == "other" and len(pairs.data[0].x) == 13
    assert sum(pairs.data[0].customdata) == 1_000
    assert sum(pairs.data[2].y) == pytest.approx(1.0)


def test_chart_labels_are_escaped() -> None:
    report = run_exactness_lab(chain_pair(), PROMPT, SAMPLED, samples=100, tokens=1)
    first = report.comparisons[0]
    hostile = replace(first.outcomes[0], token_texts=("<b>x</b>",))
    report = replace(report, comparisons=(replace(first, outcomes=(hostile, *first.outcomes[1:])),))
    labels = list(distribution_chart(report, 1).data[0].x)
    assert labels[0] == "&lt;b&gt;x&lt;/b&gt;"
    assert not any("<b>" in label for label in labels)


def test_charts_render_before_any_run() -> None:
    for fig in (distribution_chart(None), distribution_chart(None, 2), samples_needed_chart(None)):
        assert not fig.data and fig.layout.annotations
    report = run_exactness_lab(chain_pair(), PROMPT, SAMPLED, samples=100, tokens=1)
    assert not distribution_chart(report, 2).data  # asked for pairs after a one-token run
    needed = samples_needed_chart(report)
    assert [n for _, n in report.samples_needed_by_tv] == list(needed.data[0].y)
    assert list(needed.data[1].y) == [report.wrong_rule_samples_needed]


# -- displays that were wrong ------------------------------------------------


def test_samples_needed_axis_is_bounded_by_the_data() -> None:
    """A log axis autoranged over the "this run" note (Plotly reads an annotation's y on a log
    axis as a power of ten) ran to 10^N and flattened the curve: the range is the data's."""
    report = run_exactness_lab(chain_pair(), PROMPT, SAMPLED, samples=300, tokens=1)
    fig = samples_needed_chart(report)
    shown = [*(n for _, n in report.samples_needed_by_tv), report.samples]
    if report.wrong_rule_samples_needed is not None:
        shown.append(report.wrong_rule_samples_needed)
    low, high = fig.layout.yaxis.range
    assert low <= np.log10(min(shown)) and np.log10(max(shown)) <= high
    assert high - low <= np.log10(max(shown) / min(shown)) + 1.0  # a decade of margin at most
    for note in fig.layout.annotations:
        if note.yref == "y":  # in log10 units on a log axis, at the "this run" line
            assert note.y == pytest.approx(np.log10(report.samples))


def test_the_pairs_chart_after_a_one_token_run_says_what_it_will_show() -> None:
    report = run_exactness_lab(chain_pair(), PROMPT, SAMPLED, samples=100, tokens=1)
    for fig in (distribution_chart(report, 2), distribution_chart(None, 2)):
        assert not fig.data
        # No empty grid with meaningless axes: a note saying what will appear, and how.
        assert fig.layout.xaxis.visible is False and fig.layout.yaxis.visible is False
        note = fig.layout.annotations[0].text.replace("<br>", " ")
        assert "first 2 tokens" in note and "plain and speculative" in note


def test_the_summary_describes_the_rule_that_was_run() -> None:
    pair = chain_pair()
    right = run_exactness_lab(pair, PROMPT, SAMPLED, samples=200, tokens=1)
    wrong = run_exactness_lab(pair, PROMPT, SAMPLED, samples=200, tokens=1, rule="accept_draft")
    p1 = pair.target.law[PROMPT[0, -1]]
    q1 = pair.draft.law[PROMPT[0, -1]]
    assert right.emission_max_error < 1e-9
    # Accepting every draft ships the draft's own law q: that is how far it is from p.
    assert wrong.emission_max_error == pytest.approx(float((q1 - p1).abs().max()), abs=1e-6)
    assert "differs from p by at most" in exactness_html(right)
    summary = exactness_html(wrong)
    assert "differs from p by at most" not in summary
    assert f"{wrong.emission_max_error:.1e}" in summary and "law q" in summary
