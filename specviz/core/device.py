"""Where a model runs, and waiting for it: the two device steps the engine and drafters take.

torch alone, no transformers: the KV cache helpers that need transformers live in
specviz.models.model_steps.
"""

from __future__ import annotations

import torch

__all__ = ["device_of", "sync"]


def device_of(model: torch.nn.Module) -> torch.device:
    """The device a model's weights (or, for weightless models, its buffers) live on."""
    for tensor in (*model.parameters(), *model.buffers()):
        return tensor.device
    return torch.device("cpu")


def sync(device: torch.device) -> None:
    """Wait for queued GPU work so that wall-clock timings mean what they say."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
