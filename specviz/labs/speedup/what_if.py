"""What if α, γ or c were different? The speedup model redrawn in the browser, the run kept fixed.

The chart is built here in Python, at the run's own α, c and γ, with the lab's measured points; its
layout carries what the browser needs to redraw it (the γ axis, v(γ), the sentence templates) in
``layout.meta``. Moving a slider runs ``REDRAW_JS`` in the page: no request reaches the server, and
only the model's traces move; the measured points stay where they were measured.

The maths is Leviathan et al. (2023)'s, as specviz.core.cost_model states it: τ = (1 − α^(γ+1)) /
(1 − α) expected tokens per target pass (eq. 1) and S = τ / (γ·c + v(γ)) the speedup (with v = 1 the
paper's (1 − α^(γ+1)) / ((1 − α)(γc + 1))). ``MODEL_JS`` is the same sum in JavaScript; a test
evaluates it, and the whole redraw, in chromium against the Python at many points, so the two
cannot drift apart.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from specviz.labs.speedup.charts import no_gain_line
from specviz.labs.speedup.theory import (
    ALL_GAMMAS,
    MeasuredRun,
    SpeedupLab,
    SpeedupRow,
    best_speedup_row,
    speedup_rows,
)
from specviz.text import DEFAULT_LANGUAGE, t
from specviz.views.run_charts import ACCEPTED, BONUS, REJECTED, TAU, hover
from specviz.views.run_charts import apply_layout as layout

# The theory chart's colours, so the model at the run's values reads as the same line there.
WHAT_IF, MEASURED = ACCEPTED, REJECTED
# Before any run: a draft that is accepted 80% of the time and costs a tenth of a target step,
# verification free (v = 1), as in the paper's Theorem 3.8.
PAPER_ALPHA, PAPER_COST, PAPER_GAMMA = 0.8, 0.1, 5
_HEADROOM = 1.1  # the axes reach this far above the highest point drawn
# α and c start at the run's values to this many places (the sliders' step): fine enough that the
# model at reset matches the theory chart's to the hundredth.
SLIDER_DIGITS = 3


@dataclass(frozen=True)
class WhatIf:
    """What the what-if chart is drawn and redrawn from: v(γ) for each γ on the axis, the run's
    α, c and γ (the sliders' starting point) and the measured points it keeps fixed."""

    verify: tuple[tuple[int, float], ...]  # (γ, v(γ)): measured on this device, or 1 before a run
    alpha: float  # rounded to the slider's step, so the first drawing is what the sliders say
    cost: float
    gamma: int
    measured: tuple[MeasuredRun, ...] = ()

    @property
    def speedup_top(self) -> float:
        """The speedup axis's least height: the run's curve and points fit, and a slider moving the
        curve down leaves the points where they are."""
        curve = [row.speedup for row in self.rows(self.alpha, self.cost)]
        return _HEADROOM * max(1.0, *curve, *(run.speedup for run in self.measured))

    @property
    def tau_top(self) -> float:
        """The τ axis's least height, likewise."""
        curve = [row.tau for row in self.rows(self.alpha, self.cost)]
        return _HEADROOM * max(1.0, *curve, *(run.tau for run in self.measured))

    def rows(self, alpha: float, cost: float) -> tuple[SpeedupRow, ...]:
        """The model at every γ on the axis for this α and c (theory.speedup_rows)."""
        return speedup_rows(alpha, cost, {gamma: (v, False) for gamma, v in self.verify})


def from_lab(lab: SpeedupLab) -> WhatIf:
    """Start from what the lab measured: its pooled α, its c, v(γ) from its cost curve, and the γ
    whose measured speedup was highest."""
    theory = lab.theory
    fastest = max(lab.runs, key=lambda run: run.speedup, default=None)
    return WhatIf(
        verify=tuple((row.gamma, row.verify_cost) for row in theory.rows),
        alpha=round(theory.alpha, SLIDER_DIGITS),
        cost=round(theory.draft_cost, SLIDER_DIGITS),
        gamma=fastest.gamma if fastest else theory.best_gamma,
        measured=lab.runs,
    )


def paper_default() -> WhatIf:
    """Before a run: the paper's model with free verification and nothing measured."""
    return WhatIf(tuple((gamma, 1.0) for gamma in ALL_GAMMAS), PAPER_ALPHA, PAPER_COST, PAPER_GAMMA)


def cost_limit(cost: float) -> float:
    """The c slider's maximum: 2 target steps, or more if the run's own c is higher."""
    return float(max(2, math.ceil(cost)))


def what_if_chart(
    what_if: WhatIf,
    alpha: float | None = None,
    gamma: int | None = None,
    cost: float | None = None,
    *,
    lang: str = DEFAULT_LANGUAGE,
) -> go.Figure:
    """Speedup and τ against γ for α and c (default: the run's), the chosen γ and the best γ
    marked, the run's measured points fixed; ``REDRAW_JS`` makes the same figure for other α, γ, c
    in the browser."""
    alpha = what_if.alpha if alpha is None else alpha
    cost = what_if.cost if cost is None else cost
    rows = what_if.rows(alpha, cost)
    best = best_speedup_row(rows)
    chosen = _row_at(rows, what_if.gamma if gamma is None else gamma) or best
    gammas = [row.gamma for row in rows]
    curve_key = "speedup.whatif.curve" if what_if.measured else "speedup.whatif.curve_paper"
    texts = _texts(curve_key, lang)
    numbers = _numbers(alpha, cost, chosen)

    def named(part: str, **values: object) -> str:
        return _fill(texts[part], {**numbers, **values})

    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, row_heights=[0.64, 0.36])
    layout(fig, named("title"), "", t("speedup.chart.y", lang))
    fig.add_trace(no_gain_line(gammas, lang, meta="no_gain"))
    model_lines = (
        ("curve", [row.speedup for row in rows], WHAT_IF, 3, "speedup.whatif.hover", 1),
        ("tau", [row.tau for row in rows], TAU, 2, "speedup.chart.hover.tau", 2),
    )
    for tag, y, colour, width, hover_key, panel in model_lines:
        fields = {"gamma": "%{x}", "speedup" if panel == 1 else "tau": "%{y:.2f}"}
        fig.add_trace(
            go.Scatter(
                meta=tag,
                name=named(tag),
                x=gammas,
                y=y,
                mode="lines",
                line={"color": colour, "width": width},
                hovertemplate=hover(hover_key, lang, **fields),
            ),
            row=panel,
            col=1,
        )
    ring = {"symbol": "circle-open", "size": 15, "color": WHAT_IF, "line": {"width": 3}}
    star = {"symbol": "star", "size": 16, "color": BONUS}
    best_name = named("best", gamma=best.gamma, speedup=f"{best.speedup:.2f}")
    markers = (
        ("chosen", named("chosen"), chosen.gamma, chosen.speedup, ring, 1),
        ("chosen_tau", "", chosen.gamma, chosen.tau, ring, 2),
        ("best", best_name, best.gamma, best.speedup, star, 1),
    )
    for tag, name, x, y_value, style, panel in markers:
        fig.add_trace(
            go.Scatter(
                meta=tag,
                name=name,
                x=[x],
                y=[y_value],
                mode="markers",
                marker=style,
                showlegend=panel == 1,
                hoverinfo="skip",
            ),
            row=panel,
            col=1,
        )
    _measured_points(fig, what_if.measured, lang)
    top = max(what_if.speedup_top, _HEADROOM * best.speedup)
    fig.update_yaxes(range=[0, top], row=1, col=1)
    top_tau = max(what_if.tau_top, _HEADROOM * max(row.tau for row in rows))
    fig.update_yaxes(title_text=t("speedup.chart.tau_axis", lang), range=[0, top_tau], row=2, col=1)
    fig.update_xaxes(title_text=t("speedup.chart.gamma_axis", lang), dtick=1, row=2, col=1)
    meta = {
        "gammas": gammas,
        "verify": [v for _, v in what_if.verify],
        "start": {"alpha": what_if.alpha, "gamma": what_if.gamma, "cost": what_if.cost},
        "speedup_top": what_if.speedup_top,
        "tau_top": what_if.tau_top,
        "headroom": _HEADROOM,
        "text": texts,
    }
    fig.update_layout(height=460, meta={"whatif": meta})
    return fig


def _row_at(rows: Sequence[SpeedupRow], gamma: int) -> SpeedupRow | None:
    return next((row for row in rows if row.gamma == gamma), None)


def _measured_points(fig: go.Figure, runs: Sequence[MeasuredRun], lang: str) -> None:
    """The lab's measured speedups and τ, where they were measured: no slider moves them."""
    if not runs:
        return
    series = (
        ("speedup.chart.measured", [run.speedup for run in runs], "diamond", 12, MEASURED, 1),
        ("speedup.chart.measured_tau", [run.tau for run in runs], "square", 9, TAU, 2),
    )
    for key, y, symbol, size, colour, panel in series:
        fig.add_trace(
            go.Scatter(
                meta="measured",
                name=t(key, lang),
                x=[run.gamma for run in runs],
                y=y,
                mode="markers",
                marker={"symbol": symbol, "size": size, "color": colour},
                hovertemplate=hover(
                    "speedup.whatif.hover.measured", lang, gamma="%{x}", value="%{y:.2f}"
                ),
            ),
            row=panel,
            col=1,
        )


def _numbers(alpha: float, cost: float, chosen: SpeedupRow) -> dict[str, object]:
    """The numbers the what-if's sentences quote, formatted as REDRAW_JS formats them."""
    return {
        "alpha": f"{alpha:.2f}",
        "cost": f"{cost:.2f}",
        "gamma": chosen.gamma,
        "tau": f"{chosen.tau:.2f}",
        "speedup": f"{chosen.speedup:.2f}",
    }


def _texts(curve_key: str, lang: str) -> dict[str, str]:
    """The what-if's sentences as templates, their fields left as {alpha}, {gamma}, ...: filled
    here for the first drawing and by REDRAW_JS in the browser after (both with ``fill``'s rule)."""
    a, c, g, tau, s = "{alpha}", "{cost}", "{gamma}", "{tau}", "{speedup}"
    return {
        "title": t("speedup.whatif.title", lang, alpha=a, cost=c, gamma=g, tau=tau, speedup=s),
        "curve": t(curve_key, lang, alpha=a, cost=c),
        "tau": t("speedup.whatif.tau", lang, alpha=a),
        "chosen": t("speedup.whatif.chosen", lang, gamma=g, speedup=s),
        "best": t("speedup.chart.best", lang, gamma=g, speedup=s),
    }


def _fill(template: str, values: dict[str, object]) -> str:
    """{name} -> values[name], as ``fill`` in _FIGURE_JS does."""
    return re.sub(r"\{(\w+)\}", lambda match: str(values[match.group(1)]), template)


# --- In the browser ------------------------------------------------------------------------------

# The model, term for term as specviz.core.cost_model computes it: τ summed as the geometric series
# (exact at α = 1, where τ = γ + 1), S = τ / (γ·c + v).
MODEL_JS = """
function tokensPerPass(alpha, gamma) {
  let tau = 0;
  for (let i = 0; i <= gamma; i++) tau += alpha ** i;
  return tau;
}
function predictedSpeedup(alpha, gamma, cost, verify) {
  return tokensPerPass(alpha, gamma) / (gamma * cost + verify);
}
"""

# The figure for other α, γ, c: the model's traces, names and title recomputed from layout.meta;
# the measured traces untouched. The best γ is the smallest among ties, as best_speedup_row picks.
_FIGURE_JS = """
function fill(template, values) {
  return template.replace(/\\{(\\w+)\\}/g, (whole, name) => String(values[name]));
}
function redrawFigure(fig, alpha, gamma, cost) {
  const meta = fig.layout.meta.whatif;
  const rows = meta.gammas.map((g, i) => ({
    gamma: g,
    tau: tokensPerPass(alpha, g),
    speedup: predictedSpeedup(alpha, g, cost, meta.verify[i]),
  }));
  let best = rows[0];
  for (const row of rows) if (row.speedup > best.speedup) best = row;
  const chosen = rows.find((row) => row.gamma === Math.round(gamma)) || best;
  const values = {
    alpha: alpha.toFixed(2), cost: cost.toFixed(2), gamma: chosen.gamma,
    tau: chosen.tau.toFixed(2), speedup: chosen.speedup.toFixed(2),
  };
  const trace = (tag) => fig.data.find((one) => one.meta === tag);
  const named = (part) => fill(meta.text[part], values);
  Object.assign(trace('curve'), {y: rows.map((row) => row.speedup), name: named('curve')});
  Object.assign(trace('tau'), {y: rows.map((row) => row.tau), name: named('tau')});
  Object.assign(trace('chosen'), {x: [chosen.gamma], y: [chosen.speedup], name: named('chosen')});
  Object.assign(trace('chosen_tau'), {x: [chosen.gamma], y: [chosen.tau]});
  const bestName = fill(meta.text.best, {gamma: best.gamma, speedup: best.speedup.toFixed(2)});
  Object.assign(trace('best'), {x: [best.gamma], y: [best.speedup], name: bestName});
  fig.layout.title.text = fill(meta.text.title, values);
  const highestTau = Math.max(...rows.map((row) => row.tau));
  fig.layout.yaxis.range = [0, Math.max(meta.speedup_top, meta.headroom * best.speedup)];
  fig.layout.yaxis2.range = [0, Math.max(meta.tau_top, meta.headroom * highestTau)];
  return fig;
}
function redrawPlot(plot, alpha, gamma, cost) {
  if (!plot || !plot.plot) return plot;
  const fig = redrawFigure(JSON.parse(plot.plot), Number(alpha), Number(gamma), Number(cost));
  return {...plot, plot: JSON.stringify(fig)};
}
"""

# The sliders' event (Gradio runs it in the page; fn=None: no server call): the plot's new value.
REDRAW_JS = (
    "(alpha, gamma, cost, plot) => {"
    + MODEL_JS
    + _FIGURE_JS
    + "return redrawPlot(plot, alpha, gamma, cost); }"
)

# "Reset to measured": the sliders back at the run's α, γ, c, and the plot drawn there.
RESET_JS = (
    "(plot) => {"
    + MODEL_JS
    + _FIGURE_JS
    + "const start = JSON.parse(plot.plot).layout.meta.whatif.start;"
    + "return [start.alpha, start.gamma, start.cost,"
    + " redrawPlot(plot, start.alpha, start.gamma, start.cost)]; }"
)
