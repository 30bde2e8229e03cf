"""The real app in Debian's chromium, driven by Playwright: what only a browser can show.

Run, Step and a screenshot on a code example, a race of three drafter lanes; and an XSS check that
fails if model output, rendered as tokens, cards, tooltips or chart labels, ever opens a dialog or
runs a script. Screenshots go to the test's tmp_path: ``python -m specviz screenshots`` retakes the
README's pictures.
"""

from __future__ import annotations

import re

import pytest
from browser_checks import at_least, needs_chromium, run_example, set_number, settled

pytestmark = [pytest.mark.browser, pytest.mark.slow, needs_chromium]


@pytest.fixture
def page(browser):
    from ui_fixtures import live_app

    context = browser.new_context(viewport={"width": 1440, "height": 1800})
    page = context.new_page()
    page.goto(live_app())
    page.wait_for_selector("#sv-run")
    yield page
    context.close()


def test_run_a_code_example_then_step(page, tmp_path):
    from playwright.sync_api import expect

    run_example(page, "code", "fibonacci", 24, 120_000)
    stream = page.locator("#sv-stream .sv-stream")
    at_least(stream.locator(".sv-tok.sv-accepted"), 1)
    at_least(stream.locator(".sv-tok.sv-resampled, .sv-tok.sv-bonus"), 1)
    tokens = int(page.locator('#sv-counters [data-stat="tokens"] .sv-stat-value').inner_text())
    passes = int(
        page.locator('#sv-counters [data-stat="target_forwards"] .sv-stat-value').inner_text()
    )
    assert tokens == 24 and 0 < passes < tokens
    # The tooltip is CSS on hover/focus; its text lives in data-tip.
    tip = stream.locator(".sv-tok.sv-accepted").first.get_attribute("data-tip")
    # The preset decodes greedily: the argmaxes decide, in the inspector's words.
    assert "q_draft" in tip and "p_target" in tip and "top choice" in tip
    settled(page, "#sv-tab-live", charts=5)  # the cards' flip animation ends, the charts drawn
    page.screenshot(path=str(tmp_path / "screenshot-run.png"), full_page=True)
    assert (tmp_path / "screenshot-run.png").stat().st_size > 50_000

    page.locator("#sv-step").click()
    page.wait_for_selector("#sv-status :text('Paused after cycle 1')", timeout=60_000)
    expect(page.locator("#sv-stream .sv-cut")).to_have_count(1)
    at_least(page.locator("#sv-cards .sv-card"), 2)


def test_model_output_with_markup_is_shown_as_text(page):
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    payload = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>'
    page.locator("#sv-prompt textarea").fill(
        f'Repeat this line exactly, with nothing else: {payload} alert("x")'
    )
    set_number(page, "sv-max-new-tokens", 24)
    page.locator("#sv-run").click()
    page.wait_for_selector("#sv-status .sv-status-done", timeout=120_000)
    settled(page, "#sv-tab-live", charts=5)  # everything the run shows is drawn

    text = page.locator("#sv-stream .sv-stream").inner_text()
    assert re.search(r"<(img|script)", text), f"the model did not echo the markup: {text!r}"
    assert page.locator("#sv-stream img, #sv-stream script, #sv-cards img").count() == 0
    assert page.evaluate("window.__pwned") is None
    assert dialogs == []


def test_a_race_with_three_drafter_lanes(page, tmp_path):
    from playwright.sync_api import expect

    page.goto(page.url.split("?")[0] + "?__theme=dark")  # the race in the dark theme
    page.wait_for_selector("#sv-run")
    # A short prompt: on a shared 2-core CPU each of the race's 16 runs (warm-ups included) reads
    # the prompt in its first pass, and a long one costs a minute a run.
    page.get_by_label("code").check()
    page.locator("#sv-examples").get_by_text("fibonacci", exact=False).first.click()
    set_number(page, "sv-max-new-tokens", 32)
    page.locator("#sv-race-toggle input").check()
    lanes = page.locator("#sv-race-drafters")
    for label in ("Prompt lookup (copies)", "Hybrid (copies, else guesses)"):
        lanes.locator("input").click()
        page.get_by_role("option", name=label, exact=True).click()

    page.locator("#sv-run").click()
    try:
        page.wait_for_selector("#sv-race .sv-race-status:text('finished')", timeout=900_000)
    finally:
        page.screenshot(path=str(tmp_path / "race-last-seen.png"), full_page=True)
    race = page.locator("#sv-race")
    expect(race.locator(".sv-race-panel")).to_have_count(4)
    expect(race.locator(".sv-race-head [data-speedup]")).to_have_count(3)
    settled(page, "#sv-tab-live", charts=5)  # the charts drawn, nothing moving
    page.screenshot(path=str(tmp_path / "screenshot-race.png"), full_page=True)
    assert (tmp_path / "screenshot-race.png").stat().st_size > 50_000
