"""The advisor as a Plotly figure: each candidate's speedup against its acceptance rate α.

Above the dashed line at 1 a candidate beats plain decoding; below it, speculation costs more than
it saves. Each proposer (drafter and draft format) has one colour, so its γ values read as a group,
and the points are labelled with their γ. Where speculation lands depends on α (how often the
draft is right) and on the costs (what a draft step and a verification cost on this machine): two
candidates at the same α differ only by their costs.
"""

from __future__ import annotations

import plotly.graph_objects as go

from specviz.labs.advisor.advice import Advice
from specviz.text import DEFAULT_LANGUAGE, t
from specviz.views.run_charts import apply_layout, hover, placeholder, reference_line

# One colour per proposer, in order (Okabe-Ito, as the token stream).
_COLOURS = ("#0072B2", "#009E73", "#D55E00", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000")


def advice_chart(advice: Advice | None, *, lang: str = DEFAULT_LANGUAGE) -> go.Figure:
    """Speedup over plain decoding against α, one trace per proposer, and the break-even line."""
    title = t("advisor.chart.title", lang)
    x_title, y_title = t("advisor.chart.x", lang), t("advisor.chart.y", lang)
    if advice is None or not advice.verdicts:
        empty = apply_layout(go.Figure(), title, x_title, y_title)
        return placeholder(empty, t("advisor.chart.empty", lang))
    fig = apply_layout(go.Figure(), title, x_title, y_title)
    proposers = list(dict.fromkeys(v.candidate.proposer for v in advice.verdicts))
    for index, proposer in enumerate(proposers):
        own = [v for v in advice.verdicts if v.candidate.proposer == proposer]
        gammas = [v.candidate.setting_words for v in own]
        fig.add_trace(
            go.Scatter(
                name=proposer,
                x=[v.alpha for v in own],
                y=[v.speedup for v in own],
                text=gammas,
                mode="markers+text",
                textposition="top center",
                marker={"size": 10, "color": _COLOURS[index % len(_COLOURS)]},
                customdata=[[v.tau, v.tokens_per_s] for v in own],
                hovertemplate=hover(
                    "advisor.chart.hover",
                    lang,
                    proposer=proposer,
                    gamma="%{text}",
                    alpha="%{x:.0%}",
                    speedup="%{y:.2f}",
                    tau="%{customdata[0]:.2f}",
                    tps="%{customdata[1]:.2f}",
                ),
            )
        )
    fig.add_trace(
        reference_line(t("advisor.chart.break_even", lang), [0.0, 1.0], [1.0, 1.0], dash="dash")
    )
    top = max(v.speedup for v in advice.verdicts)
    fig.update_xaxes(range=[-0.02, 1.05], tickformat=".0%")
    fig.update_yaxes(range=[0, max(1.2, top * 1.15)])
    fig.update_layout(height=380)
    return fig
