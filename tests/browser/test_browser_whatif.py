"""The speedup lab's what-if in Debian's chromium, on the tiny pair: after a small measurement, the
α slider redraws the model in the page with no request to the server, the measured points stay
where they were measured, and "Reset to measured" brings the run's α back."""

from __future__ import annotations

import pytest
from browser_checks import app_requests, needs_chromium, open_page, set_number

pytestmark = [pytest.mark.browser, needs_chromium]

PLOT = "#sv-whatif-plot .js-plotly-plot"
# A trace of the what-if chart, found by the tag it carries in Plotly's `meta`.
TRACE_JS = f"(tag) => document.querySelector('{PLOT}').data.filter((t) => t.meta === tag)"


@pytest.fixture(scope="module")
def page(browser, url):
    yield from open_page(browser, url, 1440, 1400)


def _traces(page, tag: str) -> list[dict]:
    """The x and y of every trace tagged *tag*, as the page holds them now."""
    return page.evaluate(f"(tag) => ({TRACE_JS})(tag).map((t) => ({{x: t.x, y: t.y}}))", tag)


def _slider_value(page, elem_id: str) -> float:
    return float(page.locator(f"#{elem_id} input[type=number]").input_value())


def test_the_alpha_slider_redraws_the_model_in_the_page_and_reset_restores_the_run(page):
    set_number(page, "sv-max-new-tokens", 8)
    page.locator("#sv-tab-speedup-button").click()
    page.wait_for_selector("#sv-tab-speedup", state="visible")
    page.locator("#sv-tab-speedup textarea, #sv-tab-speedup input[type=text]").first.fill("1,3")
    page.locator("#sv-speedup-run").click()
    page.wait_for_selector("#sv-speedup-status .sv-status-done", timeout=300_000)
    # The what-if is redrawn from the run: its measured points arrive with it.
    page.wait_for_function(f"(tag) => ({TRACE_JS})(tag).length === 2", arg="measured")

    measured = _traces(page, "measured")
    curve = _traces(page, "curve")[0]["y"]
    start = page.evaluate(f"() => document.querySelector('{PLOT}').layout.meta.whatif.start")
    assert _slider_value(page, "sv-whatif-alpha") == pytest.approx(start["alpha"])
    new_alpha = 0.3 if start["alpha"] > 0.5 else 0.9

    sent = app_requests(page)
    page.locator("#sv-whatif-alpha input[type=range]").fill(str(new_alpha))
    page.wait_for_function(
        f"(before) => JSON.stringify(({TRACE_JS})('curve')[0].y) !== JSON.stringify(before)",
        arg=curve,
    )
    moved = _traces(page, "curve")[0]["y"]
    assert all(after != before for after, before in zip(moved, curve, strict=True))
    assert _traces(page, "measured") == measured
    title = page.evaluate(f"() => document.querySelector('{PLOT}').layout.title.text")
    assert f"α = {new_alpha:.2f}" in title
    assert [url for url in sent if "/queue" in url or "/run" in url] == []

    page.locator("#sv-whatif-reset").click()
    page.wait_for_function(
        f"(before) => JSON.stringify(({TRACE_JS})('curve')[0].y) !== JSON.stringify(before)",
        arg=moved,
    )
    assert _traces(page, "curve")[0]["y"] == pytest.approx(curve, rel=1e-12)
    assert _slider_value(page, "sv-whatif-alpha") == pytest.approx(start["alpha"])
    assert _traces(page, "measured") == measured
    assert [url for url in sent if "/queue" in url or "/run" in url] == []
