"""The real app in Debian's chromium, driven by Playwright: what only a browser can show.

Run, Step and a screenshot on a code example; and an XSS check that fails if model output, rendered
as tokens, cards, tooltips or chart labels, ever opens a dialog or runs a script.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest
from browser_checks import WAIT_MS, at_least, settled

from specviz.cli.screenshots import CHROMIUM, CHROMIUM_ARGS

# Screenshots go to a temporary folder unless SPECVIZ_SCREENSHOTS names one (use "assets" to
# refresh the README's picture on purpose), so a test run does not dirty the work tree.
SCREENSHOTS = os.environ.get("SPECVIZ_SCREENSHOTS")
ARGS = list(CHROMIUM_ARGS)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"
    ),
]


class PatientBrowser:
    """A launched chromium whose new contexts and pages wait up to WAIT_MS for anything (a
    selector, a click's target, a navigation) instead of Playwright's 30 s: on a machine whose
    cores are busy, a page can take that long to draw."""

    def __init__(self, browser: Any) -> None:
        self._browser = browser

    def new_context(self, **options: Any) -> Any:
        context = self._browser.new_context(**options)
        context.set_default_timeout(WAIT_MS)
        return context

    def new_page(self, **options: Any) -> Any:
        page = self._browser.new_page(**options)
        page.set_default_timeout(WAIT_MS)
        return page

    def __getattr__(self, name: str) -> Any:
        return getattr(self._browser, name)


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=WAIT_MS)  # an expect(...) waits as long as any other wait
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=ARGS
        )
        yield PatientBrowser(browser)
        browser.close()


@pytest.fixture
def page(browser):
    from ui_fixtures import live_app

    context = browser.new_context(viewport={"width": 1440, "height": 1800})
    page = context.new_page()
    page.goto(live_app())
    page.wait_for_selector("#sv-run")
    yield page
    context.close()


def _set_number(page, elem_id: str, value: int) -> None:
    """Type into a slider's number box (Gradio sliders pair a range with a number input)."""
    box = page.locator(f"#{elem_id} input[type=number]")
    box.fill(str(value))
    box.press("Enter")


def tick_only(page, group: str, keep: list[str]) -> None:
    """Leave exactly the checkboxes labelled *keep* ticked in the checkbox group *group*."""
    for box in page.locator(f"#{group} label").all():
        if box.locator("input").is_checked() != (box.inner_text().strip() in keep):
            box.click()


def run_example(page, task: str, example: str, max_new_tokens: int, timeout_ms: int) -> None:
    """Pick the example of *task* (its label) that contains *example*, cap the new tokens, press
    Run and wait until the run is done."""
    from playwright.sync_api import expect

    page.get_by_label(task).check()
    page.locator("#sv-examples").get_by_text(example, exact=False).first.click()
    # The click fills the prompt through a server event: wait for it (a busy machine is slow).
    expect(page.locator("#sv-prompt textarea")).to_have_value(
        re.compile(re.escape(example)), timeout=WAIT_MS
    )
    _set_number(page, "sv-max-new-tokens", max_new_tokens)
    page.locator("#sv-run").click()
    page.wait_for_selector("#sv-status .sv-status-done", timeout=timeout_ms)


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
    folder = Path(SCREENSHOTS) if SCREENSHOTS else tmp_path
    page.screenshot(path=str(folder / "screenshot-run.png"), full_page=True)
    assert (folder / "screenshot-run.png").stat().st_size > 50_000

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
    _set_number(page, "sv-max-new-tokens", 24)
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

    page.goto(page.url.split("?")[0] + "?__theme=dark")  # the README's race picture is dark
    page.wait_for_selector("#sv-run")
    # A short prompt: on a shared 2-core CPU each of the race's 16 runs (warm-ups included) reads
    # the prompt in its first pass, and a long one costs a minute a run.
    page.get_by_label("code").check()
    page.locator("#sv-examples").get_by_text("fibonacci", exact=False).first.click()
    _set_number(page, "sv-max-new-tokens", 32)
    page.locator("#sv-race-toggle input").check()
    lanes = page.locator("#sv-race-drafters")
    for label in ("Prompt lookup (copies)", "Hybrid (copies, else guesses)"):
        lanes.locator("input").click()
        page.get_by_role("option", name=label, exact=True).click()

    page.locator("#sv-run").click()
    folder = Path(SCREENSHOTS) if SCREENSHOTS else tmp_path
    try:
        page.wait_for_selector("#sv-race .sv-race-status:text('finished')", timeout=900_000)
    finally:
        page.screenshot(path=str(tmp_path / "race-last-seen.png"), full_page=True)
    race = page.locator("#sv-race")
    expect(race.locator(".sv-race-panel")).to_have_count(4)
    expect(race.locator(".sv-race-head [data-speedup]")).to_have_count(3)
    settled(page, "#sv-tab-live", charts=5)  # the charts drawn, nothing moving
    page.screenshot(path=str(folder / "screenshot-race.png"), full_page=True)
    assert (folder / "screenshot-race.png").stat().st_size > 50_000
