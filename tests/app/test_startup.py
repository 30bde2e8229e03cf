"""Ready when the room is: the default pair loads and warms up at start-up, not on the first Step."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from tiny_models import load_tiny_models, tiny_local_preset

from specviz.app.builder import build_demo
from specviz.app.gpu_work import Runs
from specviz.app.session import App, Session, Started
from specviz.app.startup import Startup
from specviz.core.events import Cycle
from specviz.core.settings import GenerationSettings
from specviz.models import loader
from specviz.text import Phrase

PRESET = tiny_local_preset(
    settings=GenerationSettings(gamma=3, max_new_tokens=6, stop_on_eos=False),
    default=True,
    prompts={"code": ("def fib(n):",)},
)


@pytest.fixture
def tiny_models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The loader reads tiny models instead of files; the refs it was asked to read."""
    return load_tiny_models(monkeypatch, tmp_path)


def first_step(app: App) -> None:
    """One Step as the browser's Step button asks for it (``Runs.play``, one cycle)."""
    inputs = app.checks.inputs(PRESET.id, "def fib(n):", {}, chat=False, race=False)
    records = list(Runs(app, remote=False).play(Session(), inputs, take=1))
    assert isinstance(records[0], Started) and isinstance(records[-1], Cycle)


def test_the_first_step_after_start_up_loads_no_model(tiny_models: list[str]) -> None:
    app = App({PRESET.id: PRESET}, loader.ModelCache())
    startup = Startup(app, PRESET)
    startup.run()
    assert startup.phase == "ready" and startup.ready.is_set()
    assert app.cache.loads == 2 and sorted(tiny_models) == ["draft", "target"]
    assert startup.banner_html("en") == ""
    first_step(app)
    assert app.cache.loads == 2  # the Step found both models in the cache


def test_without_start_up_the_first_step_loads_the_pair(tiny_models: list[str]) -> None:
    app = App({PRESET.id: PRESET}, loader.ModelCache())
    assert app.cache.loads == 0
    first_step(app)
    assert app.cache.loads == 2


def test_the_page_says_what_start_up_is_doing(tiny_models: list[str]) -> None:
    startup = Startup(App({PRESET.id: PRESET}, loader.ModelCache()), PRESET)
    startup.phase = "loading"
    startup._report(0.4, Phrase("load.target", ref="target"))
    loading = startup.banner_html("en")
    assert 'data-phase="loading"' in loading and "40%" in loading and "target" in loading
    startup.phase = "warming"
    assert "Warming up" in startup.banner_html("en")


def test_a_failed_start_up_says_why_and_leaves_loading_to_the_first_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("disk unplugged")

    monkeypatch.setattr(loader, "load_tokenizer", refuse)
    startup = Startup(App({PRESET.id: PRESET}, loader.ModelCache()), PRESET)
    startup.run()
    assert startup.phase == "failed" and startup.ready.is_set()
    assert "disk unplugged" in startup.banner_html("en")


def test_build_demo_starts_loading_in_the_background(tiny_models: list[str]) -> None:
    cache = loader.ModelCache()
    demo = build_demo({PRESET.id: PRESET}, cache, startup=True)
    ids = [block.elem_id for block in demo.blocks.values() if getattr(block, "elem_id", None)]
    assert "sv-startup" in ids
    (thread,) = [thread for thread in threading.enumerate() if thread.name == "specviz-startup"]
    thread.join(timeout=120)
    assert not thread.is_alive() and cache.loads == 2
