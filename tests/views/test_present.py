"""Presentation mode without a browser: the notes' colours against the theme's backgrounds (WCAG
contrast computed from assets/specviz.css), the mode's type sizes, the glossary, the settings line,
the player's position and the live charts' placeholders."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from browser_checks import contrast, hex_rgb
from ui_events import sample_run

from specviz.app.present import PACES, Autoplays, at_cycle, holds_cycles
from specviz.app.session import Session
from specviz.views import run_charts as charts
from specviz.views.present_html import GLOSSARY, glossary_html, settings_line_html, short_prompt

CSS = (Path(__file__).resolve().parents[2] / "assets" / "specviz.css").read_text()
# Gradio's Soft theme: the page and a block in each theme (gray-50 / white, gray-950 / gray-800).
BACKGROUNDS = {"light": ("#f9fafb", "#ffffff"), "dark": ("#0b0f19", "#1f2937")}
CARD_TINT = (127, 127, 127, 0.07)  # --sv-card-bg, under the counters' and cards' notes


def rule(selector: str) -> str:
    """The body of the first CSS rule whose selector list is exactly *selector*."""
    found = re.search(re.escape(selector) + r"\s*\{([^}]*)\}", CSS)
    assert found, selector
    return found.group(1)


def variable(body: str, name: str) -> str:
    found = re.search(rf"{name}:\s*(#[0-9a-fA-F]{{6}})", body)
    assert found, name
    return found.group(1)


def tinted(background: str) -> list[float]:
    r, g, b, a = CARD_TINT
    return [c * a + base * (1 - a) for c, base in zip((r, g, b), hex_rgb(background), strict=True)]


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_notes_have_at_least_4_5_to_1_contrast_in_both_themes(theme):
    body = rule(":root,\n.dark") if theme == "light" else rule("}\n\n.dark")
    note = hex_rgb(variable(body, "--sv-note"))
    for background in BACKGROUNDS[theme]:
        assert contrast(note, hex_rgb(background)) >= 4.5, (theme, background)
        assert contrast(note, tinted(background)) >= 4.5, (theme, background, "tinted")


def test_the_wrong_note_colour_would_fail():
    # The legend notes: #9ca3af on white is about 2.5:1.
    assert contrast(hex_rgb("#9ca3af"), hex_rgb("#ffffff")) < 3


def test_presentation_mode_sets_notes_at_14px_and_the_stream_at_24px_or_more():
    notes = re.search(r"\.sv-present \.sv-stat-note,[^{]*\{([^}]*)\}", CSS)
    assert notes
    size = float(re.search(r"font-size:\s*([\d.]+)px", notes.group(1)).group(1))
    assert size >= 14
    stream = rule(".sv-present #sv-stream .sv-stream")
    assert float(re.search(r"font-size:\s*([\d.]+)px", stream).group(1)) >= 24
    assert "font-weight: 700" in rule(".sv-cut")  # bold cycle numbers in every mode


def test_the_glossary_explains_every_term_from_the_catalogue():
    html = glossary_html()
    assert html.count("<dt") == len(GLOSSARY) == 11
    for word in ("γ", "α", "τ", "residual", "bonus", "TV", "χ²", "confidence stop", "cumulative"):
        assert word in html
    assert "min(1, p(x)/q(x))" in html


def test_the_settings_line_is_one_short_escaped_line():
    line = settings_line_html("pair", "<b>Write\n  a   poem</b> " + "x " * 60, 5, 0.7, 64)
    assert "γ 5" in line and "temperature 0.7" in line and "64 tokens" in line
    assert "<b>" not in line and "&lt;b&gt;Write a poem" in line
    assert "…" in line and "\n" not in line
    assert short_prompt("short prompt") == "short prompt"
    assert short_prompt("a" * 80) == "a" * 48 + "…"


def test_the_player_position_stays_inside_the_run():
    sess = Session(cycles=list(sample_run()))
    total = len(sess.cycles)
    assert total >= 2
    assert at_cycle(sess, None) == total  # the whole run shows its last cycle
    assert at_cycle(sess, 1) == 1
    assert at_cycle(sess, total + 5) == total  # a position from a longer, older run
    assert at_cycle(sess, 0) == total  # the page's empty number box: the whole run


@pytest.mark.parametrize(
    "figure",
    [
        charts.acceptance_by_position([]),
        charts.accepted_length_histogram([]),
        charts.tokens_vs_passes([]),
        charts.time_split([]),
        charts.rejection_chart(None),
    ],
)
def test_empty_live_charts_say_what_will_appear_without_axes(figure):
    assert not figure.layout.xaxis.visible and not figure.layout.yaxis.visible
    assert all(len(trace.x or ()) == 0 for trace in figure.data)  # nothing drawn
    note = figure.layout.annotations[0].text
    assert "appear" in note or "shows" in note


# --- no stray error badges ---------------------------------------------------------------------

TAB = SimpleNamespace(session_hash="tab")  # what a handler reads of its gr.Request


@pytest.fixture(scope="module")
def demo():
    """The app as served, on a model cache that loads nothing (no test here runs a model)."""
    from specviz.app.builder import build_demo
    from specviz.models.loader import ModelCache
    from specviz.models.presets import load_presets

    return build_demo(load_presets(), ModelCache())


def by_elem_id(demo, elem_id: str):
    (block,) = [block for block in demo.blocks.values() if block.elem_id == elem_id]
    return block


def handler(demo, elem_id: str, name: str):
    """The handler named *name* of a press of the component *elem_id*."""
    target = by_elem_id(demo, elem_id)._id
    (fn,) = [
        fn
        for fn in demo.fns.values()
        if fn.name == name and any(trigger[0] == target for trigger in fn.targets)
    ]
    return fn


def test_the_player_is_off_until_the_session_holds_cycles(demo):
    for elem_id in ("sv-back", "sv-forward", "sv-autoplay", "sv-pause", "sv-pace"):
        assert by_elem_id(demo, elem_id).interactive is False, elem_id
    assert not holds_cycles(None) and not holds_cycles(Session())
    assert holds_cycles(Session(cycles=list(sample_run())))
    # Stop turns the player on or off by the session it leaves.
    stopped = handler(demo, "sv-stop", "stopped").fn
    turned_on = stopped(Session(cycles=list(sample_run())), TAB)
    assert len(turned_on) == 5 and all(update.interactive for update in turned_on.values())
    assert not any(update.interactive for update in stopped(None, TAB).values())


def test_every_event_that_draws_the_live_views_marks_only_the_status_line(demo):
    """Gradio keeps an error badge on an output until an event that tracks that output ends;
    a run tracks only the status line, so every event drawing the views must do the same."""
    status, stream = by_elem_id(demo, "sv-status"), by_elem_id(demo, "sv-stream")
    drawing = [fn for fn in demo.fns.values() if stream in fn.outputs]
    names = {"run", "step", "replay_upload", "back", "forward", "autoplay"}
    assert {fn.name for fn in drawing} >= names
    for fn in drawing:
        assert fn.show_progress_on == [status], fn.name


def test_the_player_pressed_with_no_cycles_says_so_calmly_on_the_status_line(demo):
    status = by_elem_id(demo, "sv-status")
    back = handler(demo, "sv-back", "back").fn
    autoplay = handler(demo, "sv-autoplay", "autoplay").fn
    for told in (back(Session(), None, TAB), *autoplay(None, None, 1.0, TAB)):
        assert list(told) == [status]  # every other view stays as it is
        assert "Nothing to play yet" in told[status] and "sv-status-error" not in told[status]


def test_pause_ends_an_autoplay_at_its_next_frame_without_cancelling_it(demo):
    """Pause tells the autoplay to end: its generator returns (the event ends as done), rather
    than waiting out the pace or being cancelled."""
    sess = Session(cycles=list(sample_run()))
    assert len(sess.cycles) >= 3
    autoplay = handler(demo, "sv-autoplay", "autoplay").fn
    # Pressed with the last cycle shown: it plays from cycle 1, a frame every 2 s.
    frames = autoplay(sess, len(sess.cycles), PACES[0], TAB)
    assert next(frames)[by_elem_id(demo, "sv-player-position")] == 1
    handler(demo, "sv-pause", "pause").fn(TAB)
    assert list(frames) == []  # no second frame: it ended when told


def test_a_tabs_second_autoplay_ends_its_first_and_each_tab_keeps_its_own():
    autoplays = Autoplays()
    with (
        autoplays.playing("tab") as first,
        autoplays.playing("other tab") as other,
        autoplays.playing("tab") as second,
    ):
        assert first.is_set() and not second.is_set()
        autoplays.stop("tab")
        assert second.is_set() and not other.is_set()
    with autoplays.playing("tab") as again:  # what ended is forgotten: a new one plays on
        assert not again.is_set()
    autoplays.stop("nobody")  # nothing playing: nothing to end
    autoplays.stop(None)
