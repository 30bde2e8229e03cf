"""The app on a phone (390x844, touch) in Debian's chromium, on the tiny pair: the prompt, Run and
the stream come before the settings, a chart shows only once it has data, Run brings the stream
into view, nothing scrolls sideways, the counters sit in two columns, no chart toolbar covers a
title, and a tap on a token shows its details before the player moves to its cycle."""

from __future__ import annotations

import pytest
from browser_checks import (
    WAIT_MS,
    app_requests,
    at_least,
    needs_chromium,
    no_horizontal_scroll,
    set_number,
    settled,
    top,
)

pytestmark = [pytest.mark.browser, needs_chromium]


def open_on_a_phone(browser, url):
    """A page at *url* in a 390x844 touch viewport, the app's Run button in place."""
    context = browser.new_context(
        viewport={"width": 390, "height": 844},
        device_scale_factor=2,
        is_mobile=True,
        has_touch=True,
    )
    page = context.new_page()
    page.goto(url)
    page.wait_for_selector("#sv-run")
    return context, page


@pytest.fixture
def phone(browser, url):
    context, page = open_on_a_phone(browser, url)
    yield page
    context.close()


# True when the stream's box overlaps the viewport.
STREAM_IN_VIEW_JS = """
() => { const box = document.querySelector('#sv-stream').getBoundingClientRect();
  return box.height > 0 && box.top < window.innerHeight && box.bottom > 0; }
"""


def test_the_phone_shows_the_run_first_and_never_scrolls_sideways(phone, tmp_path):
    assert no_horizontal_scroll(phone)
    assert top(phone, "#sv-prompt") < top(phone, "#sv-run") < top(phone, "#sv-stream")
    assert top(phone, "#sv-stream") < top(phone, "#sv-cards") < top(phone, "#sv-drafter")
    assert top(phone, "#sv-run") <= 844  # Run on the first screen
    # Before a run no chart is shown: each is drawn (Plotly has laid it out) but folded away.
    settled(phone, "#sv-tab-live", charts=5)
    for chart in phone.locator("#sv-tab-live .js-plotly-plot").all():
        assert not chart.is_visible()
    set_number(phone, "sv-max-new-tokens", 16)
    phone.evaluate("window.scrollTo(0, 0)")  # the number box was typed into further down
    phone.locator("#sv-run").tap()
    phone.wait_for_function(STREAM_IN_VIEW_JS)  # Run brings the stream into view
    phone.wait_for_selector("#sv-status .sv-status-done", timeout=WAIT_MS)
    phone.wait_for_function(STREAM_IN_VIEW_JS)  # and it stays there as the run fills it
    settled(phone, "#sv-page", charts=5)  # laid out: the run drawn, the charts too
    assert no_horizontal_scroll(phone)
    # Counters in two columns: the first two side by side, the third on the next row.
    stats = phone.locator("#sv-counters .sv-stat")
    boxes = [stats.nth(i).bounding_box() for i in range(3)]
    assert boxes[0]["y"] == boxes[1]["y"] < boxes[2]["y"]
    assert boxes[1]["x"] > boxes[0]["x"] + boxes[0]["width"] - 1
    # Plotly's toolbar is hidden, so it covers no chart title; the charts with data show.
    assert phone.locator("#sv-tab-live .modebar-container").first.is_hidden()
    assert phone.locator("#sv-tab-live .js-plotly-plot").nth(1).is_visible()
    phone.evaluate("window.scrollTo(0, 0)")
    phone.screenshot(path=str(tmp_path / "phone-390x844.png"))


def test_a_tap_shows_the_token_before_the_player_moves(phone):
    from playwright.sync_api import expect

    set_number(phone, "sv-max-new-tokens", 16)
    phone.locator("#sv-run").tap()
    phone.wait_for_selector("#sv-status .sv-status-done", timeout=WAIT_MS)
    token = phone.locator("#sv-stream .sv-cycle").nth(1).locator(".sv-tok").first
    settled(phone, "#sv-page", charts=5)  # nothing left of the run to draw
    sent = app_requests(phone)
    token.tap()
    # The first tap opens the token's details (its tooltip shows on focus) and stays put: the
    # page's tap handler focuses the token and sends nothing (moving the player would go to the
    # server from that same handler).
    expect(token).to_be_focused()
    settled(phone, "#sv-page")
    assert sent == [], sent
    assert token.evaluate("(el) => el === document.activeElement")
    tip = token.evaluate("(el) => getComputedStyle(el, '::after').content")
    assert "q_draft" in tip or "p_target" in tip
    assert phone.locator("#sv-tab-live").is_visible()
    assert phone.locator("#sv-inspect").is_hidden()
    assert no_horizontal_scroll(phone)
    # A second tap on the same token moves the player to its cycle, on the live tab.
    token.tap()
    expect(phone.locator("#sv-cards .sv-cards-wrap")).to_have_attribute("data-cycle", "2")
    expect(phone.locator("#sv-player-position input")).to_have_value("2")
    assert phone.locator("#sv-tab-live").is_visible()
    assert phone.locator("#sv-inspect").is_hidden()


def test_hosted_mode_on_a_phone(browser, tmp_path):
    """Hosted mode (a Space) on a phone: its caps stated beside the controls fit, the Run button,
    the stream and the counters are usable without scrolling sideways."""
    from hosted_fixtures import tiny_app

    context, page = open_on_a_phone(browser, tiny_app(hosted=True))
    assert no_horizontal_scroll(page)
    assert "at most 256 here" in page.locator("#sv-max-new-tokens").inner_text()
    set_number(page, "sv-max-new-tokens", 16)
    page.locator("#sv-run").tap()
    page.wait_for_selector("#sv-status .sv-status-done", timeout=WAIT_MS)
    settled(page, "#sv-page", charts=5)  # laid out: the run drawn, the charts too
    assert no_horizontal_scroll(page)
    at_least(page.locator("#sv-stream .sv-tok"), 1)
    assert page.locator("#sv-counters .sv-stat").first.is_visible()
    run = page.locator("#sv-run").bounding_box()
    assert run is not None and run["x"] >= 0 and run["x"] + run["width"] <= 390
    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=str(tmp_path / "phone-hosted-390x844.png"))
    context.close()


def test_a_draft_tree_scrolls_within_its_panel_on_a_phone(phone):
    """A six-deep tree is wider than a phone: it scrolls sideways inside its panel, and the
    page itself still never does."""
    phone.locator("#sv-drafter input").click()
    phone.get_by_role("option", name="Draft tree (several guesses per step)", exact=True).click()
    phone.locator("#sv-step").click()
    tree = phone.locator("#sv-cards .sv-cards-wrap[data-cycle='1'] .sv-tree")
    tree.wait_for(timeout=WAIT_MS)
    scroll = tree.locator(".sv-tree-scroll")
    inner = scroll.evaluate("(el) => [el.scrollWidth, el.clientWidth]")
    assert inner[1] <= 390 and scroll.evaluate("(el) => getComputedStyle(el).overflowX") == "auto"
    assert no_horizontal_scroll(phone)
    box = phone.locator("#sv-cards").evaluate("(el) => el.getBoundingClientRect().right")
    assert box <= 390, box


def test_the_heads_and_n_grams_lab_fits_a_phone(phone):
    """Under the speedup lab: the drafter menu on a line of its own, and the lab's table and
    words within the screen's width once it has run."""
    set_number(phone, "sv-max-new-tokens", 12)
    phone.locator("#sv-tab-speedup-button").tap()
    drafter = phone.locator("#sv-self-draft-drafter").bounding_box()
    run = phone.locator("#sv-self-draft-run").bounding_box()
    assert drafter is not None and run is not None
    assert drafter["width"] > 300 and run["y"] > drafter["y"] + drafter["height"]
    phone.locator("#sv-self-draft-run").tap()
    phone.wait_for_selector("#sv-self-draft-status .sv-status-done", timeout=WAIT_MS)
    table = phone.locator("#sv-self-draft-summary table")
    right = table.evaluate("(el) => el.getBoundingClientRect().right")
    assert right <= 390, right
    assert no_horizontal_scroll(phone)
