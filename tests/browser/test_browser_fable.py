"""Fable mode in Debian's chromium, on the tiny pair, in English (/) and Japanese (/ja/).

The toggle shows the story; one Step tells cycle 1, whose sealed, crossed-out and written words
are the ones its cards show; the player's Back tells the earlier cycle again.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from browser_checks import WAIT_MS, at_least, needs_chromium

pytestmark = [pytest.mark.browser, needs_chromium]


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    from hosted_fixtures import TinyCache

    from specviz.app.site import bilingual_app, serve
    from specviz.models.presets import load_presets

    running = serve(bilingual_app(load_presets(), TinyCache()))  # type: ignore[arg-type]
    yield running.url.rstrip("/")
    running.close()


# The story's words of each kind, and the cards that show the same tokens.
SAME_TOKENS = {
    "accepted": "#sv-cards .sv-card.sv-accepted .sv-card-tok",
    "rejected": "#sv-cards .sv-card.sv-rejected .sv-card-tok",
    "resampled": "#sv-cards .sv-card.sv-resampled .sv-card-tok",
    "bonus": "#sv-cards .sv-card.sv-bonus .sv-card-tok",
}


def story_matches_cards(page, cycle: int) -> None:
    current = page.locator(f"#sv-fable .sv-fable-current[data-cycle='{cycle}']")
    current.wait_for(timeout=WAIT_MS)
    page.wait_for_selector(f"#sv-cards .sv-cards-wrap[data-cycle='{cycle}']", timeout=WAIT_MS)
    for kind, cards in SAME_TOKENS.items():
        words = current.locator(f"[data-fable-word='{kind}']")
        assert words.evaluate_all("els => els.map(e => e.innerHTML)") == page.locator(
            cards
        ).evaluate_all("els => els.map(e => e.innerHTML)"), kind


@pytest.mark.parametrize(
    ("path", "toggle", "glance"),
    [("/", "Fable mode", "one glance"), ("/ja/", "寓話モード", "ひと目")],
)
def test_fable_mode_tells_the_cycle_shown(browser, site, path, toggle, glance) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(site + path)
    page.wait_for_selector("#sv-run", timeout=WAIT_MS)
    story = page.locator("#sv-fable .sv-fable")
    assert not story.is_visible()
    assert toggle in page.locator("#sv-fable-toggle").inner_text()
    page.locator("#sv-fable-toggle input").check()
    story.wait_for(state="visible", timeout=WAIT_MS)

    page.locator("#sv-step").click()
    story_matches_cards(page, 1)
    assert glance in story.inner_text()
    page.locator("#sv-step").click()
    story_matches_cards(page, 2)
    # Cycle 1 stays above, for reading on.
    expect(story.locator(".sv-fable-cycle")).to_have_count(2, timeout=WAIT_MS)
    page.locator("#sv-back").click()
    story_matches_cards(page, 1)
    expect(story.locator(".sv-fable-cycle")).to_have_count(1, timeout=WAIT_MS)

    page.locator("#sv-fable-help").first.click()  # the cast: the story beside the model
    cast = page.locator(".sv-fable-cast")
    cast.wait_for(state="visible", timeout=WAIT_MS)
    expect(cast.locator("tbody tr")).to_have_count(11, timeout=WAIT_MS)
    page.locator("#sv-fable-toggle input").uncheck()
    story.wait_for(state="hidden", timeout=WAIT_MS)
    at_least(page.locator("#sv-cards .sv-card"), 1)  # the technical cards stay
    context.close()


def test_the_url_asks_for_fable_mode(browser, site) -> None:  # type: ignore[no-untyped-def]
    page = browser.new_page()
    page.goto(site + "/ja/?fable=1")
    page.wait_for_selector("#sv-fable .sv-fable", state="visible", timeout=WAIT_MS)
    assert page.locator("#sv-fable-toggle input").is_checked()
    assert "師匠" in page.locator("#sv-fable").inner_text()
    page.close()
