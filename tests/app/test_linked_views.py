"""The live tab's linked views, server side, without models: a click on the stream (a token, or a
chart's point the page passes on) moves the player to its cycle and stays on the live tab; the
inspector opens only on the cards' own action; what a page sends is checked before it is used."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import gradio as gr
import pytest
from ui_events import sample_run

from specviz.app.builder import build_demo, page_script
from specviz.app.lab_tabs import NODE_CLICK_JS
from specviz.app.live_tab import STREAM_JS
from specviz.app.page_events import sent_number
from specviz.app.session import Session
from specviz.models.loader import ModelCache
from specviz.models.presets import load_presets


@pytest.fixture(scope="module")
def demo() -> gr.Blocks:
    return build_demo(load_presets(), ModelCache())  # no model is loaded to build it


def handler(demo: gr.Blocks, name: str) -> Any:
    """The one event whose function is *name*."""
    (found,) = [fn for fn in demo.fns.values() if getattr(fn.fn, "__name__", "") == name]
    return found


def by_id(demo: gr.Blocks, elem_id: str) -> Any:
    (found,) = [block for block in demo.blocks.values() if block.elem_id == elem_id]
    return found


def clicked(data: Any) -> gr.EventData:
    """The event a page's trigger('click', data) arrives as."""
    return gr.EventData(None, data)


VISITOR = SimpleNamespace(session_hash="visitor")


def test_a_click_on_the_stream_moves_the_player_and_stays_on_the_live_tab(demo) -> None:
    event = handler(demo, "show_cycle")
    assert event.targets == [(by_id(demo, "sv-stream")._id, "click")]
    ids = [block.elem_id for block in event.outputs]
    assert "sv-player-position" in ids and "sv-cards" in ids and "sv-tabs" not in ids
    # Nothing that a click on the stream starts brings another tab forward.
    stream = by_id(demo, "sv-stream")._id
    for fn in demo.fns.values():
        if (stream, "click") in fn.targets:
            assert "sv-tabs" not in [block.elem_id for block in fn.outputs]

    sess = Session(cycles=sample_run())
    update = event.fn(sess, clicked({"cycle": 2}), VISITOR)
    shown = {block.elem_id: value for block, value in update.items() if block.elem_id}
    assert shown["sv-player-position"] == 2  # Back and Forward step on from here
    assert 'class="sv-cards-wrap" data-cycle="2"' in shown["sv-cards"]
    assert 'data-cycles="2"' in shown["sv-stream"]  # the run as it stood after cycle 2
    assert "Cycle 2 of 3" in shown["sv-status"]
    # A cycle past the run's end shows its last; one before the start, its first.
    for sent, at in ((99, 3), (0, 1), (-4, 1), (2.0, 2)):
        update = event.fn(sess, clicked({"cycle": sent}), VISITOR)
        assert update[by_id(demo, "sv-player-position")] == at, sent


@pytest.mark.parametrize("data", [None, {}, {"cycle": "2"}, {"cycle": True}, {"cycle": 1.5}])
def test_a_click_that_sent_no_cycle_moves_nothing(demo, data) -> None:
    event = handler(demo, "show_cycle")
    assert event.fn(Session(cycles=sample_run()), clicked(data), VISITOR) == {}


def test_a_click_before_any_run_says_there_is_nothing_to_play(demo) -> None:
    event = handler(demo, "show_cycle")
    update = event.fn(None, clicked({"cycle": 1}), VISITOR)
    assert list(update) == [by_id(demo, "sv-status")]
    assert "sv-player-position" not in [block.elem_id for block in update]


def test_the_inspector_opens_on_the_cards_inspect_action_at_its_cycle(demo) -> None:
    event = handler(demo, "inspect_in_cards")
    assert event.targets == [(by_id(demo, "sv-cards")._id, "click")]
    sess = Session(cycles=sample_run())
    update = event.fn(sess, clicked({"cycle": 2}))
    shown = {block.elem_id: value for block, value in update.items()}
    assert shown["sv-tabs"].selected == "inspector"
    assert shown["sv-inspect-cycle"].value == 2
    assert 'data-cycle="2"' in shown["sv-inspect"]
    # A tree node's click sends its node too; a click that sent no cycle opens nothing.
    assert event.fn(sess, clicked({"cycle": 2, "node": 0}))[by_id(demo, "sv-tabs")]
    for nothing in (None, {}, {"node": 0}, {"cycle": "2"}):
        assert event.fn(sess, clicked(nothing)) == {}, nothing
    assert event.fn(None, clicked({"cycle": 1})) == {}


def test_the_page_scripts_agree_on_how_a_chart_click_reaches_the_stream() -> None:
    script = page_script()
    assert script.startswith("() => {") and script.rstrip().endswith("}")
    assert "sv-show-cycle" in script and "sv-show-cycle" in STREAM_JS  # sent there, heard here
    assert "plotly_click" in script and "selectedpoints" in script
    assert "sv-inspect-open" in NODE_CLICK_JS and "trigger('click'" in STREAM_JS


@pytest.mark.parametrize(
    ("data", "number"),
    [
        ({"cycle": 3}, 3),
        ({"cycle": 3.0}, 3),
        ({"cycle": 3.5}, None),
        ({"cycle": float("nan")}, None),
        ({"cycle": float("inf")}, None),
        ({"cycle": False}, None),
        ({"cycle": "3"}, None),
        ({"cycle": None}, None),
        ({}, None),
        (None, None),
    ],
)
def test_only_a_whole_number_sent_by_the_page_is_read(data, number) -> None:
    assert sent_number(clicked(data), "cycle") == number
