"""Does the UI slow the engine? App-reported tok/s vs the engine alone, and time to first cycle.

Same process, same pair, same prompt and settings, alternating runs (the machine is noisy):
    .venv/bin/python scripts/app_speed.py [MAX_NEW_TOKENS]
"""

import os
import statistics
import sys
import time

os.environ["HF_HUB_OFFLINE"] = "1"
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from gradio_client import Client

from specviz.app.builder import build_demo, launch_options
from specviz.core.engine import GenerationSettings, speculative_generate
from specviz.drafters.draft_model import ModelDrafter
from specviz.models.loader import ModelCache
from specviz.models.presets import default_preset, load_presets

presets = load_presets()
preset = default_preset(presets)
cache = ModelCache()
pair = cache.load_pair(preset)
demo = build_demo(presets, cache).queue()
_, url, _ = demo.launch(prevent_thread_lock=True, quiet=True, **launch_options())
client = Client(url, verbose=False)
PROMPT = preset.prompts["code"][0]
N = int(sys.argv[1]) if len(sys.argv) > 1 else 64
settings = GenerationSettings(
    gamma=preset.gamma,
    adaptive_gamma=preset.adaptive_gamma,
    max_new_tokens=N,
    draft_stop_below=preset.draft_stop_below,
)
controls = (preset.id, PROMPT, True, preset.gamma, preset.adaptive_gamma, 0.0, 0, 1.0, 0, N, False)


def direct() -> tuple[float, int]:
    """The engine alone: tokens/s of its own compute time."""
    cycles = list(
        speculative_generate(pair, pair.encode_prompt(PROMPT), settings, ModelDrafter(pair.draft))
    )
    return cycles[-1].totals.tokens_per_s, cycles[-1].totals.new_tokens


def via_ui() -> tuple[float, int, float | None]:
    """The app's /run endpoint: the tokens/s it reports, and when the first cycle arrived."""
    began = time.perf_counter()
    first = None
    job = client.submit(*controls, api_name="/run")
    for out in job:
        if first is None and 'class="sv-cut"' in out[1]:
            first = time.perf_counter() - began
    stats = job.outputs()[-1][-1]
    return stats["totals"]["tokens_per_s"], stats["totals"]["new_tokens"], first


direct()  # warm-up
engine_rates, app_rates, firsts = [], [], []
for _ in range(3):
    rate, tokens = direct()
    app_rate, app_tokens, first = via_ui()
    engine_rates.append(rate)
    app_rates.append(app_rate)
    firsts.append(first or float("nan"))
    print(
        f"engine alone {rate:.2f} tok/s ({tokens}) | app {app_rate:.2f} tok/s ({app_tokens}) | "
        f"first cycle shown after {first:.2f} s",
        flush=True,
    )
ratio = statistics.median(app_rates) / statistics.median(engine_rates)
print(
    f"median engine {statistics.median(engine_rates):.2f}  app {statistics.median(app_rates):.2f}  "
    f"ratio {ratio:.3f}  first-cycle median {statistics.median(firsts):.2f} s"
)
demo.close()
