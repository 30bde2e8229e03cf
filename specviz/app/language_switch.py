"""Where each language's page lives, which one a browser prefers, and the switch between them.

A page's language is which page it is (English at ``/``, Japanese at ``/ja/``; ``specviz.app.site``
serves them side by side). The switch at the top of each page links to the others, each language
named in its own words.
"""

from __future__ import annotations

from collections.abc import Mapping

from specviz.text import DEFAULT_LANGUAGE, TABLES, Html, t_html

# Where each language's page is mounted, relative to the site's root ("" is the root itself).
LANGUAGE_PATHS: Mapping[str, str] = {"en": "", "ja": "ja"}
# An explicit choice in the URL (the switch's links carry it) that the browser's preference
# does not override.
CHOICE_PARAMETER = "lang"


def browser_language(accept_language: str | None) -> str:
    """The catalogue language a browser prefers most, from its Accept-Language header
    (``ja-JP,ja;q=0.9,en;q=0.8`` -> ``ja``); the default when it names none we have."""
    ranked: list[tuple[float, int, str]] = []
    for order, item in enumerate((accept_language or "").split(",")):
        tag, _, params = item.strip().partition(";")
        quality = 1.0
        if params.strip().startswith("q="):
            try:
                quality = float(params.strip()[2:])
            except ValueError:
                quality = 0.0
        primary = tag.strip().split("-")[0].lower()
        if primary in TABLES and quality > 0:
            ranked.append((-quality, order, primary))
    return min(ranked)[2] if ranked else DEFAULT_LANGUAGE


def language_href(target: str, current: str) -> str:
    """A link from *current*'s page to *target*'s, relative (it works behind a proxy that
    serves the site under a prefix) and carrying the choice."""
    up = "../" if LANGUAGE_PATHS.get(current) else "./"
    path = LANGUAGE_PATHS[target]
    return f"{up}{path + '/' if path else ''}?{CHOICE_PARAMETER}={target}"


def language_switch_html(lang: str) -> str:
    """The switch at the top of a page: each language in its own words, the current one marked."""
    links = []
    for code in LANGUAGE_PATHS:
        name = t_html("language.name", code)
        if code == lang:
            links.append(f'<strong aria-current="page" lang="{code}">{name}</strong>')
        else:
            href = language_href(code, lang)
            links.append(f'<a href="{href}" hreflang="{code}" lang="{code}">{name}</a>')
    label = t_html("app.language", lang)
    return t_html("app.language.switch", lang, label=label, links=Html(" · ".join(links)))
