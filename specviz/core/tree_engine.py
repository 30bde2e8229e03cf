"""Speculative decoding over draft trees: each cycle the drafter proposes a tree, the target
scores all of it in one forward (specviz.core.tree), a rule picks the path that survives, and
the target's KV cache keeps that path's entries only.

The target's law is kept exactly by the rule (``verify_tree_recursive`` for children drawn from
the draft, ``verify_tree_greedy`` at temperature 0); the chain engine (specviz.core.engine) is
untouched and stays the path for chains. Cycles are ``TreeCycle`` records: the tree, the verdict
on every node, and what was emitted.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

import torch

from specviz.core.device import device_of, sync
from specviz.core.sampling import Sampler
from specviz.core.settings import GenerationSettings
from specviz.core.tree import (
    DraftTree,
    TreeVerdict,
    verify_tree_greedy,
    verify_tree_recursive,
)


class TreeRunner(Protocol):
    """What the tree engine needs of the target's runner (specviz.models.runner.ModelRunner)."""

    @property
    def cache_len(self) -> int: ...

    def forward(self, input_ids: torch.Tensor, logits_to_keep: int = 1) -> torch.Tensor: ...

    def tree_forward(self, tree: DraftTree, root_id: int) -> torch.Tensor: ...

    def keep_path(self, path: Sequence[int]) -> None: ...


class TreePair(Protocol):
    """A model pair as the tree engine uses it: the target, its runner, the stop tokens."""

    @property
    def target(self) -> torch.nn.Module: ...

    def target_runner(self) -> TreeRunner: ...

    @property
    def eos_token_ids(self) -> frozenset[int]: ...


@dataclass(frozen=True)
class TreeProposal:
    """A drafted tree with the draft's law at the root and at every node, (M + 1, V): row 0 the
    root's, row 1 + i node i's. *drawn*: each node's children were drawn from its row without
    replacement (the recursive rule needs that); False: chosen (the draft's most likely)."""

    tree: DraftTree
    q_rows: torch.Tensor
    drawn: bool
    forwards: int  # draft forwards spent on this tree
    seconds: float


class TreeDrafter(Protocol):
    """Proposes a tree after the committed text and follows what the target kept."""

    def start(self, prompt_ids: torch.Tensor, settings: GenerationSettings) -> None:
        """Reset for a new prompt (1, T)."""
        ...

    def propose(self, sampler: Sampler) -> TreeProposal:
        """A tree after the committed text (the prompt, then every emitted token)."""
        ...

    def commit(self, tokens: Sequence[int]) -> None:
        """The tokens the cycle emitted: the kept path, then the resampled or bonus token."""
        ...


Rule = Callable[[DraftTree, "torch.Tensor | None", torch.Tensor, Sampler], TreeVerdict]


@dataclass(frozen=True)
class TreeCycle:
    """One tree cycle: the tree, the target's verdict on it and the tokens it emitted."""

    index: int
    tree: DraftTree
    verdict: TreeVerdict
    emitted: tuple[int, ...]  # the kept path's tokens, then the token after it (maybe cut)
    q_at: tuple[float, ...]  # each node's q(x) under its parent's row
    p_at: tuple[float, ...]  # each node's p(x) under its parent's row
    draft_forwards: int
    draft_s: float
    verify_s: float
    new_tokens: int  # emitted in the whole run so far
    target_forwards: int  # in the whole run so far
    finished: bool
    stop_reason: str | None

    def verdicts(self) -> tuple[str, ...]:
        """Each node's verdict: accepted, rejected or untested."""
        return tuple(self.verdict.verdict_of(node) for node in range(self.tree.size))


def _at_parents(tree: DraftTree, rows: torch.Tensor) -> tuple[float, ...]:
    """rows[parent row][token] for each node: its probability where it was proposed."""
    return tuple(
        float(rows[parent + 1, token])
        for token, parent in zip(tree.tokens, tree.parents, strict=True)
    )


@torch.inference_mode()
def tree_stream(
    pair: TreePair,
    prompt_ids: torch.Tensor,
    settings: GenerationSettings,
    drafter: TreeDrafter,
    rule: Rule | None = None,
) -> Iterator[TreeCycle]:
    """Speculative decoding of the target over the drafter's trees, one TreeCycle per cycle.
    *rule*: the sampled verification rule (tests pass a wrong one to see it fail); greedy
    settings always descend by the target's argmax."""
    if prompt_ids.dim() != 2 or prompt_ids.shape[0] != 1 or prompt_ids.shape[1] == 0:
        raise ValueError("prompt_ids must have shape (1, T) with T >= 1 (batch size 1)")
    device = device_of(pair.target)
    sampler = Sampler.from_settings(settings, device)
    stop_ids = frozenset(pair.eos_token_ids) if settings.stop_on_eos else frozenset()
    target = pair.target_runner()
    prompt = prompt_ids.to(device)
    if prompt.shape[1] > 1:  # the last token stays pending: it is the first tree's root
        target.forward(prompt[:, :-1])
    root = int(prompt[0, -1])
    drafter.start(prompt_ids, settings)
    new_tokens = 0
    for index in range(settings.max_new_tokens):
        proposal = drafter.propose(sampler)
        tree = proposal.tree
        began = time.perf_counter()
        p_rows = sampler.probs(target.tree_forward(tree, root))  # (M + 1, V)
        sync(device)
        verify_s = time.perf_counter() - began
        if sampler.greedy:
            verdict = verify_tree_greedy(tree, p_rows)
        else:
            q_rows = proposal.q_rows if proposal.drawn else None
            verdict = (rule or verify_tree_recursive)(tree, q_rows, p_rows, sampler)
        target.keep_path(verdict.path)
        tokens = [tree.tokens[node] for node in verdict.path] + [verdict.next_token]
        stop_reason = None
        for position, token in enumerate(tokens):
            if token in stop_ids:
                tokens, stop_reason = tokens[: position + 1], "eos"
                break
        if new_tokens + len(tokens) >= settings.max_new_tokens:
            tokens = tokens[: settings.max_new_tokens - new_tokens]
            stop_reason = stop_reason or "max_new_tokens"
        new_tokens += len(tokens)
        drafter.commit(tokens)
        yield TreeCycle(
            index=index,
            tree=tree,
            verdict=verdict,
            emitted=tuple(tokens),
            q_at=_at_parents(tree, proposal.q_rows),
            p_at=_at_parents(tree, p_rows),
            draft_forwards=proposal.forwards,
            draft_s=proposal.seconds,
            verify_s=verify_s,
            new_tokens=new_tokens,
            target_forwards=index + 1,  # one target forward per cycle
            finished=stop_reason is not None,
            stop_reason=stop_reason,
        )
        if stop_reason is not None:
            return
        root = verdict.next_token
