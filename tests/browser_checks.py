"""What the browser tests measure in the page and wait on, as small helpers.

Not a test module: the browser tests import from here. The contrast is WCAG 2's: relative
luminance of the text colour and of the background it sits on, each background layer
(translucent tints included) composited over the page's own colour. Every wait is on a condition
in the page, never on elapsed time, so a busy machine makes a test slower, not red.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress

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


# How long a browser test waits for a condition before it fails: a page that depends on a model
# run, or a chart drawn on a machine whose cores are busy, can take many times its usual second.
WAIT_MS = 90_000

# True when every Plotly chart under *scope* has drawn its svg and no finite animation or
# transition under it (a card's flip, a fading overlay) is still running: what a screenshot or a
# measure of the layout should wait for. A finished animation that holds its last frame still
# counts in getAnimations(), and one that never ends (a spinner) never settles, so neither is
# waited on.
SETTLED_JS = """
([scope, charts]) => {
  const root = document.querySelector(scope);
  if (!root) return false;
  const plots = [...root.querySelectorAll('.js-plotly-plot')];
  if (plots.length < charts || !plots.every((plot) => plot.querySelector('.main-svg'))) return false;
  return root.getAnimations({subtree: true}).every((animation) =>
    animation.playState !== 'running' || animation.effect?.getComputedTiming().endTime === Infinity);
}
"""

# Resolves after the page's pending timers and two animation frames: the page has applied what
# it has received (Gradio hands each server message to a timer) and drawn it.
NEXT_FRAME_JS = """
() => new Promise((done) => setTimeout(() =>
  requestAnimationFrame(() => requestAnimationFrame(() => done(true))), 0))
"""


def settled(page, scope: str = "#sv-page", charts: int = 0, timeout: int = WAIT_MS) -> None:
    """Wait until at least *charts* Plotly charts under *scope* are drawn and nothing under it
    is animating (see SETTLED_JS)."""
    page.wait_for_function(SETTLED_JS, arg=[scope, charts], timeout=timeout)
    page.evaluate(NEXT_FRAME_JS)


def at_least(locator, count: int, timeout: int = WAIT_MS) -> None:
    """Wait until *locator* matches at least *count* elements (Playwright's expect has only an
    exact count)."""
    from playwright.sync_api import expect

    if count > 0:
        expect(locator.nth(count - 1)).to_be_attached(timeout=timeout)


def _is_stream(request) -> bool:
    """The page's stream of queued events' messages: the server closes it once every event the
    page has sent is over (a cancelled one too)."""
    return "/queue/data" in request.url


@contextmanager
def events_over(page, timeout: int = WAIT_MS) -> Iterator[None]:
    """Around an action that sends queued events (a click): wait, after it, until the page's
    event stream has ended (the server has finished, or cancelled, every event the page sent)
    and the page has drawn the last answer."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    ended: list[object] = []

    def end(request) -> None:
        if _is_stream(request):
            ended.append(request)

    # The page closes the stream itself when told it is over, so it may end as failed (aborted)
    # as well as finished: listen for both.
    page.on("requestfinished", end)
    page.on("requestfailed", end)
    try:
        yield
        deadline = time.monotonic() + timeout / 1000
        while not ended:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"the page's event stream did not end in {timeout} ms")
            # Waiting on an event lets Playwright deliver the ones listened for above.
            with suppress(PlaywrightTimeout):
                page.wait_for_event(
                    "requestfinished", predicate=_is_stream, timeout=min(left, 1) * 1e3
                )
    finally:
        page.remove_listener("requestfinished", end)
        page.remove_listener("requestfailed", end)
    page.evaluate(NEXT_FRAME_JS)


def app_requests(page) -> list[str]:
    """A list that fills with the URL of every request the page sends the app's server from
    now on (its heartbeat aside)."""
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
