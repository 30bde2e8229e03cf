"""The app's side of exports and replay, without a browser: the files a finished run offers,
where they are written, and the frames a replay plays."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from gradio.utils import get_upload_folder
from ui_events import plain_run, sample_run, setup_for, trace_of

from specviz.app import export_panel
from specviz.app.builder import build_demo
from specviz.app.session import Session
from specviz.export.trace import read_trace_file, single_race, trace_from_dict
from specviz.models.presets import load_presets
from specviz.views import race_html as race_views


def test_a_finished_run_is_written_under_gradios_cache(monkeypatch: pytest.MonkeyPatch, tmp_path):
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path / "gradio"))
    race = single_race("draft-model", sample_run(), plain_run())
    sess = Session(cycles=sample_run(), drafter="draft-model", race=race, setup=setup_for())
    paths = export_panel.export_files(sess, "en")
    assert paths is not None and len(paths) == 3
    cache = Path(get_upload_folder()).resolve()
    assert all(path.resolve().is_relative_to(cache) for path in paths)
    trace = read_trace_file(paths[0])
    assert list(trace.cycles) == sample_run() and list(trace.steps) == plain_run()
    assert trace.race is not None and [lane.name for lane in trace.race.lanes] == [
        "plain",
        "draft-model",
    ]


def test_a_race_still_running_is_exported_without_its_plain_lane(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path))
    unfinished = replace(single_race("draft-model", sample_run(), plain_run()), complete=False)
    sess = Session(cycles=sample_run(), race=unfinished, setup=setup_for())
    paths = export_panel.export_files(sess, "en")
    assert paths is not None
    back = read_trace_file(paths[0])
    assert back.steps == () and back.race is None


def test_nothing_is_offered_before_a_run() -> None:
    assert export_panel.export_files(None, "en") is None
    assert export_panel.export_files(Session(), "en") is None


def test_a_replay_shows_each_cycle_when_its_measured_time_comes(monkeypatch) -> None:
    trace = trace_from_dict(trace_of(sample_run(), plain_run(n=4, per_token_s=0.05)))
    clock = iter(i * 0.05 for i in range(1000))  # 50 ms of replay per frame
    monkeypatch.setattr(export_panel.time, "perf_counter", lambda: next(clock))
    monkeypatch.setattr(export_panel.time, "sleep", lambda seconds: None)
    frames = list(export_panel.replay_frames(trace, "en"))
    counts = [len(sess.cycles) for sess, _, _ in frames]
    assert counts == sorted(counts) and counts[-1] == 3  # cycles end at 0.125, 0.30, 0.40 s
    for sess, _, at in frames[:-1]:
        assert [c.totals.elapsed_s <= at for c in trace.cycles].count(True) == len(sess.cycles)
    last, race, at = frames[-1]
    # The replay lasts until the slower lane's run has played at its measured engine pace.
    assert trace.race is not None
    assert at == pytest.approx(race_views.replay_duration(trace.race))
    assert last.race_done and last.steps == list(trace.steps)
    assert race == race_views.replay_frame(trace.race, at)


def test_the_app_builds_with_a_trace_to_replay() -> None:
    trace = trace_from_dict(trace_of(sample_run()))
    demo = build_demo(load_presets(), replay=trace)
    names = [getattr(fn.fn, "__name__", "") for fn in demo.fns.values()]
    assert "replay_recorded" in names and "replay_upload" in names
