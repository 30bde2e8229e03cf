"""Exports and replay in the app: download buttons for the last run's trace, CSV and report, and
a trace file (uploaded, or named by ``python app.py --replay FILE``) replayed in the live tab.

A replay loads no model: the trace's records go through the live tab's own rendering
(``LiveTab.views``, the race's ``replay_frame``), cycle by cycle at the engine times they were
measured at, so colours, cards, counters and the race look exactly as they did live. The status
line says it is a replay and where and when the run was recorded.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gradio as gr
from gradio.utils import get_upload_folder

from specviz.app.lab_tabs import InspectorTab
from specviz.app.live_tab import LiveTab, done_message
from specviz.app.race_panel import REPLAY_FPS
from specviz.app.run_controls import PRIVATE, RunControls
from specviz.app.session import App, Session
from specviz.export.files import ExportPaths, write_exports
from specviz.export.trace import Trace, build_trace, read_trace_file
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
    """A finished session holding the trace's records: what the inspector and the race's own
    replay button read after a replay."""
    return Session(cycles=list(trace.cycles), drafter=trace.drafter, race=trace.race)


def replay_frames(trace: Trace, lang: str) -> Iterator[tuple[Session, str, float]]:
    """The replay as (session so far, race HTML, seconds since the start), REPLAY_FPS times a
    second of real time; a frame's session changes only when a cycle's measured time is reached.
    The last frame holds the whole run."""
    race = trace.race
    duration = max(
        trace.cycles[-1].totals.elapsed_s,
        race_views.replay_duration(race) if race is not None else 0.0,
    )

    def race_frame(at_s: float) -> str:
        return race_views.replay_frame(race, at_s, lang=lang) if race is not None else ""

    began = time.perf_counter()
    sess = Session(drafter=trace.drafter)
    while (elapsed := time.perf_counter() - began) < duration:
        shown = [cycle for cycle in trace.cycles if cycle.totals.elapsed_s <= elapsed]
        if len(shown) != len(sess.cycles):
            sess = Session(cycles=shown, drafter=trace.drafter)
        yield sess, race_frame(elapsed), elapsed
        time.sleep(1 / REPLAY_FPS)
    yield replay_session(trace), race_frame(duration), duration


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
) -> None:
    """Downloads after each Run or Step; replay from an upload, and of *replay_on_load* when the
    page loads (``python app.py --replay FILE``)."""
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

    def replay(trace: Trace) -> Iterator[dict[Any, Any]]:
        label = str(trace.models.get("label", ""))
        where = {"label": label, "date": trace.recorded_at, "where": trace.where()}
        status = t("app.replay.status", lang, **where)
        race = {live.race.group: gr.Group(visible=trace.race is not None)}
        # The recorded prompt in the prompt box, and Race ticked when the run raced: what a
        # visitor presses Run on to run it again here.
        yield {controls.prompt: trace.prompt, controls.race: trace.race is not None}
        shown = -1
        for sess, race_html, _ in replay_frames(trace, lang):
            update: dict[Any, Any] = {live.race.view: race_html} if trace.race else {}
            if len(sess.cycles) != shown:  # the live tab's views, redrawn when a cycle arrives
                shown = len(sess.cycles)
                update |= live.views(sess, status, "info", charts_too=False) | race
            if update:  # Gradio reads an empty dict as one output value, not as no updates
                yield update
        final = replay_session(trace)
        summary = done_message(final, lang)
        done = t("app.replay.done", lang, summary=summary, **where)
        yield (
            live.views(final, done, "done", charts_too=True)
            | inspector.latest(final)
            | race
            | {session: final, live.race.replay: gr.Button(interactive=final.race_done)}
        )

    def replay_upload(path: str | None) -> Iterator[dict[Any, Any]]:
        if path is None:
            return
        try:
            trace = read_trace_file(Path(path))
        except UserError as error:
            raise gr.Error(error.message(lang)) from None
        yield from replay(trace)

    def replay_recorded() -> Iterator[dict[Any, Any]]:
        if replay_on_load is not None:
            yield from replay(replay_on_load)

    panel.upload.upload(replay_upload, panel.upload, outputs, concurrency_limit=None, **PRIVATE)
    if replay_on_load is not None:
        demo.load(replay_recorded, None, outputs, concurrency_limit=None, **PRIVATE)
