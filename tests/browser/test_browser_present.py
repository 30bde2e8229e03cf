"""Presentation mode, the player and the glossary in Debian's chromium, on the tiny pair.

The tiny models answer in milliseconds, so each test runs a whole generation in a second or two;
what is checked is the page: sizes, contrast, order, scrolling, and the player's moves. Screenshots
go to the test's temporary folder (the README's pictures come from python -m specviz screenshots).
"""

from __future__ import annotations

import time

import pytest
from browser_checks import (
    CHROMIUM,
    NOTES,
    STYLE_JS,
    WAIT_MS,
    contrast,
    events_over,
    no_horizontal_scroll,
    set_number,
    settled,
    top,
)

from specviz.views.present_html import GLOSSARY

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"
    ),
]


@pytest.fixture
def page(browser, url):
    from browser_checks import open_page

    yield from open_page(browser, url, 1280, 720)


def run(page, tokens: int = 24) -> int:
    """Press Run with *tokens* new tokens and wait for the end; the cycles it took."""
    set_number(page, "sv-max-new-tokens", tokens)
    page.locator("#sv-run").click()
    page.wait_for_selector("#sv-status .sv-status-done", timeout=WAIT_MS)
    return cycles_shown(page)


def cycles_shown(page) -> int:
    return int(page.locator("#sv-stream .sv-stream").get_attribute("data-cycles"))


def present_on(page) -> None:
    page.locator("#sv-present-toggle input").check()
    page.wait_for_selector("#sv-page.sv-present")


def test_presentation_mode_reads_from_the_back_of_the_room(page, tmp_path):
    from playwright.sync_api import expect

    set_number(page, "sv-max-new-tokens", 24)  # the controls hide in presentation mode
    page.locator("#sv-race-toggle input").check()  # the race shows above the charts too
    present_on(page)
    assert not page.locator("#sv-prompt").is_visible()  # settings: one line
    summary = page.locator("#sv-present-summary")
    assert summary.is_visible() and "γ 5" in summary.inner_text()
    assert summary.locator(".sv-present-summary").bounding_box()["height"] < 30  # one line
    # No empty chart: before a run every live chart says what will appear, with no axes.
    live = page.locator("#sv-tab-live")
    expect(live.locator(".js-plotly-plot")).to_have_count(5)  # Plotly draws them after load
    expect(live.locator(".js-plotly-plot .annotation-text")).to_have_count(5)
    settled(page, "#sv-tab-live", charts=5)
    assert live.locator(".js-plotly-plot .xtick").count() == 0  # drawn, and without axes

    page.locator("#sv-run").click()
    page.wait_for_selector("#sv-status .sv-status-done", timeout=WAIT_MS)
    page.wait_for_selector("#sv-race .sv-race-status:text('finished')", timeout=WAIT_MS)
    settled(page, "#sv-page", charts=5)  # the cards' flip ends, the charts redrawn

    stream = page.locator("#sv-stream .sv-stream").evaluate(
        "(el) => parseFloat(getComputedStyle(el).fontSize)"
    )
    assert stream >= 24
    checked = 0
    for selector in NOTES:
        for style in page.evaluate(STYLE_JS, f"#sv-tab-live {selector}"):
            checked += 1
            assert style["size"] >= 14, (selector, style)
            assert contrast(style["color"], style["background"]) >= 4.5, (selector, style)
    assert checked >= 10
    cut = page.evaluate(STYLE_JS, "#sv-stream .sv-cut")[0]
    assert cut["weight"] >= 700  # bold cycle numbers

    # What the room watches first: the stream, the current cycle and the race above the charts.
    first_chart = top(page, "#sv-tab-live .js-plotly-plot")
    assert top(page, "#sv-stream") < top(page, "#sv-cards") < top(page, "#sv-race")
    assert top(page, "#sv-race") < first_chart and top(page, "#sv-counters") < first_chart
    assert page.locator("#sv-tab-live .modebar-container").first.is_hidden()
    # The race's final speedup also sits above the stream, on the first screen at 1280×720.
    headline = page.locator("#sv-headline .sv-speedup").first
    assert headline.is_visible() and headline.get_attribute("data-speedup")
    assert top(page, "#sv-headline") < top(page, "#sv-stream")
    box = headline.bounding_box()
    assert box is not None and box["y"] + box["height"] <= 720

    folder = tmp_path
    for name, size in (("1280x720", (1280, 720)), ("1440x900", (1440, 900))):
        page.set_viewport_size({"width": size[0], "height": size[1]})
        page.wait_for_function("(width) => window.innerWidth === width", arg=size[0])
        settled(page, "#sv-page", charts=5)  # the charts have followed the new width
        assert no_horizontal_scroll(page), name
        page.evaluate("window.scrollTo(0, 0)")
        page.screenshot(path=str(folder / f"present-{name}.png"))


@pytest.mark.parametrize("zoom", ["viewport", "device"])
def test_presentation_mode_at_150_percent_zoom(browser, url, tmp_path, zoom):
    from playwright.sync_api import expect

    # 150 % zoom of a 1280x720 screen: CSS sees 853x480 (drawn at 1.5 device pixels each).
    scale = 1.5 if zoom == "device" else 1
    context = browser.new_context(viewport={"width": 853, "height": 480}, device_scale_factor=scale)
    page = context.new_page()
    page.goto(url + "?present=1")  # the URL turns the mode on
    page.wait_for_selector("#sv-page.sv-present")
    toggle = page.locator("#sv-present-toggle input")
    assert toggle.is_checked()
    toggle.uncheck()  # a short run: its box shows outside presentation mode
    set_number(page, "sv-max-new-tokens", 16)
    present_on(page)
    page.locator("#sv-run").click()
    page.wait_for_selector("#sv-status .sv-status-done", timeout=WAIT_MS)
    settled(page, "#sv-page", charts=5)  # laid out: the run drawn, the charts too
    assert no_horizontal_scroll(page)
    # Every tab keeps its button on the page (they wrap, never fold into a "⋯" menu): Live run,
    # Inspector, Exactness, Speedup, Verification cost, Tasks, Advisor, Production configs; Watch
    # a server, the host's tool, is left out of presentation mode.
    buttons = page.locator("#sv-tabs [role=tab]:not(#sv-tab-watch-button)")
    expect(buttons).to_have_count(8)
    for button in buttons.all():
        expect(button).to_be_visible()
    expect(page.locator("#sv-tab-watch-button")).to_be_hidden()
    assert page.locator("#sv-tabs .overflow-menu:visible").count() == 0
    assert top(page, "#sv-stream") < 480  # the stream starts on the first screen
    folder = tmp_path
    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=str(folder / f"present-zoom150-{zoom}.png"))
    context.close()


def test_step_back_and_forward_through_a_finished_run(page):
    total = run(page)
    assert total >= 3
    page.locator("#sv-back").click()
    page.wait_for_selector(f'#sv-stream .sv-stream[data-cycles="{total - 1}"]')
    assert page.locator("#sv-cards .sv-cards-wrap").get_attribute("data-cycle") == str(total - 1)
    assert f"Cycle {total - 1} of {total}" in page.locator("#sv-status").inner_text()
    page.locator("#sv-back").click()
    page.wait_for_selector(f'#sv-stream .sv-stream[data-cycles="{total - 2}"]')
    page.locator("#sv-forward").click()
    page.wait_for_selector(f'#sv-stream .sv-stream[data-cycles="{total - 1}"]')
    page.locator("#sv-forward").click()
    page.wait_for_selector(f'#sv-stream .sv-stream[data-cycles="{total}"]')
    with events_over(page):  # the server has answered the click, and the page shows it
        page.locator("#sv-forward").click()  # past the end it stays on the last cycle
    assert cycles_shown(page) == total
    page.locator("#sv-back").click()
    page.wait_for_selector(f'#sv-stream .sv-stream[data-cycles="{total - 1}"]')
    # A new run shows the whole of it, and Back steps back from its last cycle.
    again = run(page, 16)
    page.locator("#sv-back").click()
    page.wait_for_selector(f'#sv-stream .sv-stream[data-cycles="{again - 1}"]')


def test_autoplay_keeps_its_pace_and_pause_holds_the_cycle(page):
    total = run(page, 32)
    assert total >= 6
    page.locator("#sv-pace input").click()
    page.get_by_role("option", name="1 cycle/s", exact=True).wait_for()  # not "1 cycles/s"
    assert page.get_by_role("option", name="1 cycles/s").count() == 0
    page.get_by_role("option", name="0.5 cycles/s").click()
    began = time.perf_counter()
    page.locator("#sv-autoplay").click()
    # At least 4 cycles, not exactly 4: on a busy machine the page may take two frames between
    # two of its own animation frames and never show cycle 4 alone. The slowest pace leaves
    # two seconds a cycle for Pause to land before the autoplay reaches the end.
    try:
        page.wait_for_function(
            "() => Number(document.querySelector('#sv-stream .sv-stream')?.dataset.cycles) >= 4"
            f" && Number(document.querySelector('#sv-stream .sv-stream').dataset.cycles) < {total}",
            timeout=WAIT_MS,
        )
    except Exception as error:  # say where the player stood, not only that it timed out
        status = page.locator("#sv-status").inner_text()
        raise AssertionError(f"cycle {cycles_shown(page)} of {total}; status: {status}") from error
    took = time.perf_counter() - began
    # Cycle 1 shows at once and three more follow at one per 2 s: at least 6 s, never faster
    # (a busy machine may only make it slower, so no upper bound is asserted).
    assert took >= 5.5, took
    # Pause cancels the autoplay: once the server has ended its event, no frame can follow.
    with events_over(page):
        page.locator("#sv-pause").click()
    held = cycles_shown(page)
    assert held < total  # paused: no more cycles
    page.locator("#sv-back").click()  # the player remembers where the pause left it
    page.wait_for_selector(f'#sv-stream .sv-stream[data-cycles="{held - 1}"]')


def test_the_player_steps_from_the_cycle_the_page_holds(page):
    from playwright.sync_api import expect

    # The page, not the server, holds the player's position: a frame that Pause cancelled
    # after the server yielded it never reached the page, and Back must step from the cycle on
    # screen. Here the page's position is set by hand, as such a frame would leave it.
    total = run(page, 24)
    assert total >= 4
    box = page.locator("#sv-player-position input")
    expect(box).to_have_count(1)
    assert not box.is_visible()
    # The run's follow-up events (the player turned on) land first, so nothing after them can
    # redraw the box between the hand-set value and Back.
    expect(page.locator("#sv-back")).to_be_enabled()
    box.evaluate(
        "(el, v) => { el.value = v; el.dispatchEvent(new Event('input', {bubbles: true}));"
        " el.dispatchEvent(new Event('change', {bubbles: true})); }",
        "3",
    )
    expect(box).to_have_value("3")
    page.locator("#sv-back").click()
    try:
        page.wait_for_selector('#sv-stream .sv-stream[data-cycles="2"]', timeout=WAIT_MS)
    except Exception as error:  # say what the page showed instead
        status = page.locator("#sv-status").inner_text()
        shown = f"cycle {cycles_shown(page)} of {total}, position box {box.input_value()!r}"
        raise AssertionError(f"{shown}; status: {status}") from error
    assert box.input_value() == "2"


def test_the_glossary_is_one_click_away(page):
    terms = page.locator("#sv-glossary-terms dt")
    assert not in_view(page, "#sv-glossary-terms")
    page.locator("#sv-glossary-open").click()
    page.wait_for_function(
        "() => { const box = document.querySelector('#sv-glossary-terms').getBoundingClientRect();"
        " return box.width > 0 && box.right <= window.innerWidth + 1; }"
    )
    shown = [term.get_attribute("data-term") for term in terms.all()]
    assert shown == [text.split(".")[1] for _, text in GLOSSARY]
    text = page.locator("#sv-glossary-terms").inner_text()
    for word in ("γ", "α", "τ", "residual", "bonus", "TV", "χ²", "confidence stop", "cumulative"):
        assert word in text


def in_view(page, selector: str) -> bool:
    """True when the element is drawn and lies inside the viewport's width."""
    return page.locator(selector).evaluate(
        "(el) => { const box = el.getBoundingClientRect();"
        " return el.offsetParent !== null && box.width > 0 && box.left >= 0"
        " && box.right <= window.innerWidth + 1; }"
    )
