"""A watched server's records -> a Plotly figure and an HTML table.

Three panels side by side: α per request (with the pooled α as a line), acceptance by draft
position over every request (where the server counts it: vLLM, llama-server with --metrics),
and tokens/s per request, the watched server's beside the baseline's, with the server's own
decoding speed as points where it reports one. Words come from the catalogue in the language
given; a number the server did not report is shown as a dash, never as zero.
"""

from __future__ import annotations

import html

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from specviz.engines.records import RequestResult, SpecCounts, WatchTotals
from specviz.engines.watch import WatchUpdate
from specviz.models.presets import task_label
from specviz.text import DEFAULT_LANGUAGE, t
from specviz.views.panels import panel_html, table_html
from specviz.views.run_charts import (
    ACCEPTED,
    BONUS,
    DRAFT_TIME,
    PLAIN,
    TAU,
    apply_layout,
    empty_note,
    hover,
)

_PANELS = ("watch.chart.alpha", "watch.chart.positions", "watch.chart.tps")
UNKNOWN = "–"


def _share(value: float | None) -> str:
    return UNKNOWN if value is None else f"{value:.0%}"


def _number(value: float | None, digits: int = 2) -> str:
    return UNKNOWN if value is None else f"{value:.{digits}f}"


def _count(value: int | None) -> str:
    return UNKNOWN if value is None else str(value)


def watch_chart(update: WatchUpdate | None, *, lang: str = DEFAULT_LANGUAGE) -> go.Figure:
    """The three panels for the requests so far; a placeholder note before the first."""
    titles = [t(key, lang) for key in _PANELS]
    fig = make_subplots(rows=1, cols=3, subplot_titles=titles, horizontal_spacing=0.08)
    title = t("watch.chart.title", lang)
    if update is not None:
        server = update.server
        # The model's name is the server's to choose, and Plotly reads tags in a title.
        model = html.escape(server.model or UNKNOWN, quote=False)
        title = t("watch.chart.title_run", lang, kind=server.kind_name, model=model)
    apply_layout(fig, title, "", "")
    fig.update_layout(height=340, margin={"t": 70})
    results = update.results if update is not None else ()
    if not results:
        fig.update_xaxes(visible=False)
        fig.update_yaxes(visible=False)
        empty_note(fig, t("watch.chart.empty", lang))
        return fig
    assert update is not None
    _alpha_panel(fig, results, update.totals, lang)
    _position_panel(fig, update.totals, lang)
    _speed_panel(fig, results, lang)
    return fig


def _alpha_panel(
    fig: go.Figure, results: tuple[RequestResult, ...], totals: WatchTotals, lang: str
) -> None:
    numbers = [result.index for result in results]
    alphas = [result.counts.alpha for result in results]
    fig.add_trace(
        go.Bar(
            name=t("watch.chart.alpha", lang),
            x=numbers,
            y=[value if value is not None else 0.0 for value in alphas],
            marker_color=ACCEPTED,
            text=[_share(value) for value in alphas],
            textposition="outside",
            customdata=[task_label(result.task, lang) for result in results],
            hovertemplate=hover(
                "watch.chart.hover.alpha", lang, index="%{x}", task="%{customdata}", alpha="%{text}"
            ),
            showlegend=False,
        ),
        row=1,
        col=1,
    )
    pooled = totals.counts.alpha
    if pooled is not None:
        fig.add_hline(y=pooled, line={"color": PLAIN, "dash": "dash", "width": 1.5}, row=1, col=1)
    fig.update_xaxes(title_text=t("watch.chart.request", lang), dtick=1, row=1, col=1)
    fig.update_yaxes(range=[0, 1.15], tickformat=".0%", row=1, col=1)


def _position_panel(fig: go.Figure, totals: WatchTotals, lang: str) -> None:
    rates = totals.counts.position_rates
    fig.update_xaxes(title_text=t("watch.chart.position", lang), dtick=1, row=1, col=2)
    fig.update_yaxes(range=[0, 1.15], tickformat=".0%", row=1, col=2)
    if not rates:
        fig.add_annotation(
            text=t("watch.chart.no_positions", lang),
            showarrow=False,
            xref="x2 domain",
            yref="y2 domain",
            x=0.5,
            y=0.5,
        )
        return
    fig.add_trace(
        go.Bar(
            name=t("watch.chart.positions", lang),
            x=list(range(1, len(rates) + 1)),
            y=list(rates),
            marker_color=TAU,
            text=[f"{rate:.0%}" for rate in rates],
            textposition="outside",
            hovertemplate=hover(
                "watch.chart.hover.position", lang, position="%{x}", rate="%{text}"
            ),
            showlegend=False,
        ),
        row=1,
        col=2,
    )


def _speed_panel(fig: go.Figure, results: tuple[RequestResult, ...], lang: str) -> None:
    numbers = [result.index for result in results]
    series = [
        ("watch.chart.speculative", [r.reply.wall_tps for r in results], DRAFT_TIME),
    ]
    if all(result.baseline is not None for result in results):
        baseline = [r.baseline.wall_tps if r.baseline is not None else 0.0 for r in results]
        series.append(("watch.chart.baseline", baseline, PLAIN))
    for key, values, colour in series:
        name = t(key, lang)
        fig.add_trace(
            go.Bar(
                name=name,
                x=numbers,
                y=values,
                marker_color=colour,
                hovertemplate=hover(
                    "watch.chart.hover.tps", lang, name=name, index="%{x}", tps="%{y:.1f}"
                ),
            ),
            row=1,
            col=3,
        )
    own = [result.reply.server_tps for result in results]
    if any(value is not None for value in own):
        name = t("watch.chart.server_own", lang)
        fig.add_trace(
            go.Scatter(
                name=name,
                x=numbers,
                y=own,
                mode="markers",
                marker={"color": BONUS, "size": 9, "symbol": "diamond"},
                hovertemplate=hover(
                    "watch.chart.hover.tps", lang, name=name, index="%{x}", tps="%{y:.1f}"
                ),
            ),
            row=1,
            col=3,
        )
    fig.update_layout(barmode="group")
    fig.update_xaxes(title_text=t("watch.chart.request", lang), dtick=1, row=1, col=3)
    fig.update_yaxes(title_text=t("watch.chart.tps_axis", lang), rangemode="tozero", row=1, col=3)


def table_rows(
    results: tuple[RequestResult, ...], totals: WatchTotals, lang: str
) -> tuple[list[str], list[list[str]]]:
    """The table's headers and rows (one per request, then the totals): what the app shows as
    HTML and the command line prints as text."""
    baseline = bool(results) and all(result.baseline is not None for result in results)
    headers = [
        t(key, lang)
        for key in (
            "watch.column.request",
            "watch.column.task",
            "watch.column.tokens",
            "watch.column.drafts",
            "watch.column.drafted",
            "watch.column.accepted",
            "watch.column.alpha",
            "watch.column.tau",
            "watch.column.wall_tps",
            "watch.column.server_tps",
        )
    ]
    if baseline:
        headers += [t("watch.column.baseline_tps", lang), t("watch.column.speedup", lang)]
    rows = [
        _row(
            [str(result.index), task_label(result.task, lang), str(result.reply.new_tokens)],
            result.counts,
            (result.reply.wall_tps, result.reply.server_tps),
            (result.baseline.wall_tps, result.speedup) if result.baseline is not None else None,
        )
        for result in results
    ]
    if results:
        speeds, base = totals.speeds, totals.baseline
        label = [t("watch.total", lang), "", str(speeds.tokens)]
        pooled = (base.wall_tps, totals.speedup) if base is not None else None
        rows.append(_row(label, totals.counts, (speeds.wall_tps, speeds.server_tps), pooled))
    if not baseline:
        rows = [row[: len(headers)] for row in rows]
    return headers, rows


def _row(
    label: list[str],
    counts: SpecCounts,
    speeds: tuple[float, float | None],
    baseline: tuple[float, float | None] | None,
) -> list[str]:
    """One line of the table: its label cells, the counts and measures, the speeds."""
    cells = [
        *label,
        _count(counts.drafts),
        _count(counts.drafted),
        _count(counts.accepted),
        _share(counts.alpha),
        _number(counts.mean_acceptance_length),
        _number(speeds[0], 1),
        _number(speeds[1], 1),
    ]
    if baseline is not None:
        cells += [_number(baseline[0], 1), _times(baseline[1])]
    return cells


def _times(value: float | None) -> str:
    return UNKNOWN if value is None else f"{value:.2f}×"


def watch_table_html(update: WatchUpdate | None, *, lang: str = DEFAULT_LANGUAGE) -> str:
    """The requests so far and their totals as a table, with the servers above it."""
    if update is None:
        return ""
    headers, rows = table_rows(update.results, update.totals, lang)
    lines = [server_line(update, lang)]
    if update.baseline is not None:
        lines.append(baseline_line(update, lang))
    lines += [warning.text(lang) for warning in update.warnings]
    return panel_html(lines, table_html(headers, rows) if update.results else "")


def server_line(update: WatchUpdate, lang: str) -> str:
    """Which server was watched, in words."""
    server = update.server
    return t(
        "watch.server", lang, kind=server.kind_name, url=server.url, model=server.model or UNKNOWN
    )


def baseline_line(update: WatchUpdate, lang: str) -> str:
    """Which server was the baseline, in words."""
    base = update.baseline
    assert base is not None
    return t("watch.baseline", lang, kind=base.kind_name, url=base.url, model=base.model or UNKNOWN)
