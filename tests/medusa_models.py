"""Test models for Medusa's heads: a Markov chain whose hidden state is the one-hot of the last
token (so its heads read a real state and the law stays closed-form), and heads fitted in
seconds on a tiny Qwen2's own text.

Not a test module: tests import from here (pytest puts tests/ on sys.path).
"""

from __future__ import annotations

import math
import tempfile
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import torch
from tiny_models import ByteTokenizer, MarkovLM, TinyPair, random_transition
from transformers import DynamicCache

from specviz.models.heads.block import MedusaHeads
from specviz.models.heads.features import target_features
from specviz.models.heads.train import TrainingOptions, fit_heads, head_pairs, output_weight_of
from specviz.models.runner import ModelRunner

CHAIN_VOCAB = 4


class OneHotStates(torch.nn.Module):
    """The base of a Markov chain model: the final hidden state at each position is the one-hot
    of its token (float64), and the cache gets one dummy entry per position."""

    def __init__(self, vocab: int) -> None:
        super().__init__()
        self.vocab = vocab

    def forward(
        self, input_ids: torch.Tensor, past_key_values: DynamicCache | None = None, **_: Any
    ) -> Any:
        length = input_ids.shape[1]
        if past_key_values is not None:
            dummy = torch.zeros(1, 1, length, 1, dtype=torch.float64)
            past_key_values.update(dummy, dummy, 0)
        states = torch.nn.functional.one_hot(input_ids, self.vocab).double()
        return SimpleNamespace(last_hidden_state=states)


class MarkovWithStates(MarkovLM):
    """A MarkovLM with a base model and an output layer, as a transformers causal LM has them:
    the output layer's column for token i is the chain's row i, so lm_head(one-hot(i)) is the
    next-token log law after i, the same logits MarkovLM's own forward gives."""

    def __init__(self, transition: torch.Tensor) -> None:
        super().__init__(transition)
        vocab = transition.shape[0]
        self.model = OneHotStates(vocab)
        self.lm_head = torch.nn.Linear(vocab, vocab, bias=False, dtype=torch.float64)
        with torch.no_grad():
            self.lm_head.weight.copy_(self.log_transition.T)

    def get_output_embeddings(self) -> torch.nn.Module:
        return self.lm_head


def chain_with_states() -> TinyPair:
    """The exactness checks' target chain (seed 11), with states; no draft model is used."""
    target = MarkovWithStates(random_transition(CHAIN_VOCAB, seed=11, concentration=1.0))
    return TinyPair(target, target, ByteTokenizer(), frozenset())


def random_heads(count: int, hidden: int, seed: int, scale: float = 1.0) -> MedusaHeads:
    """Heads with random blocks: guesses that differ from the target's, for the exactness tests."""
    torch.manual_seed(seed)
    heads = MedusaHeads(count, hidden)
    with torch.no_grad():
        for parameter in heads.parameters():
            parameter.normal_(0.0, scale)
    return heads.eval()


def own_text(model: torch.nn.Module, length: int, seed: int) -> list[int]:
    """A text the model writes itself (sampled at temperature 1), from one byte."""
    generator = torch.Generator().manual_seed(seed)
    ids = [int(torch.randint(32, 127, (1,), generator=generator))]
    runner = ModelRunner(model)
    for _ in range(length - 1):
        probs = torch.softmax(runner.forward(torch.tensor([ids[-1:]]))[-1].float(), -1)
        ids.append(int(torch.multinomial(probs, 1, generator=generator)))
    return ids


def fitted_heads(model: torch.nn.Module, count: int = 3, steps: int = 1500) -> MedusaHeads:
    """Heads fitted for *steps* on the model's own text (six 96-token chunks): a step count,
    not seconds, so a busy machine fits the same heads."""
    chunks = [target_features(model, own_text(model, 96, seed), 8, "code") for seed in range(6)]
    heads = MedusaHeads(count, chunks[0].hidden.shape[1])
    options = TrainingOptions(heads=count, batch=64, learning_rate=3e-3)
    with tempfile.TemporaryDirectory() as folder:
        fit_heads(
            heads,
            output_weight_of(model),
            head_pairs(chunks, count),
            options,
            math.inf,
            Path(folder) / "checkpoint.pt",
            lambda step, loss: None,
            max_steps=steps,
        )
    return heads


# Made-up but known held-out numbers for filed heads: per group, head 1 first.
FILED_AGREEMENT = {
    "code": {"positions": 40, "top1": [0.5, 0.25, 0.125], "top5": [0.75, 0.5, 0.25]},
    "ja": {"positions": 20, "top1": [0.3, 0.1, 0.05], "top5": [0.45, 0.2, 0.1]},
    "prose": {"positions": 30, "top1": [0.4, 0.2, 0.1], "top5": [0.6, 0.4, 0.2]},
}


def file_heads(model: torch.nn.Module, heads: MedusaHeads) -> dict[str, Any]:
    """File *heads* for *model* in the specviz cache (point SPECVIZ_CACHE at a temporary folder
    first), with a report holding FILED_AGREEMENT; returns the report."""
    from specviz.models.heads.store import heads_folder, save_heads

    report = {
        "heads": heads.count,
        "hidden": int(heads.blocks[0].linear.weight.shape[0]),
        "steps": 7,
        "training_positions": 96,
        "agreement": FILED_AGREEMENT,
    }
    save_heads(heads, heads_folder(model), report)
    return report
