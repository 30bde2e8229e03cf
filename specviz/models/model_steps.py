"""Small steps every decoder takes with a transformers causal LM: make and fill a KV cache.

specviz.models.runner.ModelRunner owns the forward and cache the engine and labs use; these
helpers serve it and the scripts that drive transformers' forward directly.
"""

from __future__ import annotations

import torch
from transformers import DynamicCache

__all__ = ["new_cache", "prefill"]


def new_cache(model: torch.nn.Module) -> DynamicCache:
    """A fresh KV cache laid out for the model (sliding-window layers where its config says so)."""
    return DynamicCache(config=getattr(model, "config", None))


@torch.inference_mode()
def prefill(model: torch.nn.Module, prompt_ids: torch.Tensor, cache: DynamicCache) -> None:
    """Fill the cache with every prompt token but the last, which the first decode step feeds.

    Holding back one token makes every later step uniform: each forward starts from a token the
    model has not seen yet, whether that is the prompt's last token or the last one emitted.
    """
    if prompt_ids.shape[1] > 1:
        model(
            input_ids=prompt_ids[:, :-1],
            past_key_values=cache,
            use_cache=True,
            logits_to_keep=1,
        )
