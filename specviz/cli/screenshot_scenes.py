"""The scenes `python -m specviz screenshots` takes: each drives the app in chromium to one picture.

A scene opens fresh pages on a ``Stage``, sets up a run as a visitor would (an example, a few
settings, a button), waits on conditions in the page only (``specviz.cli.browser_waits``: a
status line saying done, the event stream over, the cards' flip and the charts settled) and
writes its PNG files. The command and the list of scenes: ``specviz.cli.screenshots``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from specviz.cli.browser_waits import NEXT_FRAME_JS, WAIT_MS, at_least, events_over, settled
from specviz.drafters.registry import drafter_label
from specviz.text import t
from specviz.views.guide_html import SEEN_KEY

# Run in a page before its own scripts: the guide counts as closed before, so it does not open by
# itself over what a picture or a test looks at (storage can be refused: about:blank's is).
GUIDE_SEEN_JS = f"try {{ localStorage.setItem({SEEN_KEY!r}, '1'); }} catch (error) {{}}"

# A run, a race or a lab on the bundled pair, on a shared 2-core CPU with the browser drawing
# beside it, can take many minutes: the wait for its end, not for the page's own work.
RUN_MS = 30 * 60_000
FIBONACCI = "fibonacci"  # the code example the live run, the race and the greedy labs use


@dataclass
class Stage:
    """What a scene works with: the browser, the app, and the pages it opened (closed after)."""

    browser: Any
    url: Callable[[], str]  # the app's address, served on first use
    contexts: list[Any] = field(default_factory=list)

    def context(self, width: int, height: int, **options: Any) -> Any:
        """A fresh browser context whose every wait lasts up to WAIT_MS, the guide closed."""
        context = self.browser.new_context(viewport={"width": width, "height": height}, **options)
        context.set_default_timeout(WAIT_MS)
        context.add_init_script(GUIDE_SEEN_JS)
        self.contexts.append(context)
        return context

    def open(self, width: int, height: int, path: str = "", **options: Any) -> Any:
        """A page of the app at *path* (``?fable=1``, ``ja/``), its controls drawn."""
        page = self.context(width, height, **options).new_page()
        page.goto(self.url() + path)
        page.wait_for_selector("#sv-run")
        return page

    def close_pages(self) -> None:
        """Close every page the scene opened."""
        for context in self.contexts:
            context.close()
        self.contexts.clear()


def _set_number(page: Any, elem_id: str, value: float) -> None:
    """Type into a slider's number box (Gradio pairs a range with a number input)."""
    box = page.locator(f"#{elem_id} input[type=number]")
    box.fill(str(value))
    box.press("Enter")


# The example tasks' labels in the catalogue, each key whole.
TASK_KEYS = {
    "code": "task.code",
    "story": "task.story",
    "editing": "task.editing",
    "translation": "task.translation",
}


def _example(
    page: Any, task: str, text: str, tokens: int, temperature: float | None = None, lang: str = "en"
) -> None:
    """Pick the example of *task* that holds *text*, then set the new tokens (and temperature)."""
    from playwright.sync_api import expect

    page.get_by_role("radio", name=t(TASK_KEYS[task], lang), exact=True).check()
    page.locator("#sv-examples").get_by_text(text, exact=False).first.click()
    # The click fills the prompt through a server event.
    expect(page.locator("#sv-prompt textarea")).to_have_value(re.compile(re.escape(text)))
    _set_number(page, "sv-max-new-tokens", tokens)
    if temperature is not None:
        _set_number(page, "sv-temperature", temperature)


def _finish(page: Any, button: str, status: str = "#sv-status") -> None:
    """Press *button* and wait until *status* says the work is done; its words if it failed."""
    page.locator(button).click()
    page.wait_for_selector(
        f"{status} .sv-status-done, {status} .sv-status-error, .toast-body.error", timeout=RUN_MS
    )
    if page.locator(f"{status} .sv-status-done").count() == 0:
        raise RuntimeError(f"{button} failed: {page.locator(status).inner_text()}")


def _tab(page: Any, name: str) -> None:
    """Open the tab *name* (live, inspector, exactness, ..., configs)."""
    from playwright.sync_api import expect

    page.locator(f"#sv-tab-{name}-button").click()
    expect(page.locator(f"#sv-tab-{name}")).to_be_visible()


def _tab_shot(page: Any, name: str, out: Path) -> None:
    """The tab *name* alone, once its charts are drawn and nothing in it moves."""
    settled(page, f"#sv-tab-{name}")
    page.locator(f"#sv-tab-{name}").screenshot(path=str(out))


def _choose_drafter(page: Any, kind: str) -> None:
    """Pick *kind* in the live run's drafter menu, by its English label."""
    _choose_listed(page, drafter_label(kind, "en"))


def _choose_listed(page: Any, label: str) -> None:
    """Pick the drafter menu's entry *label* (a kind's, or a spec its entry lists)."""
    page.locator("#sv-drafter input").click()
    page.get_by_role("option", name=label, exact=True).click()


def _presenting(page: Any) -> None:
    """Tick presentation mode and wait for the page to take its layout."""
    page.locator("#sv-present-toggle input").check()
    page.wait_for_selector("#sv-page.sv-present")


def _step_cycles(page: Any, steps: int, shown: str, wanted: str = "") -> None:
    """Press Step up to *steps* times, each time waiting for that cycle's *shown* part under the
    cards; stop early at a cycle where *wanted* is on the page."""
    for step in range(1, steps + 1):
        page.locator("#sv-step").click()
        page.wait_for_selector(
            f"#sv-cards .sv-cards-wrap[data-cycle='{step}'] {shown}", timeout=RUN_MS
        )
        if wanted and page.locator(wanted).count():
            break


def _settled_live(page: Any) -> None:
    """The live tab drawn in full, its toasts hidden: ready for a picture."""
    settled(page, "#sv-tab-live")
    page.add_style_tag(content=".toast-wrap { display: none !important; }")


def live_run(stage: Stage, out: Path) -> None:
    """The live tab after a 24-token greedy run of the code example, the whole page."""
    page = stage.open(1440, 1800)
    _example(page, "code", FIBONACCI, 24)
    _finish(page, "#sv-run")
    settled(page, "#sv-tab-live", charts=5)
    page.screenshot(path=str(out), full_page=True)


def race(stage: Stage, out: Path) -> None:
    """A race of the draft model, lookup and the hybrid against plain decoding, dark theme."""
    from playwright.sync_api import expect

    page = stage.open(1440, 1800, "?__theme=dark")
    _example(page, "code", FIBONACCI, 32)
    page.locator("#sv-race-toggle input").check()
    for label in ("drafter.lookup", "drafter.hybrid"):
        page.locator("#sv-race-drafters input").click()
        page.get_by_role("option", name=t(label), exact=True).click()
    page.locator("#sv-run").click()
    page.wait_for_selector("#sv-race .sv-race-status:text('finished')", timeout=RUN_MS)
    expect(page.locator("#sv-race .sv-race-panel")).to_have_count(4)
    settled(page, "#sv-tab-live", charts=5)
    page.screenshot(path=str(out), full_page=True)


# The first kept copy of a word from the prompt whose cycle copied three tokens or more (a span
# to see), left of the stream's middle (its tooltip opens to the right and below); marked with an
# id, its span returned.
PICK_COPY_JS = """() => {
  const stream = document.querySelector('#sv-stream .sv-stream').getBoundingClientRect();
  const copies = [...document.querySelectorAll('#sv-stream .sv-tok.sv-accepted[data-from-seq]')];
  const picked = copies.find((tok) => Number(tok.dataset.fromSeq) < 0
    && tok.dataset.fromSpan.split(' ').length >= 3 && /\\w\\w/.test(tok.textContent)
    && tok.getBoundingClientRect().left < stream.left + stream.width / 2);
  if (!picked) return null;
  picked.id = 'sv-picked-copy';
  return picked.dataset.fromSpan;
}"""

# The prompt strip, the stream and the picked copy's tooltip, with a margin, in the page's
# coordinates (a full-page screenshot's clip).
COPY_REGION_JS = """() => {
  const box = (sel) => document.querySelector(sel).getBoundingClientRect();
  const strip = box('#sv-prompt-strip'), stream = box('#sv-stream');
  const copy = document.querySelector('#sv-picked-copy');
  const at = copy.getBoundingClientRect();
  const tip = parseFloat(getComputedStyle(copy, '::after').height) || 200;
  const left = Math.min(strip.left, stream.left) - 12;
  const top = strip.top - 12 + window.scrollY;
  const bottom = Math.max(stream.bottom, at.bottom + tip + 40) + 12 + window.scrollY;
  return {x: left, y: top, width: Math.max(strip.right, stream.right) + 12 - left,
          height: bottom - top};
}"""


def copy(stage: Stage, out: Path) -> None:
    """Prompt lookup on the first editing example: a copy hovered, its tooltip, its source lit."""
    page = stage.open(1440, 1200, device_scale_factor=1)
    _choose_drafter(page, "lookup")
    _example(page, "editing", "Fix the bugs in this code: average", 56)
    _finish(page, "#sv-run")
    if not page.evaluate(PICK_COPY_JS):
        raise RuntimeError("no cycle copied three or more tokens from the prompt")
    page.locator("#sv-picked-copy").hover()
    at_least(page.locator("#sv-prompt-strip .sv-src"), 1)  # its source lit up
    settled(page, "#sv-tab-live")  # the tooltip drawn in full
    page.screenshot(path=str(out), clip=page.evaluate(COPY_REGION_JS), full_page=True)


def japanese(stage: Stage, out: Path) -> None:
    """The Japanese page (a ja-JP browser) after a translation run."""
    page = stage.open(1280, 800, "ja/", locale="ja-JP")
    _example(page, "translation", "Translate into Japanese", 24, lang="ja")
    _finish(page, "#sv-run")
    settled(page, "#sv-tab-live", charts=5)
    page.locator("#sv-status").scroll_into_view_if_needed()
    page.evaluate(NEXT_FRAME_JS)
    page.screenshot(path=str(out))


STEPS = 8  # fable: Step presses at most, looking for a cycle with a crossing-out


def fable(stage: Stage, out: Path) -> None:
    """Fable mode, stepped to a cycle with a crossing-out, the story first."""
    page = stage.open(1280, 900, "?fable=1")
    page.wait_for_selector("#sv-fable .sv-fable", state="visible")
    story = page.locator("#sv-fable .sv-fable-current")
    # A cycle with a rejection (the crossing-out, the master's own word, the wiped slate) past
    # the first two, else the last of STEPS.
    for step in range(1, STEPS + 1):
        page.locator("#sv-step").click()
        page.wait_for_selector(f"#sv-fable .sv-fable-current[data-cycle='{step}']", timeout=RUN_MS)
        if story.locator(".sv-rejected").count() and step > 2:
            break
    _settled_live(page)
    page.evaluate("document.querySelector('#sv-stream').scrollIntoView()")
    page.evaluate(NEXT_FRAME_JS)
    page.screenshot(path=str(out))


# A tree cycle worth a picture: the target kept a guess other than the draft's first choice
# (where a chain would have stopped).
ALTERNATIVE_KEPT = ".sv-tree .sv-tnode[data-verdict='accepted']:not([data-rank='1'])"


def tree(stage: Stage, out: Path) -> None:
    """The tree drafter, greedy, stepped to a cycle that kept an alternative (else the last of
    STEPS): the cards and the draft tree under them."""
    page = stage.open(1280, 900)
    _choose_drafter(page, "tree")
    _step_cycles(page, STEPS, ".sv-tree", ALTERNATIVE_KEPT)
    _settled_live(page)
    page.locator("#sv-cards").screenshot(path=str(out))


# A sampled tree cycle worth a picture: one guess struck off from the leaves up, a path kept.
LEAF_STRUCK = (
    ".sv-tree:has(.sv-tnode[data-verdict='rejected']):has(.sv-tnode[data-verdict='accepted'])"
)


def tree_sampled(stage: Stage, out: Path) -> None:
    """The teaching tree (2x2x1) at temperature 1 on the robot story, stepped to a cycle that
    struck a guess off and kept a path (else the last of STEPS): the cards and the tree, whose
    line under its head tells the leaf-to-root rule."""
    page = stage.open(1280, 900)
    _sampled(page)
    _choose_listed(page, t("drafter.tree.shape", "en"))
    _step_cycles(page, STEPS, ".sv-tree", LEAF_STRUCK)
    _settled_live(page)
    page.locator("#sv-cards").screenshot(path=str(out))


def tree_present(stage: Stage, out: Path) -> None:
    """Presentation mode at 1280x720 with the tree drafter, greedy, after three Steps: the
    cycle's tree drawn large under its head line, opened on the kept path, and its cards."""
    page = stage.open(1280, 720)
    _choose_drafter(page, "tree")
    _presenting(page)
    _step_cycles(page, 3, ".sv-tree")
    page.wait_for_selector("#sv-cards .sv-tree-scroll[data-centred]")
    _settled_live(page)
    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=str(out))


def tree_phone(stage: Stage, out: Path) -> None:
    """The tree drafter on a 390x844 phone, stepped twice: the second cycle's cards and tree,
    which scrolls sideways within its panel."""
    page = stage.open(390, 844)
    _choose_drafter(page, "tree")
    _step_cycles(page, 2, ".sv-tree")
    _settled_live(page)
    page.locator("#sv-cards").screenshot(path=str(out))


# The cycle whose kept path is longest (the latest of those): the one where the most heads were
# right, its number.
MOST_KEPT_JS = """() => {
  const cycles = [...document.querySelectorAll('#sv-stream .sv-cycle[data-accepted]')];
  const most = cycles.reduce((best, cycle) =>
    Number(cycle.dataset.accepted) >= Number(best.dataset.accepted) ? cycle : best);
  return Number(most.dataset.cycle);
}"""


def heads(stage: Stage, out: Path) -> None:
    """Medusa on the greedy code example, 32 tokens, shown at the cycle that kept the most
    guesses: its heads panel (the run's agreement up to it beside the held-out text's, and each
    head's guesses). Needs the bundled target's heads trained (``heads train``)."""
    page = stage.open(1280, 1000)
    _choose_drafter(page, "medusa")
    _greedy(page, tokens=32)
    _finish(page, "#sv-run")
    cycle = page.evaluate(MOST_KEPT_JS)
    page.locator(f"#sv-stream .sv-cut[data-cycle='{cycle}']").click()  # the player goes there
    panel = page.locator(f"#sv-cards .sv-cards-wrap[data-cycle='{cycle}'] .sv-heads")
    panel.wait_for()
    _settled_live(page)
    panel.screenshot(path=str(out))


# A lookahead cycle worth a picture: its window read n-grams into the pool and the target kept
# one of the pooled guesses (the figure's whole loop in one cycle).
GUESS_KEPT = ".sv-look[data-grams]:not([data-grams='0']):not([data-kept-guess='-1'])"
LOOKAHEAD_STEPS = 24  # Step presses at most, looking for such a cycle


def lookahead(stage: Stage, out: Path) -> None:
    """Lookahead decoding on the greedy code example, stepped to a cycle that kept a pooled
    guess (else the last of LOOKAHEAD_STEPS): the cycle's 2D window, n-grams and guesses."""
    page = stage.open(1280, 900, device_scale_factor=2)
    _greedy(page)
    _choose_drafter(page, "lookahead")
    _step_cycles(page, LOOKAHEAD_STEPS, ".sv-look", GUESS_KEPT)
    _settled_live(page)
    page.locator("#sv-cards .sv-look").screenshot(path=str(out))


def _viewport(page: Any, width: int, height: int) -> None:
    """Resize the page, wait until it has laid itself out again, and scroll to its top."""
    page.set_viewport_size({"width": width, "height": height})
    page.wait_for_function("(width) => window.innerWidth === width", arg=width)
    settled(page, "#sv-page", charts=5)  # the charts have followed the new width
    page.evaluate("window.scrollTo(0, 0)")
    page.evaluate(NEXT_FRAME_JS)


def present(stage: Stage, out: Path, phone: Path) -> None:
    """Presentation mode at 1280x720 after three Steps, the whole cycle on one screen; then a
    390x844 phone after Run, scrolled where Run takes it (the status line over the stream)."""
    page = stage.open(1280, 720)
    _presenting(page)
    for cycle in (1, 2, 3):
        page.locator("#sv-step").click()
        page.wait_for_selector(f'#sv-stream .sv-stream[data-cycles="{cycle}"]', timeout=RUN_MS)
    _viewport(page, 1280, 720)
    page.screenshot(path=str(out))
    page = stage.open(390, 844)
    _set_number(page, "sv-max-new-tokens", 24)
    page.locator("#sv-run").click()
    page.wait_for_selector("#sv-status .sv-status-done", timeout=RUN_MS)
    settled(page, "#sv-stream")
    page.locator("#sv-status").scroll_into_view_if_needed()
    page.evaluate("document.getElementById('sv-status').scrollIntoView({block: 'start'})")
    page.evaluate(NEXT_FRAME_JS)
    page.screenshot(path=str(phone))


def configs(stage: Stage, out: Path) -> None:
    """The production configs tab for the default preset."""
    page = stage.open(1440, 1200)
    _tab(page, "configs")
    _tab_shot(page, "configs", out)


def _sampled(page: Any) -> None:
    """The robot story, sampled at temperature 1, 32 tokens: rejections to inspect."""
    _example(page, "story", "robot", 32, temperature=1)


def _greedy(page: Any, tokens: int = 48) -> None:
    """The fibonacci example, greedy."""
    _example(page, "code", FIBONACCI, tokens, temperature=0)


def _lab(page: Any, name: str, button: str, status: str, out: Path) -> None:
    """Open the lab *name*, press *button*, wait for *status* to say done, shoot the tab."""
    _tab(page, name)
    _finish(page, button, status)
    _tab_shot(page, name, out)


def inspector(stage: Stage, out: Path) -> None:
    """The inspector on the first rejected draft of a sampled story run."""
    from playwright.sync_api import expect

    page = stage.open(1440, 1200)
    _sampled(page)
    _finish(page, "#sv-run")
    rejected = page.locator("#sv-stream .sv-tok.sv-rejected")
    if rejected.count() == 0:
        raise RuntimeError("the sampled run had no rejected draft to inspect; take it again")
    rejected.first.click()  # opens the inspector on it
    page.wait_for_selector("#sv-inspect .sv-inspect-table")
    expect(page.locator("#sv-tab-inspector")).to_be_visible()
    _tab_shot(page, "inspector", out)


def exactness(stage: Stage, out: Path) -> None:
    """The exactness lab on the sampled story."""
    page = stage.open(1440, 1200)
    _sampled(page)
    _lab(page, "exactness", "#sv-exact-run", "#sv-exact-status", out)


def speedup(stage: Stage, out: Path) -> None:
    """The speedup lab on the greedy code example."""
    page = stage.open(1440, 1200)
    _greedy(page)
    _lab(page, "speedup", "#sv-speedup-run", "#sv-speedup-status", out)


def trees(stage: Stage, out: Path) -> None:
    """Trees against the chain on the greedy code example: the section under the speedup lab,
    from its heading to its summary."""
    page = stage.open(1440, 1400)
    _greedy(page)
    _tab(page, "speedup")
    _finish(page, "#sv-trees-run", "#sv-trees-status")
    _section_shot(page, "#sv-trees-intro", "#sv-trees-summary", out)


def self_draft(stage: Stage, out: Path) -> None:
    """Lookahead against its paper on the greedy code example: the section under the speedup
    lab, from its heading to its summary."""
    page = stage.open(1440, 1400)
    _greedy(page)
    _tab(page, "speedup")
    _finish(page, "#sv-self-draft-run", "#sv-self-draft-status")
    _section_shot(page, "#sv-self-draft-intro", "#sv-self-draft-summary", out)


def _section_shot(page: Any, top_id: str, bottom_id: str, out: Path) -> None:
    """The part of the speedup tab from *top_id* down to *bottom_id*, once nothing in it moves."""
    settled(page, "#sv-tab-speedup")
    page.evaluate("window.scrollTo(0, 0)")  # boxes in the page's coordinates, as clip takes them
    top = page.locator(top_id).bounding_box()
    bottom = page.locator(bottom_id).bounding_box()
    if top is None or bottom is None:
        raise RuntimeError(f"{top_id} and {bottom_id} are not on the page")
    page.screenshot(
        path=str(out),
        full_page=True,
        clip={
            "x": top["x"],
            "y": top["y"],
            "width": top["width"],
            "height": bottom["y"] + bottom["height"] - top["y"],
        },
    )


def cost(stage: Stage, out: Path) -> None:
    """The verification-cost lab, then its projection onto the default GPU."""
    page = stage.open(1440, 1200)
    _greedy(page)
    _tab(page, "cost")
    _finish(page, "#sv-cost-run", "#sv-cost-status")
    with events_over(page):
        page.locator("#sv-project").click()  # the roofline projection onto the default GPU
    _tab_shot(page, "cost", out)


def tasks(stage: Stage, out: Path) -> None:
    """The tasks lab, 32 tokens per task."""
    page = stage.open(1440, 1200)
    _greedy(page, tokens=32)
    _lab(page, "tasks", "#sv-tasks-run", "#sv-tasks-status", out)


def advisor(stage: Stage, out: Path) -> None:
    """The advisor on the editing prompts."""
    page = stage.open(1440, 1200)
    _greedy(page, tokens=32)
    _tab(page, "advisor")
    page.locator("#sv-advisor-task input").click()
    page.get_by_role("option", name=t("task.editing"), exact=True).click()
    # The default size (every drafter, the preset's draft format, γ 2, 3, 5, 8 and adaptive, 32
    # tokens) but a 240 s budget: with the browser sharing the cores no run is cut short.
    _set_number(page, "sv-advisor-budget", 240)
    _finish(page, "#sv-advisor-run", "#sv-advisor-status")
    _tab_shot(page, "advisor", out)


def report(stage: Stage, out: Path) -> None:
    """The HTML report of a 16-token run with its plain lane, opened offline."""
    from playwright.sync_api import expect

    with tempfile.TemporaryDirectory() as folder:
        html = Path(folder) / "report-page.html"
        command = [sys.executable, "-m", "specviz", "generate", "--prompt", "def fibonacci(n):"]
        command += ["--max-new-tokens", "16", "--plain", "--report", str(html)]
        env = {**os.environ, "TOKENIZERS_PARALLELISM": "false"}
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"generate --report failed: {done.stderr.strip()[-2000:]}")
        page = stage.context(1200, 900, offline=True).new_page()  # the report needs no network
        page.goto(html.as_uri())
        expect(page.locator(".js-plotly-plot")).to_have_count(4)
        settled(page, "body", charts=4)
        page.screenshot(path=str(out), full_page=True)
