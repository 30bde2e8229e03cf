"""How much the lean decoding step saves: one new token after a CONTEXT-token context, both ways.

Times transformers' forward (its default SDPA attention) and specviz's LeanDecoder on the bundled
pair in alternating blocks of 20 steps (same process, same cache length), reports how far apart
their logits are (the lean step computes attention in float32, see specviz/models/lean_forward.py), and
prints the median per-step time of each:
    .venv/bin/python scripts/lean_step_timing.py [draft|target] [BLOCKS] [CONTEXT]
"""

import os
import statistics
import sys
import time
from collections.abc import Callable

import torch

os.environ["HF_HUB_OFFLINE"] = "1"
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from specviz.core.model_steps import new_cache
from specviz.models.lean_forward import LeanDecoder, lean_decoder
from specviz.models.loader import ModelCache
from specviz.models.presets import default_preset, load_presets

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
    reference_cache, lean_cache = new_cache(model), lean.new_cache()
    expected = model(input_ids=context, past_key_values=reference_cache, logits_to_keep=1).logits
    got = lean(input_ids=context, past_key_values=lean_cache, logits_to_keep=1).logits
    difference = (expected.float() - got.float()).abs().max().item()
    print(f"{which}: largest logit difference, transformers (SDPA) vs lean: {difference:.3f}")

    def transformers_step() -> None:
        model(input_ids=token, past_key_values=reference_cache, logits_to_keep=1)
        reference_cache.crop(-1)

    def lean_step() -> None:
        lean(input_ids=token, past_key_values=lean_cache, logits_to_keep=1)
        lean_cache.crop(-1)

    steps: dict[str, Callable[[], None]] = {"transformers": transformers_step, "lean": lean_step}
    times: dict[str, list[float]] = {name: [] for name in steps}
    for _ in range(blocks):
        for name, step in steps.items():
            for _ in range(3):
                step()
            began = time.perf_counter()
            for _ in range(20):
                step()
            times[name].append((time.perf_counter() - began) / 20 * 1000)
for name, values in times.items():
    rounded = [round(value, 1) for value in values]
    print(f"{which} {name:>12}: {statistics.median(values):6.1f} ms/step  blocks {rounded}")
