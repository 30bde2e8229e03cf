"""specviz.views.run_charts: figures built from hand-built events, read back trace by trace."""

from __future__ import annotations

import json

import pytest
from ui_events import REJECTION, plain_run, sample_run

from specviz.views import run_charts as charts


def test_acceptance_rate_by_draft_position():
    fig = charts.acceptance_by_position(sample_run())
    (bar,) = fig.data
    assert list(bar.x) == [1, 2, 3, 4]
    # Position 1 tested 3 times (accepted in cycles 1 and 2), 2 twice, 3 twice, 4 once;
    # the untested tail of cycle 1 does not count.
    assert list(bar.text) == ["2/3", "2/2", "1/2", "1/1"]
    assert list(bar.y) == pytest.approx([2 / 3, 1.0, 0.5, 1.0])
    assert fig.layout.xaxis.title.text == "draft position"
    assert fig.layout.yaxis.title.text == "accepted / tested"


def test_histogram_of_accepted_length_per_cycle():
    fig = charts.accepted_length_histogram(sample_run())
    (bar,) = fig.data
    assert list(bar.x) == [0, 1, 2, 3, 4]
    assert list(bar.y) == [1, 0, 1, 0, 1]  # cycles kept 2, 4 and 0 drafts
    assert fig.layout.xaxis.title.text == "accepted tokens in the cycle"


def test_cumulative_tokens_against_target_passes():
    fig = charts.tokens_vs_passes(sample_run())
    spec, plain = fig.data
    assert spec.name == "speculative"
    assert list(spec.x) == [0, 1, 2, 3] and list(spec.y) == [0, 3, 8, 9]
    assert plain.name == "plain decoding (1 token per pass)"
    assert list(plain.x) == list(plain.y) == [0, 9]
    raced = charts.tokens_vs_passes(sample_run(), plain_run(4))
    assert raced.data[1].name == "plain decoding (measured)"
    assert list(raced.data[1].x) == list(raced.data[1].y) == [0, 1, 2, 3, 4]
    assert fig.layout.xaxis.title.text == "target forward passes"


def test_time_split_per_cycle_is_stacked_draft_verify_overhead():
    fig = charts.time_split(sample_run())
    assert [trace.name for trace in fig.data] == ["draft", "verify", "overhead"]
    draft, verify, overhead = fig.data
    assert list(draft.x) == [1, 2, 3]
    assert list(draft.y) == pytest.approx([30, 40, 20])
    assert list(verify.y) == pytest.approx([90, 100, 70])
    assert list(overhead.y) == pytest.approx([5, 10, 10])
    assert fig.layout.barmode == "stack"
    assert fig.layout.yaxis.title.text == "milliseconds"


def test_rejection_chart_shows_p_q_and_residual_with_escaped_labels():
    fig = charts.rejection_chart(REJECTION)
    assert [trace.name for trace in fig.data] == [
        "p (target)",
        "q (draft)",
        "residual max(0, p − q), normalised",
    ]
    p_bar, q_bar, residual = fig.data
    # Ordered by p; the replacement is marked ↻ and the rejected guess ✗; markup is escaped.
    assert list(p_bar.x) == ["&lt;img␣src=x␣onerror=alert(1)&gt; ↻", "␣cat ✗", "↵"]
    assert list(p_bar.y) == pytest.approx([0.5, 0.2, 0.1])
    assert list(q_bar.y) == pytest.approx([0.1, 0.7, 0.0])
    assert list(residual.y) == pytest.approx([0.9, 0.0, 0.1])
    assert "draft 3" in fig.layout.title.text
    # The hover reads each probability as the cards do; "—" where none was recorded.
    assert list(q_bar.customdata) == ["0.10", "0.70", "—"]
    assert "q (draft) = %{customdata}" in q_bar.hovertemplate


def test_empty_inputs_give_empty_figures_with_a_note():
    for fig in (
        charts.acceptance_by_position([]),
        charts.accepted_length_histogram([]),
        charts.time_split([]),
        charts.rejection_chart(None),
    ):
        assert fig.layout.annotations, "an empty chart should say why it is empty"


def test_labels_escape_tags_but_show_quotes_as_typed():
    # Plotly interprets tags in labels but prints entities like &quot; literally.
    assert charts.token_label('"""<b>') == '"""&lt;b&gt;'
    assert charts.token_label(" x\n") == "␣x↵"


def test_each_per_run_point_names_what_it_stands_for():
    """The page lights a hovered token's points and moves the player to a clicked point's cycle
    from each trace's meta link and its points' customdata, never from x."""
    run = sample_run()  # three cycles, which kept 2, 4 and 0 drafts
    tokens = charts.tokens_vs_passes(run, plain_run(4)).data
    assert tokens[0].meta == {"link": charts.LINK_CYCLE}
    assert list(tokens[0].customdata) == [None, 1, 2, 3]  # the origin is no cycle's
    assert tokens[1].meta is None and tokens[1].customdata is None  # plain decoding: no cycle
    for bar in charts.time_split(run).data:
        assert bar.meta == {"link": "cycle"} and list(bar.customdata) == [1, 2, 3]
    (by_position,) = charts.acceptance_by_position(run).data
    assert by_position.meta == {"link": charts.LINK_POSITION}
    assert list(by_position.customdata) == [1, 2, 3, 4]
    (lengths,) = charts.accepted_length_histogram(run).data
    assert lengths.meta == {"link": charts.LINK_ACCEPTED}
    assert list(lengths.customdata) == [0, 1, 2, 3, 4]
    # The hover keeps its own words: the counts and the rate, not the customdata.
    assert "%{customdata}" not in by_position.hovertemplate
    # Replayed by the player at cycle 2, the charts carry cycles 1 and 2 only.
    assert list(charts.time_split(run[:2]).data[0].customdata) == [1, 2]
    # What the page reads is in the figure's JSON, as Gradio sends it.
    sent = json.loads(charts.time_split(run).to_json())["data"][0]
    assert sent["meta"] == {"link": "cycle"} and sent["customdata"] == [1, 2, 3]
