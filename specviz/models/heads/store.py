"""Where a target's trained heads live: the specviz cache, one folder per target, named by a hash
of the target's weights, so heads are never read for a model they were not trained on.

A folder holds the heads (safetensors) and their report (JSON: how they were trained, and their
agreement with the target on held-out text), written together once training ends; the
features and the checkpoint a resumed training continues from sit beside them meanwhile.
"""

from __future__ import annotations

import hashlib
import json
import weakref
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save_file

from specviz.models.bundled import cache_root
from specviz.models.heads.block import MedusaHeads

HEADS_FILE = "medusa-heads.safetensors"
REPORT_FILE = "medusa-heads.json"

_fingerprints: weakref.WeakKeyDictionary[torch.nn.Module, str] = weakref.WeakKeyDictionary()


def weights_fingerprint(model: torch.nn.Module) -> str:
    """SHA-256 of the model's weights (every distinct parameter, in order, its shape and its
    values rounded to bfloat16): what a target's heads are filed under. Rounded, so the same
    model loaded in float32 (the exactness tests) finds the heads its bfloat16 self trained.
    Computed once per model object."""
    known = _fingerprints.get(model)
    if known is not None:
        return known
    digest = hashlib.sha256()
    seen: set[int] = set()
    for parameter in model.parameters():
        if parameter.data_ptr() in seen:  # a tied output layer is the embedding itself
            continue
        seen.add(parameter.data_ptr())
        data = parameter.detach().to("cpu", torch.bfloat16).contiguous().reshape(-1)
        digest.update(f"{tuple(parameter.shape)}{data.dtype}".encode())
        digest.update(data.view(torch.uint8).numpy().tobytes())
    fingerprint = digest.hexdigest()
    _fingerprints[model] = fingerprint
    return fingerprint


def heads_folder(model: torch.nn.Module) -> Path:
    """The target's folder under the specviz cache (SPECVIZ_CACHE moves it)."""
    return cache_root() / "heads" / weights_fingerprint(model)[:24]


def save_heads(heads: MedusaHeads, folder: Path, report: dict[str, Any]) -> None:
    """Write the heads (bfloat16: the blocks are what is stored, E is the target's) and their
    report; the report is written last, so a folder with a report has its heads."""
    folder.mkdir(parents=True, exist_ok=True)
    tensors = {
        name: value.detach().to(torch.bfloat16) for name, value in heads.state_dict().items()
    }
    partial = folder / (HEADS_FILE + ".partial")
    save_file(tensors, str(partial))
    partial.replace(folder / HEADS_FILE)
    (folder / REPORT_FILE).write_text(json.dumps(report, indent=1, sort_keys=True) + "\n")


def read_report(folder: Path) -> dict[str, Any] | None:
    """The report of the heads trained in *folder*, None if none were."""
    path = folder / REPORT_FILE
    if not path.is_file() or not (folder / HEADS_FILE).is_file():
        return None
    report: dict[str, Any] = json.loads(path.read_text())
    return report


def load_heads(folder: Path) -> MedusaHeads | None:
    """The heads trained in *folder*, in float32, or None if none were."""
    if read_report(folder) is None:
        return None
    tensors = load_file(str(folder / HEADS_FILE))
    count = sum(1 for name in tensors if name.endswith(".linear.weight"))
    hidden = tensors["blocks.0.linear.weight"].shape[0]
    heads = MedusaHeads(count, hidden)
    heads.load_state_dict({name: value.float() for name, value in tensors.items()})
    return heads.eval()
