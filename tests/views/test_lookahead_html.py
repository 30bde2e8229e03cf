"""The lookahead window panel draws a lookahead cycle's 2D window, the n-grams its columns hand
to the pool and the pooled guesses it verified, from the cycle's records alone: every cell at
its row and offset in its verdict's colours, token text never markup, and nothing for a cycle
without a window."""

from __future__ import annotations

import re
from dataclasses import replace

from lookahead_records import ROOT_TOKEN, lookahead_cycle, tree_nodes
from ui_events import XSS, sample_run

from specviz.views.lookahead_html import kept_guess, lookahead_panel_html
from specviz.views.run_html import cycle_cards_html

CELL = re.compile(
    r'<span class="sv-tchip sv-look-chip (sv-[\w-]+)" data-kind="(\w+)"'
    r'(?: data-node="n(\d+)" tabindex="0" role="button")? data-token="(-?\d+)" '
    r'data-row="(\d+)" data-offset="(\d+)"'
)


def cells(html: str) -> dict[tuple[int, int], tuple[str, str, int, int]]:
    """The window's cells by (row, offset): (css class, kind, node or -1, token id)."""
    return {
        (int(row), int(offset)): (css, kind, int(node or -1), int(token))
        for css, kind, node, token, row, offset in CELL.findall(html)
    }


def grams(html: str) -> list[tuple[int, int, list[int]]]:
    """Each harvested n-gram: its column, its key and every token id on its line."""
    found = re.findall(
        r'<li class="sv-look-gram" data-column="(\d+)" data-key="(-?\d+)"[^>]*>(.*?)</li>', html
    )
    return [
        (int(column), int(key), [int(token) for token in re.findall(r'data-token="(-?\d+)"', body)])
        for column, key, body in found
    ]


def test_the_window_s_cells_sit_at_their_row_and_offset_in_their_verdict_s_colours() -> None:
    html = lookahead_panel_html(lookahead_cycle())
    assert cells(html) == {
        (0, 0): ("sv-look-root", "root", -1, 100),  # the last committed token, offset 0
        (0, 1): ("sv-accepted", "accepted", 0, 11),  # the spine: " cat" " sat", kept
        (0, 2): ("sv-accepted", "accepted", 1, 12),
        (1, 1): ("sv-rejected", "rejected", 4, 14),  # row t−1 from offset 1
        (1, 2): ("sv-rejected", "rejected", 5, 15),
        (1, 3): ("sv-rejected", "rejected", 6, 16),
        (2, 2): ("sv-look-next", "next", -1, 12),  # the target's new row, one further on
        (2, 3): ("sv-look-next", "next", -1, 17),
        (2, 4): ("sv-look-next", "next", -1, 18),
    }
    labels = re.findall(r'<span class="sv-look-label"[^>]*>([^<]*)</span>', html)
    assert labels == ["t−2", "t−1", "new"]
    offsets = re.findall(r'<span class="sv-look-offset"[^>]*>([^<]*)</span>', html)
    assert offsets == ["+0", "+1", "+2", "+3", "+4"]
    # A slot's chip opens its node in the inspector, as the tree panel's chip of it does.
    assert 'data-kind="accepted" data-node="n0" tabindex="0" role="button"' in html
    assert "Rows are past Jacobi iterations" in html  # the caption


def test_each_column_reads_as_an_n_gram_ending_in_the_target_s_new_choice() -> None:
    assert grams(lookahead_panel_html(lookahead_cycle())) == [
        (0, 100, [100, 14, 12]),  # the root, row t−1's " dog", then " sat"
        (1, 11, [11, 15, 17]),  # the spine's " cat", " on", then " mat"
        (2, 12, [12, 16, 18]),  # the spine's " sat", " the", then " rug"
    ]


def test_the_kept_guess_is_marked_and_told() -> None:
    cycle = lookahead_cycle()
    html = lookahead_panel_html(cycle)
    guesses = re.findall(
        r'<li class="sv-look-guess( sv-look-kept)?" data-guess="(\d)" data-kept="(\d)">(.*?)</li>',
        html,
    )
    tokens = [re.findall(r'data-token="(\d+)"', body) for _, _, _, body in guesses]
    assert tokens == [["11", "12"], ["13", "14"]]  # each guess's whole path from the root
    assert [(mark, kept) for mark, _, kept, _ in guesses] == [(" sv-look-kept", "2"), ("", "0")]
    assert 'data-kept-guess="0"' in html
    assert "The target kept guess 1: 2 of its 2 tokens." in html
    assert cycle.tree is not None and kept_guess(cycle.tree) == 0


def test_without_a_kept_guess_the_window_or_the_target_carried_the_cycle() -> None:
    nodes = list(tree_nodes())
    nodes[0] = replace(nodes[0], verdict="rejected")
    nodes[1] = replace(nodes[1], verdict="untested")
    nodes[4] = replace(nodes[4], verdict="accepted")  # row t−1's " dog", no guess's
    html = lookahead_panel_html(lookahead_cycle(nodes=tuple(nodes), path=(4,)))
    assert 'data-kept-guess="-1"' in html and "sv-look-kept" not in html
    assert "the window's own path carried the cycle (1 kept)" in html
    nothing = lookahead_panel_html(lookahead_cycle(path=()))
    assert "the target's own next token carried the cycle" in nothing
    alone = lookahead_panel_html(lookahead_cycle(window_guesses=()))
    assert "No pooled n-gram starts with the last token yet" in alone
    assert 'data-guesses="0"' in alone


def test_token_text_never_becomes_markup() -> None:
    nodes = tuple(replace(node, text=XSS) for node in tree_nodes())
    hostile = replace(ROOT_TOKEN, text=XSS)
    html = lookahead_panel_html(
        lookahead_cycle(nodes=nodes, window_root=hostile, window_next=(hostile,) * 3)
    )
    assert "<script" not in html and "&lt;script&gt;" in html
    assert html.count("&lt;script&gt;") >= 9 + 9 + 4  # every cell, n-gram token and guess token


def test_a_warming_window_reads_no_n_grams_and_a_waiting_one_no_new_row() -> None:
    warming = lookahead_panel_html(lookahead_cycle(window_harvest=False))
    assert grams(warming) == [] and 'data-grams="0"' in warming
    assert "Warming up" in warming
    assert any(kind == "next" for _, kind, _, _ in cells(warming).values())
    # A slot the budget left out: a dot in its place, no new row, no n-grams.
    waiting = lookahead_panel_html(
        lookahead_cycle(window_rows=((0, 1), (4, 5, -1)), window_next=(), window_harvest=False)
    )
    drawn = cells(waiting)
    assert drawn[(1, 3)] == ("sv-look-out", "out", -1, -1)
    assert not any(kind == "next" for _, kind, _, _ in drawn.values())
    assert "The window waits" in waiting and grams(waiting) == []


def test_only_a_cycle_with_a_window_gets_the_panel() -> None:
    cycle = lookahead_cycle()
    assert lookahead_panel_html(cycle) in cycle_cards_html(cycle)
    assert 'class="sv-cards-wrap sv-with-panel"' in cycle_cards_html(cycle)
    assert "sv-with-panel" not in cycle_cards_html(sample_run()[0])
    assert lookahead_panel_html(None) == ""
    assert lookahead_panel_html(sample_run()[0]) == ""  # a chain cycle
    assert cycle.tree is not None
    other_tree = replace(cycle, tree=replace(cycle.tree, window_rows=()))
    assert lookahead_panel_html(other_tree) == ""
    assert "sv-look" not in cycle_cards_html(other_tree)


def test_the_panel_speaks_japanese() -> None:
    html = lookahead_panel_html(lookahead_cycle(), lang="ja")
    assert "ヤコビ反復" in html and "Jacobi" not in html
    assert "ターゲットは推測 1 を残しました" in html
