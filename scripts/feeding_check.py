"""Does the draft's distribution depend on how it is fed? Full forward vs prefill(T-1) + 1 token.

    .venv/bin/python scripts/feeding_check.py none int8 int8wo

For each draft quantization and three of the bundled preset's prompts, prints the largest
difference in next-token log-probability at the last prompt position between one forward over the
whole prompt and a forward over all but the last token followed by the last token alone, and the
top token's probability both ways. Dynamic int8 scales activations per forward, so it differs a lot.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch

from specviz.core.model_steps import new_cache, prefill
from specviz.models.loader import ModelCache
from specviz.models.presets import default_preset, load_presets


def main(modes: list[str]) -> None:
    preset = default_preset(load_presets())
    cache = ModelCache()
    tokenizer = cache.tokenizer(preset.target, False, lambda *_: None)
    for mode in modes:
        model = cache.model(
            preset.draft, torch.device("cpu"), torch.bfloat16, False, "draft", lambda *_: None, mode
        )
        print(mode)
        for task in ("rewriting", "code", "story"):
            text = tokenizer.apply_chat_template(
                [{"role": "user", "content": preset.prompts[task][0]}],
                add_generation_prompt=True,
                tokenize=False,
            )
            ids = torch.tensor([tokenizer(text, add_special_tokens=False)["input_ids"]])
            with torch.inference_mode():
                full = model(input_ids=ids).logits[0, -1].float().log_softmax(-1)
                kv = new_cache(model)
                prefill(model, ids, kv)  # all but the last token
                last = model(input_ids=ids[:, -1:], past_key_values=kv, use_cache=True)
                step = last.logits[0, -1].float().log_softmax(-1)
            top = int(full.argmax())
            print(
                f"  {task:10} T={ids.shape[1]} max |Δ log p| = {float((full - step).abs().max()):.4f}"
                f"  top-token p: full {float(full[top].exp()):.3f}, stepped {float(step[top].exp()):.3f}"
            )


if __name__ == "__main__":
    main(sys.argv[1:] or ["none", "int8", "int8wo"])
