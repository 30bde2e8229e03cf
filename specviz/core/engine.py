"""Speculative and plain autoregressive generation, as generators of plain event records.

Read this module top to bottom beside Leviathan et al. (2023), Algorithm 1. One cycle:

  1. the drafter reads the committed context and proposes n <= γ tokens x_1..x_n, each with the
     distribution q_i it came from (one-hot for a deterministic proposer);
  2. the target scores [pending, x_1..x_n] in ONE forward pass, giving p_1..p_{n+1};
  3. x_i is accepted with probability min(1, p_i(x_i)/q_i(x_i)), in order, until the first rejection;
  4. at a rejection at j a token is drawn from norm(max(0, p_j - q_j)); if all n pass, a bonus token
     is drawn from p_{n+1};
  5. both KV caches are rolled back to the accepted prefix by cropping (no recomputation).

"pending" holds the committed tokens the target has not fed yet: the prompt (a long prompt's last
chunk) before the first cycle, then the one token emitted last. Every target forward starts from tokens it has not seen and
keeps the logits of the last n + 1 positions, so step 2 yields exactly n + 1 distributions.
A prompt longer than one chunk is read first, chunk by chunk, by both models (speculative_stream
and autoregressive_stream yield a Prefill record after each, so a consumer can stop between them);
its last chunk stays pending, read together with the first drafts.
This module imports neither gradio nor any model loader.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Protocol, runtime_checkable

import torch

from specviz.core.detok import IncrementalDetokenizer, TokenizerLike
from specviz.core.device import device_of, sync
from specviz.core.events import (
    Cycle,
    DraftToken,
    EmittedToken,
    Origin,
    Prefill,
    Rejection,
    Step,
    Timing,
    TokenProb,
    Totals,
)
from specviz.core.proposal import Drafter
from specviz.core.sampling import (
    Sampler,
    Verdict,
    top_entries,
    top_entries_per_row,
    verify_greedy,
    verify_sampled,
)
from specviz.core.settings import GenerationSettings

# GenerationSettings is re-exported: callers think of it as the engine's input.
__all__ = [
    "PREFILL_CHUNK",
    "DraftModelPairLike",
    "GenerationSettings",
    "ModelPairLike",
    "PrefillingDrafter",
    "SelfDrafter",
    "TargetRunner",
    "autoregressive_generate",
    "autoregressive_stream",
    "speculative_generate",
    "speculative_stream",
]

# Prompt tokens per forward when a long prompt is read before the first cycle: the longest
# stretch of work a consumer waits through before it can stop the run. Chunking costs no speed on
# a CPU (docs/performance.md#verification-cost-prefill-and-prompt-chunks); 256 keeps a Stop's
# wait to a quarter of a 1,024-token prompt.
PREFILL_CHUNK = 256


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
    """A drafter that drafts with the target's own forward and KV cache (self-speculation).

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


class DraftModelPairLike(ModelPairLike, Protocol):
    """A pair with a draft model: what the draft-model drafter is built from."""

    @property
    def draft(self) -> torch.nn.Module: ...


class _Run:
    """State shared by both decoders: the target's cache, the detokenizer, counters, stopping."""

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

    def stop_index(self, token_ids: list[int]) -> tuple[int, str | None]:
        """How many of token_ids to keep, and why the run stops after them (None: it goes on)."""
        if self.settings.stop_on_eos:
            for index, token_id in enumerate(token_ids):
                if token_id in self.pair.eos_token_ids:
                    return index + 1, "eos"
        if len(token_ids) >= self.remaining:
            return self.remaining, "max_new_tokens"
        return len(token_ids), None


def speculative_generate(
    pair: ModelPairLike,
    prompt_ids: torch.Tensor,
    settings: GenerationSettings,
    drafter: Drafter,
    prefill_chunk: int = PREFILL_CHUNK,
) -> Iterator[Cycle]:
    """Speculative decoding of the target with the given drafter; yields one Cycle per cycle
    (speculative_stream without its Prefill records)."""
    stream = speculative_stream(pair, prompt_ids, settings, drafter, prefill_chunk)
    return (event for event in stream if isinstance(event, Cycle))


@torch.inference_mode()
def speculative_stream(
    pair: ModelPairLike,
    prompt_ids: torch.Tensor,
    settings: GenerationSettings,
    drafter: Drafter,
    prefill_chunk: int = PREFILL_CHUNK,
) -> Iterator[Prefill | Cycle]:
    """Speculative decoding of the target with the given drafter: a Prefill after each chunk of
    a prompt longer than *prefill_chunk* tokens, then one Cycle per cycle."""
    run = _Run(pair, prompt_ids, settings)
    context = _CommittedContext(prompt_ids, settings.max_new_tokens)
    stop_ids = frozenset(pair.eos_token_ids) if settings.stop_on_eos else frozenset()
    if isinstance(drafter, SelfDrafter):
        drafter.use_target(run.target)
    draft_prefill_s = drafter.start(prompt_ids, settings, stop_ids)
    run.totals = replace(run.totals, prefill_s=run.totals.prefill_s + draft_prefill_s)
    prefilling = drafter if isinstance(drafter, PrefillingDrafter) else None
    yield from run.read_prompt_head(prefill_chunk, prefilling)
    for index in range(settings.max_new_tokens):
        # At most remaining - 1 drafts, so drafts plus the resampled/bonus token fit the budget.
        proposal = drafter.propose(context.ids, run.remaining - 1, run.sampler)
        # (n,), and (n, V) or None: one-hot at the drafts, never built as a tensor.
        draft_ids, q_draft = proposal.token_ids, proposal.q_draft
        began_verify = time.perf_counter()
        logits = run.target_logits(draft_ids)  # (n + 1, V)
        sync(run.device)
        verified = time.perf_counter()

        p_target = run.sampler.probs(logits)  # (n + 1, V)
        n = draft_ids.shape[0]
        uniforms: list[float | None] = [None] * n
        if run.sampler.greedy:
            verdict = verify_greedy(draft_ids, q_draft, p_target)
        else:
            draws = run.sampler.uniforms(n, run.device)
            verdict = verify_sampled(draft_ids, q_draft, p_target, draws, run.sampler)
            uniforms = list(draws.tolist())
        accepted_len = verdict.accepted_len
        # Rollback is bookkeeping: the target fed pending + n drafts; keep pending + accepted ones.
        run.target.rollback(n - accepted_len)
        drafter.commit(accepted_len, verdict.next_token)

        drafted = _drafted_records(run, draft_ids.tolist(), verdict, uniforms, q_draft, p_target)
        emitted, stop_reason = _emit(run, drafted, verdict)
        context.extend([token.token_id for token in emitted])
        rejection = None
        if accepted_len < n:
            rejection = _rejection_record(run, drafted[accepted_len], q_draft, p_target, verdict)
        timing = Timing(proposal.seconds, verified - began_verify, time.perf_counter() - verified)
        run.totals = Totals(
            new_tokens=run.totals.new_tokens + len(emitted),
            target_forwards=run.totals.target_forwards + 1,
            draft_forwards=run.totals.draft_forwards + proposal.forwards,
            # α counts positions actually tested: everything up to and including the first rejection.
            tested_positions=run.totals.tested_positions + min(accepted_len + 1, n),
            accepted_positions=run.totals.accepted_positions + accepted_len,
            elapsed_s=run.totals.elapsed_s + timing.total_s,
            prefill_s=run.totals.prefill_s,
        )
        yield Cycle(
            index=index,
            draft_len=n,
            greedy=run.sampler.greedy,
            drafted=drafted,
            accepted_len=accepted_len,
            emitted=emitted,
            rejection=rejection,
            timing=timing,
            totals=run.totals,
            target_cache_len=run.target.cache_len,
            draft_cache_len=drafter.cache_len,
            context_len=run.prompt_len + run.totals.new_tokens,
            finished=stop_reason is not None,
            stop_reason=stop_reason,
            draft_end=proposal.ended_by,
            draft_doubt_scale=proposal.doubt_scale,
            draft_gamma=proposal.gamma,
            draft_stop_below=settings.draft_stop_below,
            draft_stop_cumulative=settings.draft_stop_cumulative,
            drafter=proposal.drafter,
            drafter_detail=proposal.detail,
            copied_from=proposal.copied_from,
        )
        if stop_reason is not None:
            return
        run.pending = torch.tensor([[verdict.next_token]], device=run.device)


class _CommittedContext:
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


def _drafted_records(
    run: _Run,
    draft_ids: list[int],
    verdict: Verdict,
    uniforms: list[float | None],
    q_draft: torch.Tensor | None,
    p_target: torch.Tensor,
) -> tuple[DraftToken, ...]:
    """One record per drafted token; positions after the first rejection are marked untested."""
    accepted_len = verdict.accepted_len
    accept_probs = verdict.accept_probs.tolist()
    p_at, q_at = verdict.p_at_draft.tolist(), verdict.q_at_draft.tolist()
    texts = run.detok.peek(draft_ids)
    start = run.totals.new_tokens
    n = len(draft_ids)
    tops_q, tops_p = _top_q_and_p(draft_ids, q_draft, p_target[:n])
    tokenizer = run.pair.tokenizer
    return tuple(
        DraftToken(
            position=i + 1,
            seq_index=start + i,
            token_id=token_id,
            text=texts[i],
            q_draft=q_at[i],
            p_target=p_at[i],
            accept_prob=accept_probs[i],
            uniform=uniforms[i] if i <= accepted_len else None,
            tested=i <= accepted_len,
            accepted=i < accepted_len,
            top_q=_token_probs(tokenizer, tops_q[i]),
            top_p=_token_probs(tokenizer, tops_p[i]),
            special=run.detok.special_name(token_id),
        )
        for i, token_id in enumerate(draft_ids)
    )


def _top_q_and_p(
    draft_ids: list[int], q_draft: torch.Tensor | None, p_drafted: torch.Tensor
) -> tuple[list[list[tuple[int, float]]], list[list[tuple[int, float]]]]:
    """The inspector's bars: top entries of q and of p at each drafted position.

    A dense q shares one topk with p; a one-hot q is its drafted token at probability 1.
    """
    n = len(draft_ids)
    if n == 0:
        return [], []
    if q_draft is None:
        return [[(token_id, 1.0)] for token_id in draft_ids], top_entries_per_row(p_drafted)
    tops = top_entries_per_row(torch.cat([q_draft[:n], p_drafted]))
    return tops[:n], tops[n:]


def _emit(
    run: _Run, drafted: tuple[DraftToken, ...], verdict: Verdict
) -> tuple[tuple[EmittedToken, ...], str | None]:
    """The accepted drafts then the resampled/bonus token, cut at EOS or the token budget."""
    accepted = drafted[: verdict.accepted_len]
    out_ids = [token.token_id for token in accepted] + [verdict.next_token]
    keep, stop_reason = run.stop_index(out_ids)
    out_ids = out_ids[:keep]
    texts = run.detok.commit(out_ids)
    extra_origin = Origin.BONUS if verdict.accepted_len == len(drafted) else Origin.RESAMPLED
    start = run.totals.new_tokens
    emitted = tuple(
        EmittedToken(
            seq_index=start + i,
            token_id=token_id,
            text=texts[i],
            origin=Origin.ACCEPTED if i < len(accepted) else extra_origin,
            prob=accepted[i].p_target if i < len(accepted) else float(verdict.next_dist[token_id]),
            special=run.detok.special_name(token_id),
        )
        for i, token_id in enumerate(out_ids)
    )
    return emitted, stop_reason


def _rejection_record(
    run: _Run,
    rejected: DraftToken,
    q_draft: torch.Tensor | None,
    p_target: torch.Tensor,
    verdict: Verdict,
) -> Rejection:
    """Top entries of p, q and the residual at the first rejected position, for a bar chart."""
    row = rejected.position - 1
    tokenizer = run.pair.tokenizer
    next_token = verdict.next_token
    return Rejection(
        position=rejected.position,
        rejected_token=TokenProb(rejected.token_id, rejected.text, rejected.q_draft),
        resampled_token=TokenProb(
            next_token,
            _vocab_text(tokenizer, next_token),
            float(verdict.next_dist[next_token]),
        ),
        top_p=_bars(tokenizer, p_target[row]),
        top_q=(
            _bars(tokenizer, q_draft[row])
            if q_draft is not None
            else _token_probs(tokenizer, [(rejected.token_id, 1.0)])
        ),
        # Greedy replaces a rejection by the argmax of p; there is no residual to draw from.
        top_residual=() if run.sampler.greedy else _bars(tokenizer, verdict.next_dist),
    )


def _bars(tokenizer: TokenizerLike, dist: torch.Tensor) -> tuple[TokenProb, ...]:
    return _token_probs(tokenizer, top_entries(dist))


def _token_probs(
    tokenizer: TokenizerLike, entries: list[tuple[int, float]]
) -> tuple[TokenProb, ...]:
    return tuple(
        TokenProb(token_id, _vocab_text(tokenizer, token_id), prob) for token_id, prob in entries
    )


def _vocab_text(tokenizer: TokenizerLike, token_id: int) -> str:
    """A vocabulary entry's text on its own, for chart labels (the running text uses detok)."""
    return tokenizer.decode([token_id], skip_special_tokens=False)


def autoregressive_generate(
    pair: ModelPairLike,
    prompt_ids: torch.Tensor,
    settings: GenerationSettings,
    prefill_chunk: int = PREFILL_CHUNK,
) -> Iterator[Step]:
    """Plain decoding of the target, one forward per token: the baseline speculation must beat
    (autoregressive_stream without its Prefill records)."""
    stream = autoregressive_stream(pair, prompt_ids, settings, prefill_chunk)
    return (event for event in stream if isinstance(event, Step))


@torch.inference_mode()
def autoregressive_stream(
    pair: ModelPairLike,
    prompt_ids: torch.Tensor,
    settings: GenerationSettings,
    prefill_chunk: int = PREFILL_CHUNK,
) -> Iterator[Prefill | Step]:
    """Plain decoding of the target: a Prefill after each chunk of a prompt longer than
    *prefill_chunk* tokens, then one Step per token."""
    run = _Run(pair, prompt_ids, settings)
    yield from run.read_prompt_head(prefill_chunk)
    empty = torch.empty(0, dtype=torch.long)
    for index in range(settings.max_new_tokens):
        began = time.perf_counter()
        logits = run.target_logits(empty)[-1]  # (V,)
        p_target = run.sampler.probs(logits)
        token_id = int(run.sampler.draw(p_target))
        text = run.detok.commit([token_id])[0]
        sync(run.device)
        elapsed = time.perf_counter() - began
        keep, stop_reason = run.stop_index([token_id])
        run.totals = replace(
            run.totals,
            new_tokens=run.totals.new_tokens + keep,
            target_forwards=run.totals.target_forwards + 1,
            elapsed_s=run.totals.elapsed_s + elapsed,
        )
        prob = float(p_target[token_id])
        special = run.detok.special_name(token_id)
        token = EmittedToken(index, token_id, text, Origin.TARGET, prob, special)
        yield Step(index, token, elapsed, run.totals, stop_reason is not None, stop_reason)
        if stop_reason is not None:
            return
        run.pending = torch.tensor([[token_id]], device=run.device)
