"""How faithful is bfloat16 decoding of the bundled target? Each attention path against float32.

Feeds three bundled example prompts (story, code, rewriting; chat-templated, one sequence) to the
target in bfloat16 through transformers' forward with SDPA attention, with eager attention, and
through specviz's lean step, and compares each position's next-token distribution with the same
weights run in float32 (SDPA): mean and largest KL(float32 || bfloat16), and how often the argmax
agrees:
    .venv/bin/python scripts/attention_fidelity.py
"""

import os
import sys

import torch

os.environ["HF_HUB_OFFLINE"] = "1"
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from specviz.core.model_steps import new_cache
from specviz.models.lean_forward import lean_decoder
from specviz.models.loader import ModelCache
from specviz.models.presets import default_preset, load_presets

preset = default_preset(load_presets())
models = ModelCache()
pair = models.load_pair(preset)
prompts = [preset.prompts[task][0] for task in ("story", "code", "rewriting")]
ids = torch.cat([pair.encode_prompt(text, chat=preset.chat_template) for text in prompts], dim=1)
positions = ids.shape[1]
target = pair.target
float32 = models.model(preset.target, pair.device, torch.float32, False, "target", lambda *_: None)


def report(name: str, logits: torch.Tensor) -> None:
    log_q = logits.float().log_softmax(-1)
    kl = (reference.exp() * (reference - log_q)).sum(-1)
    agree = (log_q.argmax(-1) == reference.argmax(-1)).float().mean().item()
    print(
        f"{name:>24}: mean KL {kl.mean().item():.5f}  largest {kl.max().item():.4f}  "
        f"argmax agrees {100 * agree:.1f} %"
    )


with torch.inference_mode():
    float32.set_attn_implementation("sdpa")
    out = float32(input_ids=ids, past_key_values=new_cache(float32), logits_to_keep=positions)
    reference = out.logits[0].float().log_softmax(-1)
    print(f"{positions} positions, bfloat16 target against float32")
    loaded = target.config._attn_implementation
    for attention in ("sdpa", "eager"):
        target.set_attn_implementation(attention)
        out = target(input_ids=ids, past_key_values=new_cache(target), logits_to_keep=positions)
        report(f"transformers, {attention}", out.logits[0])
    target.set_attn_implementation(loaded)
    lean = lean_decoder(target)
    out = lean(input_ids=ids, past_key_values=lean.new_cache(), logits_to_keep=positions)
    report("specviz lean step", out.logits[0])
