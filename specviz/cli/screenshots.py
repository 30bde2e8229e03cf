"""`python -m specviz screenshots OUT [WHICH ...]`: the pictures README.md and docs/ show, retaken.

Serves the real app as ``python app.py`` does (the bundled offline pair, English and Japanese
pages) on localhost, drives Debian's headless chromium through one scene per picture with
Playwright and writes each PNG into OUT. Every wait is on a condition in the page
(``specviz.cli.browser_waits``): a status line saying done, the event stream over, the cards'
flip and the charts settled; never on elapsed time.

    python -m specviz screenshots --list                 # each picture: its files and its scene
    python -m specviz screenshots /tmp/shots run fable   # two of them, to look at
    python -m specviz screenshots assets                 # all of them, over the docs' pictures

Playwright is a test requirement (requirements-test.txt) and chromium is Debian's, never a
downloaded browser: ``bash scripts/setup.sh --test`` installs both.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from specviz.cli import screenshot_scenes as scenes
from specviz.cli.browser_waits import WAIT_MS

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
)


class Site:
    """The real app, both languages over one model cache, served on first use (a shot that
    needs no app, the report, loads no model); the default pair loaded before serving, so a
    run measures decoding rather than loading."""

    def __init__(self, port: int) -> None:
        self.port = port
        self._running: Any = None

    def url(self) -> str:
        if self._running is None:
            from specviz.app.site import bilingual_app, serve
            from specviz.models.loader import ModelCache
            from specviz.models.presets import default_preset, served_presets

            presets = served_presets()
            cache = ModelCache()
            cache.load_pair(default_preset(presets))
            self._running = serve(bilingual_app(presets, cache), port=self.port)
            print(f"serving the app at {self._running.url}", file=sys.stderr, flush=True)
        return str(self._running.url)

    def close(self) -> None:
        if self._running is not None:
            self._running.close()


@dataclass(frozen=True)
class Shot:
    """One scene: the files it writes into OUT and what they show."""

    files: tuple[str, ...]
    about: str
    take: Callable[..., None]  # (stage, *paths): a scene of screenshot_scenes


SHOTS: dict[str, Shot] = {
    "run": Shot(("screenshot-run.png",), "the live run: code example, 24 tokens", scenes.live_run),
    "copy": Shot(
        ("screenshot-copy.png",),
        "prompt lookup on the first editing example, a copy hovered, its source lit",
        scenes.copy,
    ),
    "race": Shot(
        ("screenshot-race.png",),
        "a race of three drafters on the code example, 32 tokens, dark theme",
        scenes.race,
    ),
    "present": Shot(
        ("screenshot-present.png", "screenshot-phone.png"),
        "presentation mode at 1280x720 after three Steps; then a 390x844 phone after Run",
        scenes.present,
    ),
    "ja": Shot(
        ("screenshot-ja.png",), "the Japanese page after a translation run", scenes.japanese
    ),
    "fable": Shot(("screenshot-fable.png",), "fable mode, stepped to a crossing-out", scenes.fable),
    "tree": Shot(
        ("screenshot-tree.png",),
        "the tree drafter, greedy, stepped to a cycle that kept an alternative",
        scenes.tree,
    ),
    "tree-sampled": Shot(
        ("screenshot-tree-sampled.png",),
        "the teaching tree at temperature 1, stepped to a cycle that struck a guess off",
        scenes.tree_sampled,
    ),
    "tree-present": Shot(
        ("screenshot-tree-present.png",),
        "presentation mode at 1280x720 with the tree drafter, greedy, after three Steps",
        scenes.tree_present,
    ),
    "tree-phone": Shot(
        ("screenshot-tree-phone.png",),
        "the tree drafter on a 390x844 phone, stepped twice",
        scenes.tree_phone,
    ),
    "heads": Shot(
        ("heads-panel.png",),
        "Medusa on the greedy code example, 32 tokens: the heads panel of its best cycle",
        scenes.heads,
    ),
    "lookahead": Shot(
        ("lookahead-window.png",),
        "lookahead decoding on the greedy code example, stepped to a kept pooled guess: its 2D window",
        scenes.lookahead,
    ),
    "configs": Shot(("screenshot-configs.png",), "the production configs tab", scenes.configs),
    "inspector": Shot(
        ("lab-inspector.png",),
        "the inspector on a rejected draft of a sampled story",
        scenes.inspector,
    ),
    "exactness": Shot(("lab-exactness.png",), "the exactness lab, sampled story", scenes.exactness),
    "speedup": Shot(
        ("lab-speedup.png",), "the speedup lab, greedy code, 48 tokens", scenes.speedup
    ),
    "trees": Shot(
        ("lab-trees.png",), "trees against the chain, greedy code, 48 tokens", scenes.trees
    ),
    "self-draft": Shot(
        ("lab-self-draft.png",),
        "heads and n-grams: lookahead against its paper, greedy code, 48 tokens",
        scenes.self_draft,
    ),
    "cost": Shot(("lab-cost.png",), "the verification-cost lab and its projection", scenes.cost),
    "tasks": Shot(("lab-tasks.png",), "the tasks lab, 32 tokens per task", scenes.tasks),
    "advisor": Shot(("lab-advisor.png",), "the advisor on the editing prompts", scenes.advisor),
    "report": Shot(
        ("screenshot-report.png",), "the HTML report of a 16-token run, offline", scenes.report
    ),
}


def add_screenshots_command(commands: Any) -> None:
    """Register `screenshots` on the CLI's subparsers."""
    parser = commands.add_parser(
        "screenshots", help="retake the README's and docs' screenshots in headless chromium"
    )
    parser.add_argument("out", nargs="?", type=Path, metavar="OUT", help="folder to write into")
    parser.add_argument(
        "which", nargs="*", metavar="WHICH", help=f"pictures to take (default: all): {_names()}"
    )
    parser.add_argument("--list", action="store_true", help="list the pictures and exit")
    parser.add_argument("--port", type=int, default=0, help="the app's port (default: a free one)")
    parser.add_argument("--chromium", type=Path, default=CHROMIUM, help="the chromium to drive")
    parser.set_defaults(run=_screenshots)


def _names() -> str:
    return ", ".join(SHOTS)


def _screenshots(args: argparse.Namespace) -> int:
    if args.list:
        for name, shot in SHOTS.items():
            print(f"{name:10} {', '.join(shot.files)}: {shot.about}")
        return 0
    if args.out is None:
        raise ValueError("name the folder to write the screenshots into (OUT), or ask for --list")
    unknown = [name for name in args.which if name not in SHOTS]
    if unknown:
        raise ValueError(f"unknown screenshot {unknown[0]!r}; known: {_names()}")
    if not args.chromium.exists():
        raise ValueError(f"no chromium at {args.chromium} (bash scripts/setup.sh --test)")
    try:
        from playwright.sync_api import expect, sync_playwright
    except ImportError:
        raise ValueError(
            "screenshots need Playwright: pip install -r requirements-test.txt"
        ) from None
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    expect.set_options(timeout=WAIT_MS)
    args.out.mkdir(parents=True, exist_ok=True)
    site = Site(args.port)
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=str(args.chromium), headless=True, args=list(CHROMIUM_ARGS)
            )
            stage = scenes.Stage(browser, site.url)
            for name in args.which or SHOTS:
                began = time.perf_counter()
                paths = [args.out / file for file in SHOTS[name].files]
                try:
                    SHOTS[name].take(stage, *paths)
                finally:
                    stage.close_pages()
                for path in paths:
                    print(path, flush=True)
                print(f"{name}: {time.perf_counter() - began:.0f} s", file=sys.stderr, flush=True)
            browser.close()
    finally:
        site.close()
    return 0
