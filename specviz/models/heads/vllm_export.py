"""Trained heads written as the Medusa checkpoint vLLM serves (``method: "medusa"``).

vLLM's Medusa draft (``vllm/model_executor/models/medusa.py``) reads a folder with a config of
``model_type: "medusa"`` and weights named ``blocks.{k}.layers.{j}.weight`` (and ``.bias`` when
``medusa_fc_bias`` is set) for head k's residual layers, computing x + SiLU(W x + b) per layer
as specviz's blocks do (specviz.models.heads.block), and ``lm_heads.{k}.weight`` for each head's
output layer. specviz's heads share the target's output layer, so the folder carries that layer
once as ``lm_heads.0.weight`` with ``original_lm_head: true``, which vLLM loads as one layer for
every head. vLLM proposes each head's first choice, a chain of K tokens; specviz's ``medusa``
drafter verifies a tree of the heads' top choices, so the serving config says it is the nearest
equivalent, not the same drafter.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import save_file

from specviz.models.heads.block import MedusaHeads

CONFIG_FILE = "config.json"
WEIGHTS_FILE = "model.safetensors"


def first_heads(heads: MedusaHeads, count: int | None) -> MedusaHeads:
    """The first *count* heads (all for None): vLLM drafts with every head its folder holds."""
    if count is None or count == heads.count:
        return heads
    if not 1 <= count <= heads.count:
        raise ValueError(f"{count} heads asked for, {heads.count} trained")
    kept = MedusaHeads(count, heads.width)
    kept.blocks = torch.nn.ModuleList(list(heads.blocks)[:count])
    return kept


def vllm_medusa_config(heads: MedusaHeads, vocab_size: int) -> dict[str, Any]:
    """The config.json vLLM's MedusaConfig reads for these heads: one residual layer each, with
    its bias, and the target's own output layer shared by every head."""
    return {
        "architectures": ["MedusaModel"],
        "model_type": "medusa",
        "hidden_size": heads.width,
        "vocab_size": vocab_size,
        "truncated_vocab_size": vocab_size,
        "num_heads": heads.count,
        "num_hidden_layers": 1,
        "medusa_fc_bias": True,
        "original_lm_head": True,
    }


def vllm_medusa_tensors(heads: MedusaHeads, output_weight: torch.Tensor) -> dict[str, torch.Tensor]:
    """The checkpoint's tensors under vLLM's names, in bfloat16 (the target's own dtype)."""
    tensors = {}
    for index, block in enumerate(heads.blocks):
        linear = block.linear  # type: ignore[union-attr]
        tensors[f"blocks.{index}.layers.0.weight"] = linear.weight
        tensors[f"blocks.{index}.layers.0.bias"] = linear.bias
    tensors["lm_heads.0.weight"] = output_weight
    return {
        name: value.detach().to("cpu", torch.bfloat16).contiguous()
        for name, value in tensors.items()
    }


def export_vllm_medusa(heads: MedusaHeads, output_weight: torch.Tensor, folder: Path) -> Path:
    """Write the folder vLLM's ``--speculative-config '{"method": "medusa", "model": FOLDER}'``
    loads; returns it. *output_weight* is the target's output layer (V, H)."""
    if output_weight.shape[1] != heads.width:
        raise ValueError(f"output layer {tuple(output_weight.shape)} is not {heads.width} wide")
    folder.mkdir(parents=True, exist_ok=True)
    save_file(vllm_medusa_tensors(heads, output_weight), str(folder / WEIGHTS_FILE))
    config = vllm_medusa_config(heads, int(output_weight.shape[0]))
    (folder / CONFIG_FILE).write_text(json.dumps(config, indent=1) + "\n")
    return folder
