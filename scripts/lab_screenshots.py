"""Refresh the README's lab screenshots: the real app on the bundled pair in headless chromium.

    .venv/bin/python scripts/lab_screenshots.py [assets [LAB ...]]

Runs the live run, then each lab at sizes a lecturer would use (N = 2,000 exactness samples,
γ = 1,3,5,8, a 16-token cost curve, 32 tokens per task, the advisor on the editing prompts), and
saves one PNG per tab; naming labs (inspector exactness speedup cost tasks advisor) shoots only
those. ``configs`` shoots the production configs tab (no run needed) as configs.png.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from playwright.sync_api import Page, sync_playwright  # noqa: E402
from test_browser import ARGS, CHROMIUM  # noqa: E402
from ui_fixtures import live_app  # noqa: E402


def set_number(page: Page, selector: str, value: float) -> None:
    box = page.locator(f"{selector} input[type=number]")
    box.fill(str(value))
    box.press("Enter")


def open_tab(page: Page, name: str) -> None:
    page.locator(f"#sv-tab-{name}-button").click()
    page.wait_for_timeout(500)


def run_lab(page: Page, name: str, button: str, status: str, folder: Path) -> None:
    open_tab(page, name)
    began = time.perf_counter()
    page.locator(button).click()
    page.wait_for_selector(
        f"{status} .sv-status-done, {status} .sv-status-error, .toast-body.error", timeout=900_000
    )
    print(f"{name}: {time.perf_counter() - began:.0f} s", flush=True)
    if page.locator(f"{status} .sv-status-done").count() == 0:
        raise SystemExit(f"{name} failed: {page.locator('body').inner_text()[:2000]}")
    page.wait_for_timeout(1500)
    page.locator(f"#sv-tab-{name}").screenshot(path=str(folder / f"lab-{name}.png"))


def main() -> None:
    folder = Path(sys.argv[1] if len(sys.argv) > 1 else "assets")
    folder.mkdir(parents=True, exist_ok=True)
    chosen = set(sys.argv[2:]) or {"inspector", "exactness", "speedup", "cost", "tasks", "advisor"}
    url = live_app()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=ARGS
        )
        page = browser.new_page(viewport={"width": 1440, "height": 1200})
        page.goto(url)
        page.wait_for_selector("#sv-run")

        if "configs" in chosen:
            configs_panel(page, folder)
        if chosen & {"inspector", "exactness"}:
            sampled_labs(page, folder, chosen)
        if chosen & {"speedup", "cost", "tasks", "advisor"}:
            greedy_labs(page, folder, chosen)
        browser.close()


def configs_panel(page: Page, folder: Path) -> None:
    """The production configs tab for the preset's pair and drafter."""
    open_tab(page, "configs")
    page.wait_for_timeout(1500)
    page.locator("#sv-tab-configs").screenshot(path=str(folder / "configs.png"))


def sampled_labs(page: Page, folder: Path, chosen: set[str]) -> None:
    """The inspector after a sampled story run (a click on a rejected token), the exactness lab."""
    page.get_by_label("story").check()
    page.wait_for_timeout(500)
    page.locator("#sv-examples").get_by_text("robot", exact=False).first.click()
    set_number(page, "#sv-temperature", 1)
    set_number(page, "#sv-max-new-tokens", 32)
    page.locator("#sv-run").click()
    page.wait_for_selector("#sv-status .sv-status-done", timeout=300_000)
    page.locator("#sv-stream .sv-tok.sv-rejected").first.click()
    page.wait_for_selector("#sv-inspect .sv-inspect-table")
    page.wait_for_timeout(1500)
    page.locator("#sv-tab-inspector").screenshot(path=str(folder / "lab-inspector.png"))

    if "exactness" in chosen:
        run_lab(page, "exactness", "#sv-exact-run", "#sv-exact-status", folder)


def greedy_labs(page: Page, folder: Path, chosen: set[str]) -> None:
    """The speedup and cost labs on the fibonacci prompt, greedy; the task lab; the advisor."""
    page.get_by_label("code").check()
    page.wait_for_timeout(500)
    page.locator("#sv-examples").get_by_text("fibonacci", exact=False).first.click()
    set_number(page, "#sv-temperature", 0)
    set_number(page, "#sv-max-new-tokens", 48)
    if "speedup" in chosen:
        run_lab(page, "speedup", "#sv-speedup-run", "#sv-speedup-status", folder)
    if "cost" in chosen:
        open_tab(page, "cost")
        page.locator("#sv-cost-run").click()
        page.wait_for_selector("#sv-cost-status .sv-status-done", timeout=300_000)
        page.locator("#sv-project").click()
        page.wait_for_selector("#sv-projection-note .sv-projection p")
        page.wait_for_timeout(1500)
        page.locator("#sv-tab-cost").screenshot(path=str(folder / "lab-cost.png"))

    if "tasks" in chosen:
        set_number(page, "#sv-max-new-tokens", 32)
        run_lab(page, "tasks", "#sv-tasks-run", "#sv-tasks-status", folder)
    if "advisor" in chosen:
        # The advisor on the editing group at its default size (every drafter, the preset's
        # draft format, γ 2, 3, 5, 8 and adaptive, 32 tokens) but a 240 s budget: the browser
        # drawing each update shares the 2 cores, and no run should be cut short in the picture.
        open_tab(page, "advisor")
        page.locator("#sv-advisor-task input").fill("editing")
        page.keyboard.press("Enter")
        set_number(page, "#sv-advisor-budget", 240)
        run_lab(page, "advisor", "#sv-advisor-run", "#sv-advisor-status", folder)


if __name__ == "__main__":
    main()
