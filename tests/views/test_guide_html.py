"""The guided cycle's words without a browser: every callout in every language, each field left for
the page's script to fill (and the script filling it), everything escaped; the callout's colours
and type sizes from assets/guide.css; and the page's scripts in the one function Gradio runs."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from browser_checks import contrast, hex_rgb

from specviz.app.builder import PAGE_SCRIPTS, page_script
from specviz.cli.screenshot_scenes import GUIDE_SEEN_JS
from specviz.text import TABLES, placeholders, t
from specviz.views.guide_html import CALLOUTS, SEEN_KEY, WORDS, guide_text_html, template

ASSETS = Path(__file__).resolve().parents[2] / "assets"
GUIDE_JS = (ASSETS / "guide.js").read_text(encoding="utf-8")
GUIDE_CSS = (ASSETS / "guide.css").read_text(encoding="utf-8")


def attributes(markup: str, selector: str) -> dict[str, str]:
    """The attributes of the first element whose opening tag holds *selector*, unescaped."""
    tag = re.search(r"<div[^>]*" + re.escape(selector) + r"[^>]*>", markup)
    assert tag, selector
    return {name: html.unescape(value) for name, value in re.findall(r'([\w-]+)="([^"]*)"', tag[0])}


@pytest.mark.parametrize("lang", sorted(TABLES))
def test_every_callout_is_rendered_with_its_fields_left_for_the_page(lang: str) -> None:
    markup = guide_text_html(lang=lang)
    assert markup.count("data-callout=") == len(CALLOUTS)
    for name, title, body in CALLOUTS:
        shown = attributes(markup, f'data-callout="{name}"')
        assert shown["data-title"] == template(title, lang)
        assert shown["data-body"] == template(body, lang)
        fields = placeholders(TABLES[lang][body])
        assert {f"{{{field}}}" for field in fields} <= set(
            re.findall(r"\{\w+\}", shown["data-body"])
        )
    words = attributes(markup, 'class="sv-guide-text"')
    for name, key in WORDS:
        assert words[f"data-{name}"] == template(key, lang)
    assert words["lang"] == lang and words["data-seen-key"] == SEEN_KEY
    assert " hidden" in markup.split(">")[0]


def test_a_template_without_fields_is_the_catalogue_text_itself() -> None:
    assert template("tour.next", "en") == t("tour.next", "en") == "Next"
    assert template("tour.counter", "ja") == "{step} / {total}"
    assert "{position}" in template("tour.reject.body", "ja")


def test_the_japanese_guide_is_japanese() -> None:
    markup = guide_text_html(lang="ja")
    assert "本物のサイクル" in html.unescape(markup)
    assert "Watch one real cycle" not in html.unescape(markup)


def test_every_field_is_one_the_script_fills_and_every_callout_one_it_shows() -> None:
    # guide.js fills each callout's fields from the page by name (values: { cycle, drafted }, ...):
    # a field it never names would reach the visitor as "{name}".
    for name, title, body in CALLOUTS:
        assert f'"{name}"' in GUIDE_JS, name
        for key in (title, body):
            for field in placeholders(TABLES["en"][key]):
                assert re.search(rf"\b{field}\b\s*[:,}}]", GUIDE_JS), (key, field)
    for field in placeholders(TABLES["en"]["tour.counter"]):
        assert re.search(rf"\b{field}:", GUIDE_JS), field


def test_the_page_script_fills_text_never_markup() -> None:
    # The values are the page's own text (token text among them): the script sets text and copies
    # nodes, it never parses a string as HTML.
    assert "innerHTML" not in GUIDE_JS and "insertAdjacentHTML" not in GUIDE_JS
    assert "createTextNode" in GUIDE_JS


def test_the_catalogue_markup_is_escaped_in_the_attributes() -> None:
    # No catalogue text holds a straight quote or <, but a field's braces and the typographic
    # quotes around a token pass through as they are, escaped where an attribute needs it.
    markup = guide_text_html(lang="en")
    assert "“{rejected}”" in html.unescape(markup)
    body = markup.split('data-callout="intro"', 1)[1]
    assert "<" not in body.split(">", 1)[0]


def test_tests_and_screenshots_count_the_guide_as_closed_under_its_own_key() -> None:
    assert repr(SEEN_KEY) in GUIDE_SEEN_JS and "localStorage.setItem" in GUIDE_SEEN_JS
    assert "dataset.seenKey" in GUIDE_JS


def test_the_page_runs_every_script_each_on_its_own() -> None:
    script = page_script()
    assert script.startswith("() => {") and script.rstrip().endswith("}")
    assert PAGE_SCRIPTS == ("presenter.js", "linked.js", "guide.js", "animate.js")
    for name in PAGE_SCRIPTS:
        source = (ASSETS / name).read_text(encoding="utf-8").strip().removesuffix(";")
        assert f"try {{ ({source})(); }} catch (error) {{ console.error('{name}'" in script


# --- the callout's look: assets/guide.css --------------------------------------------------------


def rule(selector: str) -> str:
    """The body of the first rule in guide.css whose selector list is exactly *selector*."""
    found = re.search(r"(?:\A|\}|\*/)\s*" + re.escape(selector) + r"\s*\{([^}]*)\}", GUIDE_CSS)
    assert found, selector
    return found.group(1)


def colour(body: str, name: str) -> str:
    found = re.search(rf"(?:^|[;\s]){name}:\s*(#[0-9a-fA-F]{{6}})", body)
    assert found, name
    return found.group(1)


def test_the_callout_reads_at_4_5_to_1_and_14_px_or_more() -> None:
    callout = colour(rule(".sv-guide"), "background")
    texts = {
        ".sv-guide": colour(rule(".sv-guide"), "color"),
        ".sv-guide-count": colour(rule(".sv-guide-count"), "color"),
        ".sv-guide h2.sv-guide-title": colour(rule(".sv-guide h2.sv-guide-title"), "color"),
        ".sv-guide p.sv-guide-end": colour(rule(".sv-guide p.sv-guide-end"), "color"),
        ".sv-guide button.sv-guide-back": colour(rule(".sv-guide button.sv-guide-back"), "color"),
    }
    for selector, text in texts.items():
        assert contrast(hex_rgb(text), hex_rgb(callout)) >= 4.5, selector
    next_button = rule(".sv-guide button.sv-guide-next")
    on_amber = contrast(
        hex_rgb(colour(next_button, "color")), hex_rgb(colour(next_button, "background"))
    )
    assert on_amber >= 4.5
    sizes = [int(size) for size in re.findall(r"font-size:\s*(\d+)px", GUIDE_CSS)]
    assert sizes and min(sizes) >= 14
