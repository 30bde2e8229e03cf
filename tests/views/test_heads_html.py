"""The heads panel of a Medusa cycle: the run's agreement counted from hand-built trees (a path
that stops early, a budget that cuts the text, a first cycle with no tree, a cycle another
drafter drafted), the held-out bars from the training report, each head's guesses with the one
the target kept, and token text that never becomes markup."""

from __future__ import annotations

import re
from dataclasses import replace
from html import unescape

import pytest
from medusa_models import FILED_AGREEMENT
from ui_events import XSS

from specviz.core.events import (
    Cycle,
    EmittedToken,
    Origin,
    Timing,
    Totals,
    TreeNode,
    TreeRecord,
)
from specviz.models.heads.report import heads_agreement
from specviz.views.head_scores import HeadScore, first_guess, head_guesses, run_agreement
from specviz.views.heads_html import heads_panel_html
from specviz.views.run_html import cycle_cards_html

REPORT = {"heads": 3, "steps": 7, "training_positions": 96, "agreement": FILED_AGREEMENT}
AGREEMENT = heads_agreement(REPORT)
ORIGINS = {"a": Origin.ACCEPTED, "r": Origin.RESAMPLED, "b": Origin.BONUS}


def node(parent: int, rank: int, token: int, q: float, verdict: str, text: str = "") -> TreeNode:
    """A node whose depth follows from its parent's (parents come first: see medusa_cycle)."""
    return TreeNode(
        parent=parent,
        depth=0,  # set by medusa_cycle
        rank=rank,
        token_id=token,
        text=text or f"t{token}",
        q_draft=q,
        p_target=0.5,
        accept_prob=1.0 if verdict == "accepted" else 0.0,
        uniform=None,
        verdict=verdict,
    )


def medusa_cycle(
    index: int,
    nodes: list[TreeNode],
    path: tuple[int, ...],
    emitted: list[tuple[int, str, str]],
    *,
    drafter: str = "medusa",
    draft_end: str = "gamma",
) -> Cycle:
    """A greedy tree cycle: *emitted* lists (token, text, origin letter a/r/b) in order."""
    depths: list[int] = []
    for item in nodes:
        depths.append(1 if item.parent < 0 else depths[item.parent] + 1)
    placed = tuple(replace(item, depth=depth) for item, depth in zip(nodes, depths, strict=True))
    tokens = tuple(
        EmittedToken(10 * index + i, token, text, ORIGINS[origin], 0.5)
        for i, (token, text, origin) in enumerate(emitted)
    )
    return Cycle(
        index=index,
        draft_len=len(path),
        greedy=True,
        drafted=(),
        accepted_len=len(path),
        emitted=tokens,
        rejection=None,
        timing=Timing(0.01, 0.02, 0.001),
        totals=Totals(10 * index, index + 1, 0, 0, 0, 0.1, 0.0),
        target_cache_len=0,
        draft_cache_len=0,
        context_len=0,
        finished=False,
        stop_reason=None,
        draft_end=draft_end,
        drafter=drafter,
        tree=TreeRecord(placed, path, "greedy", shape="nodes=8,topk=2"),
    )


def first() -> Cycle:
    """The first cycle: the heads wait for the target's first pass, no tree."""
    return medusa_cycle(0, [], (), [(5, "x", "r")], draft_end="prefill")


def stopped_after_one() -> Cycle:
    """Head 1's first guess kept; head 2's first guess lost to the target's own; the path
    stops at depth 1, so head 3 (whose guess hangs under a lost node) has no chance."""
    return medusa_cycle(
        1,
        [
            node(-1, 1, 10, 0.6, "accepted", "def"),
            node(-1, 2, 11, 0.2, "untested"),
            node(0, 1, 20, 0.5, "rejected", " f"),
            node(0, 2, 21, 0.3, "rejected"),
            node(1, 1, 20, 0.5, "untested", " f"),
            node(2, 1, 30, 0.4, "untested"),
        ],
        (0,),
        [(10, "def", "a"), (22, " h", "r")],
    )


def stopped_at_once() -> Cycle:
    """Head 1's only guess rejected: the path stops before depth 1."""
    return medusa_cycle(
        2,
        [node(-1, 1, 40, 0.5, "rejected"), node(0, 1, 41, 0.4, "untested")],
        (),
        [(42, "c", "r")],
    )


def all_kept() -> Cycle:
    """Every head's first guess kept, then the bonus token."""
    return medusa_cycle(
        3,
        [
            node(-1, 1, 50, 0.7, "accepted"),
            node(0, 1, 51, 0.6, "accepted"),
            node(1, 1, 52, 0.5, "accepted"),
        ],
        (0, 1, 2),
        [(50, "t50", "a"), (51, "t51", "a"), (52, "t52", "a"), (53, "t53", "b")],
    )


def cut_by_budget() -> Cycle:
    """Head 1's guess kept, and the token budget ends the text there: head 2's position was
    never written, so it is no chance for head 2."""
    return medusa_cycle(
        4,
        [node(-1, 1, 60, 0.7, "accepted"), node(0, 1, 61, 0.6, "untested")],
        (0,),
        [(60, "t60", "a")],
    )


def run() -> list[Cycle]:
    return [first(), stopped_after_one(), stopped_at_once(), all_kept(), cut_by_budget()]


def test_the_run_agreement_counts_first_guesses_under_the_kept_path() -> None:
    # Head 1: hit, miss, hit, hit; head 2: miss (cycle 1), hit (cycle 3); head 3: hit (cycle 3).
    assert run_agreement(run(), 3) == (
        HeadScore(1, 3, 4),
        HeadScore(2, 1, 2),
        HeadScore(3, 1, 1),
    )
    assert run_agreement(run(), 3)[0].rate == 0.75
    assert run_agreement([first()], 2) == (HeadScore(1, 0, 0), HeadScore(2, 0, 0))
    assert run_agreement([first()], 1)[0].rate is None


def test_a_path_that_stops_early_gives_the_deeper_heads_no_chance() -> None:
    cycle = stopped_after_one()
    assert cycle.tree is not None
    assert first_guess(cycle.tree, 1) == cycle.tree.nodes[0]
    assert first_guess(cycle.tree, 2) == cycle.tree.nodes[2]  # under the kept node, not node 1
    assert first_guess(cycle.tree, 3) is None  # its guess hangs under a node the target lost
    assert run_agreement([cycle], 3) == (HeadScore(1, 1, 1), HeadScore(2, 0, 1), HeadScore(3, 0, 0))
    assert run_agreement([stopped_at_once()], 2) == (HeadScore(1, 0, 1), HeadScore(2, 0, 0))


def test_cycles_another_drafter_drafted_do_not_count() -> None:
    other = replace(all_kept(), drafter="tree")
    assert run_agreement([other], 3) == tuple(HeadScore(d, 0, 0) for d in (1, 2, 3))
    assert heads_panel_html(other, [other], AGREEMENT) == ""
    assert "sv-heads" not in cycle_cards_html(other)
    assert "sv-with-panel" not in cycle_cards_html(other)  # laid out as any tree's cards
    assert heads_panel_html(None, [], AGREEMENT) == ""


def bars(html: str) -> dict[tuple[str, str], dict[str, str]]:
    """(head, measure) -> the bar's data attributes."""
    found: dict[tuple[str, str], dict[str, str]] = {}
    for line in html.split('<div class="sv-heads-score" data-head="')[1:]:
        head = line.split('"')[0]
        for measure, attrs in re.findall(
            r'class="sv-hbar-cell" data-measure="(\w+)"([^>]*)>', line
        ):
            found[(head, measure)] = dict(re.findall(r'data-([\w-]+)="([^"]*)"', attrs))
    return found


def test_the_bars_show_the_run_and_the_held_out_numbers() -> None:
    html = heads_panel_html(cut_by_budget(), run(), AGREEMENT)
    found = bars(html)
    assert [found[(head, "run")] for head in "123"] == [
        {"hits": "3", "chances": "4"},
        {"hits": "1", "chances": "2"},
        {"hits": "1", "chances": "1"},
    ]
    for group, measured in FILED_AGREEMENT.items():
        for head in (1, 2, 3):
            assert found[(str(head), group)] == {
                "top1": f"{measured['top1'][head - 1]:.4f}",
                "top5": f"{measured['top5'][head - 1]:.4f}",
                "positions": str(measured["positions"]),
            }
    text = " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())
    assert "75% (3 of 4)" in text and "50% (1 of 2)" in text and "100% (1 of 1)" in text
    assert "top-1 50% · top-5 75%" in text  # head 1 on held-out code
    # The first five's share in a span of its own (presentation mode leaves it to the tooltip).
    assert '<span class="sv-hbar-more"> · top-5 75%</span>' in html
    # The corpus's order, not the JSON's: code, prose, Japanese.
    assert [group.group for group in AGREEMENT.groups] == ["code", "prose", "ja"]
    first_line = html.split('<div class="sv-heads-score" data-head="')[1]
    assert re.findall(r'data-measure="(\w+)"', first_line) == ["run", "code", "prose", "ja"]
    # A bar's fill is its share of the whole width.
    assert 'class="sv-hbar-top1" style="width:75.0%"' in html
    assert 'class="sv-hbar-top5" style="width:75.0%"' in html  # head 1's top-5 on code


def test_without_a_report_the_panel_says_how_to_train_the_heads() -> None:
    html = heads_panel_html(all_kept(), run()[:4], None)
    assert "No heads are trained for this target here" in html
    assert "<code>python -m specviz heads train</code>" in html
    assert 'data-measure="code"' not in html and 'data-measure="run"' in html
    assert 'data-heads="3"' in html  # as many heads as the trees reached


def guess_rows(html: str) -> list[tuple[str, str, list[tuple[str, str]]]]:
    """(head, outcome, [(token, verdict), ...]) per line of the cycle's guesses."""
    rows = []
    for head, outcome, body in re.findall(
        r'<li class="sv-hguess" data-head="(\d+)" data-outcome="(\w+)">(.*?)</li>', html, re.S
    ):
        items = re.findall(r'class="sv-hguess-item" data-token="(\d+)" data-verdict="(\w+)"', body)
        rows.append((head, outcome, items))
    return rows


def test_each_head_shows_its_guesses_and_what_the_target_did() -> None:
    cycle = stopped_after_one()
    html = heads_panel_html(cycle, run()[:2], AGREEMENT)
    assert guess_rows(html) == [
        ("1", "kept", [("10", "accepted"), ("11", "untested")]),
        # token 20 sits under two parents: lost under the kept one, never tested under the other
        ("2", "missed", [("20", "rejected"), ("21", "rejected")]),
        ("3", "unreached", [("30", "untested")]),
    ]
    # The kept guess opens its node; the token the target wrote instead is in its own colour.
    assert 'class="sv-tchip sv-accepted" data-node="n0"' in html
    assert 'class="sv-tchip sv-rejected" data-node="n2"' in html  # the tested one of the two
    assert '<span class="sv-tchip sv-resampled" data-token="22"> h</span>' in html
    assert "not reached: the cycle ended at position 2" in html
    assert "q 0.60" in html and "q 0.20" in html
    rows = head_guesses(cycle, 3)
    assert rows[0].kept is not None and rows[0].kept.token_id == 10
    assert rows[1].kept is None and rows[1].wrote is not None and rows[1].wrote.token_id == 22
    assert rows[2].wrote is None


def test_a_bonus_and_the_first_cycle() -> None:
    rows = guess_rows(heads_panel_html(all_kept(), run(), AGREEMENT))
    assert [outcome for _, outcome, _ in rows] == ["kept", "kept", "kept"]
    html = heads_panel_html(first(), [first()], AGREEMENT)
    assert "No guesses in the first cycle" in html and "sv-hguess" not in html
    assert 'data-heads="3"' in html and 'data-measure="code"' in html  # the report's heads


@pytest.mark.parametrize("hostile", [XSS, '<img src=x onerror="alert(1)">'])
def test_token_text_never_becomes_markup(hostile: str) -> None:
    cycle = stopped_after_one()
    assert cycle.tree is not None
    nodes = tuple(replace(item, text=hostile) for item in cycle.tree.nodes)
    emitted = tuple(replace(token, text=hostile) for token in cycle.emitted)
    cycle = replace(cycle, tree=replace(cycle.tree, nodes=nodes), emitted=emitted)
    html = heads_panel_html(cycle, [cycle], AGREEMENT)
    assert "<script" not in html and "<img" not in html
    assert "&lt;script&gt;" in html or "&lt;img" in html
    assert html.count("sv-hguess-item") == 5  # every guess drawn, escaped


def test_the_cards_carry_the_panel_under_the_tree_in_either_language() -> None:
    cycle = stopped_after_one()
    cards = cycle_cards_html(cycle, run=run()[:2], heads=AGREEMENT)
    panel = heads_panel_html(cycle, run()[:2], AGREEMENT)
    assert panel in cards and cards.index('class="sv-tree"') < cards.index(panel)
    assert 'class="sv-cards-wrap sv-with-panel"' in cards  # presentation mode lays it out
    assert heads_panel_html(cycle, [cycle], AGREEMENT) in cycle_cards_html(cycle, heads=AGREEMENT)
    japanese = heads_panel_html(cycle, run()[:2], AGREEMENT, lang="ja")
    assert "ヘッド 1" in japanese and "取り分けたコード" in japanese and "this run" not in japanese
