"""Tokens per target pass that the two exact rules for drawn trees keep on the same real trees.

The trees the tree drafter (or Medusa with ``q=heads``) draws at T > 0, verified by the engine
as the app runs them, are each priced twice before the engine decides them: the expected tokens
of the pass (the kept path and the token after it) under recursive rejection sampling (siblings
in turn from the root, specviz.core.tree) and under the leaf-to-root walk
(specviz.core.tree_traversal). Both are exact sums over the rule's own chances, not dice, so the
rules are compared on the very same trees without the noise of sampling; which trees arise
follows the run, which goes on with the drafter's own rule. Each rule's own verification of
each tree is timed too (the decision, not the target's forward), the median per prompt; a task's
pooled row weighs each prompt's median by its trees.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import cast

import torch

from specviz.core.engine import ModelPairLike
from specviz.core.proposal import TreeDrafter
from specviz.core.sampling import Sampler
from specviz.core.settings import GenerationSettings
from specviz.core.tree import (
    ROOT,
    DraftTree,
    TreeVerdict,
    positive_residual,
    verify_tree_recursive,
    without,
)
from specviz.core.tree_engine import SAMPLED_RULES, tree_stream
from specviz.core.tree_traversal import Traversal
from specviz.drafters.registry import drawn_tree_rule, make_drafter
from specviz.text import UserError


def recursive_expected_tokens(tree: DraftTree, q_rows: torch.Tensor, p_rows: torch.Tensor) -> float:
    """E[tokens a pass] under recursive rejection sampling: at each node its children are tested
    in turn, child i kept with c_i = min(1, p'(x)/q'(x)) after the earlier ones lost."""

    def below(node: int) -> float:
        """The expected number of nodes kept under *node*, given the walk reached it."""
        p_now, q_now = p_rows[node + 1], q_rows[node + 1]
        reach, total = 1.0, 0.0
        for child in tree.children(node):
            token = tree.tokens[child]
            chance = min(1.0, float(p_now[token]) / float(q_now[token]))
            total += reach * chance * (1.0 + below(child))
            reach *= 1.0 - chance
            if reach <= 0.0:
                break
            p_now, q_now = positive_residual(p_now, q_now), without(q_now, token)
        return total

    return 1.0 + below(ROOT)


def traversal_expected_tokens(tree: DraftTree, q_rows: torch.Tensor, p_rows: torch.Tensor) -> float:
    """E[tokens a pass] under the leaf-to-root walk: its tests come in a fixed order (each loss
    updates the state the same way whatever the dice), so the expectation is one pass over them:
    a leaf at depth d tested with weight w, reached with chance R, adds R · w · (d + 1)."""
    state = Traversal.start(tree, q_rows, p_rows)
    reach, total = 1.0, 0.0
    while reach > 0.0:
        leaf = state.first_leaf()
        if leaf == ROOT:
            return total + reach
        chance = state.weight[leaf]
        total += reach * chance * (tree.depths[leaf] + 1)
        reach *= 1.0 - chance
        state.reject(leaf)
    return total


@dataclass
class RulePricer:
    """A tree rule for the engine that prices each tree under both rules and times each rule's
    own verification of it (on dice of its own, so the run's are untouched), then verifies it
    with the drafter's rule (*rule*, a key of SAMPLED_RULES)."""

    rule: str
    recursive: list[float] = field(default_factory=list)
    traversal: list[float] = field(default_factory=list)
    seconds: dict[str, list[float]] = field(
        default_factory=lambda: {name: [] for name in SAMPLED_RULES}
    )

    def __call__(
        self,
        tree: DraftTree,
        q_rows: torch.Tensor | None,
        p_rows: torch.Tensor,
        sampler: Sampler,
    ) -> TreeVerdict:
        if q_rows is None:
            # Not drawn (Medusa's first, empty tree): decided as the engine would, not priced.
            return verify_tree_recursive(tree, None, p_rows, sampler)
        self.recursive.append(recursive_expected_tokens(tree, q_rows, p_rows))
        self.traversal.append(traversal_expected_tokens(tree, q_rows, p_rows))
        dice = torch.Generator(device=p_rows.device).manual_seed(len(self.recursive))
        scratch = Sampler(sampler.temperature, sampler.top_k, sampler.top_p, dice)
        for name, verify in SAMPLED_RULES.items():
            began = time.perf_counter()
            verify(tree, q_rows, p_rows, scratch)
            self.seconds[name].append(time.perf_counter() - began)
        return SAMPLED_RULES[self.rule](tree, q_rows, p_rows, sampler)


@dataclass(frozen=True)
class RulesRow:
    """One prompt's trees (or a task's, pooled): the mean expected tokens a pass per rule."""

    task: str
    prompt: int  # 1-based within the task; 0 for the task's pooled row
    seeds: int
    trees: int
    new_tokens: int
    recursive: float
    traversal: float
    # Each rule's verification of a tree, median ms (the decision alone, not the forward)
    recursive_ms: float = 0.0
    traversal_ms: float = 0.0

    @property
    def gain(self) -> float:
        """The leaf-to-root walk's tokens a pass over recursive sampling's, on the same trees."""
        return self.traversal / self.recursive if self.recursive else 1.0


def check_rules_settings(settings: GenerationSettings, drafter: str, seeds: int) -> str:
    """The measurement's options, refused in one line before any model loads; the drafter's
    own rule."""
    if settings.temperature <= 0:
        raise UserError("error.measure.rules_greedy")
    if seeds < 1:
        raise UserError("error.measure.seeds", got=seeds)
    rule = drawn_tree_rule(drafter)
    if rule is None:
        raise UserError("error.measure.rules_drafter", got=repr(drafter))
    return rule


def tree_rules(
    pair: ModelPairLike,
    prompts: Sequence[tuple[str, torch.Tensor]],
    settings: GenerationSettings,
    drafter: str = "tree",
    seeds: int = 1,
) -> list[RulesRow]:
    """Each prompt decoded *seeds* times (seed, seed + 1, ...) with *drafter*'s trees, every tree
    priced under both rules: a row per prompt, then each task's pooled row after its prompts."""
    rule = check_rules_settings(settings, drafter, seeds)
    rows: list[RulesRow] = []
    for task in dict.fromkeys(name for name, _ in prompts):
        task_rows = []
        group = [ids for name, ids in prompts if name == task]
        for number, prompt_ids in enumerate(group, start=1):
            pricer, new_tokens = RulePricer(rule), 0
            for offset in range(seeds):
                run = replace(settings, seed=settings.seed + offset)
                made = cast(TreeDrafter, make_drafter(drafter, pair))
                for cycle in tree_stream(pair, prompt_ids, run, made, pricer):
                    new_tokens += len(cycle.emitted)
            task_rows.append(
                RulesRow(
                    task,
                    number,
                    seeds,
                    len(pricer.recursive),
                    new_tokens,
                    _mean(pricer.recursive),
                    _mean(pricer.traversal),
                    _median_ms(pricer.seconds["recursive"]),
                    _median_ms(pricer.seconds["traversal"]),
                )
            )
        rows += task_rows
        rows.append(_pooled(task, seeds, task_rows))
    return rows


def _median_ms(seconds: Sequence[float]) -> float:
    return statistics.median(seconds) * 1000 if seconds else 0.0


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _pooled(task: str, seeds: int, rows: Sequence[RulesRow]) -> RulesRow:
    """A task's prompts together: each rule's mean over all their trees."""
    trees = sum(row.trees for row in rows)

    def mean(values: Sequence[float]) -> float:
        weighted = sum(value * row.trees for value, row in zip(values, rows, strict=True))
        return weighted / trees if trees else 0.0

    return RulesRow(
        task,
        0,
        seeds,
        trees,
        sum(row.new_tokens for row in rows),
        mean([row.recursive for row in rows]),
        mean([row.traversal for row in rows]),
        mean([row.recursive_ms for row in rows]),
        mean([row.traversal_ms for row in rows]),
    )
