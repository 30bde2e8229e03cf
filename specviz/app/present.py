"""Presentation mode and the player: the bar above the tabs that a lecturer drives.

Presentation mode is a class on the column that holds the page (``sv-present``), set by the bar's
toggle or by ``?present=1`` in the URL; ``assets/specviz.css`` does the rest (settings on one line, the stream
large, notes at 14 px with 4.5:1 contrast, the race and the current cycle above the charts). The
player moves through the cycles the session keeps: Back, Forward, and Autoplay at a chosen pace
(Pause stops it where it is), so the run can be talked over at the room's speed; a click on a
token of the stream or on a chart's point goes straight to its cycle. The player is off
until the session holds cycles; its events mark only the status line, and Pause ends an autoplay
by telling it (``Autoplays``) rather than by cancelling its event, so nothing it does leaves a
Gradio error badge behind. The bar also holds Animate (each new cycle in the cards plays as motion)
and Guide (a walk through one real cycle, callouts over the page); both live in the page alone
(``assets/animate.js``, ``assets/guide.js``), the guide's words rendered here, hidden, for its script.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any, TypeGuard

import gradio as gr

from specviz.app.live_tab import LiveTab
from specviz.app.page_events import sent_number
from specviz.app.run_controls import PRIVATE, RunControls, first_prompt
from specviz.app.session import Session
from specviz.models.presets import Preset, default_preset
from specviz.text import t
from specviz.views.guide_html import guide_text_html
from specviz.views.present_html import settings_line_html

PACES = (0.5, 1.0, 1.5, 2.0, 3.0)  # the autoplay paces offered, in cycles per second
DEFAULT_PACE = 1.0

PRESENT_CLASS = "sv-present"  # on the page's column while presentation mode is on


@dataclass
class PresentBar:
    """The bar above the tabs: the mode's toggle, the settings line, the glossary button and the
    button that writes a link to the page's setup (``share_link``)."""

    toggle: gr.Checkbox
    fable: gr.Checkbox  # fable mode: the live tab tells each cycle as a story
    summary: gr.HTML
    glossary: gr.Button
    lang: str
    link: gr.Button
    # Both handled in the page alone (assets/guide.js and assets/animate.js), with no server event.
    animate: gr.Checkbox  # each new cycle in the cards plays as motion
    guide: gr.Button  # opens the guided cycle again


@dataclass
class Player:
    """Back, Forward, Autoplay, Pause and the pace, and the cycle shown (None: the whole run)."""

    back: gr.Button
    forward: gr.Button
    autoplay: gr.Button
    pause: gr.Button
    pace: gr.Dropdown
    position: gr.Number  # the cycle shown; held in the page, see player_row

    @property
    def controls(self) -> list[Any]:
        """The controls a visitor presses: on only while the session holds cycles."""
        return [self.back, self.forward, self.autoplay, self.pause, self.pace]

    def turned(self, on: bool) -> dict[Any, Any]:
        """Updates that turn the controls on or off."""
        buttons = (self.back, self.forward, self.autoplay, self.pause)
        updates: dict[Any, Any] = {button: gr.Button(interactive=on) for button in buttons}
        return updates | {self.pace: gr.Dropdown(interactive=on)}


def present_bar(presets: Mapping[str, Preset], lang: str) -> PresentBar:
    """Lay out the bar in the current Blocks context, worded in *lang*."""
    first = default_preset(presets)
    with gr.Row(elem_id="sv-present-bar", equal_height=True):
        switch: dict[str, Any] = {"value": False, "scale": 0}  # both modes start off
        toggle = gr.Checkbox(
            label=t("app.present.toggle", lang),
            elem_id="sv-present-toggle",
            min_width=200,
            **switch,
        )
        fable = gr.Checkbox(
            label=t("app.fable.toggle", lang), elem_id="sv-fable-toggle", min_width=160, **switch
        )
        animate = gr.Checkbox(
            label=t("app.animate.toggle", lang),
            elem_id="sv-animate-toggle",
            min_width=140,
            **switch,
        )
        summary = gr.HTML(
            summary_line(presets, first.id, first_prompt(first, lang), first.settings, lang),
            elem_id="sv-present-summary",
        )
        glossary = gr.Button(
            t("app.glossary.button", lang),
            elem_id="sv-glossary-open",
            size="sm",
            scale=0,
            min_width=110,
        )
        guide = gr.Button(
            t("app.guide.button", lang), elem_id="sv-guide-open", size="sm", scale=0, min_width=90
        )
        link = gr.Button(
            t("app.link.button", lang), elem_id="sv-link-open", size="sm", scale=0, min_width=170
        )
    # The guide's words, read by its script; drawn but never shown.
    gr.HTML(guide_text_html(lang=lang), visible="hidden", elem_id="sv-guide-text")
    return PresentBar(toggle, fable, summary, glossary, lang, link, animate, guide)


def player_row(lang: str) -> Player:
    """Lay out the player's row in the current Blocks context, worded in *lang*."""
    # The page holds the position, not the server: each frame brings the cycle's views and its
    # position in one message, so the position is always the one on screen, whenever Pause
    # comes (a gr.State would hold the frame the server sent last, which the page may not yet
    # show, and Back would step back from there).
    position = gr.Number(None, precision=0, visible="hidden", elem_id="sv-player-position")
    # Off until a run has cycles to go through (``usable``).
    small: dict[str, Any] = {"size": "sm", "scale": 0, "min_width": 90, "interactive": False}
    with gr.Row(elem_id="sv-player", equal_height=True):
        back = gr.Button(t("app.player.back", lang), elem_id="sv-back", **small)
        forward = gr.Button(t("app.player.forward", lang), elem_id="sv-forward", **small)
        autoplay = gr.Button(t("app.player.autoplay", lang), elem_id="sv-autoplay", **small)
        pause = gr.Button(t("app.player.pause", lang), elem_id="sv-pause", **small)
        pace = gr.Dropdown(
            [(pace_label(pace, lang), pace) for pace in PACES],
            value=DEFAULT_PACE,
            show_label=False,
            elem_id="sv-pace",
            min_width=150,
            scale=0,
            interactive=False,
        )
    return Player(back, forward, autoplay, pause, pace, position)


def summary_line(
    presets: Mapping[str, Preset], preset_id: str, prompt: str, settings: Any, lang: str
) -> str:
    """The settings line for the controls' values (*settings*: anything with ``gamma``,
    ``temperature`` and ``max_new_tokens``, or a mapping of them)."""
    values = settings if isinstance(settings, Mapping) else vars(settings)
    preset = presets.get(preset_id)
    return settings_line_html(
        preset.label_in(lang) if preset is not None else str(preset_id),
        prompt or "",
        values.get("gamma"),
        values.get("temperature"),
        values.get("max_new_tokens"),
        lang=lang,
    )


def wire_present(
    demo: gr.Blocks,
    page: gr.Column,
    bar: PresentBar,
    presets: Mapping[str, Preset],
    controls: RunControls,
) -> None:
    """The toggle and ``?present=1`` switch the *page* column to presentation mode; the settings
    line follows the controls."""
    bar.toggle.change(
        lambda on: gr.Column(elem_classes=[PRESENT_CLASS] if on else []),
        bar.toggle,
        page,
        queue=False,
        **PRIVATE,
    )
    demo.load(asks_for_present, None, bar.toggle, queue=False, **PRIVATE)
    # The animated cycle plays in the page alone (assets/animate.js): a link may turn it on.
    demo.load(asks_for_animate, None, bar.animate, queue=False, show_progress="hidden", **PRIVATE)
    lang = bar.lang
    shown = {name: controls.settings.components[name] for name in SUMMARISED}
    changes = [controls.preset.change, controls.prompt.change]
    changes += [getattr(component, "change") for component in shown.values()]  # noqa: B009
    gr.on(
        changes,
        lambda preset_id, prompt, *values: summary_line(
            presets, preset_id, prompt, dict(zip(shown, values, strict=True)), lang
        ),
        [controls.preset, controls.prompt, *shown.values()],
        bar.summary,
        queue=False,
        **PRIVATE,
    )


def wire_fable(demo: gr.Blocks, bar: PresentBar, live: LiveTab) -> None:
    """The fable toggle and ``?fable=1`` show the story of the cycle shown beside its cards."""
    bar.fable.change(
        lambda on: gr.Group(visible=on), bar.fable, live.fable_group, queue=False, **PRIVATE
    )
    demo.load(asks_for_fable, None, bar.fable, queue=False, show_progress="hidden", **PRIVATE)


SUMMARISED = ("gamma", "temperature", "max_new_tokens")  # the settings the one line names


class Autoplays:
    """The autoplay each browser tab has going, so that Pause, Back, Forward, Run, Step and Stop
    end it at once and cleanly: its generator returns. Gradio's own cancel can race the stream's
    last message and leave the event marked failed, an error badge on its outputs."""

    def __init__(self) -> None:
        self._stops: dict[str, threading.Event] = {}
        self._lock = threading.Lock()

    @contextmanager
    def playing(self, visitor: str | None) -> Iterator[threading.Event]:
        """An event set when *visitor*'s autoplay is to end; a second autoplay ends the first.
        None: no visitor to tell apart (nothing else can end it)."""
        stop = threading.Event()
        if visitor is not None:
            with self._lock:
                earlier = self._stops.get(visitor)
                self._stops[visitor] = stop
            if earlier is not None:
                earlier.set()
        try:
            yield stop
        finally:
            if visitor is not None:
                with self._lock:
                    if self._stops.get(visitor) is stop:
                        del self._stops[visitor]

    def stop(self, visitor: str | None) -> None:
        """End *visitor*'s autoplay, if one is going."""
        with self._lock:
            stop = self._stops.get(visitor) if visitor is not None else None
        if stop is not None:
            stop.set()


def wire_player(
    player: Player,
    live: LiveTab,
    session: gr.State,
    controls: RunControls,
    tabs: gr.Tabs,
    session_events: list[Any],
) -> None:
    """Back, Forward, Autoplay and Pause over the session's kept cycles, and a click on the
    stream (or a chart's point) going straight to its cycle; Run and Step show the whole run
    again. The player is turned on or off by the session after each of
    *session_events* (the events that leave it holding cycles: Run, Step, a replay) and on Stop."""
    lang = live.lang
    outputs = [player.position, *live.outputs, live.final_text, live.final_stats]
    autoplays = Autoplays()
    # Pressed with no cycle to show (as a new run begins, the session's cycles start again): the
    # status line says so in calm words, and every other view stays as it is.
    nothing = live.told(t("error.app.nothing_to_play", lang))

    def frame(sess: Session, shown: int) -> dict[Any, Any]:
        """The live tab as it stood after cycle *shown* (1-based), with the player's position."""
        at = t("app.player.at", lang, cycle=shown, total=len(sess.cycles))
        upto = replace(sess, cycles=sess.cycles[:shown])
        return live.views(upto, at, "info", charts_too=True) | {player.position: shown}

    def back(sess: Session | None, position: int | None, request: gr.Request) -> dict[Any, Any]:
        autoplays.stop(request.session_hash)
        if not holds_cycles(sess):
            return nothing
        return frame(sess, max(1, at_cycle(sess, position) - 1))

    def forward(sess: Session | None, position: int | None, request: gr.Request) -> dict[Any, Any]:
        autoplays.stop(request.session_hash)
        if not holds_cycles(sess):
            return nothing
        return frame(sess, min(len(sess.cycles), at_cycle(sess, position) + 1))

    def show_cycle(
        sess: Session | None, event: gr.EventData, request: gr.Request
    ) -> dict[Any, Any]:
        """The cycle a click on the stream (a token, a cycle's mark, a chart's point) sent."""
        autoplays.stop(request.session_hash)
        chosen = sent_number(event, "cycle")
        if chosen is None:
            return {}
        if not holds_cycles(sess):
            return nothing
        return frame(sess, min(max(chosen, 1), len(sess.cycles)))

    def autoplay(
        sess: Session | None, position: int | None, pace: float, request: gr.Request
    ) -> Iterator[dict[Any, Any]]:
        if not holds_cycles(sess):
            yield nothing
            return
        delay = 1 / min(max(float(pace), PACES[0]), PACES[-1])
        total = len(sess.cycles)
        at = at_cycle(sess, position)
        start = 1 if at >= total else at + 1  # from the start once the end is shown
        with autoplays.playing(request.session_hash) as stop:
            for shown in range(start, total + 1):
                yield frame(sess, shown)
                if shown == total or stop.wait(delay):  # the pace, or at once when told to end
                    return

    def pause(request: gr.Request) -> None:
        autoplays.stop(request.session_hash)

    def from_the_top(request: gr.Request) -> None:
        """A new cycle: the player shows the whole run, and an autoplay in progress ends."""
        autoplays.stop(request.session_hash)

    def usable(sess: Session | None) -> dict[Any, Any]:
        return player.turned(holds_cycles(sess))

    def stopped(sess: Session | None, request: gr.Request) -> dict[Any, Any]:
        autoplays.stop(request.session_hash)
        return usable(sess)

    # Progress and any error show on the status line only, as a run's do: a run redraws the
    # status line's tracker, never the other views', so a badge on them would stay.
    light = {"concurrency_limit": None, "show_progress_on": live.status, **PRIVATE}
    player.autoplay.click(autoplay, [session, player.position, player.pace], outputs, **light)
    for button, handler in ((player.back, back), (player.forward, forward)):
        button.click(handler, [session, player.position], outputs, **light)
    # A click on the stream moves the player and stays on the live tab (the stream is there).
    live.stream.click(show_cycle, session, outputs, **light)
    player.pause.click(pause, None, None, queue=False, **PRIVATE)
    for button in (player.back, player.forward, player.autoplay):  # the cycles show on the live tab
        button.click(lambda: gr.Tabs(selected="live"), None, tabs, queue=False, **PRIVATE)
    for button in (controls.run, controls.step):
        button.click(from_the_top, None, player.position, queue=False, **PRIVATE)
    turned = {"queue": False, "show_progress": "hidden", **PRIVATE}
    for event in session_events:
        event.then(usable, session, player.controls, **turned)
    controls.stop.click(stopped, session, player.controls, **turned)


def holds_cycles(sess: Session | None) -> TypeGuard[Session]:
    """True when the session holds cycles for the player to go through."""
    return sess is not None and bool(sess.cycles)


def at_cycle(sess: Session, position: int | None) -> int:
    """The cycle the player shows (1-based): its position, or the last cycle when it shows the
    whole run (no position, or 0: Gradio's number box turns an empty value into 0 when it is
    drawn, so the page may send 0 after Run cleared it) or a position past the run's end."""
    total = len(sess.cycles)
    return total if not position or position < 1 else min(int(position), total)


def asks_for_present(request: gr.Request) -> Any:
    """On when the page's URL asks for presentation mode (``?present=1``), else no update: the
    page's load answers late on a busy server, and must not switch off a toggle the visitor
    has turned on meanwhile."""
    return True if request.query_params.get("present") == "1" else gr.skip()


def asks_for_animate(request: gr.Request) -> Any:
    """On when the page's URL asks for the animated cycle (``?animate=1``), else no update (as
    asks_for_present)."""
    return True if request.query_params.get("animate") == "1" else gr.skip()


def asks_for_fable(request: gr.Request) -> Any:
    """On when the page's URL asks for fable mode (``?fable=1``), else no update (as
    asks_for_present)."""
    return True if request.query_params.get("fable") == "1" else gr.skip()


def pace_label(pace: float, lang: str) -> str:
    """The autoplay pace in words: "1 cycle/s", "1.5 cycles/s"."""
    return t("app.player.pace_one" if pace == 1 else "app.player.pace", lang, pace=f"{pace:g}")
