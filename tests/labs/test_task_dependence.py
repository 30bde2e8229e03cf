"""The task-dependence lab on tiny models: pooling, the own-draft check, stopping, the chart."""

from __future__ import annotations

import pytest
import torch
from tiny_models import TinyPair

from specviz.core.engine import GenerationSettings, speculative_generate
from specviz.core.events import Totals
from specviz.drafters.registry import make_drafter
from specviz.labs.tasks.charts import task_chart
from specviz.labs.tasks.experiment import (
    PromptRun,
    TaskPlan,
    TaskReport,
    TaskResult,
    iter_task_measurements,
    measure_tasks,
)
from specviz.labs.tasks.panel import tasks_html
from specviz.models.presets import DEFAULT_DRAFTER

# Given story first: the report must still follow TASKS order (code before story).
PROMPTS = {
    "story": ["Once upon a time", "The dragon said", "unused third prompt"],
    "code": ["def add(a, b):", "for i in range(10):"],
}
SETTINGS = GenerationSettings(gamma=3, max_new_tokens=12, stop_on_eos=False)


def encode_with(pair: TinyPair):
    return lambda text: torch.tensor([pair.tokenizer.encode(text)])


def plan_for(
    pair: TinyPair, prompts=PROMPTS, per_task: int = 1, warm_up: bool = True, repeats: int = 1
) -> TaskPlan:
    return TaskPlan(
        pair, prompts, encode_with(pair), SETTINGS, per_task, warm_up=warm_up, repeats=repeats
    )


def own_draft(pair: TinyPair) -> TinyPair:
    return TinyPair(pair.target, pair.target, pair.tokenizer, pair.eos_token_ids)


@pytest.fixture(scope="module")
def report(tiny_pair: TinyPair) -> TaskReport:
    return measure_tasks(plan_for(tiny_pair, per_task=2))


def test_tasks_follow_tasks_order_with_their_first_prompts(report: TaskReport) -> None:
    assert report.complete and report.settings == SETTINGS
    assert [result.task for result in report.tasks] == ["code", "story"]
    assert report.tasks[0].prompts == ("def add(a, b):", "for i in range(10):")
    assert report.tasks[1].prompts == ("Once upon a time", "The dragon said")
    for result in report.tasks:
        for run in result.runs:
            assert run.speculative.new_tokens == run.plain.new_tokens == 12
            assert run.plain.target_forwards == 12  # plain decoding: one pass per token
            assert run.speculative.elapsed_s > 0 and run.plain.elapsed_s > 0
            # Greedy speculative decoding is lossless: same text as the target alone.
            assert run.speculative_text == run.plain_text
        outputs = [" ".join(run.speculative_text.split()) for run in result.runs]
        assert result.sample and any(text.startswith(result.sample.rstrip("…")) for text in outputs)


def test_pooled_measures_match_the_cycles(tiny_pair: TinyPair, report: TaskReport) -> None:
    encode = encode_with(tiny_pair)
    for result in report.tasks:
        accepted = tested = passes = 0
        for prompt in result.prompts:
            drafter = make_drafter(DEFAULT_DRAFTER, tiny_pair)
            for cycle in speculative_generate(tiny_pair, encode(prompt), SETTINGS, drafter):
                accepted += cycle.accepted_len
                tested += sum(token.tested for token in cycle.drafted)
                passes += 1
        assert result.acceptance_rate == pytest.approx(accepted / tested)
        assert result.tokens_per_target_pass == pytest.approx(24 / passes)
        spec_seconds = sum(run.speculative.elapsed_s for run in result.runs)
        plain_seconds = sum(run.plain.elapsed_s for run in result.runs)
        assert result.speculative.tokens_per_s == pytest.approx(24 / spec_seconds)
        assert result.speedup == pytest.approx((24 / spec_seconds) / (24 / plain_seconds))


def test_own_draft_accepts_everything(tiny_pair: TinyPair) -> None:
    pair = own_draft(tiny_pair)
    report = measure_tasks(plan_for(pair, warm_up=False))
    for result in report.tasks:
        assert result.acceptance_rate == 1.0
        # 12 tokens at γ = 3: three cycles of 3 accepted drafts plus a bonus token.
        assert result.tokens_per_target_pass == 4.0
    # 12 tokens a run are too few to rank the tasks: the narrative says what would.
    assert report.narrative().startswith("No task is ranked from this: too few tokens to rank")


def test_progress_is_reported_before_each_run_and_at_the_end(tiny_pair: TinyPair) -> None:
    calls: list[tuple[float, str]] = []
    measure_tasks(
        plan_for(tiny_pair),
        progress=lambda fraction, message: calls.append((fraction, str(message))),
    )
    assert [message for _, message in calls] == [
        "warming up",
        "code 1/2: speculative decoding",
        "code 1/2: plain decoding",
        "story 2/2: speculative decoding",
        "story 2/2: plain decoding",
        "done",
    ]
    assert [fraction for fraction, _ in calls] == [0.0, 0.0, 0.25, 0.5, 0.75, 1.0]


def test_stream_shows_each_finished_prompt(tiny_pair: TinyPair) -> None:
    updates = list(iter_task_measurements(plan_for(tiny_pair, per_task=2, warm_up=False)))
    assert len(updates) == 2 * 4 + 1
    assert [len(update.report.tasks) for update in updates] == [0, 0, 1, 1, 1, 1, 2, 2, 2]
    assert updates[3].report.tasks[0].prompts == ("def add(a, b):",)
    assert not updates[-2].report.complete and updates[-1].report.complete


def test_should_stop_keeps_only_finished_prompts(tiny_pair: TinyPair) -> None:
    messages: list[str] = []
    report = measure_tasks(
        plan_for(tiny_pair, warm_up=False),
        progress=lambda _, message: messages.append(str(message)),
        should_stop=lambda: messages[-1].startswith("story"),
    )
    assert not report.complete
    assert [result.task for result in report.tasks] == ["code"]
    assert messages[-1] == "stopped after 2 of 4 runs"
    assert "stopped early" in task_chart(report).layout.title.text


def test_bad_arguments_are_refused_before_any_run(tiny_pair: TinyPair) -> None:
    with pytest.raises(ValueError, match="at least 1"):
        iter_task_measurements(plan_for(tiny_pair, per_task=0))
    with pytest.raises(ValueError, match="no prompts"):
        iter_task_measurements(plan_for(tiny_pair, {"code": [], "story": ()}))
    with pytest.raises(ValueError, match="no prompts"):
        measure_tasks(plan_for(tiny_pair, {}))
    with pytest.raises(ValueError, match="list of strings"):
        measure_tasks(plan_for(tiny_pair, {"code": "def f():"}))


def test_report_serialises_to_plain_values(report: TaskReport) -> None:
    data = report.to_dict()
    assert data["settings"]["gamma"] == 3 and data["complete"] is True
    code = data["tasks"][0]
    assert code["task"] == "code" and code["acceptance_rate"] == report.tasks[0].acceptance_rate
    assert code["runs"][0]["speculative"]["new_tokens"] == 12


def test_ranked_and_narrative(report: TaskReport) -> None:
    ranked = report.ranked()
    assert [result.acceptance_rate for result in ranked] == sorted(
        (result.acceptance_rate for result in report.tasks), reverse=True
    )
    # Runs of SETTINGS' few tokens rank nothing (tests/labs/test_lab_firmness.py: enough do).
    assert "guesses" not in report.narrative() and "at least 32 new tokens" in report.narrative()
    assert TaskReport(SETTINGS, (), False).narrative() == "No task measured yet."


def test_chart_carries_the_numbers(report: TaskReport) -> None:
    fig = task_chart(report)
    alpha, tau, speedup = fig.data
    for trace in fig.data:
        assert list(trace.x) == ["code", "story"]
    assert list(alpha.y) == [result.acceptance_rate for result in report.tasks]
    assert list(tau.y) == [result.tokens_per_target_pass for result in report.tasks]
    assert list(speedup.y) == [result.speedup for result in report.tasks]
    assert (alpha.xaxis, tau.xaxis, speedup.xaxis) == ("x", "x2", "x3")
    # The dashed lines at 1 in the τ and speedup panels: plain decoding's level.
    assert [(shape.y0, shape.yref) for shape in fig.layout.shapes] == [(1.0, "y2"), (1.0, "y3")]


@pytest.mark.parametrize("empty", [None, TaskReport(SETTINGS, (), False)])
def test_chart_without_results_shows_a_note(empty: TaskReport | None) -> None:
    fig = task_chart(empty)
    assert not fig.data
    assert "no tasks measured yet" in {note.text for note in fig.layout.annotations}


def test_repeats_interleave_every_prompt_both_ways(tiny_pair: TinyPair) -> None:
    messages: list[str] = []
    report = measure_tasks(
        plan_for(tiny_pair, warm_up=False, repeats=2),
        progress=lambda _, message: messages.append(str(message)),
    )
    assert messages == [
        f"{where}: {how} decoding ({repeat}/2)"
        for repeat in (1, 2)
        for where in ("code 1/2", "story 2/2")
        for how in ("speculative", "plain")
    ] + ["done"]
    for result in report.tasks:
        assert [run.repeat for run in result.runs] == [0, 1] and len(result.prompts) == 1
        assert result.speedups.count == 2 and result.speedup == result.speedups.median
    assert report.to_dict()["tasks"][0]["speedup_low"] == report.tasks[0].speedups.low


def _run(repeat: int, spec_s: float, plain_s: float) -> PromptRun:
    """10 tokens each way: speculative in spec_s seconds, plain in plain_s."""
    spec = Totals(10, 4, 12, 12, 9, spec_s, 0.0)
    return PromptRun("p", spec, Totals(10, 10, 0, 0, 0, plain_s, 0.0), "t", "t", repeat)


def test_the_speedup_is_the_median_over_repeats_with_its_range_and_a_noise_note() -> None:
    # Speedups 2.0, 1.0, 1.5 over three repeats: median 1.5, range 1.0–2.0 (67 % of 1.5).
    noisy = TaskResult("code", (_run(0, 0.5, 1.0), _run(1, 1.0, 1.0), _run(2, 1.0, 1.5)))
    assert (noisy.speedup, noisy.speedups.low, noisy.speedups.high) == pytest.approx((1.5, 1, 2))
    report = TaskReport(SETTINGS, (noisy,), complete=True)
    assert report.noisy and report.widest_spread == pytest.approx(2 / 3)
    html = tasks_html(report)
    assert "1.50× (1.00–2.00)" in html and "median over the repeats" in html
    assert "The machine was noisy" in html and "by 67% of its median" in html
    quiet = TaskResult("code", (_run(0, 0.5, 1.0), _run(1, 0.5, 1.02), _run(2, 0.51, 1.0)))
    assert "noisy" not in tasks_html(TaskReport(SETTINGS, (quiet,), complete=True))
