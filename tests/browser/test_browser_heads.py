"""Medusa's heads panel in Debian's chromium, on the tiny pair with heads filed for its target:
three Steps each show, under the cycle's tree, every head's guesses and the run's agreement as
the engine's own records give them, the kept guess in the stream's colour; Back shows an
earlier cycle's numbers again; a phone stacks the bars within its width, and presentation mode
shows the whole cycle, heads panel included, on one 1280x720 screen."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from browser_checks import BORDER, PALETTE, WAIT_MS, needs_chromium, off_screen

from specviz.core.events import Cycle

pytestmark = [pytest.mark.browser, needs_chromium]

# What the panel of a cycle's cards shows: each head's bars, then its line of guesses.
PANEL_JS = """(panel) => ({
  bars: [...panel.querySelectorAll('.sv-heads-score')].map((line) => Object.fromEntries(
    [...line.querySelectorAll('.sv-hbar-cell')].map((cell) => [cell.dataset.measure,
      cell.dataset.measure === 'run' ? [cell.dataset.hits, cell.dataset.chances]
                                     : [cell.dataset.top1, cell.dataset.top5]]))),
  rows: [...panel.querySelectorAll('.sv-hguess')].map((row) => [row.dataset.head,
    row.dataset.outcome, [...row.querySelectorAll('.sv-hguess-item')].map((item) =>
      [item.dataset.token, item.dataset.verdict])]),
})"""


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Cycle]]:
    """Heads filed for the tiny target in a cache of the module's own, and every cycle the
    served app's runs yield, as the engine made it."""
    from hosted_fixtures import TinyCache
    from medusa_models import file_heads, fitted_heads

    import specviz.app.session as session_module

    cycles: list[Cycle] = []
    stream = session_module.speculative_stream

    def recording(*args: Any, **kwargs: Any) -> Iterator[Any]:
        for record in stream(*args, **kwargs):
            if isinstance(record, Cycle):
                cycles.append(record)
            yield record

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SPECVIZ_CACHE", str(tmp_path_factory.mktemp("cache")))
        target = TinyCache().pair.target  # the served pair's target: the same weights
        file_heads(target, fitted_heads(target, count=3, steps=800))
        patch.setattr(session_module, "speculative_stream", recording)
        yield cycles


def expected(cycles: list[Cycle]) -> dict[str, Any]:
    """The panel of the last of *cycles* as the records say it should read."""
    from medusa_models import FILED_AGREEMENT

    from specviz.views.head_scores import head_guesses, heads_used, run_agreement

    used = heads_used(cycles)
    heads = max(used, 3)
    scores = run_agreement(cycles, heads)
    bars = [
        {"run": [str(score.hits), str(score.chances)]}
        | {
            group: [
                f"{numbers['top1'][score.head - 1]:.4f}",
                f"{numbers['top5'][score.head - 1]:.4f}",
            ]
            for group, numbers in FILED_AGREEMENT.items()
        }
        for score in scores
    ]
    cycle = cycles[-1]
    rows = []
    if cycle.tree is not None and cycle.tree.nodes:
        for row in head_guesses(cycle, used):
            if not row.guesses:
                outcome = "none"
            elif row.kept is not None:
                outcome = "kept"
            else:
                outcome = "missed" if row.wrote is not None else "unreached"
            items = [[str(guess.token_id), guess.verdict] for guess in row.guesses]
            rows.append([str(row.head), outcome, items])
    return {"bars": bars, "rows": rows}


def medusa_page(browser, url: str, width: int, height: int) -> Any:  # type: ignore[no-untyped-def]
    from specviz.text import t

    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.goto(url)
    page.wait_for_selector("#sv-run", timeout=WAIT_MS)
    page.locator("#sv-drafter input").click()
    page.get_by_role("option", name=t("drafter.medusa"), exact=True).click()
    return page


def panel_of(page, cycle: int) -> Any:  # type: ignore[no-untyped-def]
    panel = page.locator(f"#sv-cards .sv-cards-wrap[data-cycle='{cycle}'] .sv-heads")
    panel.wait_for(timeout=WAIT_MS)
    return panel


def test_three_medusa_cycles_show_each_heads_guesses_and_agreement(
    browser, recorded: list[Cycle]
) -> None:  # type: ignore[no-untyped-def]
    from hosted_fixtures import tiny_app
    from playwright.sync_api import expect

    page = medusa_page(browser, tiny_app(hosted=False), 1280, 900)
    recorded.clear()
    for cycle in (1, 2, 3):
        page.locator("#sv-step").click()
        panel = panel_of(page, cycle)
        assert len(recorded) == cycle
        assert panel.evaluate(PANEL_JS) == expected(recorded[:cycle]), cycle
        if cycle == 1:  # the heads wait for the target's first pass over the prompt
            expect(panel.locator(".sv-heads-note")).to_be_visible()
        else:
            expect(panel.locator(".sv-hguess").first).to_be_visible()
        # A kept guess in the stream's accepted colour, the tree's own chip beside it.
        kept = panel.locator(".sv-hguess-item[data-verdict='accepted'] .sv-tchip")
        if kept.count():
            assert kept.first.evaluate(BORDER) == page.evaluate(PALETTE, "accepted")
            node = kept.first.get_attribute("data-node")
            tree = page.locator(f"#sv-cards .sv-tree .sv-tnode[data-node='{node}']")
            expect(tree).to_have_attribute("data-verdict", "accepted")
    assert any(cycle.tree and cycle.tree.nodes for cycle in recorded)
    page.locator("#sv-back").click()
    panel = panel_of(page, 2)
    assert panel.evaluate(PANEL_JS) == expected(recorded[:2])
    page.context.close()


def test_a_phone_stacks_the_bars_within_its_width(browser, recorded: list[Cycle]) -> None:  # type: ignore[no-untyped-def]
    from hosted_fixtures import tiny_app
    from playwright.sync_api import expect

    page = medusa_page(browser, tiny_app(hosted=False), 390, 844)
    for cycle in (1, 2):
        page.locator("#sv-step").click()
        panel = panel_of(page, cycle)
    box = panel.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390
    # Every bar names its measure on a phone, not only the first head's.
    labels = panel.locator(".sv-heads-score").last.locator(".sv-hbar-label")
    expect(labels.first).to_be_visible()
    widest = panel.evaluate("(el) => Math.max(...[...el.querySelectorAll('*')].map("
                            "(x) => x.getBoundingClientRect().right))")  # fmt: skip
    assert widest <= 390
    page.context.close()


# The heads panel's parts in presentation mode: every head's bars, and this cycle's guesses (or
# the note that the first cycle has none).
HEADS_PARTS = (
    "#sv-cards .sv-heads-head",
    "#sv-cards .sv-hbar-cell",
    "#sv-cards :is(.sv-hguess, .sv-heads .sv-heads-note)",
)


def test_presentation_mode_shows_each_medusa_cycle_on_one_screen(
    browser, recorded: list[Cycle]
) -> None:  # type: ignore[no-untyped-def]
    """At 1280x720 in presentation mode, three Steps each show the stream, the cards, the tree
    and the whole heads panel within the screen, with no scrolling."""
    from hosted_fixtures import tiny_app

    page = medusa_page(browser, tiny_app(hosted=False), 1280, 720)
    page.locator("#sv-present-toggle input").check()
    page.wait_for_selector("#sv-page.sv-present")
    for cycle in (1, 2, 3):
        page.locator("#sv-step").click()
        panel_of(page, cycle)
        assert off_screen(page, HEADS_PARTS) == [], cycle
    # every measure's label is read whole (wrapped where the column is narrow), none cut short
    cut = page.evaluate(
        """() => [...document.querySelectorAll('#sv-cards .sv-hbar-label')]
            .filter((label) => label.offsetParent !== null)
            .filter((label) => label.scrollWidth > label.clientWidth + 1)
            .map((label) => label.textContent)"""
    )
    assert cut == []
    page.context.close()
