"""The shared link in Debian's chromium, on the tiny pair: a query restores the controls, the
link button writes a link that restores them again in a fresh page, and the Japanese page's
link keeps /ja/."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import quote

import pytest
from browser_checks import WAIT_MS, needs_chromium

pytestmark = [pytest.mark.browser, needs_chromium]

PRESENT = re.compile(r"\bsv-present\b")
LINK = re.compile(r"^http.*\?pair=")
PROMPT = 'Tell me about <b>bold</b> & "quotes" <script>window.injected = 1</script>'


def other_pair() -> tuple[str, str]:
    """A pair that is not the page's first (its id and label): the link restores it in two
    steps, so the pair's defaults must not overwrite the rest."""
    from specviz.models.presets import default_preset, load_presets

    presets = load_presets()
    first = default_preset(presets)
    preset = next(preset for preset in presets.values() if preset.id != first.id)
    return preset.id, preset.label


def query(pair: str) -> str:
    values = {
        "pair": pair,
        "drafter": "lookup:max_ngram=3",
        "prompt": PROMPT,
        "gamma": "3",
        "temperature": "0.7",
        "seed": "11",
        "max_new_tokens": "40",
        "tab": "inspector",
        "present": "1",
        "animate": "1",
    }
    return "&".join(f"{name}={quote(value, safe='')}" for name, value in values.items())


@contextmanager
def opened(browser, address: str) -> Iterator:  # type: ignore[no-untyped-def]
    """A fresh page at *address*, once Run is drawn."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.goto(address)
    page.wait_for_selector("#sv-run")
    yield page
    context.close()


def assert_restored(page, label: str) -> None:
    """Every control shows the link's value, presentation mode and the animation are on and
    the inspector open."""
    from playwright.sync_api import expect

    expect(page.locator("#sv-page")).to_have_class(PRESENT, timeout=WAIT_MS)
    expect(page.locator("#sv-animate-toggle input")).to_be_checked(timeout=WAIT_MS)
    expect(page.locator("#sv-gamma input[type=number]")).to_have_value("3", timeout=WAIT_MS)
    expect(page.locator("#sv-temperature input[type=number]")).to_have_value("0.7")
    expect(page.locator("#sv-seed input")).to_have_value("11")
    expect(page.locator("#sv-max-new-tokens input[type=number]")).to_have_value("40")
    expect(page.locator("#sv-drafter input")).to_have_value("lookup:max_ngram=3")
    expect(page.locator("#sv-prompt textarea")).to_have_value(PROMPT)
    expect(page.locator("#sv-tab-inspector-button")).to_have_attribute("aria-selected", "true")
    assert page.locator("#sv-tab-inspector").is_visible()
    assert label in page.locator("#sv-present-summary").inner_text()  # the settings line's pair
    assert page.evaluate("window.injected") is None  # the prompt stayed text
    assert "error" not in page.locator("#sv-status").inner_html()  # no value was dropped


def link_shown(page) -> str:
    """Press the link button; the link it shows."""
    from playwright.sync_api import expect

    page.locator("#sv-link-open").click()
    box = page.locator("#sv-link textarea, #sv-link input").first
    expect(box).to_have_value(LINK, timeout=WAIT_MS)
    return str(box.input_value())


def test_a_link_restores_the_setup_and_the_button_writes_one_that_does_again(browser, url):  # type: ignore[no-untyped-def]
    pair, label = other_pair()
    with opened(browser, f"{url}?{query(pair)}") as page:
        assert_restored(page, label)
        link = link_shown(page)
    assert link.startswith(url.rstrip("/") + "/?")
    assert "tab=inspector" in link and "present=1" in link and "gamma=3" in link
    assert "animate=1" in link
    with opened(browser, link) as page:
        assert_restored(page, label)


def test_a_bad_value_is_told_on_the_status_line_and_the_rest_is_kept(browser, url):  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    with opened(browser, f"{url}?gamma=99&seed=11&pair=%3Cb%3Enope%3C%2Fb%3E") as page:
        status = page.locator("#sv-status .sv-status-error")
        expect(status).to_contain_text("γ", timeout=WAIT_MS)
        expect(status).to_contain_text("<b>nope</b>")  # shown as text, not as markup
        expect(page.locator("#sv-seed input")).to_have_value("11")


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    from hosted_fixtures import TinyCache

    from specviz.app.site import bilingual_app, serve
    from specviz.models.presets import load_presets

    running = serve(bilingual_app(load_presets(), TinyCache()))  # type: ignore[arg-type]
    yield running.url
    running.close()


def test_the_japanese_pages_link_keeps_ja(browser, site):  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    with opened(browser, f"{site}ja/?seed=11") as page:
        expect(page.locator("#sv-seed input")).to_have_value("11", timeout=WAIT_MS)
        assert page.locator("#sv-link-open").inner_text().strip() == "この設定へのリンク"
        link = link_shown(page)
    assert link.startswith(f"{site}ja/?") and "seed=11" in link
    with opened(browser, link) as page:
        expect(page.locator("#sv-seed input")).to_have_value("11", timeout=WAIT_MS)
        assert page.locator("#sv-run").inner_text().strip() == "▶ 実行"
