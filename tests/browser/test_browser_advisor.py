"""The draft advisor's tab in Debian's chromium, on the tiny test models (seconds, not minutes)."""

from __future__ import annotations

import pytest
from browser_checks import WAIT_MS, needs_chromium, tick_only

pytestmark = [pytest.mark.browser, needs_chromium]


def test_the_advisor_ranks_the_candidates_and_recommends_one(browser, url):
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1280, "height": 1000})
    page.goto(url)
    page.locator("#sv-tab-advisor-button").click()
    page.wait_for_selector("#sv-advisor-run")
    # Before a run: a placeholder saying what will appear, no table.
    assert "Press Measure" in page.locator("#sv-advisor-result").inner_text()
    tick_only(page, "sv-advisor-drafters", ["Draft model (guesses)", "Prompt lookup (copies)"])
    tick_only(page, "sv-advisor-formats", ["int8wo"])
    tick_only(page, "sv-advisor-gammas", ["2", "3"])
    box = page.locator("#sv-advisor-tokens input[type=number]")
    box.fill("8")
    box.press("Enter")
    page.locator("#sv-advisor-run").click()
    page.wait_for_selector("#sv-advisor-status .sv-status-done", timeout=120_000)
    result = page.locator("#sv-advisor-result")
    # Two proposers at γ 2, 3 and adaptive: six ranked rows (the tab has no cost-schedule rows).
    expect(result.locator("tbody tr")).to_have_count(6, timeout=WAIT_MS)
    text = result.inner_text()
    # Eight tokens a run are too few to rank: no winner is named, and the words say what would.
    assert text.startswith("No recommendation from this: too few tokens to rank")
    assert "How firm: inconclusive" in text
    assert "draft-model[int8wo] γ=2" in text and "lookup γ=3" in text
    expect(page.locator("#sv-advisor-plot .js-plotly-plot")).to_have_count(1, timeout=WAIT_MS)
    page.close()
