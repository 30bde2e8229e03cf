"""What the browser tests measure in the page, wait on and do to it, as small helpers.

Not a test module: the browser tests import from here (pytest puts tests/ on sys.path); their
chromium and servers are fixtures in tests/browser/conftest.py. The contrast is WCAG 2's: relative
luminance of the text colour and of the background it sits on, each background layer (translucent
tints included) composited over the page's own colour. Every wait is on a condition in the page,
never on elapsed time, so a busy machine makes a test slower, not red: the waits themselves live in
the package (``specviz.cli.browser_waits``), where the screenshots command uses them too, and are
re-exported here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

# Re-exported: the browser tests import every helper from here.
from specviz.cli.browser_waits import NEXT_FRAME_JS as NEXT_FRAME_JS
from specviz.cli.browser_waits import WAIT_MS as WAIT_MS
from specviz.cli.browser_waits import at_least as at_least
from specviz.cli.browser_waits import events_over as events_over
from specviz.cli.browser_waits import settled as settled
from specviz.cli.screenshots import CHROMIUM as CHROMIUM

# Every browser test module carries this mark: without Debian's chromium there is nothing to drive.
needs_chromium = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"
)

# The notes presentation mode promises at 14 px with 4.5:1 contrast.
NOTES = (
    ".sv-legend small",
    ".sv-legend-hint",
    ".sv-cut",
    ".sv-stop",
    ".sv-card-pos",
    ".sv-card-nums",
    ".sv-cards-foot",
    ".sv-caption",
    ".sv-stat-note",
    ".sv-stat-label",
    ".sv-race-numbers",
    ".sv-race-method",
)

# For each element matched: its font size, weight, opacity up the tree, colour and the background
# it is drawn on, composited from the page's colour through every translucent layer above it.
STYLE_JS = """
(selector) => [...document.querySelectorAll(selector)].filter((el) => el.offsetParent !== null)
  .slice(0, 5).map((el) => {
    const rgba = (text) => (text.match(/[\\d.]+/g) || ['0', '0', '0', '0']).map(Number);
    const layers = [];
    let opacity = 1;
    for (let node = el; node; node = node.parentElement) {
      const style = getComputedStyle(node);
      opacity *= Number(style.opacity);
      const bg = rgba(style.backgroundColor);
      if (bg.length === 3) bg.push(1);
      if (bg[3] > 0) layers.push(bg);
    }
    let back = [255, 255, 255];
    for (const [r, g, b, a] of layers.reverse()) {
      back = [r * a + back[0] * (1 - a), g * a + back[1] * (1 - a), b * a + back[2] * (1 - a)];
    }
    const style = getComputedStyle(el);
    const fg = rgba(style.color);
    const alpha = (fg.length === 4 ? fg[3] : 1) * opacity;
    const seen = [0, 1, 2].map((i) => fg[i] * alpha + back[i] * (1 - alpha));
    return {size: parseFloat(style.fontSize), weight: Number(style.fontWeight), color: seen,
            background: back, text: el.innerText.slice(0, 40)};
  })
"""


def luminance(rgb: list[float]) -> float:
    """WCAG 2 relative luminance of an sRGB colour given as 0..255 channels."""

    def channel(value: float) -> float:
        c = value / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(v) for v in rgb[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(fg: list[float], bg: list[float]) -> float:
    """WCAG 2 contrast ratio (1..21) between two sRGB colours."""
    light, dark = sorted((luminance(fg), luminance(bg)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def hex_rgb(colour: str) -> list[float]:
    """'#4b5563' -> [75, 85, 99]."""
    colour = colour.lstrip("#")
    return [int(colour[i : i + 2], 16) for i in (0, 2, 4)]


def no_horizontal_scroll(page) -> bool:
    """True when the page is no wider than its viewport."""
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


def top(page, selector: str) -> float:
    """The y of an element's top edge on the page."""
    return page.locator(selector).first.evaluate(
        "(el) => el.getBoundingClientRect().top + window.scrollY"
    )


# True once the page's own load events (unqueued: one run/predict request each) have been
# answered: on a busy machine they can go out after the page has drawn its buttons.
LOADS_ANSWERED_JS = """() => {
  const config = window.gradio_config;
  if (!config) return false;
  const loads = config.dependencies.filter(
    (dep) => !dep.queue && dep.targets.some((target) => target[1] === "load")).length;
  const answered = performance.getEntriesByType("resource").filter(
    (entry) => entry.name.includes("/gradio_api/run/predict")).length;
  return answered >= loads;
}"""


def app_requests(page) -> list[str]:
    """A list that fills with the URL of every request the page sends the app's server from
    now on (its heartbeat aside), once the page's own load events are answered."""
    page.wait_for_function(LOADS_ANSWERED_JS, timeout=WAIT_MS)
    sent: list[str] = []
    page.on(
        "request",
        lambda request: (
            sent.append(request.url)
            if "/gradio_api/" in request.url and "/heartbeat" not in request.url
            else None
        ),
    )
    return sent


def set_number(page, elem_id: str, value: int) -> None:
    """Type into a slider's number box (Gradio sliders pair a range with a number input)."""
    box = page.locator(f"#{elem_id} input[type=number]")
    box.fill(str(value))
    box.press("Enter")


def tick_only(page, group: str, keep: list[str]) -> None:
    """Leave exactly the checkboxes labelled *keep* ticked in the checkbox group *group*."""
    for box in page.locator(f"#{group} label").all():
        if box.locator("input").is_checked() != (box.inner_text().strip() in keep):
            box.click()


def run_example(page, task: str, example: str, max_new_tokens: int, timeout_ms: int) -> None:
    """Pick the example of *task* (its label) that contains *example*, cap the new tokens, press
    Run and wait until the run is done."""
    from playwright.sync_api import expect

    page.get_by_label(task).check()
    page.locator("#sv-examples").get_by_text(example, exact=False).first.click()
    # The click fills the prompt through a server event: wait for it (a busy machine is slow).
    expect(page.locator("#sv-prompt textarea")).to_have_value(
        re.compile(re.escape(example)), timeout=WAIT_MS
    )
    set_number(page, "sv-max-new-tokens", max_new_tokens)
    page.locator("#sv-run").click()
    page.wait_for_selector("#sv-status .sv-status-done", timeout=timeout_ms)


def open_page(browser: Any, url: str, width: int, height: int) -> Iterator[Any]:
    """A page of the app at *url* in a fresh *width* × *height* context, once Run is drawn;
    the context closes after. For a test module's own ``page`` fixture (``yield from``)."""
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.goto(url)
    page.wait_for_selector("#sv-run")
    yield page
    context.close()


# A chip's border colour, and the colour a CSS variable of the stream's palette (--sv-accepted,
# ...) holds, as rgb(): the browser tests compare a verdict's drawn colour with its variable.
BORDER = "(el) => getComputedStyle(el).borderTopColor"
PALETTE = """(kind) => {
  const probe = document.createElement('span');
  probe.style.color = `var(--sv-${kind})`;
  document.body.appendChild(probe);
  const colour = getComputedStyle(probe).color;
  probe.remove();
  return colour;
}"""


# What presentation mode must show of the cycle on screen without scrolling: the stream, the
# cards' head, the cards, the tree's strip; a panel's selectors are added by the test.
CYCLE_PARTS = (
    "#sv-stream .sv-stream",
    "#sv-cards .sv-cards-head",
    "#sv-cards .sv-cards",
    "#sv-cards .sv-tree",
)

# For each selector: how many of its elements are drawn, and those that reach past an edge of
# the viewport (selector, top, bottom, left, right).
OFF_SCREEN_JS = """(selectors) => selectors.map((selector) => {
  const drawn = [...document.querySelectorAll(selector)].filter((el) => el.offsetParent !== null);
  const outside = drawn.map((el) => el.getBoundingClientRect())
    .filter((b) => b.top < 0 || b.left < 0 || b.bottom > innerHeight || b.right > innerWidth)
    .map((b) => [selector, ...[b.top, b.bottom, b.left, b.right].map(Math.round)]);
  return {selector, drawn: drawn.length, outside};
})"""


def off_screen(page, panel: tuple[str, ...]) -> list[Any]:
    """Once nothing on the live tab moves, scrolled to the top as a projector shows it: what
    of the cycle's parts and of *panel* lies past the viewport's edges, or is not drawn at all
    (empty when the whole cycle is on one screen)."""
    settled(page, "#sv-tab-live")
    page.evaluate("window.scrollTo(0, 0)")
    found = page.evaluate(OFF_SCREEN_JS, [*CYCLE_PARTS, *panel])
    missing = [part["selector"] for part in found if part["drawn"] == 0]
    return missing + [box for part in found for box in part["outside"]]
