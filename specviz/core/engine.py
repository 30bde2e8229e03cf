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
from typing import Protocol

import torch

from specviz.core.device import sync
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
)
from specviz.core.proposal import Drafter, TreeDrafter
from specviz.core.run import (
    CommittedContext,
    ModelPairLike,
    PrefillingDrafter,
    Run,
    SelfDrafter,
    TargetRunner,
    bars,
    token_probs,
    vocab_text,
)
from specviz.core.sampling import (
    Verdict,
    top_entries_per_row,
    verify_greedy,
    verify_sampled,
)
from specviz.core.settings import GenerationSettings
from specviz.core.tree_engine import tree_cycles

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


class DraftModelPairLike(ModelPairLike, Protocol):
    """A pair with a draft model: what the draft-model drafter is built from."""

    @property
    def draft(self) -> torch.nn.Module: ...


def speculative_generate(
    pair: ModelPairLike,
    prompt_ids: torch.Tensor,
    settings: GenerationSettings,
    drafter: Drafter | TreeDrafter,
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
    drafter: Drafter | TreeDrafter,
    prefill_chunk: int = PREFILL_CHUNK,
) -> Iterator[Prefill | Cycle]:
    """Speculative decoding of the target with the given drafter: a Prefill after each chunk of
    a prompt longer than *prefill_chunk* tokens, then one Cycle per cycle."""
    run = Run(pair, prompt_ids, settings)
    context = CommittedContext(prompt_ids, settings.max_new_tokens)
    stop_ids = frozenset(pair.eos_token_ids) if settings.stop_on_eos else frozenset()
    if isinstance(drafter, SelfDrafter):
        drafter.use_target(run.target)
    draft_prefill_s = drafter.start(prompt_ids, settings, stop_ids)
    run.totals = replace(run.totals, prefill_s=run.totals.prefill_s + draft_prefill_s)
    prefilling = drafter if isinstance(drafter, PrefillingDrafter) else None
    yield from run.read_prompt_head(prefill_chunk, prefilling)
    if isinstance(drafter, TreeDrafter):  # a tree each cycle: the tree engine's loop
        yield from tree_cycles(run, context, drafter)
        return
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
        # α counts positions actually tested: everything up to and including the first rejection.
        tested = min(accepted_len + 1, n)
        run.count_cycle(len(emitted), proposal.forwards, tested, accepted_len, timing)
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


def _drafted_records(
    run: Run,
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
            top_q=token_probs(tokenizer, tops_q[i]),
            top_p=token_probs(tokenizer, tops_p[i]),
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
    run: Run, drafted: tuple[DraftToken, ...], verdict: Verdict
) -> tuple[tuple[EmittedToken, ...], str | None]:
    """The accepted drafts then the resampled/bonus token, cut at EOS or the token budget."""
    extra_origin = Origin.BONUS if verdict.accepted_len == len(drafted) else Origin.RESAMPLED
    kept = drafted[: verdict.accepted_len]
    return run.emit(kept, verdict.next_token, verdict.next_dist, extra_origin)


def _rejection_record(
    run: Run,
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
            vocab_text(tokenizer, next_token),
            float(verdict.next_dist[next_token]),
        ),
        top_p=bars(tokenizer, p_target[row]),
        top_q=(
            bars(tokenizer, q_draft[row])
            if q_draft is not None
            else token_probs(tokenizer, [(rejected.token_id, 1.0)])
        ),
        # Greedy replaces a rejection by the argmax of p; there is no residual to draw from.
        top_residual=() if run.sampler.greedy else bars(tokenizer, verdict.next_dist),
    )


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
    run = Run(pair, prompt_ids, settings)
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
