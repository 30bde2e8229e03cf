"""Shared fixtures: tiny real models for fast tests, the bundled pair for slow ones, and the tiny
app served over HTTP for the API tests.

Fixtures only: what tests build from (the tiny models, hand-built records, the servers) lives in
the helper modules beside this file (tiny_models.py, rule_drafters.py, ui_events.py, ...), which
tests import by name; pytest puts tests/ on sys.path, because this file sits there. Test modules
never import from one another nor from a conftest. Fast tests never load the bundled pair; slow
tests share one loaded pair per session.
"""

from __future__ import annotations

import os

os.environ["HF_HUB_OFFLINE"] = "1"  # tests never touch the network
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

from typing import Any

import pytest
from tiny_models import EOS_ID, ByteTokenizer, TinyPair, tiny_qwen
from ui_fixtures import shared_model_cache


@pytest.fixture(scope="session", autouse=True)
def patient_launch_check() -> Any:
    """Gradio's launch() asks its own page for a HEAD answer within 3 s and, on the first
    timeout, refuses to start ("When localhost is not accessible, a shareable link must be
    created"). On a machine whose cores are busy the page can take longer to render, so the
    servers the tests launch wait for it instead, as long as the browser tests wait for
    anything (two minutes), with each answer given 30 s."""
    import time

    import httpx
    from gradio import networking

    def answers(url: str) -> bool:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if httpx.head(url, timeout=30, verify=False).status_code < 400:
                    return True
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        return False

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(networking, "url_ok", answers)
        yield


@pytest.fixture(scope="session")
def tiny_pair() -> TinyPair:
    """Two different tiny Qwen2 models sharing the byte tokenizer."""
    return TinyPair(tiny_qwen(1), tiny_qwen(2, layers=3), ByteTokenizer(), frozenset({EOS_ID}))


@pytest.fixture(scope="session")
def model_cache() -> Any:
    """The session's one model cache (ui_fixtures.shared_model_cache), which the live app uses."""
    return shared_model_cache()


@pytest.fixture(scope="session")
def bundled_pair(model_cache: Any) -> Any:
    """The real bundled pair as the app runs it (bfloat16 target, the preset's int8 draft)."""
    from specviz.models.presets import default_preset, load_presets

    return model_cache.load_pair(default_preset(load_presets()))


@pytest.hookimpl(trylast=True)  # after -m and -k have deselected what they leave out
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked ``forks`` fork the test process (the ZeroGPU stand-in). A fork copies only
    the thread that forks: whatever another thread held at the fork (a lock, torch's OpenMP
    pool) stays held in the child. So in a run with other tests, which leave servers and worker
    threads running, they are skipped here and run by tests/app/test_forks_isolated.py in a fresh
    process, in every full run; run alone (``-m forks``, or their file) they run as they are."""
    if all(item.get_closest_marker("forks") for item in items):
        return
    isolated = pytest.mark.skip(reason="forks: run in a fresh process by test_forks_isolated.py")
    for item in items:
        if item.get_closest_marker("forks"):
            item.add_marker(isolated)


@pytest.fixture(scope="module")
def url() -> str:
    """The app on the tiny pair in hosted mode, served once per session (hosted_fixtures);
    a module that serves something else defines its own url."""
    from hosted_fixtures import tiny_app

    return tiny_app(True)


@pytest.fixture(scope="module")
def client(url: str) -> Any:
    """A gradio_client Client of *url*."""
    from gradio_client import Client

    return Client(url, verbose=False)
