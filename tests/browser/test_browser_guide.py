"""The guided first cycle and the animated cycle in Debian's chromium, on the tiny pair, in English
and Japanese: on a first visit the guide invites a Step, then walks the cycle it drew, each callout
beside the real element it explains (its ring around that element, the callout next to it, on
screen) and quoting that element's own numbers; Close, Done and Escape shut it for good, the Guide
button brings it back, a clicker's keys move it, and it fits a phone. With Animate ticked each new
cycle in the cards plays as motion that lasts most of one frame at the autoplay pace and ends with
the cards as they are drawn still; asked for reduced motion, nothing moves."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from browser_checks import NEXT_FRAME_JS, STYLE_JS, needs_chromium, set_number, settled

from specviz.text import t

pytestmark = [pytest.mark.browser, needs_chromium]

PAGES = {"en": "?lang=en", "ja": "ja/"}  # each language's page on the bilingual site
GUIDE = ".sv-guide[role='dialog']"
PHONE = {
    "viewport": {"width": 390, "height": 844},
    "device_scale_factor": 2,
    "is_mobile": True,
    "has_touch": True,
}

# Where each callout's element is, by the callout's name, read independently of the guide's own
# script: the box around the element(s), the callout's and its ring's boxes, and the window.
BOXES_JS = """
(name) => {
  const wrap = document.querySelector('#sv-cards .sv-cards-wrap[data-cycle]');
  const cycle = wrap ? wrap.dataset.cycle : null;
  const card = (origin) => `#sv-cards .sv-card[data-origin="${origin}"]`;
  const elements = {
    intro: ['#sv-step'],
    draft: [`#sv-stream .sv-cycle[data-cycle="${cycle}"]`],
    'draft.tree': ['#sv-cards .sv-tree'],
    verify: ['#sv-cards .sv-cards'],
    'verify.tree': ['#sv-cards .sv-cards'],
    die: ['#sv-cards .sv-card[data-pos] .sv-bar'],
    'die.path': ['#sv-cards .sv-card[data-pos] .sv-bar'],
    'die.greedy': ['#sv-cards .sv-card[data-pos]:not([data-origin="untested"])'],
    reject: [card('rejected'), card('resampled')],
    'reject.tree': ['#sv-cards .sv-tree'],
    'reject.none': ['#sv-cards .sv-cards'],
    bonus: [card('bonus')],
    'bonus.none': [card('resampled')],
    'bonus.end': ['#sv-cards .sv-cards'],
  }[name].map((selector) => document.querySelector(selector).getBoundingClientRect());
  const union = (boxes) => ({
    left: Math.min(...boxes.map((b) => b.left)), top: Math.min(...boxes.map((b) => b.top)),
    right: Math.max(...boxes.map((b) => b.right)), bottom: Math.max(...boxes.map((b) => b.bottom)),
  });
  // The die's callout stands beside the card whose bar it marks.
  const rolled = name === 'die' || name === 'die.path';
  const bar = rolled ? document.querySelector('#sv-cards .sv-card[data-pos] .sv-bar') : null;
  const plain = (b) => ({left: b.left, top: b.top, right: b.right, bottom: b.bottom});
  return {
    element: union(elements),
    beside: bar ? plain(bar.closest('.sv-card').getBoundingClientRect()) : union(elements),
    callout: plain(document.querySelector('.sv-guide').getBoundingClientRect()),
    ring: plain(document.querySelector('.sv-guide-ring').getBoundingClientRect()),
    width: window.innerWidth, height: window.innerHeight,
  };
}
"""

# What each callout quotes, read from the page: the draft cards, the first card's numbers, the
# sentence under the card the die decided, the resample's sentence, the cycle's new tokens.
PAGE_WORDS_JS = """
() => {
  const wrap = document.querySelector('#sv-cards .sv-cards-wrap[data-cycle]');
  const clean = (el) => (el ? el.textContent : '').replace(/\\s+/g, ' ').trim();
  const drafts = [...wrap.querySelectorAll('.sv-card[data-pos]')];
  const judged = drafts.find((card) => card.querySelector('.sv-bar'))
    ?? drafts.find((card) => card.dataset.origin !== 'untested');
  return {
    cycle: wrap.dataset.cycle,
    drafted: drafts.length,
    first: drafts[0].querySelector('.sv-card-nums').innerText.split('\\n')[0].trim(),
    judged: clean(judged.querySelector('.sv-card-reason')),
    resampled: clean(wrap.querySelector('.sv-card[data-origin="resampled"] .sv-card-reason')),
    tokens: clean(wrap.querySelector('.sv-cards-new')),
    nodes: wrap.querySelector('.sv-tree')?.dataset.nodes,
    struck: wrap.querySelectorAll('.sv-tree .sv-tnode[data-verdict="rejected"]').length,
    unseen: wrap.querySelectorAll('.sv-tree .sv-tnode[data-verdict="untested"]').length,
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


def opened(browser, address: str, **options):  # type: ignore[no-untyped-def]
    """A context and a page at *address*, once the page has decided whether the guide opens."""
    context = browser.new_context(**options)
    page = context.new_page()
    page.goto(address)
    page.wait_for_selector("#sv-run")
    page.wait_for_selector("html[data-sv-guide='ready']", state="attached")
    return context, page


def callout(page) -> str:  # type: ignore[no-untyped-def]
    return page.locator(GUIDE).get_attribute("data-callout")


def wait_for_callout(page, name: str) -> None:  # type: ignore[no-untyped-def]
    page.wait_for_selector(f"{GUIDE}[data-callout='{name}']")
    page.evaluate(NEXT_FRAME_JS)  # placed in the frame after its words


def beside_its_element(page, name: str) -> dict:  # type: ignore[no-untyped-def,type-arg]
    """Check the open callout *name* sits next to its element, on screen, its ring around it."""
    boxes = page.evaluate(BOXES_JS, name)
    element, box, ring = boxes["element"], boxes["callout"], boxes["ring"]
    beside = boxes["beside"]
    assert box["left"] >= 0 and box["top"] >= 0, boxes
    assert box["right"] <= boxes["width"] and box["bottom"] <= boxes["height"], boxes
    for side in ("left", "top"):
        assert ring[side] <= element[side] + 1, (name, boxes)
    for side in ("right", "bottom"):
        assert ring[side] >= element[side] - 1, (name, boxes)
    # Beside it (the die's callout: beside its card): not over it, the arrow's gap between.
    gap = max(
        beside["top"] - box["bottom"],
        box["top"] - beside["bottom"],
        beside["left"] - box["right"],
        box["left"] - beside["right"],
    )
    assert 0 <= gap <= 24, (name, boxes)
    return boxes


def walk(page, lang: str, by_key: bool = False) -> list[str]:  # type: ignore[no-untyped-def]
    """Go through the cycle's callouts from the first to the last (Next, or PageDown), checking
    each against the page; the callouts' names."""
    names = []
    words = page.evaluate(PAGE_WORDS_JS)
    tree = {
        "draft.tree": t("tour.draft.tree.body", lang, cycle=words["cycle"], nodes=words["nodes"]),
        "reject.tree": t(
            "tour.reject.tree.body", lang, rejected=words["struck"], untested=words["unseen"]
        ),
    }
    while True:
        name = callout(page)
        names.append(name)
        beside_its_element(page, name)
        body = page.locator(f"{GUIDE} .sv-guide-body").inner_text()
        quoted = {
            "draft": f"γ = {words['drafted']}",
            **tree,
            "verify": words["first"],
            "verify.tree": words["first"],
            "die": words["judged"],
            "die.path": words["judged"],
            "die.greedy": words["judged"],
            "reject": words["resampled"],
            "bonus": words["tokens"],
            "bonus.none": words["tokens"],
            "bonus.end": words["tokens"],
        }.get(name, "")
        assert quoted in " ".join(body.split()), (name, quoted, body)
        count = page.locator(f"{GUIDE} .sv-guide-count").inner_text()
        assert count == t("tour.counter", lang, step=len(names), total=5)
        if len(names) == 5:
            return names
        if by_key:
            page.keyboard.press("PageDown")
        else:
            page.locator(f"{GUIDE} .sv-guide-next").click()
        page.wait_for_function(
            f'() => document.querySelector("{GUIDE}")?.dataset.callout !== {name!r}'
        )
        page.evaluate(NEXT_FRAME_JS)


def check_names(names: list[str]) -> None:
    assert names[:2] == ["draft", "verify"]
    assert names[2] in ("die", "die.greedy")
    assert names[3] in ("reject", "reject.none")
    assert names[4] in ("bonus", "bonus.none", "bonus.end")
    assert (names[3] == "reject") == (names[4] == "bonus.none")


@pytest.mark.parametrize("lang", list(PAGES))
def test_a_first_visit_is_guided_through_one_real_cycle(browser, site, lang):  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    address = f"{site}{PAGES[lang]}{'&' if '?' in PAGES[lang] else '?'}present=1"
    context, page = opened(
        browser, address, first_visit=True, viewport={"width": 1280, "height": 720}
    )
    page.wait_for_selector("#sv-page.sv-present")
    guide = page.locator(GUIDE)
    expect(guide).to_be_visible()
    assert callout(page) == "intro" and guide.get_attribute("aria-modal") == "false"
    assert guide.locator("h2").inner_text() == t("tour.intro.title", lang)
    assert guide.get_attribute("lang") == lang
    assert guide.get_attribute("aria-label") == t("tour.label", lang)
    expect(guide.locator(".sv-guide-next")).to_be_focused()
    assert guide.locator(".sv-guide-next").inner_text() == t("tour.step_for_me", lang)
    settled(page, "#sv-page")
    page.evaluate(NEXT_FRAME_JS)
    beside_its_element(page, "intro")
    # The text reads at 14 px or more, 4.5:1 against the callout.
    from browser_checks import contrast

    for style in page.evaluate(STYLE_JS, ".sv-guide .sv-guide-body, .sv-guide .sv-guide-next"):
        assert style["size"] >= 14 and contrast(style["color"], style["background"]) >= 4.5

    if lang == "en":
        guide.locator(".sv-guide-next").click()  # Step for me
    else:
        page.locator("#sv-step").click()  # the page's own Step, under the open guide
    page.wait_for_selector('#sv-stream .sv-stream[data-cycles="1"]')
    wait_for_callout(page, "draft")
    settled(page, "#sv-page")
    page.evaluate(NEXT_FRAME_JS)
    names = walk(page, lang, by_key=lang == "ja")
    check_names(names)
    # The clicker moved the guide, not the run: still one cycle.
    assert page.locator("#sv-stream .sv-stream").get_attribute("data-cycles") == "1"
    if lang == "en":
        assert guide.locator(".sv-guide-next").inner_text() == t("tour.done", lang)
        assert guide.locator(".sv-guide-end").inner_text() == t("tour.end", lang)
        guide.locator(".sv-guide-next").click()
    else:
        page.keyboard.press("Escape")
    expect(page.locator(".sv-guide, .sv-guide-ring")).to_have_count(0)

    page.reload()  # remembered: it does not open by itself again
    page.wait_for_selector("#sv-run")
    page.wait_for_selector("html[data-sv-guide='ready']", state="attached")
    page.evaluate(NEXT_FRAME_JS)
    assert page.locator(".sv-guide").count() == 0
    page.locator("#sv-guide-open").click()  # until asked
    expect(guide).to_be_visible()
    expect(guide.locator(".sv-guide-next")).to_be_focused()
    guide.locator(".sv-guide-close").click()
    expect(page.locator(".sv-guide")).to_have_count(0)
    context.close()


def test_the_guide_quotes_the_die_of_a_sampled_cycle(browser, site):  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    context, page = opened(browser, site + PAGES["en"], viewport={"width": 1280, "height": 720})
    assert page.locator(".sv-guide").count() == 0  # the tests' pages count it as seen
    set_number(page, "sv-temperature", 1)
    page.locator("#sv-present-toggle input").check()
    page.wait_for_selector("#sv-page.sv-present")
    for cycle in (1, 2):
        page.locator("#sv-step").click()
        page.wait_for_selector(f'#sv-stream .sv-stream[data-cycles="{cycle}"]')
    settled(page, "#sv-page")
    page.locator("#sv-guide-open").click()
    expect(page.locator(GUIDE)).to_be_visible()
    wait_for_callout(page, "draft")  # a cycle is shown: the walk starts at once
    assert page.evaluate(PAGE_WORDS_JS)["cycle"] == "2"
    names = walk(page, "en")
    check_names(names)
    assert names[2] == "die"  # sampled: a die against a bar, with its u tick
    page.keyboard.press("Escape")
    expect(page.locator(".sv-guide")).to_have_count(0)
    context.close()


def test_the_guide_tells_a_tree_cycle(browser, site):  # type: ignore[no-untyped-def]
    """A tree cycle at temperature 1, stepped to one that kept a branch: the guide tells the tree
    the draft grew (its guesses counted from the tree), the one pass over it, the die against
    the whole path's chance, and how many guesses were struck off and never tested."""
    from playwright.sync_api import expect

    context, page = opened(
        browser, site + PAGES["en"] + "&drafter=tree", viewport={"width": 1280, "height": 900}
    )
    set_number(page, "sv-temperature", 1)
    for cycle in range(1, 9):
        page.locator("#sv-step").click()
        page.wait_for_selector(f'#sv-stream .sv-stream[data-cycles="{cycle}"]')
        page.wait_for_selector(f"#sv-cards .sv-cards-wrap[data-cycle='{cycle}'] .sv-tree")
        if int(page.locator("#sv-cards .sv-tree").get_attribute("data-kept") or 0) > 0:
            break
    settled(page, "#sv-page")
    page.locator("#sv-guide-open").click()
    expect(page.locator(GUIDE)).to_be_visible()
    wait_for_callout(page, "draft.tree")
    names = walk(page, "en")
    assert names[:4] == ["draft.tree", "verify.tree", "die.path", "reject.tree"], names
    assert names[4] in ("bonus", "bonus.none", "bonus.end")
    page.keyboard.press("Escape")
    context.close()


def test_the_guide_fits_a_phone(browser, site):  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    context, page = opened(browser, site + PAGES["ja"], first_visit=True, **PHONE)
    guide = page.locator(GUIDE)
    expect(guide).to_be_visible()
    guide.locator(".sv-guide-next").click()  # 代わりに押す (Step for me)
    page.wait_for_selector('#sv-stream .sv-stream[data-cycles="1"]')
    wait_for_callout(page, "draft")
    for _ in range(5):
        name = callout(page)
        boxes = page.evaluate(BOXES_JS, name)
        box, element = boxes["callout"], boxes["element"]
        assert box["left"] >= 0 and box["right"] <= 390 and box["top"] >= 0, boxes
        assert box["bottom"] <= boxes["height"], boxes
        assert element["bottom"] > 0 and element["top"] < boxes["height"], boxes  # on screen
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        if name.startswith("bonus"):
            break
        guide.locator(".sv-guide-next").click()
        page.wait_for_function(
            f'() => document.querySelector("{GUIDE}")?.dataset.callout !== {name!r}'
        )
        page.evaluate(NEXT_FRAME_JS)
    guide.locator(".sv-guide-close").click()
    expect(page.locator(".sv-guide")).to_have_count(0)
    context.close()


# Every change of the cards' motion, as the page saw it: on (playing), off (played) or plain, with
# the length it was given and how many animations ran under the cards as it began.
PLAYS_JS = """
() => {
  window.svPlays = [];
  const cards = document.querySelector('#sv-cards');
  new MutationObserver(() => {
    const wrap = cards.querySelector('.sv-cards-wrap');
    if (!wrap) return;
    const state = wrap.classList.contains('sv-animate') ? 'on'
      : wrap.classList.contains('sv-animated') ? 'off' : 'plain';
    const last = window.svPlays[window.svPlays.length - 1];
    if (last && last.state === state && last.cycle === wrap.dataset.cycle) return;
    window.svPlays.push({state, cycle: wrap.dataset.cycle,
      total: wrap.style.getPropertyValue('--sv-total'),
      running: wrap.getAnimations({subtree: true}).length});
  }).observe(cards, {attributes: true, childList: true, subtree: true});
}
"""

# The cards once still: each card's opacity by its origin, and whether any animation runs.
STILL_JS = """
() => {
  const wrap = document.querySelector('#sv-cards .sv-cards-wrap[data-cycle]');
  return {
    cards: [...wrap.querySelectorAll('.sv-card')].map((card) => ({
      origin: card.dataset.origin, opacity: Number(getComputedStyle(card).opacity),
      token: Number(getComputedStyle(card.querySelector('.sv-card-tok')).opacity),
      struck: getComputedStyle(card.querySelector('.sv-card-tok')).textDecorationLine})),
    running: wrap.getAnimations({subtree: true}).filter(
      (animation) => animation.playState === 'running').length,
  };
}
"""


def plays(page) -> list[dict]:  # type: ignore[no-untyped-def,type-arg]
    return page.evaluate("window.svPlays")


def played(page, count: int) -> None:  # type: ignore[no-untyped-def]
    """Wait until the cards' motion has begun *count* times and the last has ended."""
    page.wait_for_function(
        "(count) => window.svPlays.filter((play) => play.state === 'on').length >= count"
        " && window.svPlays[window.svPlays.length - 1].state === 'off'",
        arg=count,
    )


def test_animate_plays_each_new_cycle_at_the_autoplay_pace(browser, site):  # type: ignore[no-untyped-def]
    context, page = opened(
        browser, site + PAGES["en"] + "&present=1", viewport={"width": 1280, "height": 720}
    )
    page.wait_for_selector("#sv-page.sv-present")
    page.locator("#sv-animate-toggle input").check()
    page.evaluate(PLAYS_JS)
    page.locator("#sv-step").click()
    played(page, 1)
    first = next(play for play in plays(page) if play["state"] == "on")
    assert first["cycle"] == "1" and first["total"] == "850ms"  # 0.85 of a frame at 1 cycle/s
    assert first["running"] > 0
    still = page.evaluate(STILL_JS)
    assert still["running"] == 0
    for card in still["cards"]:
        if card["origin"] in ("accepted", "rejected", "resampled", "bonus"):
            assert card["opacity"] == 1 and card["token"] == 1, card  # ends fully shown
        if card["origin"] == "untested":
            assert card["opacity"] < 1, card  # the tail that was never tested, faded
        if card["origin"] in ("rejected", "untested"):
            assert "line-through" in card["struck"], card

    # A faster pace, a shorter motion; Back shows an earlier cycle, which plays too.
    page.locator("#sv-pace input").click()
    page.get_by_role("option", name="2 cycles/s").click()
    page.locator("#sv-step").click()
    page.wait_for_selector('#sv-stream .sv-stream[data-cycles="2"]')
    played(page, 2)
    second = [play for play in plays(page) if play["state"] == "on"][1]
    assert second["cycle"] == "2" and second["total"] == "425ms"
    page.locator("#sv-back").click()
    page.wait_for_selector("#sv-cards .sv-cards-wrap[data-cycle='1']")
    played(page, 3)
    assert [play for play in plays(page) if play["state"] == "on"][2]["cycle"] == "1"
    context.close()


def test_nothing_moves_when_reduced_motion_is_asked_for(browser, site):  # type: ignore[no-untyped-def]
    context, page = opened(
        browser,
        site + PAGES["en"],
        viewport={"width": 1280, "height": 720},
        reduced_motion="reduce",
    )
    page.locator("#sv-animate-toggle input").check()
    page.evaluate(PLAYS_JS)
    page.locator("#sv-step").click()
    page.wait_for_selector("#sv-cards .sv-cards-wrap[data-cycle='1']")
    page.evaluate(NEXT_FRAME_JS)
    assert [play for play in plays(page) if play["state"] != "plain"] == []
    running = "document.querySelector('#sv-cards').getAnimations({subtree: true}).length"
    assert page.evaluate(running) == 0
    context.close()
