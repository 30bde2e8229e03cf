"""The measurement harness with fake methods: order, seeds, budget, progress, medians, stops."""

from __future__ import annotations

import time

import pytest

from specviz.core.events import EmittedToken, Origin, Step, Totals
from specviz.core.settings import GenerationSettings
from specviz.measure.harness import (
    Method,
    MethodResult,
    Outcome,
    Sample,
    Trial,
    drain,
    iter_measurements,
    measure,
    repeat_settings,
)


class Recorder:
    """Fake methods that record each call as (name, repeat, seed) and take `seconds` each."""

    def __init__(self, seconds: float = 0.0) -> None:
        self.calls: list[tuple[str, int, int]] = []
        self.seconds = seconds

    def method(self, name: str, settings: GenerationSettings | None = None) -> Method:
        def run(trial: Trial) -> Outcome:
            self.calls.append((name, trial.repeat, trial.settings.seed))
            time.sleep(self.seconds)
            return Outcome(new_tokens=10)

        return Method(name, run, settings or GenerationSettings())


SAMPLED = GenerationSettings(seed=7, temperature=1.0)


def test_methods_interleave_repeat_by_repeat_after_the_warm_up() -> None:
    recorder = Recorder()
    methods = [recorder.method(name) for name in "ABC"]
    measured = measure(methods, repeats=3, warm_up=[recorder.method("warm")])
    order = [(name, repeat) for name, repeat, _ in recorder.calls]
    assert order == [("warm", 0)] + [(name, r) for r in range(3) for name in "ABC"]
    assert [result.name for result in measured.methods] == ["A", "B", "C"]
    assert all(len(result.samples) == 3 for result in measured.methods)
    assert measured.complete and not measured.cut


def test_repeat_r_runs_every_method_with_seed_plus_r_when_sampling() -> None:
    recorder = Recorder()
    greedy = GenerationSettings(seed=7)
    measured = measure(
        [recorder.method("sampled", SAMPLED), recorder.method("greedy", greedy)], repeats=3
    )
    seeds = {
        name: [seed for n, _, seed in recorder.calls if n == name] for name in ("sampled", "greedy")
    }
    assert seeds == {"sampled": [7, 8, 9], "greedy": [7, 7, 7]}
    assert [sample.seed for sample in measured["sampled"].samples] == [7, 8, 9]


def test_repeat_settings_change_only_the_seed_and_only_when_sampling() -> None:
    greedy = GenerationSettings(seed=7)
    assert [repeat_settings(greedy, r).seed for r in range(3)] == [7, 7, 7]
    assert [repeat_settings(SAMPLED, r).seed for r in range(3)] == [7, 8, 9]
    assert repeat_settings(SAMPLED, 2).temperature == 1.0


def test_a_spent_budget_skips_later_repeats_and_names_them() -> None:
    recorder = Recorder(seconds=0.05)
    measured = measure([recorder.method("A"), recorder.method("B")], repeats=3, time_budget_s=0.0)
    # The first repeat of every method always runs; later ones start after the budget: skipped.
    assert [(name, repeat) for name, repeat, _ in recorder.calls] == [("A", 0), ("B", 0)]
    assert measured["A"].skipped == (1, 2) and not measured.complete
    assert measured.cut == [
        "A, repeat 2: skipped",
        "A, repeat 3: skipped",
        "B, repeat 2: skipped",
        "B, repeat 3: skipped",
    ]


def test_each_run_gets_an_equal_share_of_what_is_left() -> None:
    deadlines: list[float] = []

    def run(trial: Trial) -> Outcome:
        deadlines.append(trial.deadline - time.perf_counter())
        return Outcome(1)

    measure([Method("A", run), Method("B", run)], repeats=2, time_budget_s=40.0)
    # Four runs in 40 s: the first may run about 10 s, the last about all that is left.
    assert deadlines[0] == pytest.approx(10.0, abs=0.5)
    assert deadlines[-1] == pytest.approx(40.0, abs=0.5)


def test_a_method_measured_only_whole_runs_while_the_longest_run_fits_and_is_never_cut() -> None:
    deadlines: dict[str, float] = {}

    def sleeper(name: str, seconds: float) -> Method:
        def run(trial: Trial) -> Outcome:
            deadlines[name] = trial.deadline - time.perf_counter()
            time.sleep(seconds)
            return Outcome(1)

        return Method(name, run, only_whole=name.startswith("extra"))

    methods = [sleeper("A", 0.3), sleeper("extra-1", 0.25), sleeper("extra-2", 0.05)]
    measured = measure(methods, time_budget_s=0.8)
    # A, the one run the budget is shared among, gets all of it, not a third; extra-1 then fits
    # (0.5 s left holds 0.3 s, the longest run) and may use all that is left; after it 0.25 s is
    # left, less than the longest run: extra-2 is skipped, short as it would have been.
    assert deadlines["A"] == pytest.approx(0.8, abs=0.05)
    assert deadlines["extra-1"] == pytest.approx(0.5, abs=0.05)
    assert measured["extra-1"].complete and len(measured["extra-1"].samples) == 1
    assert measured["extra-2"].samples == () and measured["extra-2"].skipped == (0,)
    assert measured.cut == ["extra-2, repeat 1: skipped"]


def test_only_whole_methods_run_last_best_ranked_first() -> None:
    calls: list[tuple[str, int]] = []

    def fake(name: str, tokens: int, ranked_by: str | None = None) -> Method:
        def run(trial: Trial) -> Outcome:
            calls.append((name, trial.repeat))
            time.sleep(0.01)
            return Outcome(tokens)

        return Method(name, run, only_whole=ranked_by is not None, ranked_by=ranked_by)

    # Given order: a row of each screen before the screens; "slow" screened at a tenth of "fast".
    methods = [
        fake("slow-γ3", 1, ranked_by="slow"),
        fake("slow", 1),
        fake("fast-γ3", 1, ranked_by="fast"),
        fake("unranked", 1, ranked_by="nobody"),
        fake("fast", 10),
        fake("fast-γ8", 1, ranked_by="fast"),
    ]
    measured = measure(methods, repeats=2)
    once = ["slow", "fast", "fast-γ3", "fast-γ8", "slow-γ3", "unranked"]
    assert calls == [(name, 0) for name in once] + [(name, 1) for name in once]
    # The results keep the order the methods were given.
    assert [result.name for result in measured.methods] == [method.name for method in methods]


def test_progress_comes_before_the_warm_up_each_run_and_at_the_end() -> None:
    recorder = Recorder()
    calls: list[tuple[float, str]] = []
    measure(
        [recorder.method("A"), recorder.method("B")],
        repeats=2,
        warm_up=[recorder.method("warm")],
        progress=lambda fraction, message: calls.append((fraction, str(message))),
    )
    assert calls == [
        (0.0, "warming up"),
        (0.0, "A (1/2)"),
        (0.25, "B (1/2)"),
        (0.5, "A (2/2)"),
        (0.75, "B (2/2)"),
        (1.0, "done"),
    ]


def test_a_stop_abandons_the_run_and_keeps_what_was_measured() -> None:
    def stopping(trial: Trial) -> Outcome | None:
        return None if trial.should_stop() else Outcome(1)

    asked = [False]
    updates = list(
        iter_measurements(
            [Method("A", stopping), Method("B", stopping)],
            repeats=2,
            should_stop=lambda: asked[0],
        )
    )
    assert [str(update.message) for update in updates] == [
        "A (1/2)",
        "B (1/2)",
        "A (2/2)",
        "B (2/2)",
        "done",
    ]
    asked[0] = True
    updates = list(
        iter_measurements(
            [Method("A", lambda trial: Outcome(1)), Method("B", stopping)],
            should_stop=lambda: asked[0],
        )
    )
    last = updates[-1]
    assert last.finished and str(last.message) == "stopped after 1 of 2 runs"
    assert last.measurements.stopped and not last.measurements.complete
    assert len(last.measurements["A"].samples) == 1 and not last.measurements["B"].samples


def test_median_is_of_the_rates_and_the_median_sample_is_the_upper_middle() -> None:
    samples = tuple(
        Sample(repeat, 0, seconds, Outcome(tokens))
        for repeat, (seconds, tokens) in enumerate([(1.0, 30), (1.0, 10), (2.0, 40), (1.0, 50)])
    )
    result = MethodResult("A", samples)
    assert result.rates == [30.0, 10.0, 20.0, 50.0]
    assert result.tokens_per_s == 25.0  # the median of an even count: the middle two's mean
    assert result.median_sample.repeat == 0 and result.new_tokens == 30
    assert result.seconds == 5.0
    assert MethodResult("A", samples[:3]).tokens_per_s == 20.0


def _steps(count: int) -> list[Step]:
    steps = []
    for index in range(count):
        totals = Totals(index + 1, index + 1, 0, 0, 0, 0.1 * (index + 1), 0.0)
        token = EmittedToken(index, 65 + index, chr(65 + index), Origin.TARGET, 1.0)
        steps.append(Step(index, token, 0.1, totals, index == count - 1, None))
    return steps


def test_drain_keeps_every_event_to_the_end() -> None:
    outcome = drain(iter(_steps(4)), Trial(0, GenerationSettings(), float("inf")))
    assert outcome is not None and outcome.complete
    assert (
        outcome.new_tokens == 4 and outcome.text == "ABCD" and outcome.token_ids == (65, 66, 67, 68)
    )
    assert len(outcome.events) == 4


def test_drain_stops_after_the_event_in_hand_past_the_deadline() -> None:
    outcome = drain(iter(_steps(4)), Trial(0, GenerationSettings(), deadline=0.0))
    assert outcome is not None and not outcome.complete
    assert outcome.new_tokens == 1 and outcome.text == "A"


def test_drain_abandons_the_run_when_asked_to_stop() -> None:
    trial = Trial(0, GenerationSettings(), float("inf"), should_stop=lambda: True)
    assert drain(iter(_steps(4)), trial) is None
    # A finished run is kept even if a stop comes with its last event.
    assert drain(iter(_steps(1)), trial) is not None


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"methods": []}, "no methods"),
        ({"repeats": 0}, "at least 1"),
        ({"time_budget_s": -1.0}, "at least 0"),
    ],
)
def test_bad_arguments_are_refused_before_any_run(kwargs: dict[str, object], message: str) -> None:
    recorder = Recorder()
    arguments: dict[str, object] = {"methods": [recorder.method("A")], **kwargs}
    with pytest.raises(ValueError, match=message):
        iter_measurements(**arguments)  # type: ignore[arg-type]
    assert not recorder.calls
    with pytest.raises(ValueError, match="distinct"):
        iter_measurements([recorder.method("A"), recorder.method("A")])
