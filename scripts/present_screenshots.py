"""Screenshots of presentation mode and the phone layout on the bundled pair, in headless chromium.

    .venv/bin/python scripts/present_screenshots.py assets     # the README's two pictures
    .venv/bin/python scripts/present_screenshots.py /tmp/shots # all sizes, to look at

Runs one 32-token race in presentation mode, then shoots it at 1280x720, 1440x900 and 150 % zoom
(853x480 CSS pixels), and the live tab at 390x844 with the mode off. Into a folder named assets
only the README's two pictures are written (screenshot-present.png, screenshot-phone.png).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

SIZES = {"1280x720": (1280, 720), "1440x900": (1440, 900), "zoom150": (853, 480)}
README = {"1280x720": "screenshot-present.png", "390x844": "screenshot-phone.png"}


def shoot(page, folder: Path, name: str) -> None:
    """Save the viewport from the top as *name* (under its README name into assets)."""
    page.evaluate("window.scrollTo(0, 0)")
    page.wait_for_timeout(400)
    if folder.name == "assets":
        if name in README:
            page.screenshot(path=str(folder / README[name]))
    else:
        page.screenshot(path=str(folder / f"present-{name}.png"))


def main(folder: Path) -> None:
    """Run the race in presentation mode and save the screenshots into *folder*."""
    from playwright.sync_api import sync_playwright
    from ui_fixtures import live_app

    folder.mkdir(parents=True, exist_ok=True)
    url = live_app()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path="/usr/bin/chromium", headless=True, args=["--no-sandbox"]
        )
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        page.goto(url)
        page.wait_for_selector("#sv-run")
        tokens = page.locator("#sv-max-new-tokens input[type=number]")
        tokens.fill("32")
        tokens.press("Enter")
        page.locator("#sv-race-toggle input").check()
        page.locator("#sv-present-toggle input").check()
        page.locator("#sv-run").click()
        page.wait_for_selector("#sv-race .sv-race-status:text('finished')", timeout=1_800_000)
        page.wait_for_timeout(2000)
        for name, (width, height) in SIZES.items():
            page.set_viewport_size({"width": width, "height": height})
            page.wait_for_timeout(1200)
            shoot(page, folder, name)
        page.locator("#sv-present-toggle input").uncheck()
        page.set_viewport_size({"width": 390, "height": 844})
        page.wait_for_timeout(1200)
        shoot(page, folder, "390x844")
        browser.close()


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "assets"))
