"""Training the heads on the target's own distributions, within a time budget, and measuring
them.

Self-distillation (Cai et al., "Medusa", 2024, §2.3.2): head k at position t learns the target's
law of token t + k + 1 given the text up to t + k, p_{t+k}, from the target's hidden state h_t
alone. The loss is the cross-entropy against the target's top few probabilities (renormalised),
computed over a restricted vocabulary: the union of every label token in the batch, not all V
rows of the output layer. On a CPU the full output layer (V ≈ 152k for Qwen2.5) would cost a
hundred times the blocks; the restriction is a sampled softmax whose negatives are the other
positions' likely tokens. Agreement is then measured with the FULL output layer, so a token the
restriction never showed a head cannot hide.

Medusa weights head k's loss by 0.8^k; the heads share no trained parameter and Adam rescales
each one's steps, so the weights would change nothing here and are left out.
"""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch

from specviz.models.heads import DEFAULT_HEADS, corpus
from specviz.models.heads.block import MedusaHeads
from specviz.models.heads.corpus import GROUPS
from specviz.models.heads.features import (
    Chunk,
    PassPlan,
    held_out_pass,
    load_chunk,
    training_pass,
)
from specviz.models.heads.store import save_heads
from specviz.text import Phrase
from specviz.text.progress import Progress

CHECKPOINT_SECONDS = 60.0  # how often a training writes what a resumed one continues from
WARMUP_STEPS = 20


@dataclass(frozen=True)
class TrainingOptions:
    """One training's size: the heads, the time budget and how it is shared."""

    heads: int = DEFAULT_HEADS  # K: head k guesses token t + k + 1
    minutes: float = 15.0  # the whole budget: reading text, training, measuring
    feature_share: float = 0.7  # of the budget, for the target's pass over the text
    batch: int = 256  # positions per step
    learning_rate: float = 1e-3  # Medusa-1's
    max_tokens: int | None = None  # training tokens read at most (None: as many as time allows)
    plan: PassPlan = field(default_factory=PassPlan)


@dataclass(frozen=True)
class Pairs:
    """Training pairs: hidden (N, H) bfloat16 at t, and for each head k its labels at t + k,
    ids (N, K, top) and probabilities (N, K, top) summing to 1 per row."""

    hidden: torch.Tensor
    ids: torch.Tensor
    probs: torch.Tensor


def head_pairs(chunks: list[Chunk], heads: int) -> Pairs:
    """Every position t of each chunk with a label for all K heads (t + K inside the chunk)."""
    hidden, ids, probs = [], [], []
    for chunk in chunks:
        usable = chunk.hidden.shape[0] - heads
        if usable <= 0:
            continue
        hidden.append(chunk.hidden[:usable])
        ids.append(torch.stack([chunk.top_ids[k : k + usable] for k in range(1, heads + 1)], 1))
        probs.append(torch.stack([chunk.top_probs[k : k + usable] for k in range(1, heads + 1)], 1))
    label_probs = torch.cat(probs).float()
    label_probs = label_probs / label_probs.sum(-1, keepdim=True).clamp_min(1e-9)
    return Pairs(torch.cat(hidden), torch.cat(ids).long(), label_probs)


def restricted_loss(
    heads: MedusaHeads,
    output_weight: torch.Tensor,
    hidden: torch.Tensor,
    ids: torch.Tensor,
    probs: torch.Tensor,
) -> torch.Tensor:
    """Soft-label cross-entropy of every head over the batch's label vocabulary (module doc):
    hidden (B, H), ids and probs (B, K, top)."""
    vocabulary, where = torch.unique(ids, return_inverse=True)  # (R,), (B, K, top) into it
    rows = output_weight[vocabulary].float()  # (R, H): the output layer's rows for those tokens
    states = heads(hidden.float())  # (B, K, H)
    log_probs = torch.log_softmax(states @ rows.T, dim=-1)  # (B, K, R)
    targets = torch.zeros_like(log_probs).scatter_add_(-1, where, probs)
    return -(targets * log_probs).sum(-1).mean(0).sum()


def fit_heads(
    heads: MedusaHeads,
    output_weight: torch.Tensor,
    pairs: Pairs,
    options: TrainingOptions,
    deadline: float,
    checkpoint: Path,
    report: Callable[[int, float], None],
    max_steps: int | None = None,
) -> tuple[int, float]:
    """Train until *deadline* (time.perf_counter()) or *max_steps*; returns (steps, last loss).
    Resumes from *checkpoint* when one is there and writes it every CHECKPOINT_SECONDS. With
    *max_steps* the learning rate decays over the steps, so a busy machine trains the same heads
    (the learning curve's runs); without, over the time left."""
    optimizer = torch.optim.AdamW(heads.parameters(), lr=options.learning_rate, weight_decay=0.0)
    step = 0
    if checkpoint.is_file():
        saved = torch.load(checkpoint, weights_only=True)
        heads.load_state_dict(saved["heads"])
        optimizer.load_state_dict(saved["optimizer"])
        step = int(saved["step"])
    began = last_saved = time.perf_counter()
    span = max(deadline - began, 1e-3)
    generator = torch.Generator().manual_seed(step)
    count = pairs.hidden.shape[0]
    loss_value = math.nan
    heads.train()
    while (now := time.perf_counter()) < deadline and count:
        if max_steps is not None and step >= max_steps:
            break
        # Warm-up, then a cosine decay over the time left (or the steps left).
        gone = step / max_steps if max_steps else (now - began) / span
        scale = min(1.0, (step + 1) / WARMUP_STEPS) * 0.5 * (1 + math.cos(math.pi * gone))
        for group in optimizer.param_groups:
            group["lr"] = options.learning_rate * scale
        batch = torch.randint(count, (min(options.batch, count),), generator=generator)
        loss = restricted_loss(
            heads, output_weight, pairs.hidden[batch], pairs.ids[batch], pairs.probs[batch]
        )
        optimizer.zero_grad(set_to_none=True)
        loss.backward()  # type: ignore[no-untyped-call]
        optimizer.step()
        step += 1
        loss_value = float(loss.detach())
        report(step, loss_value)
        if time.perf_counter() - last_saved > CHECKPOINT_SECONDS:
            _save_checkpoint(checkpoint, heads, optimizer, step)
            last_saved = time.perf_counter()
    heads.eval()
    _save_checkpoint(checkpoint, heads, optimizer, step)
    return step, loss_value


def _save_checkpoint(
    path: Path, heads: MedusaHeads, optimizer: torch.optim.Optimizer, step: int
) -> None:
    partial = path.with_suffix(".partial")
    torch.save(
        {"heads": heads.state_dict(), "optimizer": optimizer.state_dict(), "step": step}, partial
    )
    partial.replace(path)


@torch.inference_mode()
def agreement(
    heads: MedusaHeads, output_weight: torch.Tensor, chunks: list[Chunk]
) -> dict[str, dict[str, Any]]:
    """Per group and head: how often the target's most likely token at t + k + 1 is the head's
    first guess (top1) or among its five first (top5), over the held-out chunks, with the FULL
    output layer."""
    count = heads.count
    hits: dict[str, torch.Tensor] = {}
    positions: dict[str, int] = {}
    for chunk in chunks:
        usable = chunk.hidden.shape[0] - count
        if usable <= 0:
            continue
        states = heads(chunk.hidden[:usable].float())  # (n, K, H)
        found = torch.zeros(2, count)
        for head in range(count):
            logits = states[:, head].to(output_weight.dtype) @ output_weight.T  # (n, V)
            guesses = torch.topk(logits.float(), 5, dim=-1).indices  # (n, 5)
            truth = chunk.top_ids[head + 1 : head + 1 + usable, 0].long()  # target's argmax
            found[0, head] = (guesses[:, 0] == truth).sum()
            found[1, head] = (guesses == truth[:, None]).any(-1).sum()
        hits[chunk.group] = hits.get(chunk.group, torch.zeros(2, count)) + found
        positions[chunk.group] = positions.get(chunk.group, 0) + usable
    return {
        group: {
            "positions": positions[group],
            "top1": [round(float(v) / positions[group], 4) for v in hits[group][0]],
            "top5": [round(float(v) / positions[group], 4) for v in hits[group][1]],
        }
        for group in GROUPS
        if group in hits
    }


def output_weight_of(model: torch.nn.Module) -> torch.Tensor:
    """The target's output layer's weight (V, H), frozen."""
    layer = model.get_output_embeddings()  # type: ignore[operator]
    weight: torch.Tensor = layer.weight.detach()
    return weight


def train_heads(
    model: torch.nn.Module,
    tokenizer: Any,
    folder: Path,
    options: TrainingOptions,
    progress: Progress,
) -> dict[str, Any]:
    """Read the text through the target, train the heads, measure them on held-out text and file
    them in *folder* (specviz.models.heads.store); returns their report. A run cut short resumes
    from the chunks and the checkpoint it left."""
    began = time.perf_counter()
    budget = options.minutes * 60.0
    end = began + budget

    def left() -> str:
        seconds = max(0, int(end - time.perf_counter()))
        return f"{seconds // 60}:{seconds % 60:02d}"

    def reading(tokens: int, group: str) -> None:
        done = (time.perf_counter() - began) / budget
        progress(min(done, 0.99), Phrase("heads.reading", tokens=tokens, group=group, left=left()))

    # Chunks and checkpoints are named after what they depend on, so a changed corpus or plan
    # starts afresh rather than resuming from another's.
    digest = hashlib.sha256(f"{options.plan}|{corpus.SIGNATURE}".encode()).hexdigest()[:12]
    features = folder / f"features-{digest}"
    held = [
        load_chunk(path)
        for path in held_out_pass(model, tokenizer, features, options.plan, reading)
    ]
    train_paths = training_pass(
        model,
        tokenizer,
        features,
        options.plan,
        began + options.feature_share * budget,
        reading,
        options.max_tokens,
    )
    features_s = time.perf_counter() - began
    pairs = head_pairs([load_chunk(path) for path in train_paths], options.heads)
    weight = output_weight_of(model)
    hidden = int(pairs.hidden.shape[1]) if pairs.hidden.numel() else int(weight.shape[1])
    heads = MedusaHeads(options.heads, hidden)
    # Time held back for the measurement: the output layer over every held-out position, once
    # per head, timed on one chunk.
    probe = time.perf_counter()
    agreement(heads, weight, held[:1])
    measure_s = (time.perf_counter() - probe) * len(held) * 1.2

    def training(step: int, loss: float) -> None:
        done = (time.perf_counter() - began) / budget
        progress(
            min(done, 0.99),
            Phrase(
                "heads.training", heads=options.heads, step=step, loss=f"{loss:.3f}", left=left()
            ),
        )

    train_began = time.perf_counter()
    steps, loss = fit_heads(
        heads,
        weight,
        pairs,
        options,
        end - measure_s,
        folder / f"checkpoint-{digest}-k{options.heads}.pt",
        training,
    )
    train_s = time.perf_counter() - train_began
    progress(0.99, Phrase("heads.measuring"))
    measured = agreement(heads, weight, held)
    report = {
        "heads": options.heads,
        "hidden": hidden,
        "options": asdict(options),
        "training_positions": int(pairs.hidden.shape[0]),
        "steps": steps,
        "final_loss": loss,
        "features_seconds": round(features_s, 1),
        "training_seconds": round(train_s, 1),
        "total_seconds": round(time.perf_counter() - began, 1),
        "agreement": measured,
        "threads": torch.get_num_threads(),
    }
    save_heads(heads, folder, report)
    progress(1.0, Phrase("heads.done", folder=str(folder)))
    return report
