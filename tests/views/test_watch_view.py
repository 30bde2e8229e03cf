"""specviz.views.watch_view: the watch's figure and table from hand-built records, read back."""

from __future__ import annotations

from specviz.engines.records import Reply, RequestResult, SpecCounts
from specviz.engines.servers import ServerInfo
from specviz.engines.watch import WatchUpdate
from specviz.text import Phrase
from specviz.views.watch_view import table_rows, watch_chart, watch_table_html

XSS = "<img src=x onerror=alert(1)>"


def _update(baseline: bool = True, model: str = "m") -> WatchUpdate:
    server = ServerInfo("http://s:1", "vllm", model, True, True)
    base_server = ServerInfo("http://b:1", "vllm", model, False, True) if baseline else None
    results = (
        RequestResult(
            1, "code", "p", Reply(20, 1.0, None, None, ""), SpecCounts(4, 12, 9, (4, 3, 2)),
            Reply(20, 2.0, None, None, "") if baseline else None,
        ),
        RequestResult(
            2, "story", "q", Reply(10, 1.0, None, None, ""), SpecCounts(4, 12, 3, (2, 1, 0)),
            Reply(10, 1.0, None, None, "") if baseline else None,
        ),
    )  # fmt: skip
    return WatchUpdate(server, base_server, results, 2, Phrase("watch.progress.done", total=2))


def test_the_chart_before_any_request_says_what_will_appear() -> None:
    fig = watch_chart(None)
    assert not fig.data
    assert fig.layout.annotations[-1].text == "Press Watch to send the prompts to the server."


def test_the_three_panels_read_back() -> None:
    fig = watch_chart(_update())
    alpha, positions, speculative, baseline = fig.data
    assert list(alpha.y) == [0.75, 0.25] and list(alpha.text) == ["75%", "25%"]
    # Over both requests: 8 steps, accepted at positions 1, 2, 3: 6, 4, 2 times.
    assert list(positions.y) == [6 / 8, 4 / 8, 2 / 8]
    assert list(speculative.y) == [20.0, 10.0] and list(baseline.y) == [10.0, 10.0]
    assert fig.layout.shapes[0].y0 == 12 / 24  # the pooled α: 12 accepted of 24 drafted


def test_unknown_numbers_are_dashes_never_zeros() -> None:
    sglang = RequestResult(
        1, "code", "p", Reply(15, 1.0, None, None, ""), SpecCounts(drafts=4, accepted=10)
    )
    update = WatchUpdate(
        ServerInfo("u", "sglang", "m", None, True),
        None,
        (sglang,),
        1,
        Phrase("watch.progress.done", total=1),
    )
    headers, rows = table_rows(update.results, update.totals, "en")
    assert "baseline tok/s" not in headers
    assert rows[0][3:8] == ["4", "–", "10", "–", "3.50"]
    fig = watch_chart(update)
    assert fig.data[0].text == ("–",)
    assert any(note.text == "not counted by this server" for note in fig.layout.annotations)


def test_the_table_gives_the_speedup_and_totals() -> None:
    headers, rows = table_rows(_update().results, _update().totals, "en")
    assert headers[-2:] == ["baseline tok/s", "speedup"]
    assert rows[0][-2:] == ["10.0", "2.00×"]
    assert rows[-1][0] == "total" and rows[-1][-2:] == ["10.0", "1.50×"]  # 30 tok/2 s, 30/3 s


def test_a_servers_model_name_is_escaped() -> None:
    update = _update(model=XSS)
    assert XSS not in watch_table_html(update)
    assert XSS not in watch_chart(update).layout.title.text


def test_words_follow_the_language() -> None:
    assert "合計" in watch_table_html(_update(), lang="ja")
    assert (
        watch_chart(_update(), lang="ja").layout.annotations[0].text
        == "リクエストごとの α（- - 全体）"
    )
