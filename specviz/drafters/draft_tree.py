"""The tree drafter: the pair's draft model proposes a tree of guesses each cycle, not a chain.

Two ways to grow it:

- **Dynamic** (``tree``, ``tree:nodes=16,depth=6,topk=4``), greedy as EAGLE-2 grows it (Li et
  al., "EAGLE-2: Faster Inference of Language Models with Dynamic Draft Trees", 2024, §4): at
  each depth the ``topk`` most promising frontier nodes, by the draft's probability of the whole
  branch (the product of q along it), each get their ``topk`` most likely children; after
  ``depth`` depths (more while the best branch stays likely: LINE_FLOOR, below) every candidate
  is reranked by that product and the best ``nodes`` are kept. A branch's
  product never exceeds its parent's, so the kept set holds every kept node's ancestors.
- **A fixed shape** (``tree:shape=2x2x1``), for teaching: every node at depth d gets the d-th
  width's children (two guesses for the next token, two for the one after each, then one).
  At a temperature above 0 they are drawn from q one after another without replacement, which
  the exact rules need; at 0, the most likely.

A tree drawn at a temperature above 0 is verified from its leaves up (``rule=traversal``,
specviz.core.tree_traversal), or siblings in turn from the root (``rule=recursive``, recursive
rejection sampling, specviz.core.tree): both keep the target's law, the first at least as much
on the shapes checked, the second the easier to follow step by step.

Greedy, a dynamic tree's children are the draft's most likely tokens. At a temperature above 0
they are drawn from q without replacement as well, so the rule tests them
against q and a diffuse draft keeps what it knows (the top few tokens of a flat q are each rarely
the target's choice). Both rules are exact only if whether a child is in the tree does not
depend on which token it is, so the drawn dynamic tree decides each depth's child counts before
drawing and never prunes afterwards, unlike EAGLE-2's final rerank: at each depth the slots
(node, k-th child) are valued by the branch's log probability with the node's k-th largest q,
and the best are kept within the node budget, which holds back room for a line continuing as
fast as the best branch has so far. (SpecInfer's and Sequoia's trees keep the same rule: the
tree's shape is fixed before its tokens are drawn.) Where that line stays likely the drawn tree
plans past the spec's depth (LINE_FLOOR), so a confident draft spends its budget on depth; the
greedy tree goes on past it, one depth at a time, while its best branch's probability does.

Each depth costs one draft forward over the nodes expanded at the depth before (the root, at
the first), which sees its ancestors among the tree entries cached by the earlier depths
(specviz.core.tree's mask); its rows give the next children. After the last depth the tree's
entries are dropped: the draft's cache keeps only the committed text.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence

import torch

from specviz.core.device import device_of, sync
from specviz.core.engine import ModelPairLike
from specviz.core.proposal import TreeProposal
from specviz.core.sampling import Sampler
from specviz.core.settings import GenerationSettings
from specviz.core.tree import ROOT, DraftTree, without
from specviz.drafters.base import DrafterSpec
from specviz.drafters.tree_growth import DRAWN_TREE_RULES, TreeGrowth, growth_of, rule_of
from specviz.models.runner import ModelRunner
from specviz.text import UserError

# The probability a dynamic tree's line may fall to before the tree stops growing deeper than its
# spec's depth: 0.3 raised τ on all four code and story prompts measured at temperature 1, and
# on both code prompts greedy (the story ones unchanged), against the spec's depth alone
# (docs/performance.md).
LINE_FLOOR = 0.3


def tokens_above_floor(pace: float) -> float:
    """How many tokens a line losing *pace* log probability a token stays above LINE_FLOOR
    (inf for a line that loses nothing): the drafter's reach, and the tree lab's."""
    return math.log(LINE_FLOOR) / pace if pace < 0 else math.inf


class DraftTreeDrafter:
    """The pair's draft model proposing a tree each cycle (module doc)."""

    kind = "tree"

    @classmethod
    def check_spec(cls, spec: DrafterSpec) -> None:
        growth_of(spec)
        rule_of(spec)

    @classmethod
    def most_guesses(cls, spec: DrafterSpec) -> int:
        """The tree's node budget: what one verifying forward reads besides the newest token."""
        return growth_of(spec).size

    @classmethod
    def drawn_tree_rule(cls, spec: DrafterSpec) -> str | None:
        """How the trees it draws at T > 0 are tested (tree_growth.DRAWN_TREE_RULES)."""
        cls.check_spec(spec)
        return rule_of(spec)

    @classmethod
    def from_spec(cls, spec: DrafterSpec, pair: ModelPairLike) -> DraftTreeDrafter:
        """The registry's factory: the pair's draft model, grown as the spec says."""
        growth = growth_of(spec)
        draft = getattr(pair, "draft", None)
        if not isinstance(draft, torch.nn.Module):
            raise UserError("error.drafter.needs_draft", kind=repr(cls.kind))
        return cls(draft, growth, rule=rule_of(spec))

    def __init__(
        self,
        model: torch.nn.Module,
        growth: TreeGrowth,
        runner: ModelRunner | None = None,
        rule: str = DRAWN_TREE_RULES[0],
    ) -> None:
        """*runner*: the model's runner, by default a new one (a measurement may wrap one);
        *rule*: how a tree drawn at T > 0 is verified (tree_growth.DRAWN_TREE_RULES)."""
        self.growth = growth
        self.rule = rule
        self.device = device_of(model)
        self._runner = runner or ModelRunner(model)
        self._stop_ids: frozenset[int] = frozenset()

    @property
    def cache_len(self) -> int:
        return self._runner.cache_len

    def start(
        self, prompt_ids: torch.Tensor, settings: GenerationSettings, stop_ids: frozenset[int]
    ) -> float:
        self._runner.reset()
        self._stop_ids = stop_ids
        return 0.0  # the first proposal reads the prompt

    @torch.inference_mode()
    def prefill(self, prompt_part: torch.Tensor) -> None:
        """Read the next chunk of a long prompt (1, L) (the engine's PrefillingDrafter)."""
        self._runner.forward(prompt_part.to(self.device), logits_to_keep=1)

    def commit_tokens(self, tokens: Sequence[int]) -> None:
        """Nothing to keep: the next proposal reads what its cache lacks from the context."""

    @torch.inference_mode()
    def propose_tree(self, context: torch.Tensor, max_depth: int, sampler: Sampler) -> TreeProposal:
        began = time.perf_counter()
        forwards = 0
        # The cache holds the committed text but its last token, the tree's root.
        unread = context[self.cache_len : -1]
        if unread.numel():
            self._runner.forward(unread.view(1, -1).to(self.device))
            forwards += 1
        root = int(context[-1])
        last = max(1, min(self.growth.max_depth, max_depth))
        grower = _Grower(self.growth, sampler, self._stop_ids, last, max_depth)
        read = 0  # tree entries (the root, then expanded candidates) the cache holds
        for depth in range(1, grower.most + 1):
            fed = grower.expanded_tree()
            # One forward per depth reads only the candidates expanded since the last one.
            rows = sampler.probs(self._runner.tree_forward(fed, root, read))
            before, read = read, fed.size + 1
            forwards += 1
            if max_depth < 1:
                grower.rows[ROOT] = rows[0]
                break
            if not grower.grow(depth, rows, before):
                break
        self._runner.rollback(read)  # the next cycle's tree starts after the committed text
        tree, q_rows = grower.final_tree()
        sync(self.device)
        return TreeProposal(
            tree,
            q_rows,
            drawn=grower.drawn,
            forwards=forwards,
            seconds=time.perf_counter() - began,
            drafter=self.kind,
            shape=str(self.growth),
            rule=self.rule,
        )


class _Grower:
    """One tree's candidates as they grow: every candidate's token, parent and score (log of
    the draft's probability of its branch), which were expanded, and their draft rows."""

    def __init__(
        self,
        growth: TreeGrowth,
        sampler: Sampler,
        stop_ids: frozenset[int],
        last: int,
        max_depth: int,
    ) -> None:
        """*last*: the spec's depth (within *max_depth*, the engine's limit for this cycle)."""
        self.growth = growth
        self.sampler = sampler
        self.stop_ids = stop_ids
        # A dynamic tree of N nodes is never deeper than N (a kept node's ancestors are kept),
        # so it never drafts a depth its budget could not keep: a small budget saves forwards.
        deepest = growth.nodes if not growth.widths else last
        self.last = min(last, deepest)  # the deepest depth this tree grows to (may move)
        self.drawn = not sampler.greedy  # children drawn from q, not chosen
        # How deep the tree may be planned: a dynamic tree follows a likely line past its
        # spec's depth (_plan_depth), a fixed shape stops there.
        self.most = min(max(last, max_depth), deepest) if not growth.widths else last
        self.tokens: list[int] = []
        self.parents: list[int] = []
        self.scores: list[float] = []
        self.depths: list[int] = []
        self.expanded: list[int] = []  # candidates fed to the draft, in feeding order
        self.frontier: list[int] = [ROOT]  # the candidates whose children the next rows give
        self.rows: dict[int, torch.Tensor] = {}  # candidate (ROOT: the root) -> draft law after it

    def expanded_tree(self) -> DraftTree:
        """The expanded candidates as a tree (parents before children), for the draft forward."""
        where = {ROOT: ROOT} | {candidate: i for i, candidate in enumerate(self.expanded)}
        return DraftTree(
            tuple(self.tokens[c] for c in self.expanded),
            tuple(where[self.parents[c]] for c in self.expanded),
        )

    def grow(self, depth: int, rows: torch.Tensor, read: int) -> bool:
        """Add the frontier's children from the draft rows of one forward over expanded_tree()
        from its entry *read* on (the root is entry 0, expanded candidate i entry i + 1); False
        when there is nothing left to expand."""
        entry = {ROOT: 0} | {candidate: i + 1 for i, candidate in enumerate(self.expanded)}
        row_of = {node: at - read for node, at in entry.items() if at >= read}
        widths = self.growth.widths
        for node in self.frontier:
            self.rows[node] = rows[row_of[node]]
        if widths:
            counts = {node: widths[depth - 1] for node in self.frontier}
        elif self.drawn:
            counts = self._drawn_counts(depth)
        else:
            counts = {node: self.growth.topk for node in self.frontier}
        born: list[int] = []
        for node in self.frontier:
            if counts.get(node):
                born += self._children(node, self.rows[node], counts[node], depth)
        growing = [c for c in born if self.tokens[c] not in self.stop_ids]
        if not widths and not self.drawn:  # EAGLE-2: only the best branches grow on
            growing.sort(key=lambda c: -self.scores[c])
            growing = growing[: self.growth.topk]
            if growing and depth >= self.last:  # past the spec's depth: one more if likely
                self._plan_depth(self.scores[growing[0]], depth)
                self.last = min(self.last, depth + 1)
        self.frontier = growing
        if depth >= self.last or not self.frontier or len(self.tokens) >= self._budget:
            return False
        self.expanded += self.frontier
        return True

    @property
    def _budget(self) -> float:
        """The most nodes the tree may hold while it grows: the drawn dynamic tree keeps every
        child it draws; the others are bounded by their shape or cut by the final rerank."""
        return self.growth.nodes if self.drawn and not self.growth.widths else math.inf

    def _drawn_counts(self, depth: int) -> dict[int, int]:
        """How many children each frontier node draws at *depth*, decided before any is drawn
        (module doc): the best ``topk`` slots by value, within the node budget less the room a
        line continuing as fast as the best branch so far would take at the depths below."""
        slots: list[tuple[float, int, int]] = []  # (value, frontier position, rank)
        for at, node in enumerate(self.frontier):
            base = 0.0 if node == ROOT else self.scores[node]
            law = self.rows[node]
            values = torch.topk(law, min(self.growth.topk, law.shape[-1])).values.tolist()
            slots += [(base + math.log(v), at, rank) for rank, v in enumerate(values, 1) if v > 0]
        if not slots:
            return {}
        slots.sort(key=lambda slot: (-slot[0], slot[1], slot[2]))
        slots = slots[: self.growth.topk]
        values = [value for value, _, _ in slots]
        self._plan_depth(values[0], depth)
        room = int(self._budget) - len(self.tokens)
        cut = sorted(values + self._below(values, depth), reverse=True)[: max(room, 0)]
        counts: dict[int, int] = {}
        for value, at, _ in slots:
            if cut and value >= cut[-1] and sum(counts.values()) < room:
                node = self.frontier[at]
                counts[node] = counts.get(node, 0) + 1
        return counts

    def _plan_depth(self, best: float, depth: int) -> None:
        """Plan the tree down to where a line continuing at the best branch's pace (its log
        probability *best* over *depth* depths) would fall below LINE_FLOOR: at least the spec's
        depth, at most the engine's limit. A draft sure of the text (code it has seen the like
        of) then spends the node budget on a deep line, whose tokens the target keeps, rather
        than on second guesses it gives almost no chance; an unsure one keeps the spec's depth
        and its alternatives near the root (docs/performance.md, trees at temperature 1)."""
        pace = best / depth
        above = tokens_above_floor(pace)
        reach = math.ceil(above) if math.isfinite(above) else self.most
        self.last = max(depth, min(self.most, max(self.growth.depth, reach)))

    def _below(self, values: list[float], depth: int) -> list[float]:
        """The values a line continuing as fast as the best branch so far would have at the
        depths below *depth* (its log probability per depth so far, again at each depth). Only
        the best line is held room for: holding it for every slot again at each depth (the
        tree's current spread expected all the way down) kept fewer alternatives near the root
        and gave less at temperature 1 on the story prompts (docs/performance.md)."""
        pace = values[0] / depth
        return [values[0] + pace * ahead for ahead in range(1, self.last - depth + 1)]

    def _children(self, node: int, law: torch.Tensor, width: int, depth: int) -> list[int]:
        """*width* children of node: drawn without replacement (T > 0) or the most likely
        (greedy), each scored by its branch's log probability."""
        base = 0.0 if node == ROOT else self.scores[node]
        if self.drawn:
            picks, rest = [], law
            for _ in range(min(width, int((law > 0).sum()))):
                token = int(self.sampler.draw(rest))
                picks.append(token)
                rest = without(rest, token)
        else:
            values, indices = torch.topk(law, min(width, law.shape[-1]))
            picks = [
                int(i) for i, v in zip(indices.tolist(), values.tolist(), strict=True) if v > 0
            ]
        born = []
        for token in picks:
            self.tokens.append(token)
            self.parents.append(node)
            self.scores.append(base + math.log(max(float(law[token]), 1e-30)))
            self.depths.append(depth)
            born.append(len(self.tokens) - 1)
        return born

    def _reranked(self) -> bool:
        """Whether the final tree is the best ``nodes`` candidates (EAGLE-2's rerank), which
        only the greedy dynamic tree may do: it would drop drawn children by their tokens."""
        return not self.growth.widths and not self.drawn

    def final_tree(self) -> tuple[DraftTree, torch.Tensor]:
        """The tree to verify and its q rows: every candidate for a shape or a drawn tree, the
        best ``nodes`` by branch score for the greedy dynamic tree (ancestors score at least as
        high)."""
        chosen = list(range(len(self.tokens)))
        if self._reranked():
            chosen.sort(key=lambda c: (-self.scores[c], self.depths[c], c))
            chosen = chosen[: self.growth.nodes]
        # Parents before children, siblings in the order they were proposed. (A parent ranks
        # before its children above: its score is at least theirs and its depth less.)
        chosen.sort(key=lambda c: (self.depths[c], c))
        where = {ROOT: ROOT} | {c: i for i, c in enumerate(chosen)}
        tree = DraftTree(
            tuple(self.tokens[c] for c in chosen),
            tuple(where[self.parents[c]] for c in chosen),
        )
        root_row = self.rows[ROOT]
        q_rows = torch.zeros(tree.size + 1, root_row.shape[-1], dtype=root_row.dtype)
        q_rows[0] = root_row
        for i, candidate in enumerate(chosen):
            if candidate in self.rows:
                q_rows[i + 1] = self.rows[candidate]
        return tree, q_rows
