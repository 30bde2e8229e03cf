"""Why does transformers' assisted generation win some benchmark rows? Count what each one does.

Runs specviz and `generate(assistant_model=...)` on the same bundled pair, prompt, γ and draft
confidence stop, and reports target passes, draft forwards, whether the texts are identical, and
the draft's probability for the first drafted token in each (it depends on how the draft is fed):
    .venv/bin/python scripts/compare_transformers.py [TASK] [GAMMA] [DRAFT_QUANTIZATION]
GAMMA is a number, or a5 for adaptive γ starting at 5 (transformers' "heuristic" schedule).
DRAFT_QUANTIZATION is none, int8 or int8wo (default: the bundled preset's).
"""

import os
import sys
import time
from dataclasses import replace

import torch

os.environ["HF_HUB_OFFLINE"] = "1"
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from specviz.core.engine import (
    GenerationSettings,
    autoregressive_generate,
    speculative_generate,
)
from specviz.drafters.draft_model import ModelDrafter
from specviz.models.lean_forward import LeanDecoder
from specviz.models.loader import ModelCache
from specviz.models.presets import default_preset, load_presets

task = sys.argv[1] if len(sys.argv) > 1 else "rewriting"
gamma_arg = sys.argv[2] if len(sys.argv) > 2 else "5"
adaptive = gamma_arg.startswith("a")
gamma = int(gamma_arg.removeprefix("a"))
preset = default_preset(load_presets())
if len(sys.argv) > 3:
    preset = replace(preset, draft_quantization=sys.argv[3])
print(
    f"{task}, γ={'adaptive ' if adaptive else ''}{gamma}, draft quantization {preset.draft_quantization}"
)
pair = ModelCache().load_pair(preset)
prompt_ids = pair.encode_prompt(preset.prompts[task][0], chat=preset.chat_template)
settings = GenerationSettings(
    gamma=gamma,
    adaptive_gamma=adaptive,
    max_new_tokens=64,
    draft_stop_below=preset.draft_stop_below,
)

calls: list[tuple[str, int, float]] = []  # (model, tokens fed, draft prob of its top token)
target_forward, draft_forward = pair.target.forward, pair.draft.forward
lean_call = LeanDecoder.__call__


def count(model: str, fed: int, logits: torch.Tensor) -> None:
    probability = 0.0
    if model == "draft":
        probability = float(torch.softmax(logits[0, -1].float(), dim=-1).max())
    calls.append((model, fed, probability))


def counted_target(*args, **kwargs):
    out = target_forward(*args, **kwargs)
    count("target", kwargs["input_ids"].shape[1], out.logits)
    return out


def counted_draft(*args, **kwargs):
    out = draft_forward(*args, **kwargs)
    count("draft", kwargs["input_ids"].shape[1], out.logits)
    return out


def counted_lean(self, **kwargs):
    """specviz runs Llama/Qwen2 models through their lean step, not model.forward."""
    out = lean_call(self, **kwargs)
    count(
        "target" if self.model is pair.target else "draft", kwargs["input_ids"].shape[1], out.logits
    )
    return out


def report(name: str, seconds: float, tokens: int, first_used: int) -> None:
    """first_used: the index of the first draft forward whose output became a drafted token."""
    target = [fed for model, fed, _ in calls if model == "target"]
    draft = [(fed, prob) for model, fed, prob in calls if model == "draft"]
    first_draft_prob = draft[first_used][1] if len(draft) > first_used else float("nan")
    # Both verify their first drafts in the forward that reads the prompt (a prefill that verified
    # nothing is dropped). Count verifying passes and the positions they scored (last prompt token
    # + drafts) alike for both.
    prompt_len = prompt_ids.shape[1]
    if target and target[0] < prompt_len:
        target = target[1:]  # a prefill that verified nothing
    elif target:
        target = [target[0] - (prompt_len - 1), *target[1:]]
    print(
        f"{name:>13}: {tokens / seconds:5.2f} tok/s | target verifying passes {len(target)}, "
        f"positions scored {sum(target)} | draft forwards {len(draft)}, "
        f"tokens fed per draft forward {sorted({fed for fed, _ in draft[1:]})} | "
        f"first drafted token's draft prob {first_draft_prob:.3f}"
    )


pair.target.forward, pair.draft.forward = counted_target, counted_draft
LeanDecoder.__call__ = counted_lean
plain = [step.token.token_id for step in autoregressive_generate(pair, prompt_ids, settings)]
calls.clear()
began = time.perf_counter()
cycles = list(speculative_generate(pair, prompt_ids, settings, ModelDrafter(pair.draft)))
ours = [token.token_id for cycle in cycles for token in cycle.emitted]
# Both read the whole prompt in the forward that drafts the first token.
report("specviz", time.perf_counter() - began, len(ours), first_used=0)
calls.clear()
draft_config = pair.draft.generation_config  # the same γ and confidence stop as specviz
draft_config.num_assistant_tokens = gamma
draft_config.num_assistant_tokens_schedule = "heuristic" if adaptive else "constant"
draft_config.assistant_confidence_threshold = settings.draft_stop_below
began = time.perf_counter()
with torch.inference_mode():
    output = pair.target.generate(
        prompt_ids,
        attention_mask=torch.ones_like(prompt_ids),
        assistant_model=pair.draft,
        max_new_tokens=64,
        do_sample=False,
        eos_token_id=sorted(pair.eos_token_ids),
        pad_token_id=pair.tokenizer.pad_token_id,
    )
seconds = time.perf_counter() - began
theirs = output[0, prompt_ids.shape[1] :].tolist()
# transformers drafts its first token straight from the whole-prompt prefill.
report("transformers", seconds, len(theirs), first_used=0)
print(f"identical text: specviz == plain {ours == plain}, transformers == plain {theirs == plain}")
