"""Exactness lab reports -> Plotly figures: plain against speculative, side by side.

Pure functions of an ExactnessReport (or None before the first run), tested by reading the traces
back. Token text comes from the model and the user, and Plotly reads HTML tags in labels, so every
label goes through token_label. The words come from the text catalogue in the language given.
"""

from __future__ import annotations

import math

import plotly.graph_objects as go

from specviz.labs.exactness.experiment import Comparison, ExactnessReport, Outcome
from specviz.text import DEFAULT_LANGUAGE, t
from specviz.views.run_charts import (
    ACCEPTED,
    BONUS,
    PLAIN,
    REJECTED,
    apply_layout,
    hover,
    placeholder,
    token_label,
)

TOP_OUTCOMES = 12  # bars per chart; the rest are summed into "other"
_NAMES = {
    1: "exactness.chart.first_token",
    2: "exactness.chart.first_two",
    3: "exactness.chart.first_three",
}


def distribution_chart(
    report: ExactnessReport | None, length: int = 1, *, lang: str = DEFAULT_LANGUAGE
) -> go.Figure:
    """Empirical frequencies of the first `length` tokens, plain vs speculative, with the exact p."""
    key = _NAMES.get(length)
    name = t(key, lang) if key else t("exactness.chart.first_n", lang, n=length)
    fig = go.Figure()
    if report is None or length > len(report.comparisons):
        apply_layout(fig, t("exactness.chart.empty_title", lang, name=name), "", "")
        what = (
            t("exactness.chart.what.first", lang)
            if length == 1
            else t("exactness.chart.what.first_n", lang, n=length)
        )
        if report is None:
            note = t("exactness.chart.run_to_compare", lang, what=what)
        else:  # the last run sampled fewer tokens than this chart compares
            note = t("exactness.chart.run_with", lang, n=length, what=what)
        return placeholder(fig, note)
    comparison = report.comparisons[length - 1]
    shown, other = _top(comparison)
    labels = _unique_labels(shown) + ([t("exactness.chart.other", lang)] if other else [])
    plain = [o.plain for o in shown] + ([sum(o.plain for o in other)] if other else [])
    spec = [o.speculative for o in shown] + ([sum(o.speculative for o in other)] if other else [])
    exact = [o.exact_prob for o in shown]
    if other:  # every outcome not shown, seen or not, has the rest of the target's probability
        exact.append(max(0.0, 1.0 - sum(exact)))
    wrong = report.rule != "exact"
    spec_name = t("exactness.chart.spec_wrong" if wrong else "exactness.chart.spec", lang)
    for trace_name, colour, counts in (
        (t("exactness.chart.plain", lang), PLAIN, plain),
        (spec_name, REJECTED if wrong else ACCEPTED, spec),
    ):
        fig.add_trace(
            go.Bar(
                name=trace_name,
                x=labels,
                y=[count / report.samples for count in counts],
                customdata=counts,
                marker_color=colour,
                hovertemplate=hover(
                    "exactness.chart.hover.samples",
                    lang,
                    label="%{x}",
                    name=trace_name,
                    count="%{customdata}",
                    share="%{y:.1%}",
                ),
            )
        )
    fig.add_trace(
        go.Scatter(
            name=t("exactness.chart.exact", lang),
            x=labels,
            y=exact,
            mode="markers",
            marker={"color": BONUS, "symbol": "diamond", "size": 9},
            hovertemplate=hover("exactness.chart.hover.exact", lang, label="%{x}", p="%{y:.2%}"),
        )
    )
    test = comparison.homogeneity
    apply_layout(
        fig,
        t(
            "exactness.chart.title",
            lang,
            name=name,
            tv=f"{comparison.tv_distance:.3f}",
            noise=f"{comparison.tv_if_equal:.3f}",
            p_value=f"{test.p_value:.3g}",
            samples=f"{report.samples:,}",
        ),
        t("exactness.chart.continuation" if length > 1 else "chart.axis.token", lang),
        t("exactness.chart.frequency", lang),
    )
    fig.update_layout(barmode="group")
    fig.update_yaxes(tickformat=".0%")
    return fig


def samples_needed_chart(
    report: ExactnessReport | None, *, lang: str = DEFAULT_LANGUAGE
) -> go.Figure:
    """Samples per arm the test needs to see a difference of a given size on the first token."""
    fig = go.Figure()
    apply_layout(
        fig,
        t("exactness.needed_chart.title", lang),
        t("exactness.needed_chart.x", lang),
        t("exactness.needed_chart.y", lang),
    )
    if report is None:
        return placeholder(fig, t("exactness.needed_chart.empty", lang))
    fig.add_trace(
        go.Scatter(
            name=t("exactness.needed_chart.shift", lang),
            x=[tv for tv, _ in report.samples_needed_by_tv],
            y=[n for _, n in report.samples_needed_by_tv],
            mode="lines+markers",
            line={"color": ACCEPTED},
            hovertemplate=hover("exactness.needed_chart.hover", lang, tv="%{x}", n="%{y:,}"),
        )
    )
    if report.wrong_rule_samples_needed is not None:
        fig.add_trace(
            go.Scatter(
                name=t("exactness.needed_chart.wrong_rule", lang),
                x=[report.draft_target_tv],
                y=[report.wrong_rule_samples_needed],
                mode="markers",
                marker={"color": REJECTED, "size": 11, "symbol": "x"},
                hovertemplate=hover(
                    "exactness.needed_chart.hover", lang, tv="%{x:.3f}", n="%{y:,}"
                ),
            )
        )
    fig.add_hline(y=report.samples, line={"color": PLAIN, "dash": "dash"})
    # On a log axis Plotly reads an annotation's y as log10 of the value (a shape's y as the value
    # itself), and autoranges over annotations: given the value, the axis ran to 10^samples.
    fig.add_annotation(
        text=t("exactness.needed_chart.this_run", lang, n=f"{report.samples:,}"),
        xref="paper",
        x=1.0,
        xanchor="right",
        yref="y",
        y=math.log10(report.samples),
        yanchor="bottom",
        showarrow=False,
    )
    fig.update_xaxes(type="log")
    fig.update_yaxes(type="log", range=_log_range(_needed_values(report)))
    return fig


def _needed_values(report: ExactnessReport) -> list[int]:
    """Every sample size the samples-needed chart draws: the curve, the wrong rule, this run."""
    values = [n for _, n in report.samples_needed_by_tv] + [report.samples]
    if report.wrong_rule_samples_needed is not None:
        values.append(report.wrong_rule_samples_needed)
    return values


def _log_range(values: list[int], margin: float = 0.25) -> list[float]:
    """A log axis's range (in log10 units) around positive values, a quarter decade spare."""
    logs = [math.log10(max(value, 1)) for value in values]
    return [min(logs) - margin, max(logs) + margin]


def _top(comparison: Comparison) -> tuple[list[Outcome], list[Outcome]]:
    """The most frequent outcomes (both arms together) to show, and the rest."""
    outcomes = list(comparison.outcomes)  # already most frequent first
    if len(outcomes) <= TOP_OUTCOMES + 1:  # an "other" bar of one outcome would hide its name
        return outcomes, []
    return outcomes[:TOP_OUTCOMES], outcomes[TOP_OUTCOMES:]


def _unique_labels(outcomes: list[Outcome]) -> list[str]:
    """Escaped labels, tokens joined by ' · '; distinct ids that read alike get their ids added,
    since Plotly would otherwise merge their bars."""
    labels = [" · ".join(token_label(text) for text in outcome.token_texts) for outcome in outcomes]
    return [
        f"{label} [{','.join(map(str, outcome.token_ids))}]" if labels.count(label) > 1 else label
        for label, outcome in zip(labels, outcomes, strict=True)
    ]
