"""A screenshot of fable mode on the bundled pair, in headless chromium.

    .venv/bin/python scripts/fable_screenshot.py assets       # the README's assets/screenshot-fable.png
    .venv/bin/python scripts/fable_screenshot.py /tmp/shots   # the same picture, to look at
    .venv/bin/python scripts/fable_screenshot.py /tmp/shots --tiny  # the tiny test pair (no files)

Opens the page with ``?fable=1``, presses Step until a cycle with a rejection (the crossing-out,
the master's own word and the wiped slate) or a full slate with its free word is shown, at most
STEPS times, and saves the live tab, story first, at 1280x900: screenshot-fable.png.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

STEPS = 8  # Step presses at most, waiting for a cycle with a crossing-out
NAME = "screenshot-fable.png"


def app_url(tiny: bool) -> str:
    """The app on the bundled pair, or on the tests' tiny pair."""
    if tiny:
        from hosted_fixtures import tiny_app

        return tiny_app(hosted=False)
    from ui_fixtures import live_app

    return live_app()


def main(folder: Path, tiny: bool = False) -> Path:
    """Step through a run in fable mode and save the story into *folder*; the file's path."""
    from playwright.sync_api import sync_playwright

    folder.mkdir(parents=True, exist_ok=True)
    url = app_url(tiny)
    path = folder / NAME
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path="/usr/bin/chromium", headless=True, args=["--no-sandbox"]
        )
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(url.rstrip("/") + "/?fable=1")
        page.wait_for_selector("#sv-fable .sv-fable", state="visible")
        story = page.locator("#sv-fable .sv-fable-current")
        for step in range(1, STEPS + 1):
            page.locator("#sv-step").click()
            page.wait_for_selector(f"#sv-fable .sv-fable-current[data-cycle='{step}']")
            if story.locator(".sv-rejected").count() and step > 2:
                break
        page.wait_for_timeout(1500)  # the cards' flip animation settles
        page.add_style_tag(content=".toast-wrap { display: none !important; }")
        page.evaluate("document.querySelector('#sv-stream').scrollIntoView()")
        page.screenshot(path=str(path))
        browser.close()
    return path


if __name__ == "__main__":
    arguments = [item for item in sys.argv[1:] if not item.startswith("--")]
    print(main(Path(arguments[0] if arguments else "assets"), tiny="--tiny" in sys.argv))
