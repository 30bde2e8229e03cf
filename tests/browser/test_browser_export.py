"""Exports and replay in Debian's chromium: a trace recorded by ``python -m specviz generate
--trace`` replays in the app (no model loaded) with the recorded tokens and colours, an upload
replays too, a finished run offers its downloads, and the report page draws with no network.

Screenshots go to the test's tmp_path (``python -m specviz screenshots`` retakes the docs' pictures).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from browser_checks import WAIT_MS, needs_chromium, settled

pytestmark = [pytest.mark.browser, pytest.mark.slow, needs_chromium]

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A run of the bundled pair recorded by the command line, with its plain lane and report."""
    folder = tmp_path_factory.mktemp("recorded")
    paths = {name: folder / name for name in ("t.json", "t.csv", "report.html")}
    command = [sys.executable, "-m", "specviz", "generate", "--prompt", "def fibonacci(n):"]
    command += ["--max-new-tokens", "16", "--plain", "--trace", str(paths["t.json"])]
    command += ["--csv", str(paths["t.csv"]), "--report", str(paths["report.html"])]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    assert all(path.exists() for path in paths.values())
    return paths


def replay_app(trace: Path) -> Any:
    """The app with *trace* to replay on page load, over a model cache that fails any load."""
    from specviz.app.builder import build_demo, launch_options
    from specviz.export.trace import read_trace_file
    from specviz.models.loader import ModelCache
    from specviz.models.presets import load_presets

    class NoLoading(ModelCache):
        def load_pair(self, *args: Any, **kwargs: Any) -> Any:
            raise AssertionError("a replay loaded a model")

    demo = build_demo(load_presets(), NoLoading(), replay=read_trace_file(trace))
    demo.queue()
    demo.launch(server_name="127.0.0.1", prevent_thread_lock=True, quiet=True, **launch_options())
    return demo


def expected_tokens(trace: dict[str, Any]) -> list[tuple[str, str]]:
    """(origin, token id as written in the stream's data-seq order) per token, from the file:
    each cycle's accepted drafts, then its rejected and untested ones, then its extra token."""
    tokens = []
    for cycle in trace["cycles"]:
        accepted = cycle["accepted_len"]
        for token in cycle["drafted"]:
            verdict = "accepted" if token["accepted"] else "rejected"
            verdict = verdict if token["tested"] else "untested"
            tokens.append((verdict, str(token["seq_index"])))
        tokens += [
            (token["origin"], str(token["seq_index"])) for token in cycle["emitted"][accepted:]
        ]
    return tokens


def rendered_tips(path: Path) -> list[str]:
    """Every token's data-tip in the stream the views render from the trace file."""
    from html.parser import HTMLParser

    from specviz.export.trace import read_trace_file
    from specviz.views.run_html import stream_html

    tips: list[str] = []

    class Tips(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            values = dict(attrs)
            if "sv-tok" in (values.get("class") or "").split():
                tips.append(values.get("data-tip") or "")

    Tips().feed(stream_html(read_trace_file(path).cycles))
    return tips


def shown_tokens(page: Any, selector: str) -> list[tuple[str, str]]:
    spans = page.locator(f"{selector} .sv-tok")
    return [
        (span.get_attribute("data-origin"), span.get_attribute("data-seq")) for span in spans.all()
    ]


def test_a_recorded_trace_replays_with_its_tokens_and_colours(browser, recorded, tmp_path):
    from playwright.sync_api import expect

    trace = json.loads(recorded["t.json"].read_text())
    assert trace["plain"], "the run was recorded with its plain lane"
    demo = replay_app(recorded["t.json"])
    try:
        page = browser.new_context(viewport={"width": 1440, "height": 1800}).new_page()
        page.goto(demo.local_url)
        status = page.locator("#sv-status")
        status.locator(":text('Replay of a run of')").wait_for(timeout=60_000)
        page.wait_for_selector("#sv-status .sv-status-done", timeout=120_000)
        assert trace["recorded_at"] in status.inner_text()
        assert trace["hardware"]["cpu"] in status.inner_text()
        assert page.locator("#sv-prompt textarea").input_value() == trace["prompt"]["text"]

        assert shown_tokens(page, "#sv-stream") == expected_tokens(trace)
        # Each token's tooltip names the token with its q, p and u: the same as rendered from
        # the file's records without a browser.
        tips = [span.get_attribute("data-tip") for span in page.locator("#sv-stream .sv-tok").all()]
        assert tips == rendered_tips(recorded["t.json"])
        # The colours are the app's: an accepted token is drawn in the accepted hue.
        accepted = page.locator("#sv-stream .sv-tok.sv-accepted").first
        colour = accepted.evaluate("e => getComputedStyle(e).backgroundColor")
        assert colour == "rgba(0, 114, 178, 0.16)"  # a tint of --sv-accepted, Okabe-Ito blue
        tokens = int(page.locator('#sv-counters [data-stat="tokens"] .sv-stat-value').inner_text())
        assert tokens == trace["summary"]["specviz"]["new_tokens"]
        # The race shows both lanes at their measured speeds, and the speedup recorded.
        race = page.locator("#sv-race")
        speedup = float(race.locator(".sv-speedup").get_attribute("data-speedup"))
        assert speedup == pytest.approx(trace["summary"]["specviz"]["speedup"], abs=1e-3)
        expect(race.locator(".sv-plain .sv-tok")).to_have_count(len(trace["plain"]))
        settled(page, "#sv-tab-live", charts=5)  # the cards' flip ends, the charts drawn
        page.screenshot(path=str(tmp_path / "screenshot-replay.png"), full_page=True)

        # The same file, uploaded, replays again.
        page.locator("#sv-replay-upload input[type=file], input[type=file]").first.set_input_files(
            str(recorded["t.json"])
        )
        page.wait_for_selector("#sv-status .sv-status-info", timeout=60_000)
        page.wait_for_selector("#sv-status .sv-status-done", timeout=120_000)
        assert shown_tokens(page, "#sv-stream") == expected_tokens(trace)

        # A file that is no trace is refused in words.
        bad = tmp_path / "bad.json"
        bad.write_text("{not json")
        page.locator("input[type=file]").first.set_input_files(str(bad))
        page.get_by_text("it is not JSON").first.wait_for(timeout=30_000)
    finally:
        demo.close()


def test_the_report_draws_its_charts_offline(browser, recorded, tmp_path):
    from playwright.sync_api import expect

    context = browser.new_context(viewport={"width": 1200, "height": 900}, offline=True)
    page = context.new_page()
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(recorded["report.html"].as_uri())
    page.wait_for_selector(".js-plotly-plot .main-svg", timeout=WAIT_MS)
    expect(page.locator(".js-plotly-plot")).to_have_count(4, timeout=WAIT_MS)
    settled(page, "body", charts=4)  # all four drawn, nothing moving
    assert [url for url in requests if not url.startswith("file:")] == []
    expect(page.locator(".sv-race .sv-speedup[data-speedup]")).to_have_count(1, timeout=WAIT_MS)
    page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
    context.close()


def test_a_finished_run_offers_its_downloads(browser):
    from ui_fixtures import live_app

    page = browser.new_context(viewport={"width": 1440, "height": 1800}).new_page()
    page.goto(live_app())
    page.wait_for_selector("#sv-run")
    assert page.locator("#sv-export-trace button, button#sv-export-trace").first.is_disabled()
    box = page.locator("#sv-max-new-tokens input[type=number]")
    box.fill("8")
    box.press("Enter")
    page.locator("#sv-run").click()
    page.wait_for_selector("#sv-status .sv-status-done", timeout=120_000)
    button = page.locator("#sv-export-trace button, button#sv-export-trace").first
    page.wait_for_function("b => !b.disabled", arg=button.element_handle(), timeout=30_000)
    with page.expect_download() as download:
        button.click()
    trace = json.loads(Path(download.value.path()).read_text())
    assert trace["schema"] == "specviz.trace" and trace["summary"]["specviz"]["new_tokens"] == 8
    page.context.close()


def test_a_trace_recorded_without_plain_decoding_replays_without_an_error(
    browser, recorded, tmp_path
):
    """`generate --trace t.json` alone records no plain lane and no race: the replay then has
    frames with nothing new to draw, which must not reach Gradio as an empty update (it read
    one as a single output value and showed "didn't return enough output values")."""
    trace = json.loads(recorded["t.json"].read_text())
    trace["plain"] = trace["race"] = None
    trace["summary"]["specviz"].pop("speedup", None)
    alone = tmp_path / "alone.json"
    alone.write_text(json.dumps(trace))
    demo = replay_app(alone)
    try:
        page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
        page.goto(demo.local_url)
        page.wait_for_selector("#sv-status .sv-status-done", timeout=120_000)
        assert shown_tokens(page, "#sv-stream") == expected_tokens(trace)
        assert page.locator(".toast-body.error").count() == 0
        assert not page.get_by_text("output values").count()
    finally:
        demo.close()
