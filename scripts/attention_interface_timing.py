"""The grouped float32 attention as a registered transformers attention: does it keep the lean step's speed?

Registers specviz's grouped_attention through transformers' AttentionInterface under the name
"specviz_grouped", with a Cache whose layers hold float32 keys and values in preallocated buffers
(LeanCache's layout), so the model's OWN forward runs the float32 grouped attention. Checks its
logits against the lean step, then times three forwards of one new token after CONTEXT cached
tokens, in alternating blocks of 20 steps (same process):
  transformers  the model's forward with its default (SDPA) attention and a DynamicCache
  registered    the model's forward with "specviz_grouped" attention and the float32 cache
  lean          specviz's LeanDecoder
    .venv/bin/python scripts/attention_interface_timing.py [draft|target|both] [BLOCKS] [CONTEXT]
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
from transformers import AttentionInterface, Cache
from transformers.cache_utils import DynamicLayer

from specviz.core.model_steps import new_cache
from specviz.models.lean_forward import LeanDecoder, grouped_attention


class Float32Layer(DynamicLayer):
    """One layer's keys and values in float32, preallocated; crop only shortens the length."""

    def lazy_initialization(self, key_states: torch.Tensor, value_states: torch.Tensor) -> None:
        self.dtype, self.device = torch.float32, key_states.device
        self.length = 0
        self.keys = torch.empty(0, dtype=torch.float32, device=self.device)
        self.values = torch.empty_like(self.keys)
        self.is_initialized = True

    def update(
        self, key_states: torch.Tensor, value_states: torch.Tensor, *args: Any, **kwargs: Any
    ):
        if not self.is_initialized:
            self.lazy_initialization(key_states, value_states)
        start, end = self.length, self.length + key_states.shape[-2]
        if self.keys.numel() == 0 or self.keys.shape[-2] < end:
            capacity = max(end, 2 * (self.keys.shape[-2] if self.keys.numel() else 0), 256)
            shape = (*key_states.shape[:-2], capacity, key_states.shape[-1])
            keys = torch.empty(shape, dtype=torch.float32, device=self.device)
            values = torch.empty_like(keys)
            if start:
                keys[..., :start, :] = self.keys[..., :start, :]
                values[..., :start, :] = self.values[..., :start, :]
            self.keys, self.values = keys, values
        self.keys[..., start:end, :] = key_states
        self.values[..., start:end, :] = value_states
        self.length = end
        return self.keys[..., :end, :], self.values[..., :end, :]

    def get_seq_length(self) -> int:
        return self.length if self.is_initialized else 0

    def crop(self, tokens_to_remove: int) -> None:
        if self.is_initialized:
            self.length = max(0, self.length + tokens_to_remove)


def float32_cache(model: torch.nn.Module) -> Cache:
    return Cache(layers=[Float32Layer() for _ in range(model.config.num_hidden_layers)])


def registered_attention(
    module: torch.nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    scaling: float | None = None,
    **kwargs: Any,
) -> tuple[torch.Tensor, None]:
    """(1, H, L, D) queries against the float32 cache: grouped float32 attention, causal."""
    length, positions = query.shape[2], key.shape[2]
    mask = None
    if length > 1:  # lower-right causal alignment: query i sees keys up to positions - length + i
        keys_at = torch.arange(positions, device=query.device)
        queries_at = torch.arange(positions - length, positions, device=query.device)
        zero = torch.zeros((), dtype=torch.float32, device=query.device)
        mask = torch.where(keys_at[None, :] <= queries_at[:, None], zero, -torch.inf)
        mask = mask.view(1, 1, length, positions)
    out = grouped_attention(query[0], key[0], value[0], float(scaling), mask)  # (H, L, D)
    return out.transpose(0, 1).unsqueeze(0), None


AttentionInterface.register("specviz_grouped", registered_attention)


def main() -> None:
    from specviz.models.loader import ModelCache
    from specviz.models.presets import default_preset, load_presets

    which = sys.argv[1] if len(sys.argv) > 1 else "both"
    blocks = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    context_length = int(sys.argv[3]) if len(sys.argv) > 3 else 250
    pair = ModelCache().load_pair(default_preset(load_presets()))
    for role in ("draft", "target") if which == "both" else (which,):
        run(pair.draft if role == "draft" else pair.target, role, blocks, context_length)


def run(model: Any, which: str, blocks: int, context_length: int) -> None:
    default_kernel = model.config._attn_implementation
    lean = LeanDecoder(model)
    context = torch.arange(100, 100 + context_length).view(1, -1)
    token = torch.tensor([[9]])
    with torch.inference_mode():
        own_cache, registered_cache, lean_cache = (
            new_cache(model),
            float32_cache(model),
            lean.new_cache(),
        )
        own = model(input_ids=context, past_key_values=own_cache, logits_to_keep=1).logits
        model.config._attn_implementation = "specviz_grouped"
        registered = model(
            input_ids=context, past_key_values=registered_cache, logits_to_keep=1
        ).logits
        model.config._attn_implementation = default_kernel
        got = lean(input_ids=context, past_key_values=lean_cache, logits_to_keep=1).logits
        print(
            f"{which}: largest logit difference vs lean: transformers "
            f"{(own.float() - got.float()).abs().max().item():.4f}, registered "
            f"{(registered.float() - got.float()).abs().max().item():.4f}"
        )

        def transformers_step() -> None:
            model(input_ids=token, past_key_values=own_cache, logits_to_keep=1)
            own_cache.crop(-1)

        def registered_step() -> None:
            model.config._attn_implementation = "specviz_grouped"
            model(input_ids=token, past_key_values=registered_cache, logits_to_keep=1)
            registered_cache.crop(-1)
            model.config._attn_implementation = default_kernel

        def lean_step() -> None:
            lean(input_ids=token, past_key_values=lean_cache, logits_to_keep=1)
            lean_cache.crop(-1)

        steps: dict[str, Callable[[], None]] = {
            "transformers": transformers_step,
            "registered": registered_step,
            "lean": lean_step,
        }
        times: dict[str, list[float]] = {name: [] for name in steps}
        for _ in range(blocks):
            for name, step in steps.items():
                for _ in range(3):
                    step()
                began = time.perf_counter()
                for _ in range(20):
                    step()
                times[name].append((time.perf_counter() - began) / 20 * 1000)
                print(f"  {which} {name}: {times[name][-1]:.1f} ms/step", flush=True)
    lean_median = statistics.median(times["lean"])
    for name, values in times.items():
        rounded = [round(value, 1) for value in values]
        ratio = statistics.median(values) / lean_median
        print(
            f"{which} {name:>12}: {statistics.median(values):6.1f} ms/step  "
            f"({ratio:.2f} x lean)  blocks {rounded}"
        )


if __name__ == "__main__":
    main()
