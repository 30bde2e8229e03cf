"""Hand-built event records for the render, chart and export tests, and traces of them: every
number is known in advance.

Not a test module; the tests import it (pytest puts tests/ on sys.path).
"""

from __future__ import annotations

from dataclasses import asdict, replace
from typing import Any

from specviz.core.events import (
    Cycle,
    DraftToken,
    EmittedToken,
    Origin,
    Rejection,
    Step,
    Timing,
    TokenProb,
    Totals,
)
from specviz.core.settings import GenerationSettings
from specviz.export.trace import RunSetup, build_trace
from specviz.measure.outcome import Outcome
from specviz.measure.race_records import PLAIN_LANE, Lane, LaneRun, RaceResult

XSS = '<script>alert("x")</script>'
XSS_IMG = "<img src=x onerror=alert(1)>"


def draft(
    position: int,
    seq: int,
    text: str,
    *,
    accepted: bool,
    tested: bool = True,
    q: float = 0.8,
    p: float = 0.6,
    u: float | None = 0.5,
) -> DraftToken:
    """One drafted token; accept_prob is min(1, p/q) as the engine computes it."""
    return DraftToken(
        position=position,
        seq_index=seq,
        token_id=1000 + seq * 10 + position,
        text=text,
        q_draft=q,
        p_target=p,
        accept_prob=min(1.0, p / q),
        uniform=u if tested else None,
        tested=tested,
        accepted=accepted,
    )


def make_cycle(
    index: int,
    start: int,
    drafted: list[DraftToken],
    extra: tuple[str, Origin],
    totals: Totals,
    *,
    timing: Timing | None = None,
    greedy: bool = False,
    finished: bool = False,
    rejection: Rejection | None = None,
) -> Cycle:
    """A cycle whose emitted tokens are the accepted drafts followed by the extra token."""
    accepted = [token for token in drafted if token.accepted]
    emitted = [
        EmittedToken(start + i, token.token_id, token.text, Origin.ACCEPTED, token.p_target)
        for i, token in enumerate(accepted)
    ]
    emitted.append(EmittedToken(start + len(accepted), 7, extra[0], extra[1], 0.42))
    return Cycle(
        index=index,
        draft_len=len(drafted),
        greedy=greedy,
        drafted=tuple(drafted),
        accepted_len=len(accepted),
        emitted=tuple(emitted),
        rejection=rejection,
        timing=timing or Timing(0.030, 0.090, 0.005),
        totals=totals,
        target_cache_len=20 + totals.new_tokens,
        draft_cache_len=19 + totals.new_tokens,
        context_len=21 + totals.new_tokens,
        finished=finished,
        stop_reason="max_new_tokens" if finished else None,
    )


REJECTION = Rejection(
    position=3,
    rejected_token=TokenProb(1023, " cat", 0.7),
    resampled_token=TokenProb(7, XSS_IMG, 0.9),
    top_p=(TokenProb(7, XSS_IMG, 0.5), TokenProb(1023, " cat", 0.2), TokenProb(9, "\n", 0.1)),
    top_q=(TokenProb(1023, " cat", 0.7), TokenProb(7, XSS_IMG, 0.1)),
    top_residual=(TokenProb(7, XSS_IMG, 0.9), TokenProb(9, "\n", 0.1)),
)


def sample_run() -> list[Cycle]:
    """Three cycles: a rejection at draft 3 (with untested tail), a full accept + bonus, a finish.

    Totals: cycle 0 tests 3 drafts, accepts 2, emits 3; cycle 1 tests 4, accepts 4, emits 5;
    cycle 2 tests 1, accepts 0, emits 1 -> 9 tokens, 3 target passes, α = 6/8.
    """
    c0 = make_cycle(
        0,
        0,
        [
            draft(1, 0, "def", accepted=True, u=0.10),
            draft(2, 1, " f", accepted=True, u=0.20),
            draft(3, 2, " cat", accepted=False, q=0.7, p=0.2, u=0.93),
            draft(4, 3, XSS, accepted=False, tested=False),
        ],
        (XSS_IMG, Origin.RESAMPLED),
        Totals(3, 1, 4, 3, 2, 0.125, 0.05),
        rejection=REJECTION,
    )
    c1 = make_cycle(
        1,
        3,
        [
            draft(i, 3 + i - 1, t, accepted=True, u=0.3)
            for i, t in enumerate(['"', "(x", ")\n", ":"], 1)
        ],
        ("\n", Origin.BONUS),
        Totals(8, 2, 8, 7, 6, 0.30, 0.05),
        timing=Timing(0.040, 0.100, 0.010),
    )
    c2 = make_cycle(
        2,
        8,
        [draft(1, 8, " no", accepted=False, q=0.9, p=0.05, u=0.4)],
        ("ok", Origin.RESAMPLED),
        Totals(9, 3, 9, 8, 6, 0.40, 0.05),
        timing=Timing(0.020, 0.070, 0.010),
        finished=True,
    )
    return [c0, c1, c2]


def plain_run(n: int = 9, per_token_s: float = 0.1) -> list[Step]:
    """Plain decoding of n tokens at a fixed time per token."""
    return [
        Step(
            index=i,
            token=EmittedToken(i, 500 + i, f"t{i}", Origin.TARGET, 0.5),
            time_s=per_token_s,
            totals=Totals(i + 1, i + 1, 0, 0, 0, per_token_s * (i + 1), 0.05),
            finished=i == n - 1,
            stop_reason="max_new_tokens" if i == n - 1 else None,
        )
        for i in range(n)
    ]


def at_pace(events: list[Cycle] | list[Step], factor: float) -> list[Cycle] | list[Step]:
    """The same run with every engine time multiplied by factor (slower above 1)."""
    return [
        replace(
            event,
            totals=replace(
                event.totals,
                elapsed_s=event.totals.elapsed_s * factor,
                prefill_s=event.totals.prefill_s * factor,
            ),
        )
        for event in events
    ]  # type: ignore[return-value]


def race_result(
    plain_paces: list[float], lanes: dict[str, list[float]], *, complete: bool = True
) -> RaceResult:
    """A race of hand-built runs: plain_run at each pace in plain_paces (one per repeat), and
    each lane's sample_run at its paces (1.0: as recorded, 9 tokens in 0.45 s, 20 tokens/s)."""

    def run(repeat: int, events: list[Cycle] | list[Step]) -> LaneRun:
        outcome = Outcome(events[-1].totals.new_tokens, events[-1].totals, events=tuple(events))
        return LaneRun(repeat, outcome)

    # Plain decoding has no drafter to prepare: 9 tokens in 0.9 s, 10 tokens/s at pace 1.
    plain_events = [replace(s, totals=replace(s.totals, prefill_s=0.0)) for s in plain_run(9)]
    plain = Lane(
        PLAIN_LANE,
        tuple(run(r, at_pace(plain_events, pace)) for r, pace in enumerate(plain_paces)),
    )
    drafters = tuple(
        Lane(name, tuple(run(r, at_pace(sample_run(), pace)) for r, pace in enumerate(paces)))
        for name, paces in lanes.items()
    )
    return RaceResult((plain, *drafters), len(plain_paces), complete)


def lengthened(result: RaceResult, factor: int, others_share: float | None = None) -> RaceResult:
    """The same race with every token count multiplied by *factor* (each run makes factor × its
    tokens in the same time, so every speed, not any ratio, grows by factor), and the CPU share
    other programs took set: how a race long enough to rank is built from race_result's."""

    def longer(totals: Totals) -> Totals:
        return replace(totals, new_tokens=totals.new_tokens * factor)

    def run(lane_run: LaneRun) -> LaneRun:
        outcome = lane_run.outcome
        events = tuple(replace(event, totals=longer(event.totals)) for event in outcome.events)
        totals = longer(lane_run.totals)
        return replace(
            lane_run,
            outcome=replace(outcome, new_tokens=totals.new_tokens, totals=totals, events=events),
        )

    lanes = tuple(replace(lane, runs=tuple(run(r) for r in lane.runs)) for lane in result.lanes)
    return replace(result, lanes=lanes, others_share=others_share)


# The machine and versions every test trace names, so every field of a trace is known.
HARDWARE = {"device": "cpu", "cpu": "Test CPU", "cpu_flags": ["avx2"], "cores": 2, "gpu": None}
VERSIONS = {"python": "3.11", "torch": "2", "transformers": "5", "specviz_commit": None}


def setup_for(prompt: str = "def fib(n):", **settings: Any) -> RunSetup:
    """A run's setup with fixed names (the pair, the machine), *prompt* and *settings*."""
    return RunSetup(
        preset="test",
        label="Test <pair>",
        draft="bundled:draft",
        target="bundled:target",
        dtype="float32",
        device="cpu",
        draft_format="none",
        drafter="draft-model",
        settings=asdict(GenerationSettings(**settings)),
        prompt=prompt,
        chat_template=False,
        prompt_tokens=11,
    )


def trace_of(
    cycles: list[Cycle], steps: list[Step] | tuple[Step, ...] = (), prompt: str = "hi"
) -> dict[str, Any]:
    """The trace of *cycles* (and plain *steps*), recorded at a fixed time on HARDWARE."""
    return build_trace(
        setup_for(prompt),
        cycles,
        steps,
        recorded_at="2026-12-01T10:00:00+00:00",
        hardware=HARDWARE,
        versions=VERSIONS,
    )
