"""The Watch a server tab: its outputs from a fake engine, its errors in the page's language,
and no way in at all on a hosted app (a visitor must not make the Space call any address)."""

from __future__ import annotations

import socket

import gradio as gr
import pytest
from fake_engines import FakeEngine

from specviz.app.limits import HOSTED, LOCAL
from specviz.app.watch_tab import watch_updates
from specviz.models.loader import ModelCache
from specviz.models.presets import default_preset, load_presets

PRESETS = load_presets()
PRESET = default_preset(PRESETS)


def test_the_outputs_fill_in_request_by_request() -> None:
    with FakeEngine("vllm") as url, FakeEngine("vllm", speculative=False) as base:
        outputs = list(watch_updates(PRESET, "en", url, base, ["code"], 2, "", 16, 0.0, True))
    status, figure, table = outputs[-1]
    assert "Done: 2 request(s)." in status
    names = {trace.name for trace in figure.data}
    assert {"this server (wall clock)", "baseline (wall clock)"} <= names
    assert len(figure.data) == 4  # α per request, acceptance by position, the two speeds
    assert "total" in table and f"Watching vLLM at {url}" in table and "×" in table


def test_a_typed_prompt_is_sent_instead_of_the_task_groups() -> None:
    fake = FakeEngine("vllm")
    with fake as url:
        list(watch_updates(PRESET, "en", url, "", ["code"], 1, "  Say hi.  ", 16, 0.0, True))
    assert [request["messages"][0]["content"] for request in fake.requests] == ["Say hi."] * 2


def test_a_failure_is_a_gradio_error_in_the_pages_language() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}"
    with pytest.raises(gr.Error, match="に接続できません"):
        list(watch_updates(PRESET, "ja", url, "", ["code"], 1, "", 16, 0.0, True))


def _watch_blocks(demo: gr.Blocks) -> tuple[set[str], list[str]]:
    """The watch tab's element ids, and the names of the functions its events call."""
    ids = {
        block.elem_id
        for block in demo.blocks.values()
        if str(block.elem_id or "").startswith("sv-watch")
    }
    functions = [fn.name for fn in demo.fns.values()]
    return ids, functions


@pytest.mark.parametrize("limits", [HOSTED, LOCAL], ids=["hosted", "local"])
def test_only_a_local_app_can_watch(limits) -> None:
    from specviz.app.builder import build_demo

    demo = build_demo(PRESETS, ModelCache(), limits=limits)
    ids, functions = _watch_blocks(demo)
    tabs = [block.label for block in demo.blocks.values() if isinstance(block, gr.Tab)]
    assert "Watch a server" in tabs
    if limits.hosted:
        assert ids == {"sv-watch-off"} and "watch_server" not in functions
    else:
        assert {"sv-watch-run", "sv-watch-plot", "sv-watch-table"} <= ids
        assert "sv-watch-off" not in ids and "watch_server" in functions
