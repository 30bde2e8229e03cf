"""The real app on the bundled pair, launched once per test session and shared by UI tests.

Not a test module: the API and browser tests import ``live_app`` from here (pytest puts tests/ on
sys.path), and functools.cache makes them all get the same server and loaded models; conftest.py's
``model_cache`` fixture is ``shared_model_cache`` too, so the real pair is loaded once.
"""

from __future__ import annotations

import atexit
import functools
import os
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")


@functools.cache
def shared_model_cache() -> Any:
    """One in-process model cache for the whole session (tests and the live app share it), so
    the real pair is loaded into memory once."""
    from specviz.models.loader import ModelCache

    return ModelCache()


@functools.cache
def live_app() -> str:
    """Load the bundled pair, launch the app on a free localhost port, return its URL."""
    from specviz.app.builder import build_demo, launch_options
    from specviz.models.presets import default_preset, load_presets

    presets = load_presets()
    cache = shared_model_cache()
    # Load before serving, so a test's first Run measures generation rather than loading.
    cache.load_pair(default_preset(presets))
    demo = build_demo(presets, cache)
    demo.queue()
    _, url, _ = demo.launch(
        server_name="127.0.0.1", prevent_thread_lock=True, quiet=True, **launch_options()
    )
    atexit.register(demo.close)
    return str(url)
