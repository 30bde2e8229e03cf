"""One pass of the target over the corpus: what the heads learn from, cached on disk.

For each chunk of text the target runs one forward and we keep, per position t, its final normed
hidden state h_t (bfloat16) and the top few of its next-token probabilities p_t (soft labels):
no full-vocabulary row is ever written. Head k at position t learns p_{t+k}, the target's law of
token t + k + 1 (Cai et al., "Medusa", 2024, §2.3.2, self-distillation with soft labels).

Each chunk is one file named by its split, group and index in the group's fixed order, so a pass
cut short (the time budget, an interrupt) resumes where it stopped.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from specviz.models.bf16_rows import torch_products
from specviz.models.heads.corpus import GROUPS, documents


@dataclass(frozen=True)
class Chunk:
    """One chunk's features: hidden (L, H) bfloat16, top_ids (L, top) int32, top_probs (L, top)
    float16, row t describing position t."""

    group: str
    hidden: torch.Tensor
    top_ids: torch.Tensor
    top_probs: torch.Tensor


def token_chunks(tokenizer: Any, group: str, held_out: bool, length: int) -> Iterator[list[int]]:
    """The group's documents as one token stream (documents end with the end-of-text token), cut
    into chunks of *length* tokens."""
    end = getattr(tokenizer, "eos_token_id", None)
    pending: list[int] = []
    for document in documents(group, held_out):
        pending += list(tokenizer.encode(document.text))
        if end is not None:
            pending.append(int(end))
        while len(pending) >= length:
            yield pending[:length]
            pending = pending[length:]


@torch.inference_mode()
def target_features(model: torch.nn.Module, token_ids: list[int], top: int, group: str) -> Chunk:
    """The target's hidden states and top-*top* next-token probabilities over one chunk, from
    one forward (its base model, then its output layer, as its own forward computes them).
    Layers swapped for the row kernel run torch's product here: a chunk is hundreds of rows,
    which the kernel, written for a decoding step's few, computes more slowly."""
    wrapped: Any = model
    device = next(model.parameters()).device
    ids = torch.tensor([token_ids], device=device)
    with torch_products(model):
        hidden = wrapped.model(input_ids=ids).last_hidden_state[0]  # (L, H), after final norm
        probs = torch.softmax(wrapped.lm_head(hidden).float(), dim=-1)  # (L, V)
    values, indices = torch.topk(probs, top, dim=-1)
    return Chunk(
        group,
        hidden.to(torch.bfloat16).cpu(),
        indices.to(torch.int32).cpu(),
        values.to(torch.float16).cpu(),
    )


def chunk_path(folder: Path, split: str, group: str, index: int) -> Path:
    return folder / f"{split}-{group}-{index:05d}.pt"


def save_chunk(path: Path, chunk: Chunk) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial")
    torch.save(
        {
            "group": chunk.group,
            "hidden": chunk.hidden,
            "top_ids": chunk.top_ids,
            "top_probs": chunk.top_probs,
        },
        partial,
    )
    partial.replace(path)


def load_chunk(path: Path) -> Chunk:
    saved = torch.load(path, weights_only=True)
    return Chunk(saved["group"], saved["hidden"], saved["top_ids"], saved["top_probs"])


# (tokens read so far, the group of the last chunk) -> None: the pass reports as it goes.
Report = Callable[[int, str], None]


@dataclass(frozen=True)
class PassPlan:
    """What one pass reads: chunk length, labels kept, and how the groups share the text."""

    chunk_tokens: int = 256
    top: int = 8  # probabilities kept per position
    # Shares of the training tokens by group: a code model's drafts are mostly code.
    weights: tuple[tuple[str, float], ...] = (("code", 0.6), ("prose", 0.25), ("ja", 0.15))
    held_out_chunks: int = 2  # per group, read first


def held_out_pass(
    model: torch.nn.Module, tokenizer: Any, folder: Path, plan: PassPlan, report: Report
) -> list[Path]:
    """The held-out chunks of every group (read once, reused by a resumed training)."""
    paths = []
    read = 0
    for group in GROUPS:
        chunks = token_chunks(tokenizer, group, True, plan.chunk_tokens)
        for index, token_ids in zip(range(plan.held_out_chunks), chunks, strict=False):
            path = chunk_path(folder, "held", group, index)
            if not path.is_file():
                save_chunk(path, target_features(model, token_ids, plan.top, group))
            paths.append(path)
            read += len(token_ids)
            report(read, group)
    return paths


def training_pass(
    model: torch.nn.Module,
    tokenizer: Any,
    folder: Path,
    plan: PassPlan,
    deadline: float,
    report: Report,
    max_tokens: int | None = None,
) -> list[Path]:
    """Training chunks until *deadline* (time.perf_counter()) or *max_tokens*, the groups taken
    in turn so each keeps its share; chunks read by an earlier pass are reused, not read again."""
    streams = {
        group: token_chunks(tokenizer, group, False, plan.chunk_tokens) for group, _ in plan.weights
    }
    share = dict(plan.weights)
    done = dict.fromkeys(share, 0)
    paths: list[Path] = []
    read = 0
    while streams and time.perf_counter() < deadline:
        if max_tokens is not None and read >= max_tokens:
            break
        group = min(streams, key=lambda name: done[name] / share[name])
        token_ids = next(streams[group], None)
        if token_ids is None:
            del streams[group]  # the group's text is all read
            continue
        path = chunk_path(folder, "train", group, done[group])
        if not path.is_file():
            save_chunk(path, target_features(model, token_ids, plan.top, group))
        paths.append(path)
        done[group] += 1
        read += len(token_ids)
        report(read, group)
    return paths
