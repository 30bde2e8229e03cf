"""What a replay leaves behind and what it lets in: after a replay the visitor's session keeps
the inspector's cycles (hosted: as many as a hosted run makes) and the race without the bars its
view never draws; an uploaded trace is checked before it queues, a few at a time, so a bad one
never takes a place in the replay line. No model is loaded."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path

import gradio as gr
import pytest
from ui_events import plain_run, sample_run, trace_of

from specviz.app import export_panel
from specviz.app.limits import HOSTED, LOCAL
from specviz.core.events import Cycle, TokenProb
from specviz.export.trace import read_trace, single_race, trace_from_dict


def long_run(cycles: int) -> list[Cycle]:
    """*cycles* cycles of the sample run's first, each a little later than the one before."""
    first = sample_run()[0]
    return [
        replace(
            first,
            index=i,
            totals=replace(first.totals, elapsed_s=0.01 * (i + 1), new_tokens=i + 1),
        )
        for i in range(cycles)
    ]


def with_bars(cycles: list[Cycle]) -> list[Cycle]:
    """The cycles with ten bars of q and p on every draft and rejection, as the engine writes."""
    bars = tuple(TokenProb(i, f"t{i}", 0.1) for i in range(10))

    def barred(cycle: Cycle) -> Cycle:
        drafted = tuple(replace(token, top_q=bars, top_p=bars) for token in cycle.drafted)
        rejection = cycle.rejection and replace(
            cycle.rejection, top_q=bars, top_p=bars, top_residual=bars
        )
        return replace(cycle, drafted=drafted, rejection=rejection)

    return [barred(cycle) for cycle in cycles]


def test_a_hosted_session_keeps_at_most_a_hosted_runs_cycles() -> None:
    assert HOSTED.replay_cycles_kept == HOSTED.cap("max_new_tokens") == 256
    trace = trace_from_dict(trace_of(long_run(300), plain_run(n=4, per_token_s=0.05)))
    kept = export_panel.kept_after_replay(trace, HOSTED.replay_cycles_kept)
    assert kept.cycles == list(trace.cycles[:256])
    note = export_panel.cycles_kept_note(trace, HOSTED.replay_cycles_kept, "en")
    assert "first 256 of its 300 cycles" in note and "--replay" in note
    # Its race (the drafter lane is the run itself) is longer than that: not kept.
    assert trace.race is not None and kept.race is None and not kept.race_done
    assert "300" in export_panel.cycles_kept_note(trace, HOSTED.replay_cycles_kept, "ja")
    # Locally, and hosted for a trace a hosted run could make, every cycle stays.
    assert LOCAL.replay_cycles_kept is None
    assert export_panel.kept_after_replay(trace, None).cycles == list(trace.cycles)
    short = trace_from_dict(trace_of(sample_run()))
    assert export_panel.cycles_kept_note(short, HOSTED.replay_cycles_kept, "en") == ""


def test_the_kept_race_drops_only_the_bars_its_view_never_draws() -> None:
    cycles = with_bars(sample_run())
    assert any(token.top_q for cycle in cycles for token in cycle.drafted)  # bars to drop
    assert any(cycle.rejection and cycle.rejection.top_residual for cycle in cycles)
    race = single_race("draft-model", cycles, plain_run())
    trace = trace_from_dict(trace_of(cycles, plain_run()) | {"race": None})
    trace = replace(trace, race=race)
    kept = export_panel.kept_after_replay(trace, None)
    assert kept.race is not None and kept.race_done
    lean = [e for e in kept.race.lanes[1].runs[0].outcome.events if isinstance(e, Cycle)]
    assert all(not token.top_q and not token.top_p for cycle in lean for token in cycle.drafted)
    assert all(cycle.rejection is None or not cycle.rejection.top_residual for cycle in lean)
    # Everything the race's view reads is as it was: its frames are the same.
    for at in (0.0, 0.2, 10.0):
        assert race_frame(kept.race, at) == race_frame(race, at)
    assert kept.cycles == cycles  # the inspector's cycles keep their bars


def race_frame(race: object, at: float) -> str:
    from specviz.views import race_html

    return race_html.replay_frame(race, at)  # type: ignore[arg-type]


def test_a_large_replay_leaves_a_small_session() -> None:
    """Measured, not claimed: a trace of 2,000 cycles raced against plain decoding leaves a
    hosted session that holds its first 256 cycles and no race: under a fifth of the trace."""
    import tracemalloc

    cycles = with_bars(long_run(2000))
    data = trace_of(cycles, plain_run(n=4, per_token_s=0.05))
    text = json.dumps(data)
    tracemalloc.start()
    try:
        trace = read_trace(text)
        whole = tracemalloc.get_traced_memory()[0]
        kept = export_panel.kept_after_replay(trace, HOSTED.replay_cycles_kept)
        del trace
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert len(kept.cycles) == 256
    assert kept.race is None  # its drafter lane is the whole run
    assert after < whole / 5, (after, whole)


# --- checked before the queue ----------------------------------------------------------------


def bad_trace(tmp_path: Path) -> Path:
    data = trace_of(sample_run())
    data["cycles"][2]["totals"]["elapsed_s"] = 1e12
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    return path


def test_the_check_refuses_in_words_naming_the_field(tmp_path: Path) -> None:
    check = export_panel.TraceCheck(HOSTED, "en")
    with pytest.raises(gr.Error, match=r"cycles\[2\]\.totals\.elapsed_s"):
        asyncio.run(check.refuse(str(bad_trace(tmp_path))))
    upload, prompt = asyncio.run(check.validate(str(bad_trace(tmp_path))))
    assert upload["is_valid"] and not prompt["is_valid"] and "elapsed_s" in prompt["message"]
    good = tmp_path / "good.json"
    good.write_text(json.dumps(trace_of(sample_run())))
    assert all(verdict["is_valid"] for verdict in asyncio.run(check.validate(str(good))))
    with pytest.raises(gr.Error, match="could not be read"):
        asyncio.run(check.refuse(str(tmp_path / "gone.json")))
    ja = export_panel.TraceCheck(HOSTED, "ja")
    with pytest.raises(gr.Error, match="elapsed_s"):
        asyncio.run(ja.refuse(str(bad_trace(tmp_path))))


def test_checks_wait_their_turn_and_a_long_wait_is_refused_as_busy(tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    good.write_text(json.dumps(trace_of(sample_run())))
    check = export_panel.TraceCheck(HOSTED, "en", wait_s=0.2)

    async def while_all_slots_are_taken() -> str:
        await check.refuse(None)  # nothing uploaded: nothing to check
        check._slots = asyncio.Semaphore(HOSTED.trace_checks)
        for _ in range(HOSTED.trace_checks):
            await check._slots.acquire()
        try:
            await check.refuse(str(good))
        except gr.Error as error:
            return str(error.message)
        return ""

    assert "Many traces are being checked" in asyncio.run(while_all_slots_are_taken())


def test_a_bad_upload_pushed_to_the_replay_is_refused_before_it_queues(tmp_path: Path) -> None:
    """A script that skips the page's check and pushes straight to the replay's event is
    refused at push (HTTP 422, the field named), so it never takes a place in the line."""
    import httpx
    from hosted_fixtures import launch, replay_fn_index

    demo, url = launch(None, HOSTED)
    try:
        fn_index = replay_fn_index(demo)
        api = url.rstrip("/") + "/gradio_api"
        with httpx.Client(timeout=30) as http:
            body = bad_trace(tmp_path).read_bytes()
            path = http.post(api + "/upload", files={"files": ("t.json", body)}).json()[0]
            file = {"path": path, "orig_name": "t.json", "meta": {"_type": "gradio.FileData"}}
            data = [file, ""]  # the upload, and the prompt box the page sends beside it
            join = {"data": data, "fn_index": fn_index, "session_hash": "script1"}
            answer = http.post(api + "/queue/join", json=join)
            assert answer.status_code == 422, answer.text
            assert "cycles[2].totals.elapsed_s" in answer.text
            assert len(demo._queue) == 0  # nothing waits
    finally:
        demo.close()
