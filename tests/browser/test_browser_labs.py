"""Every teaching lab in Debian's chromium on the bundled pair, at small sizes: each tab runs and
draws its charts, and the exactness lab's wrong rule is caught in the browser too."""

from __future__ import annotations

import pytest
from browser_checks import at_least, needs_chromium, set_number

from specviz.models.presets import TASKS

pytestmark = [pytest.mark.browser, pytest.mark.slow, needs_chromium]


@pytest.fixture(scope="module")
def page(browser):
    """One page of the live app for the whole module: the labs run one after another in it."""
    from ui_fixtures import live_app

    page = browser.new_page(viewport={"width": 1440, "height": 1400})
    page.goto(live_app())
    page.wait_for_selector("#sv-run")
    yield page
    page.close()


def _open(page, tab: str) -> None:
    page.locator(f"#sv-tab-{tab}-button").click()
    page.wait_for_selector(f"#sv-tab-{tab}", state="visible")


def _bars(page, plot: str):
    """Drawn Plotly points (one per bar, one per scatter marker) inside one plot component."""
    return page.locator(f"{plot} .js-plotly-plot .point")


def test_inspector_opens_the_cycle_the_cards_show(page):
    set_number(page, "sv-max-new-tokens", 16)
    page.locator("#sv-run").click()
    page.wait_for_selector("#sv-status .sv-status-done", timeout=120_000)
    cycles = page.locator("#sv-stream .sv-cycle")
    second = cycles.nth(1)
    second.locator(".sv-tok").first.click()  # the player shows cycle 2
    page.wait_for_selector('#sv-cards .sv-cards-wrap[data-cycle="2"]', timeout=30_000)
    page.locator("#sv-cards .sv-inspect-open").click()
    page.wait_for_selector('#sv-inspect [data-cycle="2"]', timeout=30_000)
    assert page.locator("#sv-tab-inspector").is_visible()
    at_least(page.locator("#sv-inspect tbody tr"), 1)
    rows = page.locator("#sv-inspect tbody tr").count()
    at_least(_bars(page, "#sv-inspect-plot"), 2 * rows)


def test_exactness_lab_passes_the_rule_and_catches_the_wrong_one(page):
    set_number(page, "sv-temperature", 1)
    _open(page, "exactness")
    set_number(page, "sv-exact-n", 300)
    page.locator("#sv-exact-run").click()
    page.wait_for_selector("#sv-exact-status .sv-status-done", timeout=240_000)
    at_least(_bars(page, "#sv-exact-first"), 1)
    at_least(_bars(page, "#sv-exact-pairs"), 1)
    assert "300 samples per arm" in page.locator("#sv-exact-summary").inner_text()

    page.locator("#sv-rule").get_by_text("Wrong rule", exact=False).click()
    page.locator("#sv-exact-run").click()
    page.wait_for_selector("#sv-exact-summary .sv-lab-bad", timeout=240_000)
    assert "the test sees a difference" in page.locator("#sv-exact-summary").inner_text()
    page.locator("#sv-rule").get_by_text("The paper's rule", exact=False).click()
    set_number(page, "sv-temperature", 0)


def test_speedup_and_cost_labs_measure_and_project(page):
    set_number(page, "sv-max-new-tokens", 12)
    _open(page, "speedup")
    page.locator("#sv-tab-speedup textarea, #sv-tab-speedup input[type=text]").first.fill("1,3")
    page.locator("#sv-speedup-run").click()
    page.wait_for_selector("#sv-speedup-status .sv-status-done", timeout=300_000)
    summary = page.locator("#sv-speedup-summary").inner_text()
    assert "Pooled α" in summary and "predicted" in summary
    at_least(_bars(page, "#sv-speedup-plot"), 2)  # the measured points at γ = 1 and 3

    # Trees against the chain, below: predicted over tree sizes, then measured at 4 and 8 nodes.
    page.locator("#sv-trees-nodes textarea, #sv-trees-nodes input").first.fill("4,8")
    page.locator("#sv-trees-run").click()
    page.wait_for_selector("#sv-trees-status .sv-status-done", timeout=400_000)
    summary = page.locator("#sv-trees-summary").inner_text()
    assert "Predicted for this machine" in summary and "tree, ≤ 8 nodes" in summary
    at_least(_bars(page, "#sv-trees-plot"), 10 + 2 + 1)  # predicted sizes, the runs, the best

    _open(page, "cost")
    set_number(page, "sv-cost-sizes", 4)
    page.locator("#sv-cost-run").click()
    page.wait_for_selector("#sv-cost-status .sv-status-done", timeout=300_000)
    assert "How firm:" in page.locator("#sv-cost-status").inner_text()  # the curve's firmness
    at_least(_bars(page, "#sv-cost-plot"), 4)
    page.locator("#sv-project").click()
    page.wait_for_selector("#sv-projection-note :text('PROJECTION, not a measurement')")
    at_least(_bars(page, "#sv-projection-plot"), 16)


def test_self_draft_lab_counts_lookahead_s_accepted_lengths(page):
    """Heads and n-grams, under the trees: lookahead against plain decoding, a row per accepted
    length, the model's τ and the predicted and measured speedup."""
    set_number(page, "sv-max-new-tokens", 12)
    _open(page, "speedup")
    page.locator("#sv-self-draft-run").click()
    page.wait_for_selector("#sv-self-draft-status .sv-status-done", timeout=300_000)
    summary = page.locator("#sv-self-draft-summary")
    text = summary.inner_text()
    assert "Lookahead (lookahead)" in text and "Predicted: " in text and "Measured: " in text
    lengths = summary.locator("tbody tr td:first-child").all_inner_texts()
    assert lengths[:3] == ["0", "1", "2"]  # every length a 3-gram can give, then any longer


def test_task_dependence_lab_runs_every_task(page):
    from playwright.sync_api import expect

    set_number(page, "sv-max-new-tokens", 6)
    _open(page, "tasks")
    set_number(page, "sv-tasks-repeats", 1)  # one run of each method per task: the lab's path
    page.locator("#sv-tasks-run").click()
    page.wait_for_selector("#sv-tasks-status .sv-status-done", timeout=400_000)
    tasks = len(TASKS)  # the bundled preset has prompts for every task group
    expect(page.locator("#sv-tasks-table tbody tr")).to_have_count(tasks)
    expect(_bars(page, "#sv-tasks-plot")).to_have_count(3 * tasks)  # α, τ, speedup per task
