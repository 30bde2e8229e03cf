"""Waits on a page in Playwright's chromium, each on a condition in the page, never on elapsed time.

The screenshots command (``specviz.cli.screenshots``) and the browser tests (through
``tests/browser_checks.py``) wait with these, so a busy machine makes them slower, not wrong.
Playwright is imported only when a wait runs: the package does not need it otherwise.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any

__all__ = ["NEXT_FRAME_JS", "SETTLED_JS", "WAIT_MS", "at_least", "events_over", "settled"]

# How long a wait on a condition lasts before it fails: a page that depends on a model run, or a
# chart drawn on a machine whose cores are busy, can take many times its usual second.
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


def settled(page: Any, scope: str = "#sv-page", charts: int = 0, timeout: int = WAIT_MS) -> None:
    """Wait until at least *charts* Plotly charts under *scope* are drawn and nothing under it
    is animating (see SETTLED_JS)."""
    page.wait_for_function(SETTLED_JS, arg=[scope, charts], timeout=timeout)
    page.evaluate(NEXT_FRAME_JS)


def at_least(locator: Any, count: int, timeout: int = WAIT_MS) -> None:
    """Wait until *locator* matches at least *count* elements (Playwright's expect has only an
    exact count)."""
    from playwright.sync_api import expect

    if count > 0:
        expect(locator.nth(count - 1)).to_be_attached(timeout=timeout)


def _is_stream(request: Any) -> bool:
    """The page's stream of queued events' messages: the server closes it once every event the
    page has sent is over (a cancelled one too)."""
    return "/queue/data" in request.url


@contextmanager
def events_over(page: Any, timeout: int = WAIT_MS) -> Iterator[None]:
    """Around an action that sends queued events (a click): wait, after it, until the page's
    event stream has ended (the server has finished, or cancelled, every event the page sent)
    and the page has drawn the last answer."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    ended: list[object] = []

    def end(request: Any) -> None:
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
