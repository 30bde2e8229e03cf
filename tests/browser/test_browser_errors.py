"""A refused input stays in sight until the next action, in Debian's chromium.

The app is built without loading a model: the failing input (an empty prompt) is refused before
any model is needed, so this runs in seconds.
"""

from __future__ import annotations

import pytest
from browser_checks import CHROMIUM, WAIT_MS, settled

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


def test_a_refused_prompt_is_told_beside_it_and_stays(browser, url):
    """The run's validator refuses an empty prompt before the queue; the page shows its words
    above the prompt, and they stay there for the visitor who looked away."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(url)
    page.wait_for_selector("#sv-run")
    page.locator("#sv-prompt textarea").fill("   ")
    # The server refuses the Step's event when it is sent (HTTP 422): wait for that answer.
    with page.expect_response(lambda response: "/queue/join" in response.url, timeout=WAIT_MS):
        page.locator("#sv-step").click()
    prompt = page.locator("#sv-prompt")
    page.wait_for_function(
        "() => document.querySelector('#sv-prompt').innerText.includes('prompt is empty')",
        timeout=WAIT_MS,
    )
    # Once everything that answer set going has played out on the page (a toast's countdown, a
    # progress overlay fading out), the words are still there.
    settled(page, "html")
    assert "The prompt is empty" in prompt.inner_text()
    assert "sv-status-error" not in page.locator("#sv-status").inner_html()  # nothing ran
    page.close()


def test_a_damaged_trace_is_refused_in_words_before_it_queues(browser, url, tmp_path):
    """The replay's validator checks the trace when it is pushed: the visitor reads which field
    is damaged at once, above the prompt where every refusal shows, and nothing queues."""
    import json

    from ui_events import sample_run, trace_of

    data = trace_of(sample_run())
    data["cycles"][2]["totals"]["elapsed_s"] = 1e12
    bad = tmp_path / "damaged.json"
    bad.write_text(json.dumps(data))
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(url)
    page.wait_for_selector("#sv-run")
    upload = page.locator("#sv-replay-upload input[type=file], input[type=file]").first
    # The server refuses the replay's event when it is pushed (HTTP 422).
    with page.expect_response(
        lambda response: "/queue/join" in response.url, timeout=WAIT_MS
    ) as joined:
        upload.set_input_files(str(bad))
    assert joined.value.status == 422
    page.wait_for_function(
        "() => document.querySelector('#sv-prompt').innerText.includes('cycles[2]')",
        timeout=WAIT_MS,
    )
    settled(page, "html")
    page.screenshot(path=str(tmp_path / "refused-upload.png"))
    assert "1,000,000,000,000 is outside 0 to 86,400" in page.locator("#sv-prompt").inner_text()
    assert "sv-status-error" not in page.locator("#sv-status").inner_html()
    page.close()
