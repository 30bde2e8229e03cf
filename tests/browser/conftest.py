"""Fixtures of the browser tests: Debian's headless chromium, driven by Playwright, and the app on
the tiny pair served locally for it.

The bundled pair's live app is ``ui_fixtures.live_app`` (one server for the whole session, shared
with the API tests); a module that serves something else defines its own ``url``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from browser_checks import CHROMIUM, WAIT_MS

from specviz.cli.screenshot_scenes import GUIDE_SEEN_JS
from specviz.cli.screenshots import CHROMIUM_ARGS


class PatientBrowser:
    """A launched chromium whose new contexts and pages wait up to WAIT_MS for anything (a
    selector, a click's target, a navigation) instead of Playwright's 30 s: on a machine whose
    cores are busy, a page can take that long to draw. Their pages count the guided cycle as
    closed before (it would otherwise open over the page on a first visit), unless asked for a
    ``first_visit``."""

    def __init__(self, browser: Any) -> None:
        self._browser = browser

    def new_context(self, *, first_visit: bool = False, **options: Any) -> Any:
        context = self._browser.new_context(**options)
        context.set_default_timeout(WAIT_MS)
        if not first_visit:
            context.add_init_script(GUIDE_SEEN_JS)
        return context

    def new_page(self, *, first_visit: bool = False, **options: Any) -> Any:
        page = self._browser.new_page(**options)
        page.set_default_timeout(WAIT_MS)
        if not first_visit:
            page.add_init_script(GUIDE_SEEN_JS)
        return page

    def __getattr__(self, name: str) -> Any:
        return getattr(self._browser, name)


@pytest.fixture(scope="module")
def browser() -> Iterator[PatientBrowser]:
    """Headless chromium with the screenshots command's flags, one per test module."""
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=WAIT_MS)  # an expect(...) waits as long as any other wait
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=list(CHROMIUM_ARGS)
        )
        yield PatientBrowser(browser)
        browser.close()


@pytest.fixture(scope="module")
def url() -> str:
    """The app on the tiny pair with the local limits (three race lanes, no caps stated), served
    once per session (hosted_fixtures.tiny_app)."""
    from hosted_fixtures import tiny_app

    return tiny_app(hosted=False)
