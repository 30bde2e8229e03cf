"""The state of one decoding run, shared by the chain engine (specviz.core.engine), plain
decoding and the tree engine (specviz.core.tree_engine): the target's forward and KV cache, the
detokenizer, the running counters, the committed context and when to stop.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Protocol, runtime_checkable

import torch

from specviz.core.detok import IncrementalDetokenizer, TokenizerLike
from specviz.core.device import device_of, sync
from specviz.core.events import (
    DraftToken,
    EmittedToken,
    Origin,
    Prefill,
    Timing,
    TokenProb,
    Totals,
)
from specviz.core.sampling import Sampler, top_entries
from specviz.core.settings import GenerationSettings


class TargetRunner(Protocol):
    """What the engine needs of the target's forward: feed tokens after a KV cache, roll it back.

    specviz.models.runner.ModelRunner is the one the app runs (the lean step or transformers').
    """

    @property
    def cache_len(self) -> int:
        """Positions the KV cache holds."""
        ...

    def forward(self, input_ids: torch.Tensor, logits_to_keep: int = 1) -> torch.Tensor:
        """(logits_to_keep, V) logits of the last positions of input_ids (1, L) fed after the cache."""
        ...

    def rollback(self, tokens: int) -> None:
        """Forget the last `tokens` cached positions."""
        ...


@runtime_checkable
class SelfDrafter(Protocol):
    """A drafter that drafts with the target's own forward, KV cache or states (self-speculation).

    An optional capability beside the Drafter protocol: the engine hands such a drafter the
    run's target runner before start(), so it can read the verified cache instead of keeping a
    second model. Whatever it writes there must lie past the cache length, where the next
    verification overwrites it: the cache after each cycle is the one plain decoding holds.
    """

    def use_target(self, target: TargetRunner) -> None:
        """Draft with this run's target runner (called once per run, before start())."""
        ...


@runtime_checkable
class PrefillingDrafter(Protocol):
    """A drafter with a KV cache of its own that reads a long prompt in chunks, as the target
    does: an optional capability beside the Drafter protocol. The engine feeds it every chunk
    but the last after start(); its first proposal reads the rest of the prompt."""

    def prefill(self, prompt_part: torch.Tensor) -> None:
        """Read prompt_part (1, L), the next tokens of the prompt, into the drafter's cache."""
        ...


class ModelPairLike(Protocol):
    """What the engine needs of a loaded pair: the target, its tokenizer and its stop tokens."""

    @property
    def target(self) -> torch.nn.Module: ...

    def target_runner(self) -> TargetRunner:
        """A fresh forward and empty KV cache for the target (one per run)."""
        ...

    @property
    def tokenizer(self) -> TokenizerLike: ...

    @property
    def eos_token_ids(self) -> frozenset[int]: ...


class Run:
    """State shared by every decoder: the target's cache, the detokenizer, counters, stopping."""

    def __init__(
        self,
        pair: ModelPairLike,
        prompt_ids: torch.Tensor,
        settings: GenerationSettings,
    ):
        if prompt_ids.dim() != 2 or prompt_ids.shape[0] != 1 or prompt_ids.shape[1] == 0:
            raise ValueError("prompt_ids must have shape (1, T) with T >= 1 (batch size 1)")
        self.pair = pair
        self.settings = settings
        self.device = device_of(pair.target)
        self.prompt_len = prompt_ids.shape[1]
        self.sampler = Sampler.from_settings(settings, self.device)
        self.detok = IncrementalDetokenizer(pair.tokenizer, prompt_ids[0].tolist())
        # The target's forward and KV cache, as the pair runs it (the lean step where it applies).
        self.target = pair.target_runner()
        self.totals = Totals(0, 0, 0, 0, 0, 0.0, 0.0)
        # The prompt's last chunk is not prefilled on its own: the first forward reads it together
        # with the first drafts (plain decoding: it yields the first token). A separate forward
        # would cost one more full read of the weights, about one decoding step.
        self.pending = prompt_ids.to(self.device)  # (1, T), then the one token emitted last

    def read_prompt_head(
        self, chunk: int, drafter: PrefillingDrafter | None = None
    ) -> Iterator[Prefill]:
        """Feed all but the last chunk of a long prompt to the target (and the drafter), one
        forward of *chunk* tokens each, yielding progress after each; the last 1..chunk tokens
        stay pending. The cache is the one a single forward over them would build (causal
        attention: a position reads only the positions before it)."""
        if chunk < 1:
            raise ValueError(f"prefill_chunk must be at least 1, got {chunk}")
        prompt = self.pending  # (1, T)
        head = (self.prompt_len - 1) // chunk * chunk
        for begin in range(0, head, chunk):
            began = time.perf_counter()
            part = prompt[:, begin : begin + chunk]  # (1, chunk)
            self.target.forward(part, logits_to_keep=1)
            if drafter is not None:
                drafter.prefill(part)
            sync(self.device)
            spent = time.perf_counter() - began
            self.totals = replace(self.totals, prefill_s=self.totals.prefill_s + spent)
            yield Prefill(begin + chunk, self.prompt_len)
        self.pending = prompt[:, head:]  # (1, 1..chunk)

    @property
    def remaining(self) -> int:
        return self.settings.max_new_tokens - self.totals.new_tokens

    @torch.inference_mode()
    def target_logits(self, draft_ids: torch.Tensor) -> torch.Tensor:
        """One target forward over [pending, drafts]: logits (n + 1, V) for the last n + 1."""
        feed = torch.cat([self.pending, draft_ids.view(1, -1).to(self.device)], dim=1)
        return self.target.forward(feed, logits_to_keep=draft_ids.shape[0] + 1)

    def emit(
        self,
        kept: Sequence[DraftToken],
        next_token: int,
        next_dist: torch.Tensor,
        last_origin: Origin,
    ) -> tuple[tuple[EmittedToken, ...], str | None]:
        """The kept drafts then the token the target added (resampled or bonus, drawn from
        next_dist), cut at EOS or the token budget and committed to the detokenizer; and why
        the run stops after them (None: it goes on)."""
        out_ids = [token.token_id for token in kept] + [next_token]
        keep, stop_reason = self.stop_index(out_ids)
        out_ids = out_ids[:keep]
        texts = self.detok.commit(out_ids)
        start = self.totals.new_tokens
        emitted = tuple(
            EmittedToken(
                seq_index=start + i,
                token_id=token_id,
                text=texts[i],
                origin=Origin.ACCEPTED if i < len(kept) else last_origin,
                prob=kept[i].p_target if i < len(kept) else float(next_dist[token_id]),
                special=self.detok.special_name(token_id),
            )
            for i, token_id in enumerate(out_ids)
        )
        return emitted, stop_reason

    def count_cycle(
        self, emitted: int, draft_forwards: int, tested: int, accepted: int, timing: Timing
    ) -> Totals:
        """Add one verification cycle to the running counters (one target forward) and
        return them: *tested* and *accepted* are the draft positions (depths, for a tree) the
        target tested and kept."""
        self.totals = Totals(
            new_tokens=self.totals.new_tokens + emitted,
            target_forwards=self.totals.target_forwards + 1,
            draft_forwards=self.totals.draft_forwards + draft_forwards,
            tested_positions=self.totals.tested_positions + tested,
            accepted_positions=self.totals.accepted_positions + accepted,
            elapsed_s=self.totals.elapsed_s + timing.total_s,
            prefill_s=self.totals.prefill_s,
        )
        return self.totals

    def stop_index(self, token_ids: list[int]) -> tuple[int, str | None]:
        """How many of token_ids to keep, and why the run stops after them (None: it goes on)."""
        if self.settings.stop_on_eos:
            for index, token_id in enumerate(token_ids):
                if token_id in self.pair.eos_token_ids:
                    return index + 1, "eos"
        if len(token_ids) >= self.remaining:
            return self.remaining, "max_new_tokens"
        return len(token_ids), None


class CommittedContext:
    """The prompt then every emitted token, in one CPU buffer sized for the whole run.

    The drafter reads it through ids, a view: no concatenation per cycle, no copy in the drafter.
    """

    def __init__(self, prompt_ids: torch.Tensor, max_new_tokens: int) -> None:
        prompt_len = prompt_ids.shape[1]
        self._buffer = torch.empty(prompt_len + max_new_tokens, dtype=torch.long)
        self._buffer[:prompt_len] = prompt_ids[0]
        self._len = prompt_len

    @property
    def ids(self) -> torch.Tensor:
        """(T,) long: the committed context so far."""
        return self._buffer[: self._len]

    def extend(self, token_ids: list[int]) -> None:
        end = self._len + len(token_ids)
        self._buffer[self._len : end] = torch.tensor(token_ids, dtype=torch.long)
        self._len = end


def bars(tokenizer: TokenizerLike, dist: torch.Tensor) -> tuple[TokenProb, ...]:
    return token_probs(tokenizer, top_entries(dist))


def token_probs(
    tokenizer: TokenizerLike, entries: list[tuple[int, float]]
) -> tuple[TokenProb, ...]:
    return tuple(
        TokenProb(token_id, vocab_text(tokenizer, token_id), prob) for token_id, prob in entries
    )


def vocab_text(tokenizer: TokenizerLike, token_id: int) -> str:
    """A vocabulary entry's text on its own, for chart labels (the running text uses detok)."""
    return tokenizer.decode([token_id], skip_special_tokens=False)
