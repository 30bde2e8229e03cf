"""Presentation mode without a browser: the notes' colours against the theme's backgrounds (WCAG
contrast computed from assets/specviz.css), the mode's type sizes, the glossary, the settings line,
the player's position and the live charts' placeholders."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from browser_checks import contrast, hex_rgb
from ui_events import sample_run

from specviz.app.present import at_cycle
from specviz.app.session import Session
from specviz.views import run_charts as charts
from specviz.views.present_html import GLOSSARY, glossary_html, settings_line_html, short_prompt

CSS = (Path(__file__).resolve().parent.parent / "assets" / "specviz.css").read_text()
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
    assert at_cycle(sess, 0) == 1


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
