"""Lookahead cycles in Debian's chromium, on the tiny pair: three Steps each show that cycle's 2D
window under its tree, every cell the token the cycle's record (read back from the run's
trace download) holds at that row and offset, in its verdict's colour, with the record's
n-grams and pooled guesses; a phone stacks it within its width, and presentation mode shows
the whole cycle, window included, on one 1280x720 screen."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from browser_checks import BORDER, PALETTE, WAIT_MS, needs_chromium, off_screen

from specviz.core.events import Cycle, TreeRecord
from specviz.export.records import cycle_from_dict
from specviz.text import t

pytestmark = [pytest.mark.browser, needs_chromium]

# Every chip of the window's grid, as the page draws it.
CELLS_JS = """(panel) => [...panel.querySelectorAll('.sv-look-grid .sv-look-chip')].map((el) => [
  Number(el.dataset.row), Number(el.dataset.offset), el.dataset.kind, el.dataset.node || '',
  Number(el.dataset.token)])"""
# The token ids on each line of a list (the n-grams, the guesses).
LINES_JS = """(items) => items.map((li) =>
  [...li.querySelectorAll('.sv-look-chip')].map((el) => Number(el.dataset.token)))"""


def expected_cells(record: TreeRecord) -> list[list[Any]]:
    """The grid the record asks for: the root at offset 0, slot i of row r at i + max(r, 1) (the
    reference's position ids), the target's new row one position past the newest."""
    root = record.window_root
    cells: list[list[Any]] = [[0, 0, "root", "", root.token_id if root else -1]]
    for r, row in enumerate(record.window_rows):
        for slot, node in enumerate(row):
            if node < 0:
                cells.append([r, slot + max(r, 1), "out", "", -1])
            else:
                item = record.nodes[node]
                cells.append([r, slot + max(r, 1), item.verdict, f"n{node}", item.token_id])
    newest = len(record.window_rows) - 1
    for slot, token in enumerate(record.window_next):
        cells.append([newest + 1, slot + max(newest, 1) + 1, "next", "", token.token_id])
    return sorted(cells)


def expected_grams(record: TreeRecord) -> list[list[int]]:
    """Each column's n-gram when the window was full: its foot, its slot in each later row, the
    target's new token."""
    if not record.window_harvest or record.window_root is None:
        return []
    rows, tokens = record.window_rows, [node.token_id for node in record.nodes]
    feet = [record.window_root.token_id, *(tokens[node] for node in rows[0])]
    return [
        [feet[i], *(tokens[row[i]] for row in rows[1:]), new.token_id]
        for i, new in enumerate(record.window_next)
    ]


def path_to(record: TreeRecord, end: int) -> list[int]:
    """The nodes from the root's child down to *end*."""
    nodes = []
    while end >= 0:
        nodes.insert(0, end)
        end = record.nodes[end].parent
    return nodes


def expected_guesses(record: TreeRecord) -> list[list[int]]:
    """Each verified guess's tokens from the root down to its end."""
    return [
        [record.nodes[node].token_id for node in path_to(record, end)]
        for end in record.window_guesses
    ]


def expected_kept_guess(record: TreeRecord) -> str:
    """The guess with the most tokens on the kept path (the first of equals), -1 for none."""
    on_path = [len(set(path_to(record, end)) & set(record.path)) for end in record.window_guesses]
    best = max(on_path, default=0)
    return str(on_path.index(best) if best else -1)


def choose_lookahead(page: Any) -> None:
    page.locator("#sv-drafter input").click()
    page.get_by_role("option", name=t("drafter.lookahead", "en"), exact=True).click()


def step_to(page: Any, cycle: int) -> Any:
    """Press Step and wait for *cycle*'s window panel; returns it."""
    page.locator("#sv-step").click()
    panel = page.locator(f"#sv-cards .sv-cards-wrap[data-cycle='{cycle}'] .sv-look")
    panel.wait_for(timeout=WAIT_MS)
    return panel


def recorded_cycles(page: Any, count: int) -> list[Cycle]:
    """The run's first *count* cycles from its trace download. Each Step refreshes the file
    after the cards are drawn, so the download is taken again until it holds them all."""
    button = page.locator("#sv-export-trace button, button#sv-export-trace").first
    for _ in range(50):
        page.wait_for_function("b => !b.disabled", arg=button.element_handle(), timeout=WAIT_MS)
        with page.expect_download() as download:
            button.click()
        trace = json.loads(Path(download.value.path()).read_text())
        if len(trace["cycles"]) >= count:
            return [cycle_from_dict(data) for data in trace["cycles"][:count]]
    raise AssertionError(f"the trace download never held {count} cycles")


def test_three_lookahead_cycles_each_show_their_window(browser, url) -> None:  # type: ignore[no-untyped-def]
    context = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
    page = context.new_page()
    page.goto(url)
    page.wait_for_selector("#sv-run", timeout=WAIT_MS)
    choose_lookahead(page)
    shown = []
    for cycle in (1, 2, 3):
        panel = step_to(page, cycle)
        shown.append(
            (
                sorted(panel.evaluate(CELLS_JS)),
                panel.locator(".sv-look-gram").evaluate_all(LINES_JS),
                panel.locator(".sv-look-guess").evaluate_all(LINES_JS),
                panel.get_attribute("data-kept-guess"),
            )
        )
        # Each verdict in the stream's colour, the one the tree's chips and the cards take.
        for kind, colour in (("accepted", "accepted"), ("rejected", "rejected")):
            cells = panel.locator(f".sv-look-grid .sv-look-chip.sv-{kind}")
            if cells.count():
                assert cells.first.evaluate(BORDER) == page.evaluate(PALETTE, colour), kind
    records = [cycle.tree for cycle in recorded_cycles(page, 3)]
    for (cells, grams, guesses, kept), record in zip(shown, records, strict=True):
        assert record is not None and record.window_rows
        assert cells == expected_cells(record)
        assert grams == expected_grams(record)
        assert guesses == expected_guesses(record)
        assert kept == expected_kept_guess(record)
    assert records[0].window_next and not records[0].window_harvest  # the warm-up's one row
    assert any(record.window_harvest for record in records[1:])
    context.close()


def test_a_phone_stacks_the_window_within_its_width(browser, url) -> None:  # type: ignore[no-untyped-def]
    """At 390 px the window's parts stack and fit the screen's width."""
    from playwright.sync_api import expect

    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
    page = context.new_page()
    page.goto(url)
    page.wait_for_selector("#sv-run", timeout=WAIT_MS)
    choose_lookahead(page)
    step_to(page, 1)
    panel = step_to(page, 2)
    expect(panel.locator(".sv-look-grid")).to_be_visible()
    expect(panel.locator(".sv-look-caption")).to_be_visible()
    box = panel.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    context.close()


# The window's parts in presentation mode: its grid (every chip, not only the part that holds
# it), the n-grams and the guesses.
WINDOW_PARTS = (
    "#sv-cards .sv-look-grid",
    "#sv-cards .sv-look-grid .sv-look-chip",
    "#sv-cards .sv-look-grams",
    "#sv-cards .sv-look-guesses",
)


def test_presentation_mode_shows_each_lookahead_cycle_on_one_screen(browser, url) -> None:  # type: ignore[no-untyped-def]
    """At 1280x720 in presentation mode, three Steps each show the stream, the cards, the tree
    and the whole window panel within the screen, with no scrolling."""
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    page = context.new_page()
    page.goto(url)
    page.wait_for_selector("#sv-run", timeout=WAIT_MS)
    choose_lookahead(page)  # before presentation mode leaves the controls out
    page.locator("#sv-present-toggle input").check()
    page.wait_for_selector("#sv-page.sv-present")
    for cycle in (1, 2, 3):
        step_to(page, cycle)
        assert off_screen(page, WINDOW_PARTS) == [], cycle
    context.close()
