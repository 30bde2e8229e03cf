"""The live tab's linked views in Debian's chromium, on the tiny pair: a click on a token moves
the player to its cycle and stays on the live tab; hovering a token lights its cycle's points in
the charts and its card (in the page, with nothing sent to the server); a click on a chart's point
moves the player; the cards' Inspect button, reached by the keyboard, opens the inspector there.

Screenshots of a hover go to the test's temporary folder.
"""

from __future__ import annotations

import pytest
from browser_checks import WAIT_MS, app_requests, needs_chromium, set_number, settled

pytestmark = [pytest.mark.browser, needs_chromium]

# Each linked trace of the live tab's charts: [its meta link, its type, its selected points].
LIT_JS = """
() => [...document.querySelectorAll('#sv-tab-live .js-plotly-plot')].flatMap((chart) =>
  (chart.data || []).filter((trace) => trace.meta?.link)
    .map((trace) => [trace.meta.link, trace.type, trace.selectedpoints ?? null]))
"""

# The opacity Plotly draws each bar of the time split's first trace with (the chart whose bars
# link to cycles): the selected bar full, the others dimmed.
BAR_OPACITY_JS = """
() => {
  const chart = [...document.querySelectorAll('#sv-tab-live .js-plotly-plot')].find((one) =>
    (one.data || []).some((trace) => trace.meta?.link === 'cycle' && trace.type === 'bar'));
  const bars = chart.querySelectorAll('.trace.bars')[0].querySelectorAll('.point path');
  return [...bars].map((bar) => Number(getComputedStyle(bar).opacity));
}
"""

# The centre of bar *index* of the time split's widest-drawn part (verify), in page pixels.
BAR_CENTRE_JS = """
(index) => {
  const chart = [...document.querySelectorAll('#sv-tab-live .js-plotly-plot')].find((one) =>
    (one.data || []).some((trace) => trace.meta?.link === 'cycle' && trace.type === 'bar'));
  chart.scrollIntoView({block: 'center'});
  const box = chart.querySelectorAll('.trace.bars')[1].querySelectorAll('.point')[index]
    .getBoundingClientRect();
  return {x: box.left + box.width / 2, y: box.top + box.height / 2};
}
"""


@pytest.fixture
def page(browser, url):
    from browser_checks import open_page

    yield from open_page(browser, url, 1440, 900)


def run(page, tokens: int = 12) -> int:
    """Press Run with *tokens* new tokens, wait for the end and for the charts; the cycles."""
    from playwright.sync_api import expect

    set_number(page, "sv-max-new-tokens", tokens)
    page.locator("#sv-run").click()
    page.wait_for_selector("#sv-status .sv-status-done", timeout=WAIT_MS)
    expect(page.locator("#sv-back")).to_be_enabled()  # the run's follow-up events have landed
    settled(page, "#sv-tab-live", charts=5)
    return int(page.locator("#sv-stream .sv-stream").get_attribute("data-cycles") or 0)


def token_of(page, cycle: int):
    return page.locator(f"#sv-stream .sv-cycle[data-cycle='{cycle}'] .sv-tok").first


def shows_cycle(page, cycle: int) -> None:
    """Wait until the cards and the player's position show *cycle*."""
    from playwright.sync_api import expect

    expect(page.locator("#sv-cards .sv-cards-wrap")).to_have_attribute("data-cycle", str(cycle))
    expect(page.locator("#sv-player-position input")).to_have_value(str(cycle))


def lit(page) -> dict[str, list]:
    """The points each kind of linked trace has selected: {"cycle:bar": [...], ...}."""
    return {f"{link}:{kind}": chosen for link, kind, chosen in page.evaluate(LIT_JS)}


def test_a_click_on_a_token_moves_the_player_and_stays_on_the_live_tab(page):
    from playwright.sync_api import expect

    total = run(page)
    assert total >= 4
    token = token_of(page, 2)
    token.click()
    shows_cycle(page, 2)
    expect(page.locator("#sv-stream .sv-stream")).to_have_attribute("data-cycles", "2")
    assert f"Cycle 2 of {total}" in page.locator("#sv-status").inner_text()
    # Still on the live tab, the token in view and focused (its tooltip open): the stream was
    # cut back in place, not redrawn.
    assert page.locator("#sv-tab-live").is_visible()
    assert page.locator("#sv-inspect").is_hidden()
    expect(token).to_be_in_viewport()
    expect(token).to_be_focused()
    # The player steps on from there, as from any cycle it shows.
    page.locator("#sv-forward").click()
    shows_cycle(page, 3)
    # Enter on a focused token does what a click does.
    token_of(page, 1).focus()
    page.keyboard.press("Enter")
    shows_cycle(page, 1)


def test_hovering_a_token_lights_its_points_and_its_card_in_the_page(page, tmp_path):
    from playwright.sync_api import expect

    total = run(page)
    sent = app_requests(page)  # every request the page sends the server
    # The cards show the cycle the player is at (the last one drafted nothing): a token of it
    # lights its card too.
    page.locator("#sv-back").click()
    shows_cycle(page, total - 1)
    sent.clear()
    shown = page.locator(f"#sv-stream .sv-cycle[data-cycle='{total - 1}'] .sv-tok.sv-rejected")
    shown.first.hover()
    card = page.locator(f"#sv-cards .sv-cards-wrap[data-cycle='{total - 1}'] .sv-card.sv-linked")
    expect(card).to_have_count(1)
    assert card.get_attribute("data-origin") == "rejected" and card.get_attribute("data-pos") == "1"
    page.wait_for_function(f"() => ({LIT_JS})().some(([link, , chosen]) => chosen !== null)")
    index = total - 2  # cycle total - 1 is the point at that index of the time split
    assert lit(page) == {
        "position:bar": [0],  # its draft position
        "accepted:bar": [0],  # the tiny pair's cycles keep no draft
        "cycle:scatter": [total - 1],  # the tokens chart's first point is the origin
        "cycle:bar": [index],
    }
    opacities = page.evaluate(BAR_OPACITY_JS)
    assert opacities[index] == 1 and max(opacities[:index] + opacities[index + 1 :]) < 1
    page.screenshot(path=str(tmp_path / "linked-hover-1440x900.png"))
    # A token of an earlier cycle lights that cycle, and no card: the cards show another.
    token_of(page, 1).hover()
    page.wait_for_function(f"() => ({LIT_JS})().some(([link, kind, chosen]) =>"
                           " link === 'cycle' && kind === 'bar' && chosen?.[0] === 0)")  # fmt: skip
    expect(page.locator("#sv-cards .sv-card.sv-linked")).to_have_count(0)
    # Leaving the stream lights nothing again.
    page.locator("#sv-status").hover()
    page.wait_for_function(f"() => ({LIT_JS})().every(([, , chosen]) => chosen === null)")
    assert min(page.evaluate(BAR_OPACITY_JS)) == 1
    # Focus lights as hover does.
    token_of(page, 2).focus()
    page.wait_for_function(f"() => ({LIT_JS})().some(([link, kind, chosen]) =>"
                           " link === 'cycle' && kind === 'bar' && chosen?.[0] === 1)")  # fmt: skip
    assert sent == [], sent  # all of it in the page: nothing went to the server


def test_a_click_on_a_chart_point_moves_the_player_to_its_cycle(page):
    from playwright.sync_api import expect

    total = run(page)
    assert total >= 4
    centre = page.evaluate(BAR_CENTRE_JS, 1)  # cycle 2's bar
    page.mouse.move(centre["x"], centre["y"])
    # Plotly's hover names the bar's cycle, and the stream marks where a click will go.
    expect(page.locator("#sv-tab-live .hoverlayer .hovertext").first).to_be_visible()
    expect(page.locator("#sv-stream .sv-cycle.sv-linked")).to_have_attribute("data-cycle", "2")
    expect(page.locator("#sv-tab-live .js-plotly-plot.sv-goes-to-cycle")).to_have_count(1)
    page.mouse.down()
    page.mouse.up()
    shows_cycle(page, 2)
    expect(page.locator("#sv-stream .sv-stream")).to_have_attribute("data-cycles", "2")
    assert page.locator("#sv-tab-live").is_visible()


def test_the_inspect_button_opens_the_inspector_at_the_cycle_shown(page):
    from playwright.sync_api import expect

    run(page)
    token_of(page, 2).click()
    shows_cycle(page, 2)
    button = page.locator("#sv-cards .sv-inspect-open")
    expect(button).to_have_text("Inspect this cycle")
    button.focus()  # reached by the keyboard: a real button
    page.keyboard.press("Enter")
    expect(page.locator("#sv-inspect .sv-inspect[data-cycle='2']")).to_be_visible()
    assert page.locator("#sv-tab-inspector").is_visible()
    expect(page.locator("#sv-inspect-cycle input[type=number]")).to_have_value("2")
