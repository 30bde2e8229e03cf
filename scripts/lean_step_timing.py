"""How much the lean decoding step saves: one new token after a CONTEXT-token context, three ways.

Checks that specviz's LeanDecoder gives the logits of transformers' eager attention (the
attention specviz loads Llama/Qwen2 models with) bit for bit on the bundled pair, then times
transformers' forward with its default SDPA kernel, transformers' forward with eager attention and
the lean step in alternating blocks of 20 steps (same process, same cache length) and prints the
median per-step time of each:
    .venv/bin/python scripts/lean_step_timing.py [draft|target] [BLOCKS] [CONTEXT]
"""

import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import torch

os.environ["HF_HUB_OFFLINE"] = "1"
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from specviz.lean_forward import LeanDecoder, lean_decoder
from specviz.model_steps import new_cache
from specviz.models import ModelCache
from specviz.presets import default_preset, load_presets

which = sys.argv[1] if len(sys.argv) > 1 else "draft"
blocks = int(sys.argv[2]) if len(sys.argv) > 2 else 3
context_length = int(sys.argv[3]) if len(sys.argv) > 3 else 60
pair = ModelCache().load_pair(default_preset(load_presets()))
model = pair.draft if which == "draft" else pair.target
lean = lean_decoder(model)
assert isinstance(lean, LeanDecoder), "the bundled models are Qwen2: the lean step applies"
context = torch.arange(100, 100 + context_length).view(1, -1)
token = torch.tensor([[9]])

with torch.inference_mode():
    model.set_attn_implementation("eager")
    eager_cache, lean_cache = new_cache(model), lean.new_cache()
    expected = model(input_ids=context, past_key_values=eager_cache, logits_to_keep=1).logits
    got = lean(input_ids=context, past_key_values=lean_cache, logits_to_keep=1).logits
    assert torch.equal(expected, got), "the lean step must give transformers' eager logits exactly"
    sdpa_cache = new_cache(model)
    model.set_attn_implementation("sdpa")
    model(input_ids=context, past_key_values=sdpa_cache, logits_to_keep=1)

    def transformers_step(cache: Any) -> None:
        model(input_ids=token, past_key_values=cache, logits_to_keep=1)
        cache.crop(-1)

    def lean_step() -> None:
        lean(input_ids=token, past_key_values=lean_cache, logits_to_keep=1)
        lean_cache.crop(-1)

    # name: (transformers' attention for the block, one step)
    steps: dict[str, tuple[str, Callable[[], None]]] = {
        "transformers sdpa": ("sdpa", lambda: transformers_step(sdpa_cache)),
        "transformers eager": ("eager", lambda: transformers_step(eager_cache)),
        "lean": ("eager", lean_step),
    }
    times: dict[str, list[float]] = {name: [] for name in steps}
    for _ in range(blocks):
        for name, (attention, step) in steps.items():
            model.set_attn_implementation(attention)
            for _ in range(3):
                step()
            began = time.perf_counter()
            for _ in range(20):
                step()
            times[name].append((time.perf_counter() - began) / 20 * 1000)
for name, values in times.items():
    rounded = [round(value, 1) for value in values]
    print(f"{which} {name:>18}: {statistics.median(values):6.1f} ms/step  blocks {rounded}")
