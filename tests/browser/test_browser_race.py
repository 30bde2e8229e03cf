"""The race with three drafter lanes in Debian's chromium, on the tiny models: the headline shows
only the final measured ratios, during the measurement and in every replay frame, and the
counters lead with time."""

from __future__ import annotations

import pytest
from browser_checks import WAIT_MS, events_over, needs_chromium

pytestmark = [pytest.mark.browser, needs_chromium]

LANES = ["Prompt lookup (copies)", "Hybrid (copies, else guesses)"]  # besides the draft model

# Every time the race panel changes, the headline's text and ratios as they stand.
RECORD_HEADLINES = """() => {
  window.__headlines = [];
  const race = document.querySelector('#sv-race');
  const record = () => {
    const head = race.querySelector('.sv-race-head');
    if (!head) return;
    const ratios = [...head.querySelectorAll('[data-speedup]')]
      .map((span) => span.dataset.lane + '=' + span.dataset.speedup);
    window.__headlines.push({text: head.querySelector('.sv-speedup')?.innerText ?? '', ratios});
  };
  new MutationObserver(record).observe(race, {childList: true, subtree: true});
}"""


def _headlines(page) -> list[dict]:
    return page.evaluate("() => window.__headlines")


def test_the_headline_is_the_final_ratio_while_the_lanes_replay(browser, url):
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1440, "height": 1400})
    page.goto(url)
    page.wait_for_selector("#sv-run")
    page.locator("#sv-race-toggle input").check()
    lanes = page.locator("#sv-race-drafters")
    lanes.wait_for(state="visible")
    assert "at most 3 here" in lanes.inner_text()
    for label in LANES:
        lanes.locator("input").click()
        page.get_by_role("option", name=label, exact=True).click()
    box = page.locator("#sv-max-new-tokens input[type=number]")
    box.fill("24")
    box.press("Enter")
    page.evaluate(RECORD_HEADLINES)

    page.locator("#sv-run").click()
    page.wait_for_selector("#sv-race .sv-race-status:text('finished')", timeout=120_000)
    race = page.locator("#sv-race")
    expect(race.locator(".sv-race-panel")).to_have_count(4)  # plain and three drafters
    final = [
        f"{span.get_attribute('data-lane')}={span.get_attribute('data-speedup')}"
        for span in race.locator(".sv-race-head [data-speedup]").all()
    ]
    assert [ratio.split("=")[0] for ratio in final] == ["draft-model", "lookup", "hybrid"]
    # While the lanes were measured, no ratio showed: only the waiting line, then the final one.
    measured = _headlines(page)
    assert measured and all(h["ratios"] in ([], final) for h in measured)
    assert measured[-1]["ratios"] == final
    counters = page.locator("#sv-counters .sv-stat")
    assert counters.nth(0).get_attribute("data-stat") == "speedup"
    assert "×" in counters.nth(0).locator(".sv-stat-value").inner_text()
    assert counters.nth(1).get_attribute("data-stat") == "saved"
    assert "work, not time" in counters.nth(1).inner_text()

    page.evaluate(RECORD_HEADLINES)
    with events_over(page):  # every replay frame has reached the page
        page.locator("#sv-replay").click()
        page.wait_for_selector("#sv-race .sv-race-status:text('replay')", timeout=WAIT_MS)
    frames = _headlines(page)
    assert frames and all(frame["ratios"] == final for frame in frames)
    assert "runs after the speculative run" not in race.inner_text()
    page.close()
