"""What a tree proposal costs the draft: each depth reading only its new nodes, as the tree
drafter does, against each depth reading the whole tree grown so far again.

Both grow the same kind of tree with the pair's draft model, through the runner and the drafter
the app runs; the second only wraps the runner so that every depth's forward starts the tree
over. They alternate proposal by proposal after the same prompt, so a busy moment falls on both.
The trees may differ a little: a draft whose kernels change with the rows a forward carries (the
int4dual format reads many rows at full width) gives slightly different q for the same node.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass

import torch

from specviz.core.sampling import Sampler
from specviz.core.settings import GenerationSettings
from specviz.core.tree import DraftTree
from specviz.drafters.draft_tree import DraftTreeDrafter
from specviz.drafters.tree_growth import TreeGrowth
from specviz.models.runner import ModelRunner

__all__ = ["TreeDrafting", "time_tree_drafting"]


@dataclass(frozen=True)
class TreeDrafting:
    """Seconds of one tree proposal after the prompt, each way, over the repeats."""

    growth: str
    prompt_tokens: int
    new_nodes_s: tuple[float, ...]  # each depth reads the nodes new at it
    whole_tree_s: tuple[float, ...]  # each depth reads the tree grown so far again
    same_trees: int  # proposals where both ways grew the very same tree

    @property
    def ratio(self) -> float:
        """Median time re-reading over median time reading new nodes only."""
        return statistics.median(self.whole_tree_s) / statistics.median(self.new_nodes_s)


class _Rereading:
    """A runner whose tree forwards read the whole tree every time (the cost before a depth
    could read only its new nodes); everything else is the runner's own."""

    def __init__(self, runner: ModelRunner) -> None:
        self._runner = runner
        self._tree_len = 0

    def __getattr__(self, name: str) -> object:
        return getattr(self._runner, name)

    def tree_forward(self, tree: DraftTree, root_id: int, read: int = 0) -> torch.Tensor:
        if read:
            self._runner.rollback(self._tree_len)
        self._tree_len = tree.size + 1
        return self._runner.tree_forward(tree, root_id)[read:]


def time_tree_drafting(
    draft: torch.nn.Module,
    prompt_ids: torch.Tensor,
    growth: TreeGrowth,
    repeats: int = 5,
) -> TreeDrafting:
    """Time *repeats* greedy tree proposals after *prompt_ids* (1, T), each way in turn."""
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    settings = GenerationSettings(temperature=0.0)
    context = prompt_ids[0]
    times: dict[bool, list[float]] = {False: [], True: []}
    same = 0
    for _ in range(repeats):
        trees = {}
        for whole in (False, True):
            runner = ModelRunner(draft)
            if whole:
                runner = _Rereading(runner)  # type: ignore[assignment]
            drafter = DraftTreeDrafter(draft, growth, runner)
            drafter.start(prompt_ids, settings, frozenset())
            sampler = Sampler.from_settings(settings, context.device)
            drafter.propose_tree(context, growth.max_depth, sampler)  # reads the prompt
            began = time.perf_counter()
            trees[whole] = drafter.propose_tree(context, growth.max_depth, sampler).tree
            times[whole].append(time.perf_counter() - began)
        same += trees[False] == trees[True]
    return TreeDrafting(
        str(growth), int(prompt_ids.shape[1]), tuple(times[False]), tuple(times[True]), same
    )
