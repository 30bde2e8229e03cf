"""Prompt lookup on an editing prompt in Debian's chromium, on the bundled pair: the prompt shows
as tokens above the stream, and hovering a copied token lights up the prompt span it was copied
from (the copies of an edit come from the prompt, which the stream itself never shows).

The hovered copy, its tooltip and its lit source are screenshotted into the test's tmp_path with
the region the README's picture takes (``python -m specviz screenshots assets copy`` retakes it).
"""

from __future__ import annotations

import re

import pytest
from browser_checks import WAIT_MS, needs_chromium, run_example, settled

from specviz.cli.screenshot_scenes import COPY_REGION_JS, PICK_COPY_JS

pytestmark = [pytest.mark.browser, pytest.mark.slow, needs_chromium]

EDITING = "Fix the bugs in this code: average"  # the first editing example


# The first kept copy of a word from the prompt whose cycle copied three tokens or more (a span
# to see), left of the stream's middle (its tooltip opens to the right and below).
@pytest.fixture
def page(browser):
    from ui_fixtures import live_app

    context = browser.new_context(viewport={"width": 1440, "height": 1200}, device_scale_factor=1)
    page = context.new_page()
    page.goto(live_app(), wait_until="load")
    page.wait_for_selector("#sv-run")
    yield page
    context.close()


def test_hovering_a_copy_lights_its_source_in_the_prompt(page, tmp_path):
    from playwright.sync_api import expect

    drafter = page.locator("#sv-drafter")
    drafter.locator("input").click()
    page.get_by_role("option", name="Prompt lookup (copies)", exact=True).click()
    run_example(page, "editing", EDITING, 56, 240_000)

    strip = page.locator("#sv-prompt-strip .sv-prompt-strip")
    assert re.search(r"Prompt, as the target reads it \(\d+ tokens\)", strip.inner_text())
    count = int(strip.get_attribute("data-tokens") or 0)
    seqs = strip.locator(".sv-prompt-tok").evaluate_all(
        "(spans) => spans.map((s) => s.dataset.seq)"
    )
    assert seqs == [str(index - count) for index in range(count)]

    span = page.evaluate(PICK_COPY_JS)
    assert span, "no cycle copied three or more tokens from the prompt"
    sources = span.split()
    copy = page.locator("#sv-picked-copy")
    own = copy.get_attribute("data-from-seq")
    assert "lit up above" in (copy.get_attribute("data-tip") or "")
    copy.hover()
    source = strip.locator(f'[data-seq="{own}"]')
    assert "sv-src" in (source.get_attribute("class") or "").split()
    assert "sv-src-own" in (source.get_attribute("class") or "").split()
    lit = strip.locator(".sv-src").evaluate_all("(spans) => spans.map((s) => s.dataset.seq)")
    # The whole span the cycle copied (its part in the prompt), nothing else.
    assert lit == [seq for seq in sources if int(seq) < 0]
    assert source.evaluate(  # scrolled into the strip's view
        "(tok) => { const r = tok.getBoundingClientRect(),"
        " box = tok.closest('.sv-prompt-toks').getBoundingClientRect();"
        " return r.top >= box.top && r.bottom <= box.bottom; }"
    )

    settled(page, "#sv-tab-live")  # the tooltip and the lit source drawn in full
    picture = tmp_path / "screenshot-copy.png"
    page.screenshot(path=str(picture), clip=_region(page), full_page=True)
    assert picture.stat().st_size > 30_000

    page.mouse.move(5, 5)  # off the copy: its source goes dark again
    expect(strip.locator(".sv-src")).to_have_count(0, timeout=WAIT_MS)


def _region(page) -> dict[str, float]:
    """The prompt strip, the stream and the hovered copy's tooltip, with a margin, in the
    page's coordinates (a full-page screenshot's)."""
    return page.evaluate(COPY_REGION_JS)
