"""Tree cycles in Debian's chromium, on the tiny pair: three Steps with the tree drafter each
show that cycle's draft tree beside its cards, coloured as the cards are, Back shows an
earlier cycle's tree again, and a click on a guess (or Enter on it) opens it in the inspector."""

from __future__ import annotations

import pytest
from browser_checks import BORDER, PALETTE, WAIT_MS, needs_chromium, set_number

pytestmark = [pytest.mark.browser, needs_chromium]


def check_tree(page, cycle: int) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    wrap = page.locator(f"#sv-cards .sv-cards-wrap[data-cycle='{cycle}']")
    wrap.wait_for(timeout=WAIT_MS)
    tree = wrap.locator(".sv-tree")
    tree.wait_for(timeout=WAIT_MS)
    nodes = int(tree.get_attribute("data-nodes") or -1)
    kept = int(tree.get_attribute("data-kept") or -1)
    assert nodes >= 1
    expect(tree.locator(".sv-tnode[data-node^='n']")).to_have_count(nodes, timeout=WAIT_MS)
    # The kept path is what the cards accepted, and the token after it is the cards' last.
    expect(tree.locator(".sv-tnode[data-verdict='accepted']")).to_have_count(kept)
    expect(wrap.locator(".sv-card.sv-accepted")).to_have_count(kept)
    expect(tree.locator(".sv-tedge-kept")).to_have_count(kept + 1)
    extra = wrap.locator(".sv-card-extra").get_attribute("data-origin")
    assert tree.locator(".sv-tnode[data-node='extra']").get_attribute("data-verdict") == extra
    # Each verdict in the stream's colour, the one its cards and tokens take.
    for kind in ("accepted", "rejected", extra):
        chips = tree.locator(f".sv-tnode.sv-{kind}")
        if chips.count():
            assert chips.first.evaluate(BORDER) == page.evaluate(PALETTE, kind), kind


def test_three_tree_cycles_each_show_their_tree(browser, url) -> None:  # type: ignore[no-untyped-def]
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(url)
    page.wait_for_selector("#sv-run", timeout=WAIT_MS)
    page.locator("#sv-drafter input").click()
    page.get_by_role("option", name="Draft tree (several guesses per step)", exact=True).click()
    for cycle in (1, 2, 3):
        page.locator("#sv-step").click()
        check_tree(page, cycle)
    page.locator("#sv-back").click()
    check_tree(page, 2)
    # A click on a guess in the tree opens the inspector at that cycle, with that guess's row
    # chosen and its story told in the same verdict's colour.
    from playwright.sync_api import expect

    chip = page.locator("#sv-cards .sv-cards-wrap[data-cycle='2'] .sv-tnode[data-node='n0']")
    verdict = chip.get_attribute("data-verdict")
    chip.click()
    story = page.locator("#sv-inspect .sv-inspect[data-cycle='2'] .sv-inspect-node[data-node='0']")
    expect(story).to_be_visible(timeout=WAIT_MS)
    expect(story).to_have_class(f"sv-inspect-node sv-foot-{verdict}")
    expect(page.locator("#sv-inspect tr.sv-row-chosen")).to_have_attribute("data-node", "0")
    # A click on another row of the inspector's table tells that guess instead, in place.
    rows = page.locator("#sv-inspect .sv-inspect-tree tr[data-node]")
    last = rows.count() - 1
    rows.nth(last).click()
    expect(page.locator("#sv-inspect tr.sv-row-chosen")).to_have_attribute("data-node", str(last))
    expect(page.locator(f"#sv-inspect .sv-inspect-node[data-node='{last}']")).to_be_visible()
    # A guess is a button the keyboard reaches: Enter on it opens it as a click does.
    page.locator("#sv-tab-live-button").click()
    chip = page.locator("#sv-cards .sv-cards-wrap[data-cycle='2'] .sv-tnode[data-node='n1']")
    chip.focus()
    page.keyboard.press("Enter")
    story = page.locator("#sv-inspect .sv-inspect[data-cycle='2'] .sv-inspect-node[data-node='1']")
    expect(story).to_be_visible(timeout=WAIT_MS)
    context.close()


def test_a_phone_reads_the_tree_as_an_outline(browser, url) -> None:  # type: ignore[no-untyped-def]
    """At 390 px the picture (wider than the screen) gives way to the outline: every guess a
    line, each verdict in its colour, nothing wider than the screen."""
    from playwright.sync_api import expect

    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
    page = context.new_page()
    page.goto(url)
    page.wait_for_selector("#sv-run", timeout=WAIT_MS)
    page.locator("#sv-drafter input").click()
    page.get_by_role("option", name="Draft tree (several guesses per step)", exact=True).click()
    page.locator("#sv-step").click()
    tree = page.locator("#sv-cards .sv-cards-wrap[data-cycle='1'] .sv-tree")
    tree.wait_for(timeout=WAIT_MS)
    nodes = int(tree.get_attribute("data-nodes") or -1)
    expect(tree.locator(".sv-tree-scroll")).to_be_hidden()
    outline = tree.locator(".sv-tree-outline")
    expect(outline).to_be_visible()
    expect(outline.locator(".sv-tline[data-node^='n']")).to_have_count(nodes)
    extra = page.locator("#sv-cards .sv-card-extra").get_attribute("data-origin")
    chip = outline.locator(".sv-tline[data-node='extra'] .sv-tchip")
    assert chip.evaluate(BORDER) == page.evaluate(PALETTE, extra)
    box = outline.bounding_box()
    assert box is not None and box["x"] + box["width"] <= 390
    context.close()


def test_sampled_tree_cycles_are_told_from_the_leaves_up(browser, url) -> None:  # type: ignore[no-untyped-def]
    """At temperature 1 the tree is tested from its leaves up: three cycles, each coloured as
    its cards, with the rule's line under the tree and the cards' chance the path's."""
    from playwright.sync_api import expect

    from specviz.text import t

    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(url)
    page.wait_for_selector("#sv-run", timeout=WAIT_MS)
    set_number(page, "sv-temperature", 1)
    page.locator("#sv-drafter input").click()
    page.get_by_role("option", name="Draft tree (several guesses per step)", exact=True).click()
    for cycle in (1, 2, 3):
        page.locator("#sv-step").click()
        check_tree(page, cycle)
        wrap = page.locator(f"#sv-cards .sv-cards-wrap[data-cycle='{cycle}']")
        expect(wrap.locator(".sv-tree-rule")).to_have_text(t("tree.rule.traversal", "en"))
        if wrap.locator(".sv-card.sv-accepted, .sv-card.sv-rejected").count():
            expect(wrap.locator(".sv-card", has_text="path kept")).not_to_have_count(0)
    context.close()
