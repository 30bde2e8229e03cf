"""A prompt read once per model and copied into every run of that prompt: the advisor's prefill.

The advisor decodes each of its prompts with plain decoding and dozens of candidates. Every run
reads the same prompt into the same model's KV cache first, and on a CPU that reading can cost
more than the decoding being compared (docs/performance.md#each-prompt-is-read-once-avx2-epyc).
So the cache after all but the last prompt token is
computed once per model and prompt (the same forward, `ModelRunner.forward`, in the engine's
chunks), kept, and copied into each run's runner when its first forward starts with that prompt.
The run then feeds only the rest, as it would after the engine's own chunked prefill, and its
wall time is the decoding the candidates differ in. The seconds each prompt took are kept, so
time to first token still counts them (`seconds`).

Use: `with prefills.installed(): ...` around runs; every ModelRunner built inside (in that
thread), for a model the store has read a prompt into, restores from it. Nothing is restored
outside that block.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Protocol

import torch
from transformers import DynamicCache

from specviz.core.device import sync
from specviz.models.lean_forward import LeanCache


class _Runner(Protocol):
    """What the store needs of specviz.models.runner.ModelRunner (which imports this module)."""

    @property
    def model(self) -> torch.nn.Module: ...

    @property
    def device(self) -> torch.device: ...

    def reset(self) -> None: ...

    def forward_uncached(
        self, input_ids: torch.Tensor, logits_to_keep: int = 1
    ) -> torch.Tensor: ...

    def snapshot(self) -> LeanCache | DynamicCache: ...

    def load(self, cache: LeanCache | DynamicCache) -> None: ...


__all__ = ["PromptPrefills", "installed_prefills"]


@dataclass(frozen=True)
class _Read:
    """A prompt's head read into one model's cache: the cache and the seconds it took."""

    cache: LeanCache | DynamicCache
    seconds: float


class PromptPrefills:
    """Each prompt's head (all its tokens but the last) read once per model, for runs to copy."""

    def __init__(self, prompts: Sequence[torch.Tensor], chunk: int) -> None:
        if chunk < 1:
            raise ValueError(f"chunk must be at least 1, got {chunk}")
        # Longest first: a prompt that starts with another one's head takes its own.
        heads = {tuple(ids[0, :-1].tolist()) for ids in prompts if ids.shape[1] > 1}
        self._heads = sorted(heads, key=len, reverse=True)
        self._chunk = chunk
        self._reads: weakref.WeakKeyDictionary[torch.nn.Module, dict[tuple[int, ...], _Read]]
        self._reads = weakref.WeakKeyDictionary()

    def read(self, runner: _Runner) -> Iterator[float]:
        """Read every prompt's head into the runner's model, chunk by chunk; yields the seconds
        of each chunk so a caller can report progress and stop between two of them. The runner
        is left empty."""
        reads = self._reads.setdefault(runner.model, {})
        for head in self._heads:
            if head in reads:
                continue
            runner.reset()
            ids = torch.tensor([head], device=runner.device)
            seconds = 0.0
            for begin in range(0, len(head), self._chunk):
                began = time.perf_counter()
                runner.forward_uncached(ids[:, begin : begin + self._chunk])
                sync(runner.device)
                spent = time.perf_counter() - began
                seconds += spent
                yield spent
            reads[head] = _Read(runner.snapshot(), seconds)
        runner.reset()

    def seconds(self, model: torch.nn.Module, prompt_ids: torch.Tensor) -> float:
        """Seconds the model took to read this prompt's head (0 when it was not read)."""
        read = self._reads.get(model, {}).get(tuple(prompt_ids[0, :-1].tolist()))
        return 0.0 if read is None else read.seconds

    def restore(self, runner: _Runner, input_ids: torch.Tensor, keep: int) -> torch.Tensor:
        """Put a read prompt head into the (empty) runner's cache when input_ids (1, L) starts
        with it and leaves the last *keep* positions to compute; the rest of input_ids to feed."""
        reads = self._reads.get(runner.model)
        if not reads:
            return input_ids
        tokens = input_ids[0].tolist()
        for head in self._heads:
            if (
                head in reads
                and len(tokens) - len(head) >= keep
                and tuple(tokens[: len(head)]) == head
            ):
                runner.load(reads[head].cache)
                return input_ids[:, len(head) :]
        return input_ids

    @contextmanager
    def installed(self) -> Iterator[None]:
        """Runners built inside this block, in this thread, restore from the store (the innermost
        store when blocks nest)."""
        token = _installed.set(self)
        try:
            yield
        finally:
            _installed.reset(token)


# A context variable, not a module global: the app serves visitors from several threads, and only
# runners built inside the block, in the thread that entered it, may restore from its store.
_installed: ContextVar[PromptPrefills | None] = ContextVar("specviz_prompt_prefills", default=None)


def installed_prefills() -> PromptPrefills | None:
    """The store runners built now restore from (None: they read every prompt themselves)."""
    return _installed.get()
