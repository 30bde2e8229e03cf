"""Each drafter's largest pass on the cost curve: how many tokens it sends, and v(M) read where
the curve was measured or, past it, on the fitted line."""

from __future__ import annotations

from specviz.drafters.registry import tokens_a_pass
from specviz.labs.speedup.cost_curve import CostCurve, CostPoint
from specviz.labs.speedup.panel import pass_costs_html
from specviz.labs.speedup.pass_costs import cost_of, pass_costs
from specviz.text import t


def curve(*relative: float) -> CostCurve:
    """A curve whose k-token forward costs relative[k - 1] one-token forwards of 10 ms."""
    points = tuple(CostPoint(k, 0.010 * v, (0.010 * v,)) for k, v in enumerate(relative, start=1))
    return CostCurve("cpu", 40, points, True)


def test_each_drafter_says_how_many_tokens_its_largest_pass_sends() -> None:
    assert tokens_a_pass("draft-model", 5) == 6  # γ guesses and the newest token
    assert tokens_a_pass("hybrid", 7) == 8
    assert tokens_a_pass("tree", 5) == 17  # a node budget of 16, whatever γ
    assert tokens_a_pass("tree:nodes=32", 5) == 33
    assert tokens_a_pass("tree:shape=2x2x1", 5) == 11  # 2 + 4 + 4 nodes
    assert tokens_a_pass("medusa", 5) == 9  # 8 candidates by default
    assert tokens_a_pass("medusa:nodes=16", 5) == 17
    # W = 4, N = 3: a spine of 3 and a row of 4 once warmed up, and 4 guesses of 2 tokens.
    assert tokens_a_pass("lookahead", 5) == 16


def test_v_is_measured_inside_the_curve_and_fitted_past_it() -> None:
    measured = curve(1.0, 1.2, 1.3, 1.4, 1.5, 1.6)  # +0.1 a token after the second
    assert cost_of(measured, 4) == (1.4, False)
    cost, fitted = cost_of(measured, 16)
    assert fitted and abs(cost - (1.6 + 0.1 * 10)) < 1e-9
    rows = {row.spec: row for row in pass_costs(measured, 5)}
    assert (rows["draft-model"].tokens, rows["draft-model"].fitted) == (6, False)
    assert rows["draft-model"].cost == 1.6
    assert rows["lookahead"].fitted and rows["lookahead"].tokens == 16


def test_the_table_names_each_drafter_with_its_options() -> None:
    html = pass_costs_html(pass_costs(curve(1.0, 1.2, 1.3, 1.4, 1.5, 1.6), 5), lang="en")
    assert "tokens a pass, M" in html and "Draft tree (several guesses per step) · nodes=32" in html
    assert html.count("<tr>") == 6  # the head and five drafters
    assert html.count("<th>") == 3  # v(M) once: the sentence under the table says it is the bar
    assert "2.60× (on the fitted line)" in html  # lookahead: 16 tokens, 1.6 + 10 × 0.1
    assert html.endswith(f"<p>{t('speedup.pass.gain', 'en')}</p></div>")
    assert pass_costs_html([], lang="en") == ""
    assert "1パスのトークン数" in pass_costs_html(pass_costs(curve(1.0, 1.1), 5), lang="ja")
