"""One page per language: the browser's preference picks it, the switch links between them, and
both pages serve one model cache (specviz.app.language_switch, specviz.app.site)."""

from __future__ import annotations

import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest

from specviz.app.language_switch import browser_language, language_href, language_switch_html
from specviz.models.presets import default_preset, load_presets


@pytest.mark.parametrize(
    ("header", "lang"),
    [
        ("ja-JP,ja;q=0.9,en-US;q=0.8", "ja"),
        ("en-US,en;q=0.9,ja;q=0.8", "en"),
        ("fr-FR,fr;q=0.9,ja;q=0.5", "ja"),  # the first language the catalogue has
        ("en;q=0.4,ja;q=0.6", "ja"),  # by quality, not by order
        ("JA", "ja"),
        ("ja;q=0", "en"),  # q=0: not acceptable
        ("fr", "en"),
        ("", "en"),
        (None, "en"),
        ("ja;q=x", "en"),
    ],
)
def test_the_browser_preference_picks_a_catalogue_language(header: str | None, lang: str) -> None:
    assert browser_language(header) == lang


def test_the_switch_links_each_page_to_the_others_relatively() -> None:
    assert language_href("ja", "en") == "./ja/?lang=ja"
    assert language_href("en", "ja") == "../?lang=en"
    english = language_switch_html("en")
    assert english.startswith("Language: ")
    assert '<strong aria-current="page" lang="en">EN</strong>' in english
    assert '<a href="./ja/?lang=ja" hreflang="ja" lang="ja">日本語</a>' in english
    japanese = language_switch_html("ja")
    assert japanese.startswith("言語：")
    assert '<a href="../?lang=en" hreflang="en" lang="en">EN</a>' in japanese


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    from specviz.app.site import bilingual_app, serve
    from specviz.models.loader import ModelCache
    from specviz.models.presets import load_presets

    running = serve(bilingual_app(load_presets(), ModelCache()))
    yield running.url
    running.close()


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


def _get(url: str, accept_language: str) -> tuple[int, str]:
    """The status and body (or Location, for a redirect) of a GET, redirects not followed."""
    request = urllib.request.Request(url, headers={"Accept-Language": accept_language})
    try:
        with urllib.request.build_opener(_NoRedirect).open(request, timeout=60) as response:
            return response.status, response.read().decode("utf-8")
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("location", "")


def test_a_japanese_browser_is_sent_to_the_japanese_page(site: str) -> None:
    assert _get(site, "ja-JP,ja;q=0.9") == (307, "./ja/")
    # An explicit choice (the switch's link) is kept, and an English browser stays.
    status, page = _get(site + "?lang=en", "ja-JP")
    assert status == 200 and "Live run" in page and "ライブ実行" not in page
    status, page = _get(site, "en-US")
    assert status == 200 and "Live run" in page


def test_each_page_is_worded_in_its_language(site: str) -> None:
    status, page = _get(site + "ja/", "en-US")
    assert status == 200
    for words in ("ライブ実行", "ドラフトモデル", "受理されたドラフト", "現在のサイクル", "実行"):
        assert words in page
    assert "Live run" not in page and "accepted draft" not in page
    # The Japanese page shows the Japanese examples of the bundled preset, not the English ones
    # (the production configs' code keeps its own English sample prompt).
    english = default_preset(load_presets()).example_prompts("en")
    assert "偶数だけを合計する関数" in page
    shown = [text for texts in english.values() for text in texts if text[:40] in page]
    assert not shown
