"""A draft model that proposes a tree of a fixed shape: *widths[d]* children under every node at
depth d (``(2, 2, 1)``: two guesses for the next token, two for the one after each, then one).

Each depth costs one draft forward over the whole tree so far (specviz.core.tree's mask), whose
rows at the frontier give the law the next children come from. At a temperature above 0 the
children of a node are drawn from that law one after another without replacement, which
recursive rejection sampling needs to stay exact; at temperature 0 they are its most likely
tokens. After the target's verdict the draft reads the kept tokens in one more forward.

A teaching shape, not yet the dynamic tree EAGLE-2 grows; registered as a drafter once the app
shows trees.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import torch

from specviz.core.device import device_of, sync
from specviz.core.sampling import Sampler
from specviz.core.settings import GenerationSettings
from specviz.core.tree import ROOT, DraftTree, without
from specviz.core.tree_engine import TreeProposal
from specviz.models.runner import ModelRunner


class ShapeTreeDrafter:
    """A draft model proposing trees of one shape (widths per depth)."""

    def __init__(self, model: torch.nn.Module, widths: Sequence[int]) -> None:
        if not widths or any(width < 1 for width in widths):
            raise ValueError(f"a tree shape needs at least one child per depth, got {widths}")
        self.widths = tuple(widths)
        self.device = device_of(model)
        self._runner = ModelRunner(model)
        self._unread: list[int] = []  # committed tokens the draft's cache has not read yet

    def start(self, prompt_ids: torch.Tensor, settings: GenerationSettings) -> None:
        self._runner.reset()
        self._unread = [int(token) for token in prompt_ids[0]]

    def propose(self, sampler: Sampler) -> TreeProposal:
        began = time.perf_counter()
        forwards = 0
        # The cache reads all but the last committed token, which is the tree's root.
        if len(self._unread) > 1:
            self._runner.forward(torch.tensor([self._unread[:-1]], device=self.device))
            forwards += 1
            self._unread = self._unread[-1:]
        root = self._unread[0]
        tokens: list[int] = []
        parents: list[int] = []
        frontier = [ROOT]
        q_rows = torch.empty(0)
        for width in self.widths:
            tree = DraftTree(tuple(tokens), tuple(parents))
            q_rows = sampler.probs(self._runner.tree_forward(tree, root))  # (size + 1, V)
            self._runner.rollback(tree.size + 1)  # the next depth reads the tree again
            forwards += 1
            next_frontier = []
            for node in frontier:
                law = q_rows[node + 1]
                for _ in range(min(width, int((law > 0).sum()))):
                    child = int(law.argmax()) if sampler.greedy else int(sampler.draw(law))
                    law = without(law, child)
                    tokens.append(child)
                    parents.append(node)
                    next_frontier.append(len(tokens) - 1)
            frontier = next_frontier
        tree = DraftTree(tuple(tokens), tuple(parents))
        # The last depth's children have no row yet: the laws under the leaves are not needed by
        # the rule (a leaf's children are none), so the rows end with the leaves' parents'.
        rows = torch.zeros(tree.size + 1, q_rows.shape[-1], dtype=q_rows.dtype)
        rows[: q_rows.shape[0]] = q_rows
        sync(self.device)
        return TreeProposal(tree, rows, not sampler.greedy, forwards, time.perf_counter() - began)

    def commit(self, tokens: Sequence[int]) -> None:
        self._unread += list(tokens)
