"""Whether a pair fits before it is loaded: its weights counted from file headers, against the
memory this process may still take.

A server that keeps one pair for a room (hosted mode) must not drop the pair in use for one that
then does not fit: it checks here first and keeps the old pair until the new one has loaded. The
parameters are read from what describes the weights without loading them: safetensors headers
(8 bytes of length, then JSON naming each tensor's shape), a GGUF's tensor table, or the hub's
metadata; the bytes follow from the dtype the pair will run in.
"""

from __future__ import annotations

import json
import math
import os
import struct
from collections.abc import Iterable
from pathlib import Path

import torch

from specviz.core.machine import read_machine
from specviz.models.presets import ModelSource

# What a loaded model holds beyond its weights (buffers, a run's caches and activations, the
# allocator's slack), and what the rest of the server needs: a pair fits when weights x this
# margin plus the reserve are free.
MARGIN = 1.25
RESERVE_BYTES = 512 * 2**20
# A Q4_K_M GGUF stores about 4.85 bits a weight: its size in bytes x 8 / 4.85 parameters.
_GGUF_BITS = 4.85


def safetensors_parameters(paths: Iterable[Path]) -> int:
    """Parameters in safetensors files, read from their headers only."""
    total = 0
    for path in paths:
        with path.open("rb") as file:
            (length,) = struct.unpack("<Q", file.read(8))
            header = json.loads(file.read(length))
        total += sum(
            math.prod(entry["shape"])
            for name, entry in header.items()
            if name != "__metadata__" and isinstance(entry, dict)
        )
    return total


def gguf_parameters(path: Path) -> int:
    """Parameters in a GGUF file, from its tensor table (memory-mapped, nothing dequantized)."""
    from gguf import GGUFReader

    return sum(int(tensor.n_elements) for tensor in GGUFReader(str(path)).tensors)


def folder_parameters(folder: Path) -> int | None:
    """Parameters of a save_pretrained folder's safetensors files; None when it has none."""
    files = sorted(folder.glob("*.safetensors")) if folder.is_dir() else []
    return safetensors_parameters(files) if files else None


def source_parameters(source: ModelSource) -> int | None:
    """The model's parameter count as far as it can be read without loading it: its converted
    or downloaded files, its GGUF, or the hub's metadata; None when nothing says."""
    from specviz.models.bundled import BUNDLED, cache_root

    if source.kind == "local":
        return folder_parameters(Path(source.ref))
    if source.kind == "gguf":
        path = Path(source.ref).expanduser()
        return gguf_parameters(path) if path.is_file() else None
    if source.kind == "bundled":
        bundled = BUNDLED.get(source.ref)
        if bundled is None:
            return None
        converted = folder_parameters(cache_root() / "bundled" / bundled.name / "converted")
        return converted or int(bundled.size * 8 / _GGUF_BITS)
    return hub_parameters(source)


def hub_parameters(source: ModelSource) -> int | None:
    """A hub model's parameters: from its files in the local hub cache, else the hub's safetensors
    metadata (not when offline); None when neither answers."""
    try:
        from huggingface_hub import HfApi, snapshot_download
    except ImportError:  # pragma: no cover - transformers depends on it
        return None
    try:
        folder = snapshot_download(
            source.ref, revision=source.revision, local_files_only=True, allow_patterns=["*.json"]
        )
        counted = folder_parameters(Path(folder))
        if counted:
            return counted
    except Exception:  # not cached here: the hub may still know
        pass
    if os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0"):
        return None
    try:
        info = HfApi().model_info(source.ref, revision=source.revision, timeout=10)
    except Exception:  # unreachable or unknown: size not known
        return None
    metadata = getattr(info, "safetensors", None)
    return int(metadata.total) if metadata is not None and metadata.total else None


def pair_bytes(sources: Iterable[ModelSource], dtype: torch.dtype) -> int | None:
    """Bytes the sources' weights take in *dtype* (one byte a weight for the int8 draft formats
    is not counted: the estimate stays on the safe side); None when any size is unknown."""
    counts = [source_parameters(source) for source in sources]
    if any(count is None for count in counts):
        return None
    element = torch.tensor([], dtype=dtype).element_size()
    return sum(counts) * element  # type: ignore[arg-type]


def available_bytes(device: torch.device) -> int | None:
    """Memory this process can still take on *device*: the GPU's free memory, else the lesser of
    the kernel's MemAvailable and the container's cgroup limit less its use; None if unknown."""
    if device.type == "cuda":
        free, _ = torch.cuda.mem_get_info(device)
        return int(free)
    kernel = read_machine().memory_available_bytes
    candidates = [value for value in (kernel, _cgroup_room()) if value is not None]
    return min(candidates) if candidates else None


def needed_bytes(weights: int) -> int:
    """What a pair of *weights* bytes needs free to load and run: the margin and the reserve."""
    return int(weights * MARGIN) + RESERVE_BYTES


def _cgroup_room() -> int | None:
    """The cgroup v2 limit less current use (a Space's container), or None without a limit."""
    base = Path("/sys/fs/cgroup")
    try:
        limit = (base / "memory.max").read_text().strip()
        if limit == "max":
            return None
        return int(limit) - int((base / "memory.current").read_text().strip())
    except (OSError, ValueError):
        return None
