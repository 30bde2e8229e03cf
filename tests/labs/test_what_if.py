"""The speedup what-if: its chart drawn in Python, and its JavaScript evaluated in chromium against
the Python maths (specviz.core.cost_model) so the two can never drift apart."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from browser_checks import CHROMIUM, needs_chromium

from specviz.core.cost_model import expected_tokens_per_pass, predicted_speedup
from specviz.labs.speedup.theory import MeasuredRun
from specviz.labs.speedup.what_if import (
    MODEL_JS,
    REDRAW_JS,
    RESET_JS,
    WhatIf,
    cost_limit,
    paper_default,
    what_if_chart,
)

# (α, γ, c, v): the paper's v = 1, a costly verification, α at 0 and 1, a free and a dear draft.
POINTS = [
    (0.8, 5, 0.1, 1.0),
    (0.6, 3, 0.4, 1.35),
    (0.0, 1, 0.0, 1.0),
    (1.0, 16, 0.05, 2.4),
    (0.97, 12, 1.7, 1.1),
    (0.33, 7, 0.9, 1.02),
    (0.999, 9, 0.01, 1.0),
]


def _run(gamma: int, speedup: float, tau: float) -> MeasuredRun:
    return MeasuredRun(gamma, 0.7, tau, 10.0, speedup, 24, 14, 20, 0.001, 0.01, True)


MEASURED = WhatIf(
    verify=tuple((gamma, 1.0 + 0.05 * gamma) for gamma in range(1, 17)),
    alpha=0.71,
    cost=0.38,
    gamma=3,
    measured=(_run(1, 1.12, 1.7), _run(3, 1.31, 2.2)),
)


def _trace(fig: Any, tag: str) -> Any:
    (trace,) = [trace for trace in fig["data"] if trace.get("meta") == tag]
    return trace


def test_the_chart_draws_the_model_at_the_runs_values_with_the_measured_points() -> None:
    fig = what_if_chart(MEASURED).to_plotly_json()
    curve = _trace(fig, "curve")
    for gamma, speedup in zip(curve["x"], curve["y"], strict=True):
        assert speedup == predicted_speedup(0.71, gamma, 0.38, 1.0 + 0.05 * gamma)
    tau = _trace(fig, "tau")
    assert list(tau["y"]) == [expected_tokens_per_pass(0.71, gamma) for gamma in tau["x"]]
    assert list(_trace(fig, "chosen")["x"]) == [3]
    best = max(curve["y"])
    assert list(_trace(fig, "best")["y"]) == [best]
    measured = [trace for trace in fig["data"] if trace.get("meta") == "measured"]
    assert [list(trace["y"]) for trace in measured] == [[1.12, 1.31], [1.7, 2.2]]
    assert fig["layout"]["meta"]["whatif"]["start"] == {"alpha": 0.71, "gamma": 3, "cost": 0.38}
    assert "α = 0.71, c = 0.38" in fig["layout"]["title"]["text"]


def test_before_a_run_the_chart_is_the_papers_model_and_the_cost_slider_fits_any_c() -> None:
    fig = what_if_chart(paper_default()).to_plotly_json()
    assert not [trace for trace in fig["data"] if trace.get("meta") == "measured"]
    curve = _trace(fig, "curve")
    # v = 1: Leviathan et al.'s improvement factor (1 − α^(γ+1)) / ((1 − α)(γc + 1)).
    for gamma, speedup in zip(curve["x"], curve["y"], strict=True):
        assert speedup == pytest.approx((1 - 0.8 ** (gamma + 1)) / (0.2 * (gamma * 0.1 + 1)))
    assert cost_limit(0.4) == 2.0 and cost_limit(3.2) == 4.0


def test_the_axes_keep_the_measured_points_in_view_whatever_the_sliders_say() -> None:
    low = what_if_chart(MEASURED, alpha=0.0, cost=2.0).to_plotly_json()["layout"]
    high = what_if_chart(MEASURED, alpha=1.0, cost=0.0).to_plotly_json()
    assert low["yaxis"]["range"][1] >= 1.31 and low["yaxis2"]["range"][1] >= 2.2
    # α = 1, c = 0: S = (γ + 1) / v(γ), far above the run's points; the axes grow to show it.
    assert high["layout"]["yaxis"]["range"][1] >= max(_trace(high, "curve")["y"])
    assert high["layout"]["yaxis2"]["range"][1] >= 17.0  # τ = γ + 1 at α = 1


# --- the JavaScript, in chromium -----------------------------------------------------------------


@pytest.fixture(scope="module")
def page() -> Iterator[Any]:
    """A blank chromium page: the what-if's JavaScript needs no app around it."""
    from playwright.sync_api import sync_playwright

    from specviz.cli.screenshots import CHROMIUM_ARGS

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=list(CHROMIUM_ARGS)
        )
        yield browser.new_page()
        browser.close()


@needs_chromium
@pytest.mark.browser
def test_the_javascript_formula_matches_the_python_maths(page: Any) -> None:
    model = f"(points) => {{ {MODEL_JS} return points.map(([a, g, c, v]) => "
    model += "[tokensPerPass(a, g), predictedSpeedup(a, g, c, v)]); }"
    computed = page.evaluate(model, POINTS)
    for (alpha, gamma, cost, verify), (tau, speedup) in zip(POINTS, computed, strict=True):
        assert tau == pytest.approx(expected_tokens_per_pass(alpha, gamma), rel=1e-12)
        assert speedup == pytest.approx(predicted_speedup(alpha, gamma, cost, verify), rel=1e-12)


def _plot(fig: Any) -> dict[str, Any]:
    """The gr.Plot value the page holds for a figure (Gradio's PlotData)."""
    return {"type": "plotly", "plot": fig.to_json()}


def _model_traces(plot: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A figure's layout (meta aside) and every trace, as plain JSON to compare."""
    fig = json.loads(plot["plot"])
    return fig["layout"], fig["data"]


@needs_chromium
@pytest.mark.browser
@pytest.mark.parametrize("what_if", [MEASURED, paper_default()], ids=["measured", "paper"])
def test_the_redraw_in_the_browser_is_the_chart_python_draws(page: Any, what_if: WhatIf) -> None:
    start = _plot(what_if_chart(what_if))
    for alpha, gamma, cost, _ in POINTS:
        redrawn = page.evaluate(
            f"([a, g, c, plot]) => ({REDRAW_JS})(a, g, c, plot)", [alpha, gamma, cost, start]
        )
        layout, traces = _model_traces(redrawn)
        want_layout, want = _model_traces(_plot(what_if_chart(what_if, alpha, gamma, cost)))
        assert layout["title"]["text"] == want_layout["title"]["text"]
        for axis in ("yaxis", "yaxis2"):
            assert layout[axis]["range"] == pytest.approx(want_layout[axis]["range"], rel=1e-12)
        assert [trace["name"] for trace in traces] == [trace["name"] for trace in want]
        for trace, wanted in zip(traces, want, strict=True):
            assert trace["x"] == wanted["x"]
            assert trace["y"] == pytest.approx(wanted["y"], rel=1e-12)


@needs_chromium
@pytest.mark.browser
def test_reset_puts_the_sliders_and_the_chart_back_at_the_run(page: Any) -> None:
    moved = page.evaluate(
        f"(plot) => ({REDRAW_JS})(0.2, 9, 1.5, plot)", _plot(what_if_chart(MEASURED))
    )
    alpha, gamma, cost, plot = page.evaluate(f"(plot) => ({RESET_JS})(plot)", moved)
    assert (alpha, gamma, cost) == (0.71, 3, 0.38)
    _, traces = _model_traces(plot)
    _, want = _model_traces(_plot(what_if_chart(MEASURED)))
    for trace, wanted in zip(traces, want, strict=True):
        assert trace["y"] == pytest.approx(wanted["y"], rel=1e-12)
