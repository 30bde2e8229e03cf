"""The race in the app: its controls (lanes, repeats), its panel (lanes, headline, Replay) and the
updates that measure and replay it.

A race runs after the live run when Race is ticked: plain decoding and each chosen drafter on the
same prompt, settings and seed, repeated and interleaved (``specviz.measure.race``). The panel shows
progress while it measures and the final numbers once every run is in; Replay then moves each lane
at its own measured speed under that final headline.
"""

from __future__ import annotations

import time
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from typing import Any

import gradio as gr

from specviz.app.gpu_work import Runs
from specviz.app.limits import HOSTED, Limits, at_most
from specviz.app.request_checks import Inputs
from specviz.app.session import Session
from specviz.measure.spread import DEFAULT_REPEATS
from specviz.text import t
from specviz.views import race_html

REPLAY_FPS = 12
RACE_EVERY_S = 0.25  # the panel is redrawn at most this often while the race is measured


@dataclass
class RaceControls:
    """The race's lanes and repeats, shown when Race is ticked."""

    group: gr.Group
    drafters: gr.Dropdown
    repeats: gr.Slider

    def inputs(self) -> dict[str, Any]:
        """The run's race inputs by parameter name, after ``race`` in the API's order."""
        return {"race_drafters": self.drafters, "race_repeats": self.repeats}


def race_controls(
    choices: list[tuple[str, str]], chosen: str, lang: str, limits: Limits
) -> RaceControls:
    """The lanes (registered drafters, or a spec typed with its options) and the repeats per
    lane, each stating its cap; the run's drafter is the first lane."""
    lanes, repeats = limits.race_drafters, limits.race_repeats
    with gr.Group(visible=False) as group:
        drafters = gr.Dropdown(
            choices=choices,
            value=[chosen],
            multiselect=True,
            allow_custom_value=True,
            max_choices=lanes,
            label=t("app.control.race_drafters", lang),
            info=capped_info("app.control.race_drafters.info", lanes, lang),
            elem_id="sv-race-drafters",
        )
        repeat_count = gr.Slider(
            1,
            repeats,
            value=min(DEFAULT_REPEATS, repeats),
            step=1,
            precision=0,
            label=t("app.control.race_repeats", lang),
            info=capped_info("app.control.race_repeats.info", repeats, lang),
            elem_id="sv-race-repeats",
        )
    return RaceControls(group, drafters, repeat_count)


def capped_info(help_key: str, cap: int, lang: str) -> str:
    """A control's info text with its cap stated: "... (at most 3 here)"."""
    return t("app.limit.info", lang, help=t(help_key, lang), cap=at_most(cap))


@dataclass
class RacePanel:
    """The lanes side by side, and the button that replays them at their measured speeds."""

    group: gr.Group
    view: gr.HTML
    replay: gr.Button


def race_panel(lang: str) -> RacePanel:
    """The race view and its replay button, hidden until Race is ticked."""
    with gr.Group(visible=False) as group:
        view = gr.HTML(race_html.race_html(None, lang=lang), elem_id="sv-race")
        replay = gr.Button(t("app.race.replay", lang), interactive=False, elem_id="sv-replay")
    return RacePanel(group, view, replay)


def race_view(sess: Session | None, lang: str, status_key: str | None = None) -> str:
    """The session's race with its status (an ``app.race.status.*`` key)."""
    status = t(status_key, lang) if status_key is not None else ""
    return race_html.race_html(sess.race if sess else None, status=status, lang=lang)


def race_updates(
    runs: Runs, sess: Session, inputs: Inputs, panel: RacePanel
) -> Generator[dict[Any, Any], None, dict[Any, Any]]:
    """Measure the race after the session's run: yields the panel redrawn with its progress and
    returns the finished race with Replay enabled (a stopped race keeps Replay off). The caller
    sends that last update together with the counters it feeds, so no page shows a finished race
    beside counters that still wait for it."""
    lang = runs.app.lang
    last_draw = 0.0
    for update in runs.race(sess, inputs):
        if update.finished or time.perf_counter() - last_draw >= RACE_EVERY_S:
            last_draw = time.perf_counter()
            status = t(
                "app.race.status.measuring",
                lang,
                percent=f"{100 * update.fraction:.0f}",
                what=update.message.text(lang),
            )
            yield {panel.view: race_html.race_html(sess.race, status=status, lang=lang)}
    done = "app.race.status.finished" if sess.race_done else "app.race.status.stopped"
    return {
        panel.view: race_view(sess, lang, done),
        panel.replay: gr.Button(interactive=sess.race_done),
    }


def replay_frames(
    sess: Session, lang: str, max_seconds: float = HOSTED.replay_seconds
) -> Iterator[str]:
    """The finished race played back at measured speed: every lane moves at its own pace, under
    the final headline. A race longer than *max_seconds* (the app's Limits.replay_seconds; the
    hosted cap unless told) plays faster, to end in that time, and says so."""
    race = sess.race
    if race is None:  # pragma: no cover - the handler checks race_done first
        return
    duration = race_html.replay_duration(race)
    speed = race_html.replay_speed(duration, max_seconds)
    began = time.perf_counter()
    while (at_s := (time.perf_counter() - began) * speed) < duration:
        yield race_html.replay_frame(race, at_s, lang=lang, speed=speed)
        time.sleep(1 / REPLAY_FPS)
    yield race_html.replay_frame(race, duration, lang=lang, speed=speed)
