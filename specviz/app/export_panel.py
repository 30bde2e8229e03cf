"""Exports and replay in the app: download buttons for the last run's trace, CSV and report, and
a trace file (uploaded, or named by ``python app.py --replay FILE``) replayed in the live tab.

A replay loads no model: the trace's records go through the live tab's own rendering
(``LiveTab.views``, the race's ``replay_frame``), cycle by cycle at the engine times they were
measured at, so colours, cards, counters and the race look exactly as they did live. The status
line says it is a replay and where and when the run was recorded.

A replay is bounded: a trace is checked when read (``specviz.export.trace``: its size, its
nesting, every number's range), a run longer than ``Limits.replay_seconds`` plays faster (and
the status line says so), replays share a small queue of their own (``Limits.replay_concurrency``)
and a visitor plays one at a time. Each frame is sent, even one that changes nothing, because
Gradio's queue learns that a tab has closed only when the handler yields: it then closes the
generator there, and the replay ends with it. An uploaded trace is checked when its replay is
pushed (``TraceCheck``, the event's validator, a few at a time) and read again when it plays: a
bad trace is refused in words at once and never takes a place in the replay line.

When a replay ends, the visitor's session keeps only what the inspector and the race's Replay
read (``kept_after_replay``): hosted, at most ``Limits.replay_cycles_kept`` cycles (as many as a
hosted run makes), and the race's records without the probability bars its view never draws, so
the sessions a server keeps stay small whatever was uploaded.
"""

from __future__ import annotations

import asyncio
import bisect
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import gradio as gr
from gradio.utils import get_upload_folder

from specviz.app.lab_tabs import InspectorTab
from specviz.app.limits import HOSTED, Limits
from specviz.app.live_tab import LiveTab, done_message
from specviz.app.race_panel import REPLAY_FPS
from specviz.app.run_controls import PRIVATE, RunControls
from specviz.app.session import App, Session
from specviz.core.events import Cycle, Step
from specviz.export.files import ExportPaths, write_exports
from specviz.export.trace import Trace, build_trace, read_trace_file
from specviz.measure.race_records import LaneRun, RaceResult
from specviz.text import UserError, t
from specviz.views import race_html as race_views


@dataclass
class ExportPanel:
    """The download buttons (enabled after a run) and the replay upload."""

    trace: gr.DownloadButton
    csv: gr.DownloadButton
    report: gr.DownloadButton
    upload: gr.UploadButton

    @property
    def downloads(self) -> list[gr.DownloadButton]:
        return [self.trace, self.csv, self.report]


def export_panel(lang: str) -> ExportPanel:
    """The panel, under the run controls: three downloads and a replay upload."""
    with gr.Accordion(t("app.export.title", lang), open=True, elem_id="sv-export"):
        gr.Markdown(t("app.export.hint", lang), elem_classes="sv-lab-intro")
        buttons = [
            gr.DownloadButton(
                t(key, lang), interactive=False, size="sm", elem_id=f"sv-export-{name}"
            )
            for key, name in (
                ("app.export.trace", "trace"),
                ("app.export.csv", "csv"),
                ("app.export.report", "report"),
            )
        ]
        upload = gr.UploadButton(
            t("app.export.upload", lang),
            file_types=[".json"],
            file_count="single",
            size="sm",
            elem_id="sv-replay-upload",
        )
    return ExportPanel(buttons[0], buttons[1], buttons[2], upload)


def export_files(sess: Session | None, lang: str) -> list[Path] | None:
    """The session's run written as trace, CSV and report in a fresh folder under Gradio's cache
    (so hosted mode's delete_cache removes them); None when there is no run to export."""
    if sess is None or not sess.cycles or sess.setup is None:
        return None
    folder = Path(tempfile.mkdtemp(prefix="specviz-", dir=_cache_folder()))
    raced = sess.race if sess.race_done else None
    trace = build_trace(sess.setup, sess.cycles, sess.steps if raced else (), race=raced)
    return write_exports(trace, ExportPaths.in_folder(folder), lang)


def _cache_folder() -> Path:
    folder = Path(get_upload_folder())
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def replay_session(trace: Trace) -> Session:
    """A finished session holding the trace's records: what the live tab's views draw when a
    replay ends."""
    return Session(cycles=list(trace.cycles), drafter=trace.drafter, race=trace.race)


def kept_after_replay(trace: Trace, cycles_kept: int | None) -> Session:
    """The session a visitor keeps after a replay: the first *cycles_kept* cycles (None: all),
    what the inspector steps through, and the race's records without the bars of q and p its
    view never draws (the trace's file holds them all); a race whose runs are longer than
    *cycles_kept* is not kept (its Replay button stays off)."""
    race = trace.race
    if race is not None and cycles_kept is not None and _longest_run(race) > cycles_kept:
        race = None
    lean = _race_without_bars(race) if race is not None else None
    return Session(cycles=list(trace.cycles[:cycles_kept]), drafter=trace.drafter, race=lean)


def _longest_run(race: RaceResult) -> int:
    return max((len(run.outcome.events) for lane in race.lanes for run in lane.runs), default=0)


def _race_without_bars(race: RaceResult) -> RaceResult:
    def lean(event: Cycle | Step) -> Cycle | Step:
        if isinstance(event, Step):
            return event
        drafted = tuple(replace(token, top_q=(), top_p=()) for token in event.drafted)
        rejection = event.rejection and replace(
            event.rejection, top_p=(), top_q=(), top_residual=()
        )
        return replace(event, drafted=drafted, rejection=rejection)

    def lean_run(run: LaneRun) -> LaneRun:
        events = tuple(lean(event) for event in run.outcome.events)
        return replace(run, outcome=replace(run.outcome, events=events))

    lanes = tuple(replace(lane, runs=tuple(map(lean_run, lane.runs))) for lane in race.lanes)
    return replace(race, lanes=lanes)


def cycles_kept_note(trace: Trace, cycles_kept: int | None, lang: str) -> str:
    """The status line's words when the session keeps fewer cycles than the replay showed."""
    longest = _longest_run(trace.race) if trace.race is not None else 0
    if cycles_kept is None or max(len(trace.cycles), longest) <= cycles_kept:
        return ""
    return t("app.replay.kept", lang, kept=f"{cycles_kept:,}", total=f"{len(trace.cycles):,}")


def replay_duration(trace: Trace) -> float:
    """The engine seconds a replay shows: until the last cycle, or the race's slowest lane."""
    race = trace.race
    race_s = race_views.replay_duration(race) if race is not None else 0.0
    return max(trace.cycles[-1].totals.elapsed_s, race_s)


def replay_frames(
    trace: Trace, lang: str, max_seconds: float = HOSTED.replay_seconds
) -> Iterator[tuple[Session, str, float]]:
    """The replay as (session so far, race HTML, engine seconds since the start), REPLAY_FPS
    times a second of real time; a frame's session changes only when a cycle's measured time is
    reached. A run longer than *max_seconds* plays faster, to end in that time. The last frame
    holds the whole run."""
    race = trace.race
    duration = replay_duration(trace)
    speed = race_views.replay_speed(duration, max_seconds)
    times = [cycle.totals.elapsed_s for cycle in trace.cycles]  # in order: read_trace checks

    def race_frame(at_s: float) -> str:
        if race is None:
            return ""
        return race_views.replay_frame(race, at_s, lang=lang, speed=speed)

    began = time.perf_counter()
    sess = Session(drafter=trace.drafter)
    while (at_s := (time.perf_counter() - began) * speed) < duration:
        shown = bisect.bisect_right(times, at_s)  # the cycles measured by now
        if shown != len(sess.cycles):
            sess = Session(cycles=list(trace.cycles[:shown]), drafter=trace.drafter)
        yield sess, race_frame(at_s), at_s
        time.sleep(1 / REPLAY_FPS)
    yield replay_session(trace), race_frame(duration), duration


def replay_note(trace: Trace, max_seconds: float, lang: str) -> str:
    """The status line's words on a replay sped up to its cap ("plays 3.2× faster"), or ""."""
    duration = replay_duration(trace)
    speed = race_views.replay_speed(duration, max_seconds)
    if speed <= 1:
        return ""
    return t(
        "app.replay.faster",
        lang,
        measured=f"{duration:,.0f}",
        speed=f"{speed:.1f}",
        seconds=f"{max_seconds:.0f}",
    )


class TraceCheck:
    """Uploaded traces read and checked when their replay is pushed, before it queues: the
    replay's validator, so a bad trace is refused in words at once (above the prompt, where the
    page shows every refusal) and never takes a place in the replay line, whether a page or a
    script sent it. Checks run *limits.trace_checks* at a time on worker threads (parsing is CPU
    work: more than the cores gain nothing), the others waiting without a thread; one that waits
    longer than *wait_s* is refused as busy, so a flood of uploads can neither hold the server's
    threads nor wait without end."""

    def __init__(self, limits: Limits, lang: str, wait_s: float = 20.0) -> None:
        self.limits, self.lang, self.wait_s = limits, lang, wait_s
        self._slots: asyncio.Semaphore | None = None  # made on the server's event loop

    async def refuse(self, path: str | None) -> None:
        """Raise gr.Error in the visitor's language for a trace the replay would refuse."""
        if path is None:
            return
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.limits.trace_checks)
        try:
            await asyncio.wait_for(self._slots.acquire(), self.wait_s)
        except TimeoutError:
            raise gr.Error(t("error.trace.busy", self.lang)) from None
        try:
            await asyncio.to_thread(self.check, Path(path))
        finally:
            self._slots.release()

    async def validate(self, path: str | None, prompt: str | None = None) -> Any:
        """The replay event's validator: the check's refusal shown on the prompt box (the
        upload button shows none), the upload itself marked valid."""
        try:
            await self.refuse(path)
        except gr.Error as error:
            return gr.validate(True, ""), gr.validate(False, str(error.message))
        return gr.validate(True, ""), gr.validate(True, "")

    def check(self, path: Path) -> None:
        """The replay's own read of the file, its records dropped: gr.Error for a bad one."""
        try:
            read_trace_file(path, self.limits.trace_bytes)
        except UserError as error:
            raise gr.Error(error.message(self.lang)) from None
        except OSError:
            raise gr.Error(t("error.trace.unreadable", self.lang)) from None


class OneReplayEach:
    """The browser sessions with a replay playing, one each: a second replay from the same
    session while one plays is refused in words (it holds session ids, never a trace)."""

    def __init__(self, lang: str) -> None:
        self.lang = lang
        self._playing: set[str] = set()
        self._lock = threading.Lock()

    @contextmanager
    def hold(self, visitor: str | None) -> Iterator[None]:
        """Hold *visitor*'s place while a replay plays; the replay's generator closed (at its
        end, or by Gradio when the tab closed) gives it back. None: no visitor to tell apart (a
        direct call)."""
        if visitor is not None:
            with self._lock:
                if visitor in self._playing:
                    raise gr.Error(t("error.app.one_replay", self.lang))
                self._playing.add(visitor)
        try:
            yield
        finally:
            if visitor is not None:
                with self._lock:
                    self._playing.discard(visitor)


def wire_exports(
    app: App,
    panel: ExportPanel,
    controls: RunControls,
    live: LiveTab,
    inspector: InspectorTab,
    session: gr.State,
    run_events: list[Any],
    demo: gr.Blocks,
    replay_on_load: Trace | None = None,
) -> list[Any]:
    """Downloads after each Run or Step; replay from an upload, and of *replay_on_load* when the
    page loads (``python app.py --replay FILE``). Returns the replays' events (each leaves the
    session holding the replayed cycles)."""
    lang = app.lang

    def downloads(sess: Session | None) -> list[gr.DownloadButton]:
        paths = export_files(sess, lang)
        if paths is None:
            return [gr.DownloadButton(value=None, interactive=False) for _ in panel.downloads]
        return [gr.DownloadButton(value=str(path), interactive=True) for path in paths]

    for event in run_events[:2]:  # Run and Step; the race's replay adds nothing to export
        event.then(downloads, session, panel.downloads, queue=False, **PRIVATE)

    outputs = [session, *live.outputs, live.race.group, *inspector.outputs]
    outputs += [live.final_text, live.final_stats, controls.prompt, controls.race]
    limits = app.limits
    playing = OneReplayEach(lang)

    def replay(trace: Trace) -> Iterator[dict[Any, Any]]:
        label = str(trace.models.get("label", ""))
        where = {"label": label, "date": trace.recorded_at, "where": trace.where()}
        faster = replay_note(trace, limits.replay_seconds, lang)
        status = " ".join(filter(None, [t("app.replay.status", lang, **where), faster]))
        race = {live.race.group: gr.Group(visible=trace.race is not None)}
        # The recorded prompt in the prompt box, and Race ticked when the run raced: what a
        # visitor presses Run on to run it again here.
        yield {controls.prompt: trace.prompt, controls.race: trace.race is not None}
        shown = -1
        for sess, race_html, _ in replay_frames(trace, lang, limits.replay_seconds):
            update: dict[Any, Any] = {live.race.view: race_html} if trace.race else {}
            if len(sess.cycles) != shown:  # the live tab's views, redrawn when a cycle arrives
                shown = len(sess.cycles)
                update |= live.views(sess, status, "info", charts_too=False) | race
            # Every frame is sent, gr.skip() when nothing changed (Gradio reads an empty dict as
            # one output value): only at a yield does Gradio's queue end a closed tab's replay.
            yield update or gr.skip()
        # The views draw the whole run; the session keeps what the inspector and the race's
        # Replay read (kept_after_replay), not the trace.
        final = replay_session(trace)
        kept = kept_after_replay(trace, limits.replay_cycles_kept)
        summary = done_message(final, lang)
        cut = cycles_kept_note(trace, limits.replay_cycles_kept, lang)
        words = [t("app.replay.done", lang, summary=summary, **where), faster, cut]
        views = live.views(final, " ".join(filter(None, words)), "done", charts_too=True)
        del final
        yield (
            views
            | inspector.latest(kept)
            | race
            | {session: kept, live.race.replay: gr.Button(interactive=kept.race_done)}
        )

    def replay_upload(
        path: str | None, prompt: str | None, request: gr.Request
    ) -> Iterator[dict[Any, Any]]:
        if path is None:
            return
        with playing.hold(request.session_hash):
            try:  # read here, in the visitor's one place: one trace parsed per visitor at a time
                trace = read_trace_file(Path(path), limits.trace_bytes)
            except UserError as error:
                raise gr.Error(error.message(lang)) from None
            yield from replay(trace)

    def replay_recorded(request: gr.Request) -> Iterator[dict[Any, Any]]:
        if replay_on_load is not None:
            with playing.hold(request.session_hash):
                yield from replay(replay_on_load)

    # Replays have a queue of their own, apart from the engine's: a replay runs no model, and
    # each holds a worker thread while it plays (at most Limits.replay_seconds).
    # Progress and errors show on the status line, as a run's do: a later run redraws only its
    # tracker, so an error badge on the other views would outlast it.
    queue: dict[str, Any] = {
        "concurrency_id": "replay",
        "concurrency_limit": limits.replay_concurrency,
        "show_progress_on": live.status,
    }
    # The validator checks the trace when the replay is pushed, before it queues; the prompt
    # box, where the page shows refusals, rides along as an input for its words.
    check = TraceCheck(limits, lang)
    upload_inputs = [panel.upload, controls.prompt]
    events = [
        panel.upload.upload(
            replay_upload, upload_inputs, outputs, validator=check.validate, **queue, **PRIVATE
        )
    ]
    if replay_on_load is not None:
        events.append(demo.load(replay_recorded, None, outputs, **queue, **PRIVATE))
    return events
