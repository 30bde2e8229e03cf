"""Medusa: the target guesses several tokens ahead from its own last hidden state (Cai et al.,
"Medusa: Simple LLM Inference Acceleration Framework with Multiple Decoding Heads", 2024).

No second model: K small heads (specviz.models.heads, trained on this machine) read h_t, the
target's final hidden state at the last position it verified, which its output layer turned into
the token it emitted there (t + 1). Head k guesses token t + k + 1, so head k's guesses are the
candidates at depth k of the next tree, under that token. A drafting step costs the heads'
matrix products: K residual blocks and one pass of the output layer over K rows.

The tree (Medusa's tree of top-k choices, §2.1.2, grown per cycle from the heads' own
probabilities): a candidate is a tuple of ranks (r_1, ..., r_d), "head 1's r_1-th guess, then
head 2's r_2-th, ...", valued by the product of those probabilities (the heads guess
independently given h_t, so the product is their chance of the whole line). The ``nodes`` best
candidates form the tree; a candidate's value never exceeds its parent's, so the set holds every
candidate's ancestors. The shape is fixed from the sorted probabilities alone, before any token
is placed, which is what lets the tokens be drawn:

- greedy, or ``q=none`` at a temperature above 0: rank r's token is the head's r-th most likely,
  chosen, and the recursive rule tests each child one-hot (accepted with p'(x), a rejection
  removes x from p'), the same law as the target-only walk: exact for any tree;
- ``q=heads`` at a temperature above 0: each node's children are drawn from the next head's q
  one after another without replacement and tested against q, from the leaves up
  (``rule=traversal``, the default, specviz.core.tree_traversal) or siblings in turn from the
  root (``rule=recursive``, recursive rejection sampling, specviz.core.tree); both exact
  because how many children a node has was fixed before they were drawn (none under a token
  that ends the text: fixed by the node's own token, drawn before them).

The first cycle has no verified state yet: its tree is empty, the target's first forward reads
the prompt and emits one token, and every later cycle drafts from the state that forward left.
"""

from __future__ import annotations

import heapq
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from specviz.core.device import sync
from specviz.core.engine import ModelPairLike, TargetRunner
from specviz.core.proposal import TreeProposal
from specviz.core.sampling import Sampler
from specviz.core.settings import GenerationSettings
from specviz.core.tree import ROOT, DraftTree, without
from specviz.drafters.base import DrafterSpec
from specviz.drafters.layer_skip import WAITS_FOR_PREFILL
from specviz.drafters.tree_growth import (
    DRAWN_TREE_RULES,
    MAX_NODES,
    MAX_WIDTH,
    rule_of,
    whole_option,
)
from specviz.models.heads.block import MedusaHeads
from specviz.models.heads.report import TRAIN_COMMAND, HeadsAgreement, heads_agreement
from specviz.models.heads.store import heads_folder, load_heads, read_report
from specviz.models.heads.train import TrainingOptions, train_heads
from specviz.models.runner import ModelRunner
from specviz.text import UserError
from specviz.text.progress import Progress

# 8 was faster than 16 on all six task groups, greedy, with the heads this machine trains in
# 15 minutes (docs/performance.md#medusa-heads-trained-on-this-machine).
DEFAULT_NODES = 8
DEFAULT_TOPK = 4
# How a tree's children are tested at a temperature above 0 (module doc).
Q_CHOICES = ("heads", "none")
DEFAULT_Q = "none"

Ranks = tuple[int, ...]


@dataclass(frozen=True)
class MedusaOptions:
    """The options of a medusa spec: "medusa:nodes=8,topk=4,heads=3,q=heads"."""

    nodes: int = DEFAULT_NODES  # candidates in the tree
    topk: int = DEFAULT_TOPK  # guesses each head offers (children per node at most)
    heads: int | None = None  # heads used (the tree's depth); None: all that were trained
    q: str = DEFAULT_Q  # "heads": draw and test against the heads' q; "none": choose, one-hot
    rule: str = DRAWN_TREE_RULES[0]  # how a tree drawn with q=heads is tested (module doc)

    @classmethod
    def from_spec(cls, spec: DrafterSpec) -> MedusaOptions:
        spec.check_options("nodes", "topk", "heads", "q", "rule")
        q = spec.option("q", DEFAULT_Q).lower()
        if q not in Q_CHOICES:
            raise UserError("error.medusa.q", got=repr(q), choices=", ".join(Q_CHOICES))
        heads = spec.option("heads", "")
        return cls(
            nodes=whole_option(spec, "nodes", DEFAULT_NODES, 1, MAX_NODES),
            topk=whole_option(spec, "topk", DEFAULT_TOPK, 1, MAX_WIDTH),
            heads=whole_option(spec, "heads", 1, 1, 16) if heads else None,
            q=q,
            rule=rule_of(spec),
        )

    @property
    def draws(self) -> bool:
        """Its children are drawn from the heads' q at T > 0 (else chosen, tested one-hot)."""
        return self.q == "heads"

    def __str__(self) -> str:
        heads = "" if self.heads is None else f",heads={self.heads}"
        rule = f",rule={self.rule}" if self.draws else ""
        return f"nodes={self.nodes},topk={self.topk}{heads},q={self.q}{rule}"


def best_candidates(
    values: Sequence[Sequence[float]], nodes: int, ends: Callable[[Ranks], bool] | None = None
) -> list[Ranks]:
    """The *nodes* rank tuples with the largest products of values[d][r_d] (values[d]: head
    d + 1's probabilities, largest first), parents before children, siblings by rank. A
    candidate for which *ends* is true (its token ends the text) gets no children."""
    heap: list[tuple[float, Ranks]] = []

    def offer(score: float, ranks: Ranks) -> None:
        depth = len(ranks)
        if depth < len(values):
            for rank, value in enumerate(values[depth]):
                if value > 0:
                    heapq.heappush(heap, (score - math.log(value), (*ranks, rank)))

    offer(0.0, ())
    chosen: list[Ranks] = []
    while heap and len(chosen) < nodes:
        score, ranks = heapq.heappop(heap)
        chosen.append(ranks)
        if ends is None or not ends(ranks):
            offer(score, ranks)
    return sorted(chosen, key=lambda ranks: (len(ranks), ranks))


class MedusaDrafter:
    """Proposes a tree from the heads' guesses at the target's last verified state."""

    kind = "medusa"

    def __init__(self, heads: MedusaHeads, options: MedusaOptions) -> None:
        self.heads = heads
        self.options = options
        self._runner: ModelRunner | None = None
        self._output: torch.nn.Module | None = None
        self._hidden: torch.Tensor | None = None  # (H,) the target's state at the last kept token
        self._stop_ids: frozenset[int] = frozenset()

    @classmethod
    def check_spec(cls, spec: DrafterSpec) -> None:
        MedusaOptions.from_spec(spec)

    @classmethod
    def drawn_tree_rule(cls, spec: DrafterSpec) -> str | None:
        """How the trees it draws at T > 0 are tested (q=heads); None with q=none, which
        chooses its guesses rather than drawing them."""
        options = MedusaOptions.from_spec(spec)
        return options.rule if options.draws else None

    @classmethod
    def most_guesses(cls, spec: DrafterSpec) -> int:
        """The candidate tree's nodes: what one verifying forward reads besides the newest
        token."""
        return MedusaOptions.from_spec(spec).nodes

    @classmethod
    def from_spec(cls, spec: DrafterSpec, pair: ModelPairLike) -> MedusaDrafter:
        """The registry's factory: the heads trained for the pair's target, from the cache."""
        options = MedusaOptions.from_spec(spec)
        heads = load_heads(heads_folder(pair.target))
        if heads is None:
            raise UserError("error.medusa.untrained", command=TRAIN_COMMAND)
        return cls(heads, options)

    @classmethod
    def prepare(cls, spec: DrafterSpec, pair: ModelPairLike, progress: Progress) -> None:
        """Train the target's heads if none are filed for it yet (the default size, within
        its time budget), reporting through *progress*."""
        folder = heads_folder(pair.target)
        if read_report(folder) is None:
            train_heads(pair.target, pair.tokenizer, folder, TrainingOptions(), progress)

    @classmethod
    def trained_agreement(cls, spec: DrafterSpec, pair: ModelPairLike) -> HeadsAgreement | None:
        """How the target's heads agreed with it on held-out text when they were trained (their
        report), None if none are trained."""
        report = read_report(heads_folder(pair.target))
        return None if report is None else heads_agreement(report)

    @property
    def cache_len(self) -> int:
        return 0  # no model of its own

    @property
    def depth(self) -> int:
        """The heads the tree uses: its deepest depth."""
        count = self.heads.count
        return count if self.options.heads is None else min(count, self.options.heads)

    def use_target(self, target: TargetRunner) -> None:
        """Read the run's target runner's final hidden states (it keeps them from now on)."""
        output = getattr(getattr(target, "model", None), "get_output_embeddings", lambda: None)()
        if not isinstance(target, ModelRunner) or not isinstance(output, torch.nn.Module):
            raise UserError("error.medusa.target", kind=repr(self.kind))
        target.keep_hidden_states()
        self._runner, self._output = target, output

    def start(
        self, prompt_ids: torch.Tensor, settings: GenerationSettings, stop_ids: frozenset[int]
    ) -> float:
        self._hidden = None
        self._stop_ids = stop_ids
        return 0.0

    def read_verification(
        self, tree: DraftTree, p_rows: torch.Tensor, path: tuple[int, ...]
    ) -> None:
        """Keep the target's hidden state where the kept path ends (the root if none was kept):
        the position whose output row chose the token the next tree grows under."""
        hidden = None if self._runner is None else self._runner.last_hidden
        if hidden is None or hidden.shape[0] != tree.size + 1:
            raise RuntimeError("medusa reads the target's tree forward (use_target first)")
        self._hidden = hidden[path[-1] + 1 if path else 0].clone()

    def commit_tokens(self, tokens: Sequence[int]) -> None:
        """Nothing to keep: read_verification() took the state the next tree grows from."""

    @torch.inference_mode()
    def propose_tree(self, context: torch.Tensor, max_depth: int, sampler: Sampler) -> TreeProposal:
        began = time.perf_counter()
        depth = min(max_depth, self.depth)
        if self._hidden is None or self._output is None or depth < 1:
            # Nothing verified yet (the first cycle) or no room: the target steps alone.
            ended_by = WAITS_FOR_PREFILL if self._hidden is None else "gamma"
            return self._proposal(DraftTree((), ()), torch.zeros(1, 1), False, began, ended_by)
        logits = self.heads.logits(self._hidden, self._output)[:depth]  # (D, V)
        q_heads = sampler.probs(logits)  # (D, V): head d + 1's law, as p is transformed
        drawn = not sampler.greedy and self.options.draws
        top = torch.topk(q_heads, min(self.options.topk, q_heads.shape[-1]), dim=-1)
        values, ids = top.values.tolist(), top.indices.tolist()
        if drawn:
            tree = self._drawn_tree(best_candidates(values, self.options.nodes), q_heads, sampler)
        else:

            def ends(ranks: Ranks) -> bool:
                return ids[len(ranks) - 1][ranks[-1]] in self._stop_ids

            chosen = best_candidates(values, self.options.nodes, ends)
            tree = _placed_tree(chosen, lambda ranks: ids[len(ranks) - 1][ranks[-1]])
        # Row 0: head 1's law (the root's children); row 1 + i: the law of node i's children,
        # the next head's (zeros under the deepest heads' nodes, which have none).
        padded = torch.cat([q_heads, torch.zeros_like(q_heads[:1])])
        rows = torch.tensor([0, *(min(d, depth) for d in tree.depths)], device=q_heads.device)
        sync(q_heads.device)
        return self._proposal(tree, padded.index_select(0, rows), drawn, began)

    def _drawn_tree(
        self, chosen: list[Ranks], q_heads: torch.Tensor, sampler: Sampler
    ) -> DraftTree:
        """The candidates' shape with each node's children drawn from the next head's q one
        after another without replacement; none under a token that ends the text, and no more
        under a node than q has tokens it can draw."""
        rests: dict[int, torch.Tensor] = {}  # node (ROOT: the root) -> q less what it drew
        drawn: dict[int, int] = {}
        where: dict[Ranks, int] = {(): ROOT}
        tokens: list[int] = []
        parents: list[int] = []
        for ranks in chosen:
            parent = where.get(ranks[:-1])
            if parent is None or (parent != ROOT and tokens[parent] in self._stop_ids):
                continue
            law = q_heads[len(ranks) - 1]
            if drawn.get(parent, 0) >= int((law > 0).sum()):
                continue
            token = int(sampler.draw(rests.get(parent, law)))
            rests[parent] = without(rests.get(parent, law), token)
            drawn[parent] = drawn.get(parent, 0) + 1
            where[ranks] = len(tokens)
            tokens.append(token)
            parents.append(parent)
        return DraftTree(tuple(tokens), tuple(parents))

    def _proposal(
        self,
        tree: DraftTree,
        q_rows: torch.Tensor,
        drawn: bool,
        began: float,
        ended_by: str = "gamma",
    ) -> TreeProposal:
        return TreeProposal(
            tree,
            q_rows,
            drawn=drawn,
            forwards=0,  # the heads' products, no forward of any model
            seconds=time.perf_counter() - began,
            drafter=self.kind,
            shape=str(self.options),
            ended_by=ended_by,
            rule=self.options.rule,
        )


def _placed_tree(chosen: list[Ranks], token_of: Callable[[Ranks], int]) -> DraftTree:
    """The candidates as a tree, each holding the token its ranks name."""
    where: dict[Ranks, int] = {(): ROOT}
    tokens: list[int] = []
    parents: list[int] = []
    for ranks in chosen:
        parent = where.get(ranks[:-1])
        if parent is None:
            continue
        where[ranks] = len(tokens)
        tokens.append(token_of(ranks))
        parents.append(parent)
    return DraftTree(tuple(tokens), tuple(parents))
