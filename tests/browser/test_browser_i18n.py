"""The app in Japanese, in Debian's chromium with locale ja-JP, on the bundled pair.

A Japanese browser lands on the Japanese page; a real Run shows the model's text inside Japanese
UI (stream, cards, counters) and is screenshotted; the switch's EN link brings the English page,
whose server-rendered panels (legend, cycle cards, status) are English after a Step.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from browser_checks import at_least, needs_chromium, run_example, settled

pytestmark = [pytest.mark.browser, pytest.mark.slow, needs_chromium]


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    from ui_fixtures import shared_model_cache

    from specviz.app.site import bilingual_app, serve
    from specviz.models.presets import default_preset, load_presets

    presets = load_presets()
    cache = shared_model_cache()
    cache.load_pair(default_preset(presets))  # loaded before serving: the Run measures decoding
    running = serve(bilingual_app(presets, cache))
    yield running.url
    running.close()


def test_a_japanese_browser_runs_the_app_in_japanese_and_switches(browser, site, tmp_path):  # type: ignore[no-untyped-def]
    context = browser.new_context(locale="ja-JP", viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.goto(site)
    page.wait_for_selector("#sv-run")
    assert page.url.endswith("/ja/")
    assert page.locator("#sv-run").inner_text().strip() == "▶ 実行"
    assert "受理されたドラフト" in page.locator("#sv-legend").inner_text()
    assert "現在のサイクル" in page.locator("#sv-cards").inner_text()

    # A Japanese example: translation into Japanese, so the stream holds the model's Japanese.
    run_example(page, "翻訳", "Translate into Japanese", 24, 240_000)
    assert "終了：" in page.locator("#sv-status").inner_text()
    stream = page.locator("#sv-stream .sv-stream")
    at_least(stream.locator(".sv-tok"), 1)
    assert "駅" in stream.inner_text()  # the model's own Japanese, drawn with a Japanese font
    cards = page.locator("#sv-cards").inner_text()
    assert "サイクル" in cards and "ターゲット1パスで" in cards
    assert "生成トークン数" in page.locator("#sv-counters").inner_text()
    tip = stream.locator(".sv-tok.sv-accepted").first.get_attribute("data-tip")
    assert "q_draft" in tip and "ターゲットの第1候補" in tip

    settled(page, "#sv-tab-live", charts=5)  # the cards' flip animation ends, the charts drawn
    page.locator("#sv-status").scroll_into_view_if_needed()
    page.screenshot(path=str(tmp_path / "screenshot-ja.png"))
    assert (tmp_path / "screenshot-ja.png").stat().st_size > 50_000

    # The switch: the English page, whose server-rendered panels are English after a Step.
    page.locator("#sv-language a[hreflang=en]").click()
    page.wait_for_selector("#sv-run")
    assert "lang=en" in page.url
    assert page.locator("#sv-run").inner_text().strip() == "▶ Run"
    assert "accepted draft" in page.locator("#sv-legend").inner_text()
    page.locator("#sv-step").click()
    page.wait_for_selector("#sv-status :text('Paused after cycle 1')", timeout=120_000)
    cards = page.locator("#sv-cards").inner_text()
    assert "Cycle 1" in cards and "サイクル" not in cards
    context.close()
