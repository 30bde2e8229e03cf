"""Prompt lookup as a tree (``lookup:branches=3``): every earlier match of the text's suffix
offers its continuation, and the continuations share one tree.

The chain lookup (specviz.drafters.prompt_lookup) copies what followed one occurrence of the
longest suffix n-gram that occurred before. Text often holds several: the same call with other
arguments, a loop's body written twice, a phrase the prompt repeats with different endings. Here
the occurrences of the longest matching suffix come first (earliest or latest first, as
``occurrence`` says), then those of shorter suffixes, each continuation (up to γ tokens) laid
into a trie, until ``branches`` distinct continuations are in it; continuations that agree share
their nodes. The target scores the whole trie in one forward (specviz.core.tree) and keeps the
longest branch its rule accepts.

No model, no forward: the children of a node are chosen, not drawn, so the recursive rule treats
each as a one-hot proposal (specviz.core.tree: accepted with p'(x), a rejection removes x from p')
and the output keeps the target's law at any temperature; greedy, the target's argmax decides.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import torch

from specviz.core.cost_model import step_costs_of
from specviz.core.device import device_of
from specviz.core.engine import ModelPairLike
from specviz.core.proposal import TreeProposal
from specviz.core.sampling import Sampler
from specviz.core.settings import GenerationSettings
from specviz.core.tree import ROOT, DraftTree
from specviz.drafters.base import DrafterSpec
from specviz.drafters.prompt_lookup import LookupOptions, NgramIndex, PromptLookupDrafter
from specviz.drafters.tree_growth import MAX_NODES, MAX_WIDTH
from specviz.text import UserError

DEFAULT_BRANCHES = 3


def branches_of(spec: DrafterSpec) -> int:
    """The spec's ``branches`` (1: the chain lookup), or a UserError outside 1..MAX_WIDTH."""
    text = spec.option("branches", "1")
    if not text.isdigit() or not 1 <= int(text) <= MAX_WIDTH:
        raise UserError(
            "error.drafter.tree_option",
            name="branches",
            got=repr(text),
            low="1",
            high=str(MAX_WIDTH),
        )
    return int(text)


class TokenTrie:
    """Token paths from the root laid into one tree: node i's token, its parent, and its
    children by token, so paths that agree share their nodes (a node's logits depend on its
    path's tokens alone)."""

    def __init__(self) -> None:
        self.tokens: list[int] = []
        self.parents: list[int] = []
        self._child: dict[tuple[int, int], int] = {}  # (parent, token) -> node
        self.leaves = 0

    def add(self, continuation: Sequence[int], room: int) -> int | None:
        """Lay *continuation* in from the root, new nodes after the shared prefix, at most
        *room* new nodes (a longer tail is cut). Returns the node its last token reached
        (ROOT for an empty one), None when it was cut."""
        node, new = ROOT, 0
        for token in continuation:
            known = self._child.get((node, token))
            if known is not None:
                node = known
                continue
            if new == room:
                return None
            if node != ROOT and not any(parent == node for parent in self.parents):
                self.leaves -= 1  # a leaf grows on: it is a branch's inner node now
            self.tokens.append(token)
            self.parents.append(node)
            node = len(self.tokens) - 1
            self._child[(self.parents[node], token)] = node
            self.leaves += 1
            new += 1
        return node

    def tree(self) -> DraftTree:
        """The paths laid in so far, nodes in the order they were laid."""
        return DraftTree(tuple(self.tokens), tuple(self.parents))


def one_hot_rows(tree: DraftTree) -> torch.Tensor:
    """q for a tree of chosen tokens: one row per node and the root, 1 at each child chosen
    there, (M + 1, largest token + 1). The one-hot rule reads no q; the cards read q(x) = 1
    from it, as for a copy."""
    q_rows = torch.zeros(tree.size + 1, max(tree.tokens, default=0) + 1)
    for token, parent in zip(tree.tokens, tree.parents, strict=True):
        q_rows[parent + 1, token] = 1.0
    return q_rows


def chosen_tree_proposal(
    tree: DraftTree, began: float, drafter: str, shape: str, **extra: Any
) -> TreeProposal:
    """A tree of chosen tokens drafted without a model since *began* (perf_counter): one-hot
    q rows, tested by the one-hot rule; *extra* sets TreeProposal's optional fields."""
    return TreeProposal(
        tree,
        one_hot_rows(tree),
        drawn=False,
        forwards=0,
        seconds=time.perf_counter() - began,
        drafter=drafter,
        shape=shape,
        **extra,
    )


class LookupTreeDrafter:
    """Proposes a trie of what followed each earlier occurrence of the text's suffix."""

    kind = "lookup"

    def __init__(
        self, options: LookupOptions, branches: int, device: torch.device | None = None
    ) -> None:
        self.options = options
        self.branches = branches
        self.device = device or torch.device("cpu")
        self.index = NgramIndex(options, every=True)
        self._gamma = GenerationSettings().gamma
        self._stop_ids: frozenset[int] = frozenset()

    @property
    def cache_len(self) -> int:
        return 0  # no model, no KV cache

    def start(
        self, prompt_ids: torch.Tensor, settings: GenerationSettings, stop_ids: frozenset[int]
    ) -> float:
        self.index = NgramIndex(self.options, every=True)
        self._gamma = settings.gamma
        self._stop_ids = stop_ids
        return 0.0  # the prompt is indexed by the first proposal, inside its timing

    def commit_tokens(self, tokens: Sequence[int]) -> None:
        """Nothing to keep: the committed tokens reach the index through the next context."""

    def propose_tree(self, context: torch.Tensor, max_depth: int, sampler: Sampler) -> TreeProposal:
        began = time.perf_counter()
        self.index.extend(context)
        depth = min(max_depth, self._gamma)
        trie = TokenTrie()
        if depth > 0:
            for start, n in self.index.occurrences():
                if trie.leaves >= self.branches or len(trie.tokens) >= MAX_NODES:
                    break
                trie.add(self._continuation(start + n, depth), MAX_NODES - len(trie.tokens))
        return chosen_tree_proposal(trie.tree(), began, self.kind, f"branches={self.branches}")

    def _continuation(self, first: int, depth: int) -> list[int]:
        """Up to *depth* tokens of the committed text from *first* on, cut after a stop token
        (the chain lookup's EOS stop: nothing is drafted past an end of text)."""
        tokens = self.index.tokens[first : first + depth]
        for at, token in enumerate(tokens):
            if token in self._stop_ids:
                return tokens[: at + 1]
        return tokens


class LookupKind:
    """The registry's ``lookup``: the chain lookup, or the lookup tree when ``branches`` is
    above 1 (the chain's own options hold for both)."""

    kind = PromptLookupDrafter.kind

    @staticmethod
    def check_spec(spec: DrafterSpec) -> None:
        LookupOptions.from_spec(spec, also=("branches",))
        branches_of(spec)

    @staticmethod
    def from_spec(
        spec: DrafterSpec, pair: ModelPairLike
    ) -> PromptLookupDrafter | LookupTreeDrafter:
        options = LookupOptions.from_spec(spec, also=("branches",))
        branches = branches_of(spec)
        if branches > 1:
            return LookupTreeDrafter(options, branches, device_of(pair.target))
        return PromptLookupDrafter(options, device_of(pair.target), step_costs_of(pair))
