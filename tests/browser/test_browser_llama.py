"""The configs tab's "Run it here" in Debian's chromium, on the bundled pair and a real
llama-server: the command the tab prints runs beside specviz, and the race it measures shows
llama.cpp's lanes with their speedup over llama.cpp's own plain decoding.

Skipped where no llama-server is found (`python -m specviz engines setup llama.cpp` builds one);
there the tab says how to get one, which tests/app checks without a browser.
"""

from __future__ import annotations

import pytest
from browser_checks import WAIT_MS, needs_chromium, set_number

from specviz.engines.llama_build import find_llama_server

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    needs_chromium,
    pytest.mark.skipif(find_llama_server() is None, reason="no llama-server built or found"),
]


def test_run_it_here_races_the_printed_llama_cpp_command_beside_specviz(browser, tmp_path):
    from playwright.sync_api import expect
    from ui_fixtures import live_app

    page = browser.new_page(viewport={"width": 1440, "height": 1400})
    page.goto(live_app(), wait_until="load")
    page.wait_for_selector("#sv-run")
    set_number(page, "sv-max-new-tokens", 12)
    page.locator("#sv-tabs [role=tab]", has_text="Production configs").click()
    button = page.locator("#sv-run-here")
    expect(button).to_be_visible()
    button.click()
    race = page.locator("#sv-run-here-race")
    expect(page.locator("#sv-run-here-status")).to_contain_text("Done", timeout=WAIT_MS * 3)
    lanes = [panel.get_attribute("data-lane") for panel in race.locator(".sv-race-panel").all()]
    assert lanes == ["plain", "draft-model", "llama.cpp plain", "llama.cpp speculative"]
    ratios = race.locator(".sv-race-head [data-speedup]")
    expect(ratios).to_have_count(2)  # specviz's drafter and llama.cpp's speculative lane
    assert ratios.nth(1).get_attribute("data-lane") == "llama.cpp speculative"
    expect(race.locator(".sv-race-llama-text").first).not_to_be_empty()
    expect(race).to_contain_text("Q4_K_M")  # the note on what differs between the engines
    race.scroll_into_view_if_needed()
    page.screenshot(path=str(tmp_path / "run-here.png"), full_page=True)
    page.close()
