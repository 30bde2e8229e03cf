"""Presentation mode on one screen, in Debian's chromium, on the tiny pair in English and Japanese:
at 1280×720 and at 150 % zoom (853×480 CSS pixels) the control bar is one line and the current
cycle's cards end above the window's bottom edge with no scrolling, and a tree cycle's tree, drawn
larger, right under its head line; a clicker's keys step, go back and start and pause the
autoplay."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from browser_checks import (
    app_requests,
    events_over,
    needs_chromium,
    settled,
)

pytestmark = [pytest.mark.browser, needs_chromium]

# (CSS viewport, device pixels per CSS pixel): a 1280×720 window at 100 % and at 150 % zoom.
WINDOWS = {"1280x720": ((1280, 720), 1.0), "zoom150": ((853, 480), 1.5)}
PAGES = {"en": "?lang=en", "ja": "ja/"}  # each language's page on the bilingual site
BAR = ("#sv-run", "#sv-step", "#sv-stop", "#sv-back", "#sv-forward", "#sv-autoplay", "#sv-pause")

# Each control's box in the viewport, and the current cycle's last card's bottom edge.
LAYOUT_JS = """
(bar) => {
  const box = (el) => { const b = el.getBoundingClientRect();
    return {top: b.top, bottom: b.bottom, height: b.height}; };
  const cards = [...document.querySelectorAll('#sv-cards .sv-card')];
  const nums = document.querySelector('#sv-cards .sv-card-nums');
  return {
    buttons: bar.map((selector) => box(document.querySelector(selector))),
    pace: box(document.querySelector('#sv-pace input')),
    lastCard: cards.length ? box(cards[cards.length - 1]).bottom : null,
    numbers: nums ? parseFloat(getComputedStyle(nums).fontSize) : null,
    status: box(document.querySelector('#sv-status .sv-status')),
    height: window.innerHeight,
    scrolled: window.scrollY,
  };
}
"""


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    """The bilingual site (English at /, Japanese at /ja/) on the tiny pair."""
    from hosted_fixtures import TinyCache

    from specviz.app.site import bilingual_app, serve
    from specviz.models.presets import load_presets

    running = serve(bilingual_app(load_presets(), TinyCache()))  # type: ignore[arg-type]
    yield running.url
    running.close()


def open_at(browser, site: str, lang: str, window: str):  # type: ignore[no-untyped-def]
    """A context and page of *lang*'s page in *window* (a WINDOWS key), once Run is drawn."""
    (width, height), scale = WINDOWS[window]
    context = browser.new_context(
        viewport={"width": width, "height": height}, device_scale_factor=scale
    )
    page = context.new_page()
    page.goto(site + PAGES[lang])
    page.wait_for_selector("#sv-run")
    return context, page


def present_on(page) -> None:  # type: ignore[no-untyped-def]
    page.locator("#sv-present-toggle input").check()
    page.wait_for_selector("#sv-page.sv-present")


def cycles_shown(page) -> int:  # type: ignore[no-untyped-def]
    return int(page.locator("#sv-stream .sv-stream").get_attribute("data-cycles"))


def wait_for_cycles(page, count: int) -> None:  # type: ignore[no-untyped-def]
    page.wait_for_selector(f'#sv-stream .sv-stream[data-cycles="{count}"]')


@pytest.mark.parametrize("window", list(WINDOWS))
@pytest.mark.parametrize("lang", list(PAGES))
def test_three_steps_fit_one_screen(browser, site, lang, window):  # type: ignore[no-untyped-def]
    context, page = open_at(browser, site, lang, window)
    present_on(page)
    for cycle in (1, 2, 3):
        page.locator("#sv-step").click()
        wait_for_cycles(page, cycle)
    settled(page, "#sv-tab-live")  # the cards' flip has ended
    page.evaluate("window.scrollTo(0, 0)")
    shown = page.evaluate(LAYOUT_JS, list(BAR))
    assert shown["scrolled"] == 0
    # The control bar is one line: every button shares one top and one height (a button whose
    # words wrapped would be taller), and the pace sits on the same line.
    tops = [button["top"] for button in shown["buttons"]]
    heights = [button["height"] for button in shown["buttons"]]
    assert max(tops) - min(tops) <= 3, shown["buttons"]
    assert max(heights) - min(heights) <= 2, shown["buttons"]
    middle = (shown["pace"]["top"] + shown["pace"]["bottom"]) / 2
    assert min(tops) <= middle <= max(button["bottom"] for button in shown["buttons"])
    # The status is one line; the current cycle's cards, their numbers large, end on screen.
    assert shown["status"]["height"] <= 40, shown["status"]
    assert shown["numbers"] >= 20
    assert shown["lastCard"] is not None and shown["lastCard"] <= shown["height"], shown
    context.close()


def test_presenter_keys_step_go_back_and_autoplay(browser, site):  # type: ignore[no-untyped-def]
    context, page = open_at(browser, site, "en", "1280x720")
    # Outside presentation mode the keys are the page's own: nothing is sent.
    sent = app_requests(page)
    page.locator("body").press("PageDown")
    settled(page, "#sv-page")
    assert sent == [] and "sv-present" not in (page.locator("#sv-page").get_attribute("class"))
    present_on(page)  # the switch keeps the focus: the keys work from there
    page.keyboard.press("PageDown")  # Step
    wait_for_cycles(page, 1)
    page.keyboard.press("ArrowRight")  # Step
    wait_for_cycles(page, 2)
    page.keyboard.press("PageUp")  # Back
    wait_for_cycles(page, 1)
    assert page.locator("#sv-present-toggle input").is_checked()

    page.locator("#sv-run").click()  # the whole run: the keys move the player through it
    page.wait_for_selector("#sv-status .sv-status-done")
    total = cycles_shown(page)
    assert total >= 4
    page.keyboard.press("Space")  # Autoplay, from the first cycle at one cycle a second
    wait_for_cycles(page, 2)
    with events_over(page):  # Pause: the autoplay's event ends, and no frame follows it
        page.keyboard.press("Space")
    held = cycles_shown(page)
    assert held < total
    assert page.locator("#sv-present-toggle input").is_checked()  # Space did not untick it
    page.keyboard.press("PageDown")  # the run has finished: Forward, not a new Step
    wait_for_cycles(page, held + 1)
    page.keyboard.press("ArrowLeft")  # Back
    wait_for_cycles(page, held)
    context.close()


# The stream's box and its newest token, the cycles it shows, and the fable's box.
STREAM_JS = """
() => {
  const box = (el) => el.getBoundingClientRect();
  const stream = document.querySelector('#sv-stream .sv-stream');
  const toks = stream.querySelectorAll('.sv-tok');
  const cards = [...document.querySelectorAll('#sv-cards .sv-card')];
  const fable = document.querySelector('#sv-fable-panel');
  const shown = [...stream.querySelectorAll('.sv-cycle')].filter((c) => c.offsetParent !== null);
  return {
    stream: {top: box(stream).top, bottom: box(stream).bottom},
    cycles: Number(stream.dataset.cycles),
    shown: shown.map((c) => Number(c.dataset.cycle)),
    newest: toks.length ? box(toks[toks.length - 1]).bottom : null,
    lastCard: cards.length ? box(cards[cards.length - 1]).bottom : null,
    fable: fable ? {top: box(fable).top, bottom: box(fable).bottom} : null,
    height: window.innerHeight,
  };
}
"""


@pytest.mark.parametrize(("window", "fable"), [("1280x720", True), ("zoom150", False)])
def test_a_long_run_keeps_the_cycle_on_one_screen(browser, site, window, fable):  # type: ignore[no-untyped-def]
    """A run long enough to fill many lines: the stream shows its last cycles only (an ellipsis
    before them; in fable mode, at 100 %, the cycle the story under it tells), and the cards end
    on screen."""
    context, page = open_at(browser, site, "en", window)
    tokens = page.locator("#sv-max-new-tokens input[type=number]")  # hidden once presenting
    tokens.fill("160")
    tokens.press("Enter")
    present_on(page)
    if fable:
        page.locator("#sv-fable-toggle input").check()
        page.wait_for_selector("#sv-fable-panel", state="visible")
    page.locator("#sv-run").click()
    page.wait_for_selector("#sv-status .sv-status-done")
    settled(page, "#sv-tab-live")
    page.evaluate("window.scrollTo(0, 0)")
    shown = page.evaluate(STREAM_JS)
    # Only the last cycles (three; two on the short window; with the story told under it, the
    # cycle it tells), the newest token among them.
    last = shown["cycles"]
    assert last >= 6 and shown["shown"] == list(range(last - len(shown["shown"]) + 1, last + 1))
    assert len(shown["shown"]) == (1 if fable else 3 if window == "1280x720" else 2), shown
    assert shown["newest"] is not None and shown["newest"] <= shown["stream"]["bottom"], shown
    if fable:
        assert shown["fable"] is not None and shown["stream"]["bottom"] <= shown["fable"]["top"]
    assert shown["lastCard"] is not None and shown["lastCard"] <= shown["height"], shown
    context.close()


# A tree cycle's head, tree strip, kept path (the root, the kept guesses and the token after them),
# a guess's chip, the cards drawn, and whether the page scrolls sideways.
TREE_JS = """
() => {
  const box = (el) => el.getBoundingClientRect();
  const wrap = document.querySelector('#sv-cards .sv-cards-wrap');
  const strip = wrap.querySelector('.sv-tree-scroll');
  const kept = ['root', 'accepted', 'resampled', 'bonus'].flatMap((verdict) =>
    [...strip.querySelectorAll(`.sv-tnode[data-verdict="${verdict}"]`)]);
  const cards = [...wrap.querySelectorAll('.sv-card')].filter((c) => c.offsetParent !== null);
  const edge = (b) => ({top: b.top, bottom: b.bottom});
  return {
    head: box(wrap.querySelector('.sv-cards-head')).bottom,
    strip: edge(box(strip)),
    kept: kept.map((chip) => edge(box(chip))),
    chip: box(strip.querySelector('.sv-tnode[data-node="n0"]')).height,
    cards: cards.length,
    lastCard: cards.length ? Math.max(...cards.map((card) => box(card).bottom)) : null,
    height: window.innerHeight,
    sideways: document.documentElement.scrollWidth - window.innerWidth,
  };
}
"""


@pytest.mark.parametrize("window", list(WINDOWS))
def test_a_tree_cycle_shows_its_tree_on_the_first_screen(browser, site, window):  # type: ignore[no-untyped-def]
    """Three Steps with the tree drafter: the tree comes right under the head line, drawn larger
    than on the page (a chip a third taller on screen, in device pixels), and its strip ends on
    screen, opened on the kept path; at 1280x720 the kept path's cards follow on the same
    screen, on a short screen the tree takes their place."""
    context, page = open_at(browser, site, "en", window)
    page.goto(site + PAGES["en"] + "&drafter=tree")
    page.wait_for_selector("#sv-run")
    present_on(page)
    for cycle in (1, 2, 3):
        page.locator("#sv-step").click()
        wait_for_cycles(page, cycle)
    page.wait_for_selector("#sv-cards .sv-cards-wrap.sv-tree-cycle[data-cycle='3']")
    page.wait_for_selector("#sv-cards .sv-tree-scroll[data-centred]")
    settled(page, "#sv-tab-live")
    page.evaluate("window.scrollTo(0, 0)")
    shown = page.evaluate(TREE_JS)
    scale = WINDOWS[window][1]
    assert shown["head"] <= shown["strip"]["top"] and shown["strip"]["bottom"] <= shown["height"]
    assert shown["sideways"] <= 0, shown
    assert shown["chip"] * scale >= 26 * 1.3 - 0.5, shown  # the page draws a chip 26 px tall
    # The strip opened on the kept path: as much of it as the strip holds, centred (the whole
    # path when it fits; at least its middle when it does not).
    top = min(chip["top"] for chip in shown["kept"])
    bottom = max(chip["bottom"] for chip in shown["kept"])
    inside = shown["strip"]["top"] - 1 <= top and bottom <= shown["strip"]["bottom"] + 1
    middle = (top + bottom) / 2
    assert inside or shown["strip"]["top"] <= middle <= shown["strip"]["bottom"], shown
    if window == "1280x720":
        assert shown["cards"] >= 1 and shown["lastCard"] <= shown["height"], shown
    else:
        assert shown["cards"] == 0, shown
    context.close()
