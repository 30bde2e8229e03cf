"""The real app on the bundled pair, launched once per test session and shared by UI tests.

Not a test module: test_ui.py and test_browser.py import ``live_app`` from here (pytest puts
tests/ on sys.path), and functools.cache makes both get the same server and loaded models.
"""

from __future__ import annotations

import atexit
import functools
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")


@functools.cache
def live_app() -> str:
    """Load the bundled pair, launch the app on a free localhost port, return its URL."""
    from conftest import shared_model_cache

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
