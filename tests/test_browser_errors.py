"""An error stays on the live tab's status line until the next action, in Debian's chromium.

The app is built without loading a model: the failing input (an empty prompt) is refused before
any model is needed, so this runs in seconds.
"""

from __future__ import annotations

import pytest
from test_browser import CHROMIUM
from test_browser import browser as browser  # the module's chromium, a fixture

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"
    ),
]


@pytest.fixture(scope="module")
def url():
    from specviz.app.builder import build_demo, launch_options
    from specviz.models.loader import ModelCache
    from specviz.models.presets import load_presets

    demo = build_demo(load_presets(), ModelCache())
    demo.queue()
    _, address, _ = demo.launch(
        server_name="127.0.0.1", prevent_thread_lock=True, quiet=True, **launch_options()
    )
    yield address
    demo.close()


def test_an_error_stays_on_the_status_line_after_its_toast(browser, url):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(url)
    page.wait_for_selector("#sv-run")
    page.locator("#sv-prompt textarea").fill("   ")
    page.locator("#sv-step").click()
    page.wait_for_selector("#sv-status .sv-status-error", timeout=30_000)
    assert "prompt is empty" in page.locator("#sv-status").inner_text()
    # Long after the request has failed (and the progress overlay has gone), it is still there:
    # the visitor who looked away sees what went wrong.
    page.wait_for_timeout(4_000)
    status = page.locator("#sv-status")
    assert status.locator(".sv-status-error").count() == 1
    assert "prompt is empty" in status.inner_text() and "Ready" not in status.inner_text()
    page.close()
