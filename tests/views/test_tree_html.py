"""The tree panel draws every node of a tree cycle with its verdict, the kept path thick, and
never lets a token's text become markup; the fable tells the alternatives; a trace keeps it."""

from __future__ import annotations

import json
import re
from dataclasses import replace

import pytest
import torch
from tiny_models import TinyPair

from specviz.core.engine import speculative_generate
from specviz.core.events import Cycle
from specviz.core.settings import GenerationSettings
from specviz.drafters.draft_tree import DraftTreeDrafter
from specviz.drafters.tree_growth import TreeGrowth
from specviz.export.draft_csv import draft_rows
from specviz.export.records import RecordError, cycle_from_dict
from specviz.labs.inspector import inspector_html, node_story
from specviz.text import t, t_html
from specviz.views.fable import narrate, story_text
from specviz.views.numbers import prob
from specviz.views.run_html import cycle_cards_html
from specviz.views.tree_html import tree_panel_html
from specviz.views.verdicts import draft_sentence

PROMPT = torch.tensor([list(b"def add(a, b):\n    return")])


def tree_cycles(
    pair: TinyPair, growth: TreeGrowth, temperature: float = 0.0, rule: str = "traversal"
) -> list[Cycle]:
    settings = GenerationSettings(
        temperature=temperature, seed=3, max_new_tokens=20, stop_on_eos=False
    )
    drafter = DraftTreeDrafter(pair.draft, growth, rule=rule)
    return list(speculative_generate(pair, PROMPT, settings, drafter))


@pytest.mark.parametrize(
    ("growth", "temperature"),
    [(TreeGrowth(widths=(2, 2, 1)), 0.0), (TreeGrowth(widths=(3, 1)), 1.0), (TreeGrowth(), 1.0)],
)
def test_every_node_is_drawn_with_its_verdict(
    tiny_pair: TinyPair, growth: TreeGrowth, temperature: float
) -> None:
    for cycle in tree_cycles(tiny_pair, growth, temperature):
        assert cycle.tree is not None
        html = tree_panel_html(cycle)
        drawn = dict(re.findall(r'data-node="(n\d+)" data-verdict="(\w+)"', html))
        assert drawn == {f"n{i}": node.verdict for i, node in enumerate(cycle.tree.nodes)}
        extra = cycle.emitted[len(cycle.tree.path) :]
        kinds = re.findall(r'data-node="extra" data-verdict="(\w+)"', html)
        assert kinds == [token.origin.value for token in extra[:1]]
        # The kept path and the token after it are the thick edges, nothing else.
        kept = re.findall(r'class="sv-tedge sv-tedge-kept" data-to="(\w+)"', html)
        assert kept == [f"n{i}" for i in cycle.tree.path] + ["extra"] * len(extra[:1])
        assert html in cycle_cards_html(cycle)
        # The inspector lists every node with the same verdict.
        rows = re.findall(r'<tr class="sv-row-(\w+)" data-node="(\d+)"', inspector_html(cycle))
        assert rows == [(node.verdict, str(i)) for i, node in enumerate(cycle.tree.nodes)]
        # and tells any one of them in words, its row marked.
        for i, node in enumerate(cycle.tree.nodes):
            told = inspector_html(cycle, node=i)
            assert re.findall(
                r'<tr class="sv-row-\w+ sv-row-chosen"[^>]* data-node="(\d+)"', told
            ) == [str(i)]
            assert f'class="sv-inspect-node sv-foot-{node.verdict}" data-node="{i}"' in told


def test_a_chain_cycle_has_no_tree_panel(tiny_pair: TinyPair) -> None:
    cycle = tree_cycles(tiny_pair, TreeGrowth(widths=(2, 1)))[0]
    assert tree_panel_html(replace(cycle, tree=None)) == ""
    assert "sv-tree" not in cycle_cards_html(replace(cycle, tree=None))


def test_token_text_never_becomes_markup(tiny_pair: TinyPair) -> None:
    cycle = tree_cycles(tiny_pair, TreeGrowth(widths=(2, 1)))[0]
    assert cycle.tree is not None
    hostile = '<img src=x onerror="alert(1)">'
    nodes = tuple(replace(node, text=hostile) for node in cycle.tree.nodes)
    html = tree_panel_html(replace(cycle, tree=replace(cycle.tree, nodes=nodes)))
    assert "<img" not in html and "&lt;img" in html


@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_the_fable_tells_the_branches(tiny_pair: TinyPair, temperature: float) -> None:
    cycles = tree_cycles(tiny_pair, TreeGrowth(widths=(3, 1)), temperature)
    for cycle in cycles:
        assert cycle.tree is not None
        story = " ".join(story_text(narrate(cycle), "en"))
        if not cycle.tree.nodes:  # one token of budget left: nothing drafted
            assert "token budget" in story
            continue
        first = sum(node.parent < 0 for node in cycle.tree.nodes)
        assert f"{first} of them for the very next word" in story
        assert ("from the end of a branch" in story) is (cycle.tree.rule == "traversal")
        kept_alternative = [cycle.tree.nodes[i].rank for i in cycle.tree.path[:1]]
        if kept_alternative and kept_alternative[0] > 1:
            assert f"keeps guess {kept_alternative[0]}" in story


@pytest.mark.parametrize(
    ("growth", "temperature", "rule"),
    [
        (TreeGrowth(widths=(3, 2)), 1.0, "recursive"),
        (TreeGrowth(widths=(3, 2)), 1.0, "traversal"),
        (TreeGrowth(widths=(2, 2)), 0.0, "traversal"),
    ],
)
def test_the_inspector_says_why_each_node_was_kept_lost_or_never_tested(
    tiny_pair: TinyPair, growth: TreeGrowth, temperature: float, rule: str
) -> None:
    seen = set()
    for cycle in tree_cycles(tiny_pair, growth, temperature, rule):
        assert cycle.tree is not None
        for i, node in enumerate(cycle.tree.nodes):
            story = " ".join(node_story(cycle.tree, i))
            above = [] if node.parent < 0 else [cycle.tree.nodes[node.parent].text]
            assert f"for position {node.depth}" in story and f"choice {node.rank}" in story
            assert all(json.dumps(text)[1:-1] in story or text in story for text in above)
            from_leaves = cycle.tree.rule == "traversal"
            if node.verdict == "untested" and from_leaves:
                ending = "came to this guess."
            elif node.verdict == "untested":
                parent_kept = node.parent < 0 or node.parent in cycle.tree.path
                ending = "kept first." if parent_kept else "never reached it."
            elif cycle.greedy:
                ending = "so it was kept." if node.verdict == "accepted" else "so it was rejected."
            elif from_leaves:
                assert f"chance {prob(node.accept_prob)} of keeping that whole path" in story or (
                    f"whole path down to it was {prob(node.accept_prob)}" in story
                )
                ending = "fell below it." if node.verdict == "accepted" else "the next leaf."
            else:
                assert f"chance {prob(node.accept_prob)}" in story
                ending = "kept it." if node.verdict == "accepted" else "rejected it."
            assert story.endswith(ending), story
            seen.add(ending)
    assert len(seen) >= 2  # more than one way to end: the test reaches several branches


def test_a_six_deep_tree_and_its_next_token_fit_the_cards_at_1280(tiny_pair: TinyPair) -> None:
    """Seven columns (six depths and the token after the path) take at most 780 px, which the
    cards hold at a 1280 px window; shallower trees keep their wider chips."""
    widths = {}
    for growth in (TreeGrowth(widths=(1, 1, 1, 1, 1, 1)), TreeGrowth(widths=(2, 1))):
        for cycle in tree_cycles(tiny_pair, growth):
            html = tree_panel_html(cycle)
            width = int(re.search(r'class="sv-tree-plot" style="width:(\d+)px', html)[1])
            depth = max((node.depth for node in cycle.tree.nodes), default=0)
            widths[depth] = max(widths.get(depth, 0), width)
    assert widths[6] <= 780 and widths[2] >= 3 * 94, widths


def test_a_trace_keeps_the_tree_and_refuses_a_broken_one(tiny_pair: TinyPair) -> None:
    cycle = tree_cycles(tiny_pair, TreeGrowth(widths=(2, 2)), 1.0)[0]
    data = json.loads(json.dumps(cycle.to_dict()))
    assert cycle_from_dict(data) == cycle
    # The shape in vLLM's words: each node the sibling ranks down to it, breadth-first.
    shape = "[(0,), (1,), (0, 0), (0, 1), (1, 0), (1, 1)]"
    assert data["tree"]["speculative_token_tree"] == shape
    data["tree"]["nodes"][0]["parent"] = 1  # a node before its parent
    with pytest.raises(RecordError, match="parent"):
        cycle_from_dict(data)
    data = json.loads(json.dumps(cycle.to_dict()))
    data["tree"]["nodes"][-1]["verdict"] = "<b>won</b>"
    with pytest.raises(RecordError, match="verdict"):
        cycle_from_dict(data)


@pytest.mark.parametrize("growth", [TreeGrowth(widths=(2, 2, 1)), TreeGrowth()])
def test_the_outline_lists_every_node_under_its_parent(
    tiny_pair: TinyPair, growth: TreeGrowth
) -> None:
    """A phone's outline: every chip once, each after its parent and one level deeper, siblings
    in rank order, the kept path marked, the same verdicts as the picture."""
    for cycle in tree_cycles(tiny_pair, growth, 1.0):
        assert cycle.tree is not None
        outline = tree_panel_html(cycle).split('<ol class="sv-tree-outline">')[1]
        lines = re.findall(
            r'<li class="sv-tline( sv-tline-kept)?" data-verdict="(\w+)" data-node="(\w+)" '
            r'style="--sv-depth:(\d+)" title=',
            outline,
        )
        keys = [key for _, _, key, _ in lines]
        extra = cycle.emitted[len(cycle.tree.path) :][:1]
        nodes = [f"n{i}" for i in range(len(cycle.tree.nodes))]
        assert sorted(keys) == sorted(["root", *nodes, *["extra"] * len(extra)])
        depth = {key: int(level) for _, _, key, level in lines}
        for i, node in enumerate(cycle.tree.nodes):
            parent = "root" if node.parent < 0 else f"n{node.parent}"
            assert keys.index(parent) < keys.index(f"n{i}")
            assert depth[f"n{i}"] == depth[parent] + 1 == node.depth
            assert dict((key, verdict) for _, verdict, key, _ in lines)[f"n{i}"] == node.verdict
        for parent in range(-1, len(cycle.tree.nodes)):
            ranks = [cycle.tree.nodes[c].rank for c in cycle.tree.children(parent)]
            shown_order = sorted(cycle.tree.children(parent), key=lambda c: keys.index(f"n{c}"))
            assert [cycle.tree.nodes[c].rank for c in shown_order] == sorted(ranks)
        kept = [key for mark, _, key, _ in lines if mark]
        assert kept == ["root", *(f"n{i}" for i in cycle.tree.path), *["extra"] * len(extra)]


def test_the_outline_escapes_token_text(tiny_pair: TinyPair) -> None:
    cycle = tree_cycles(tiny_pair, TreeGrowth(widths=(2, 1)))[0]
    assert cycle.tree is not None
    node = replace(cycle.tree.nodes[0], text='<script>alert("x")</script>')
    cycle = replace(cycle, tree=replace(cycle.tree, nodes=(node, *cycle.tree.nodes[1:])))
    outline = tree_panel_html(cycle).split('<ol class="sv-tree-outline">')[1]
    assert "<script>" not in outline and "&lt;script&gt;" in outline


def test_each_guess_is_a_button_that_says_it_opens_the_inspector(tiny_pair: TinyPair) -> None:
    cycle = tree_cycles(tiny_pair, TreeGrowth(widths=(2, 1)))[0]
    assert cycle.tree is not None
    html = tree_panel_html(cycle)
    buttons = re.findall(r'data-node="(\w+)"[^>]* tabindex="0" role="button" title="([^"]*)"', html)
    assert [key for key, _ in buttons] == [f"n{i}" for i in range(len(cycle.tree.nodes))]
    assert all(title.endswith("\nclick (or Enter) to read this guess in the inspector")
               for _, title in buttons)  # fmt: skip
    # The committed text and the token after the path are no guesses: nothing to open.
    for key in ("root", "extra"):
        chip = re.search(rf'<div class="sv-tnode[^"]*" data-node="{key}"[^>]*>', html)
        assert chip is None or "tabindex" not in chip.group(0)


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_a_tree_tested_from_its_leaves_is_told_by_its_paths_chance(
    tiny_pair: TinyPair, lang: str
) -> None:
    """From the leaves up, a guess's chance is that of keeping the whole path down to it: the
    panel's rule line, the cards, the stream's sentence, the inspector's column and the CSV say
    so, where the siblings-in-turn rule says min(1, p/q)."""
    path_words = {"en": "whole path", "ja": "経路全体"}[lang]
    column = str(t_html("inspector.column.path_chance", lang))
    for rule in ("traversal", "recursive"):
        from_leaves = rule == "traversal"
        cycles = tree_cycles(tiny_pair, TreeGrowth(widths=(3, 2)), 1.0, rule)
        rows = draft_rows(cycles, lang)
        assert {row["rule"] for row in rows} - {"untested"} == (
            {"path_chance"} if from_leaves else {"min(1,p/q)"}
        )
        for cycle in cycles:
            if not cycle.drafted:
                continue
            panel = tree_panel_html(cycle, lang=lang)
            assert (t_html("tree.rule.traversal", lang) in panel) is from_leaves
            tested = [token for token in cycle.drafted if token.tested]
            for token in tested:
                assert (path_words in draft_sentence(cycle, token, lang)) is from_leaves
            inspected = inspector_html(cycle, lang=lang)
            # both tables, the drafted line's and the tree's, name the path's chance
            assert inspected.count(column) == (2 if from_leaves else 0)
            cards = cycle_cards_html(cycle, lang=lang)
            assert (t("card.path_prob", lang, accept="") in cards) is (from_leaves and bool(tested))
