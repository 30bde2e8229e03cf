"""What the engine needs of a drafter: the Proposal it hands the verifier, the Drafter protocol.

The verifier needs only the proposed ids and the distribution q each was drawn from, so any
proposer fits behind this interface (a smaller model, prompt lookup, early exit), as in
transformers' CandidateGenerator: produce candidates from the committed context, then learn how
many were accepted. A deterministic proposer (prompt lookup) has no distribution to hand over: its
q is one-hot at the proposed ids, written q_draft=None so nobody allocates (n, V) zeros.
A drafter that drafts with the target itself (layer skip) also implements
specviz.core.engine.SelfDrafter, through which the engine hands it the run's target runner.
The drafters themselves, and how one is named and built, live in specviz.drafters.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import torch

from specviz.core.sampling import Sampler
from specviz.core.settings import GenerationSettings
from specviz.core.tree import DraftTree


@dataclass(frozen=True)
class Proposal:
    """The tokens a drafter proposes for one cycle."""

    token_ids: torch.Tensor  # (n,) long
    # (n, V) float32: the distribution each token was drawn from; None: one-hot at token_ids
    # (a deterministic proposer), which the verifier handles without building the (n, V) rows.
    q_draft: torch.Tensor | None
    forwards: int  # forward passes the drafter spent (0 for model-free drafters)
    seconds: float
    drafter: str  # the kind that proposed, as the registry names it (Cycle.drafter)
    ended_by: str = "gamma"  # why the draft ended: a Cycle.draft_end value (see Cycle)
    doubt_scale: float = 1.0  # what the cumulative stop multiplied each doubt 1 - max q by
    # The γ this draft was allowed (the setting's, or its schedule's choice this cycle); 0: unsaid.
    gamma: int = 0
    # For a copying proposer (prompt lookup): the context position each proposed token was copied
    # from, (n,) indices into the committed context (prompt then emitted tokens); None otherwise.
    copied_from: tuple[int, ...] | None = None
    # What the drafter drafted with, as an option of its spec (Cycle.drafter_detail).
    detail: str = ""


class Drafter(Protocol):
    """Proposes candidates for the verifier and adapts to how many were accepted."""

    @property
    def cache_len(self) -> int:
        """KV entries the drafter holds (0 if it has no cache)."""
        ...

    def start(
        self, prompt_ids: torch.Tensor, settings: GenerationSettings, stop_ids: frozenset[int]
    ) -> float:
        """Reset for a new prompt (1, T) and settings; returns the seconds spent on prefill.

        stop_ids: tokens that end the run when emitted (end-of-sequence); nothing after one of
        them can be part of the output, so a drafter should not draft past one.
        """
        ...

    def propose(self, context: torch.Tensor, max_tokens: int, sampler: Sampler) -> Proposal:
        """Draft up to min(γ, max_tokens) tokens following context.

        context: (T,) long on the CPU, the committed text (the prompt then every emitted token),
        as transformers' get_candidates receives input_ids. A view the engine keeps up to date:
        read it during the call, keep no reference to it.
        """
        ...

    def commit(self, accepted_len: int, next_token: int) -> None:
        """Keep the first accepted_len proposed tokens, append next_token, adapt γ."""
        ...


@dataclass(frozen=True)
class TreeProposal:
    """A drafted tree for one cycle, with the draft's law at its root and at every node."""

    tree: DraftTree
    # (M + 1, V) float32: row 0 the draft's law after the committed text, row 1 + i its law
    # after node i (zeros where it was never computed: under the leaves).
    q_rows: torch.Tensor
    # True: each node's children were drawn from its row one after another without replacement
    # (the recursive rule tests them against q). False: chosen (the draft's most likely), so the
    # rule treats each as a one-hot proposal.
    drawn: bool
    forwards: int  # draft forwards spent on this tree
    seconds: float
    drafter: str  # the kind that proposed, as the registry names it (Cycle.drafter)
    shape: str = ""  # how the tree was grown, as the spec's options say (TreeRecord.shape)
    # A lookahead window laid into the tree: per row of the window (oldest first), the node
    # holding each slot, -1 for one left out (TreeRecord.window_rows); () for other drafters.
    window_rows: tuple[tuple[int, ...], ...] = ()
    # The node each pooled n-gram laid into the tree ends at (TreeRecord.window_guesses), and
    # whether the window's columns are read as n-grams after this tree's verification
    # (TreeRecord.window_harvest); the target's part of the window the engine records itself.
    window_guesses: tuple[int, ...] = ()
    window_harvest: bool = False
    # Why the tree is as small as it is: a Cycle.draft_end value ("prefill": an empty tree
    # before the target has read the prompt, for a drafter that drafts from the target's state).
    ended_by: str = "gamma"
    # How a drawn tree is verified at a temperature above 0: "traversal" from the leaves up
    # (specviz.core.tree_traversal) or "recursive", siblings in turn from the root
    # (specviz.core.tree); both exact, the first keeps at least as much on the shapes checked.
    rule: str = "recursive"


@runtime_checkable
class TreeDrafter(Protocol):
    """Proposes a tree of candidates each cycle (specviz.core.tree_engine verifies it) and
    follows the tokens the target kept. A drafter is a tree drafter by having propose_tree."""

    @property
    def cache_len(self) -> int:
        """KV entries the drafter holds (0 if it has no cache)."""
        ...

    def start(
        self, prompt_ids: torch.Tensor, settings: GenerationSettings, stop_ids: frozenset[int]
    ) -> float:
        """Reset for a new prompt (1, T) and settings; returns the seconds spent on prefill."""
        ...

    def propose_tree(self, context: torch.Tensor, max_depth: int, sampler: Sampler) -> TreeProposal:
        """A tree at most max_depth deep following context ((T,) long on the CPU, the committed
        text, as Drafter.propose receives it)."""
        ...

    def commit_tokens(self, tokens: Sequence[int]) -> None:
        """The tokens the cycle emitted: the kept path, then the resampled or bonus token."""
        ...


@runtime_checkable
class VerificationReader(Protocol):
    """A tree drafter that drafts from what the target computed while verifying its last tree
    (an optional capability beside TreeDrafter): lookahead decoding's window takes the target's
    guesses at its own nodes, Medusa's heads the target's state where the kept path ends.

    The engine calls read_verification() after each verification, before commit_tokens(), with
    the tree it verified, the target's probabilities after the root and after each node
    ((M + 1, V), row 1 + i after node i, as specviz.core.tree lays them out) and the kept path.
    """

    def read_verification(
        self, tree: DraftTree, p_rows: torch.Tensor, path: tuple[int, ...]
    ) -> None:
        """What the target made of the last tree; read it now, keep no reference to p_rows."""
        ...
