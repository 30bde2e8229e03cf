"""Presentation mode and the player: the bar above the tabs that a lecturer drives.

Presentation mode is a class on the column that holds the page (``sv-present``), set by the bar's
toggle or by ``?present=1`` in the URL; ``assets/specviz.css`` does the rest (settings on one line, the stream
large, notes at 14 px with 4.5:1 contrast, the race and the current cycle above the charts). The
player moves through the cycles the session keeps: Back, Forward, and Autoplay at a chosen pace
(Pause stops it where it is), so the run can be talked over at the room's speed.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

import gradio as gr

from specviz.app.live_tab import LiveTab
from specviz.app.run_controls import PRIVATE, RunControls, first_prompt
from specviz.app.session import Session
from specviz.models.presets import Preset, default_preset
from specviz.text import t
from specviz.views.present_html import settings_line_html

PACES = (0.5, 1.0, 1.5, 2.0, 3.0)  # the autoplay paces offered, in cycles per second
DEFAULT_PACE = 1.0

PRESENT_CLASS = "sv-present"  # on the page's column while presentation mode is on


@dataclass
class PresentBar:
    """The bar above the tabs: the mode's toggle, the settings line and the glossary button."""

    toggle: gr.Checkbox
    fable: gr.Checkbox  # fable mode: the live tab tells each cycle as a story
    summary: gr.HTML
    glossary: gr.Button
    lang: str


@dataclass
class Player:
    """Back, Forward, Autoplay, Pause and the pace, and the cycle shown (None: the whole run)."""

    back: gr.Button
    forward: gr.Button
    autoplay: gr.Button
    pause: gr.Button
    pace: gr.Dropdown
    position: gr.Number  # the cycle shown; held in the page, see player_row


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
    return PresentBar(toggle, fable, summary, glossary, lang)


def player_row(lang: str) -> Player:
    """Lay out the player's row in the current Blocks context, worded in *lang*."""
    # The page holds the position, not the server: each frame brings the cycle's views and its
    # position in one message, so the position is the one on screen even when Pause cancels
    # autoplay between the server's yield and the page's update (a gr.State would already hold
    # the frame that never showed, and Back would step back to the cycle on screen).
    position = gr.Number(None, precision=0, visible="hidden", elem_id="sv-player-position")
    small: dict[str, Any] = {"size": "sm", "scale": 0, "min_width": 90}
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
        preset.label if preset is not None else str(preset_id),
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


def wire_player(
    app_error: Any,
    player: Player,
    live: LiveTab,
    session: gr.State,
    controls: RunControls,
    tabs: gr.Tabs,
) -> None:
    """Back, Forward, Autoplay and Pause over the session's kept cycles; Run and Step show the
    whole run again. *app_error* words a catalogue key as a gr.Error (``App.error``)."""
    lang = live.lang
    outputs = [player.position, *live.outputs, live.final_text, live.final_stats]

    def kept(sess: Session | None) -> Session:
        if sess is None or not sess.cycles:
            raise app_error("error.app.nothing_to_play")
        return sess

    def frame(sess: Session, shown: int) -> dict[Any, Any]:
        """The live tab as it stood after cycle *shown* (1-based), with the player's position."""
        at = t("app.player.at", lang, cycle=shown, total=len(sess.cycles))
        upto = replace(sess, cycles=sess.cycles[:shown])
        return live.views(upto, at, "info", charts_too=True) | {player.position: shown}

    def back(sess: Session | None, position: int | None) -> dict[Any, Any]:
        sess = kept(sess)
        return frame(sess, max(1, at_cycle(sess, position) - 1))

    def forward(sess: Session | None, position: int | None) -> dict[Any, Any]:
        sess = kept(sess)
        return frame(sess, min(len(sess.cycles), at_cycle(sess, position) + 1))

    def autoplay(
        sess: Session | None, position: int | None, pace: float
    ) -> Iterator[dict[Any, Any]]:
        sess = kept(sess)
        delay = 1 / min(max(float(pace), PACES[0]), PACES[-1])
        total = len(sess.cycles)
        at = at_cycle(sess, position)
        start = 1 if at >= total else at + 1  # from the start once the end is shown
        for shown in range(start, total + 1):
            yield frame(sess, shown)
            if shown < total:
                time.sleep(delay)

    light = {"concurrency_limit": None, **PRIVATE}
    playing = player.autoplay.click(
        autoplay, [session, player.position, player.pace], outputs, **light
    )
    for button, handler in ((player.back, back), (player.forward, forward)):
        button.click(handler, [session, player.position], outputs, cancels=[playing], **light)
    player.pause.click(None, None, None, cancels=[playing], queue=False, **PRIVATE)
    for button in (player.back, player.forward, player.autoplay):  # the cycles show on the live tab
        button.click(lambda: gr.Tabs(selected="live"), None, tabs, queue=False, **PRIVATE)
    for button in (controls.run, controls.step):  # a new cycle: the player shows the whole run
        button.click(lambda: None, None, player.position, queue=False, **PRIVATE)


def at_cycle(sess: Session, position: int | None) -> int:
    """The cycle the player shows (1-based): its position, or the last cycle when it shows the
    whole run or a position past the run's end."""
    total = len(sess.cycles)
    return total if position is None else max(1, min(int(position), total))


def asks_for_present(request: gr.Request) -> bool:
    """True when the page's URL asks for presentation mode (``?present=1``)."""
    return bool(request.query_params.get("present") == "1")


def asks_for_fable(request: gr.Request) -> bool:
    """True when the page's URL asks for fable mode (``?fable=1``)."""
    return bool(request.query_params.get("fable") == "1")


def pace_label(pace: float, lang: str) -> str:
    """The autoplay pace in words: "1 cycle/s", "1.5 cycles/s"."""
    return t("app.player.pace_one" if pace == 1 else "app.player.pace", lang, pace=f"{pace:g}")
