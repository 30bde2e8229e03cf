"""Plain records that flow from the engine to the UI, CLI and benchmark.

Everything here is a frozen dataclass of Python numbers and strings: no tensors, so a record can be
rendered, serialised to JSON or compared in a test without torch. Every number the UI shows lives in
one of these records; the UI never reaches back into the engine for more.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from enum import Enum, StrEnum
from typing import Any


class Origin(StrEnum):
    """Why a token ended up in the output (or did not)."""

    ACCEPTED = "accepted"  # a draft token that passed the test u < min(1, p/q)
    RESAMPLED = "resampled"  # drawn from norm(max(0, p - q)) at the first rejection
    BONUS = "bonus"  # drawn from p after all drafted tokens were accepted
    TARGET = "target"  # plain autoregressive decoding of the target


def scaled_confidence(top: float, doubt_scale: float) -> float:
    """One factor of the cumulative draft stop: 1 - doubt_scale × (1 - top), the draft's top
    probability with its doubt scaled by its record in the run (see Cycle.draft_doubt_scale)."""
    return 1.0 - doubt_scale * (1.0 - top)


@dataclass(frozen=True)
class TokenProb:
    """One bar of a probability chart."""

    token_id: int
    text: str
    prob: float


@dataclass(frozen=True)
class DraftToken:
    """A token the drafter proposed, and the verdict of the target on it."""

    position: int  # 1..γ within the cycle: the draft position the acceptance-by-position chart uses
    seq_index: int  # index among generated tokens this token would take if accepted (0 = first new)
    token_id: int
    text: str  # decoded in the context of everything before it (multi-byte safe)
    # q(x): probability the drafter sampled x with (after temperature/top-k/top-p); 1.0 for a
    # deterministic proposer (q one-hot at x)
    q_draft: float
    p_target: float  # p(x): the target's probability of x under the same transform
    accept_prob: float  # min(1, p/q); in greedy mode 1.0 if x is the target's argmax else 0.0
    uniform: float | None  # the u ~ U(0, 1) that decided it; None in greedy mode or if untested
    tested: bool  # positions after the first rejection are never tested
    accepted: bool
    # The most probable tokens under q and p at this position: the inspector's bar charts (a
    # one-hot q has the one bar x at 1.0).
    top_q: tuple[TokenProb, ...] = ()
    top_p: tuple[TokenProb, ...] = ()
    # A control token's name (end of text, a chat marker such as "<|im_end|>"), "" for a token of
    # text; a control token's text is "", so it never reaches the text a reader gets.
    special: str = ""

    @property
    def verdict(self) -> str:
        """ "accepted", "rejected" (tested and failed) or "untested" (after the first rejection)."""
        if self.accepted:
            return "accepted"
        return "rejected" if self.tested else "untested"


@dataclass(frozen=True)
class EmittedToken:
    """A token that is part of the output."""

    seq_index: int
    token_id: int
    text: str
    origin: Origin
    prob: float  # probability of this token under the distribution it was drawn from / tested with
    special: str = ""  # a control token's name, "" for text (as DraftToken.special)


@dataclass(frozen=True)
class Rejection:
    """Enough of p, q and the residual at the first rejected position to draw a bar chart."""

    position: int  # draft position (1..γ) that was rejected
    rejected_token: TokenProb  # the drafted token, with its q (1.0 from a deterministic proposer)
    resampled_token: TokenProb  # the replacement, with its residual probability
    top_p: tuple[TokenProb, ...]
    top_q: tuple[TokenProb, ...]
    top_residual: tuple[TokenProb, ...]  # norm(max(0, p - q)); empty in greedy mode (argmax of p)


@dataclass(frozen=True)
class TreeNode:
    """One token of a draft tree, and the target's verdict on it."""

    parent: int  # an earlier node's index in TreeRecord.nodes; -1: a child of the committed text
    depth: int  # 1 for the committed text's children: the draft position it would fill
    rank: int  # 1 for its parent's first child (the draft's first choice), 2 for the second, ...
    token_id: int
    text: str  # decoded after its ancestors (multi-byte safe)
    q_draft: float  # q(x): the draft's probability of x after its ancestors
    p_target: float  # p(x): the target's probability of x after its ancestors
    # Its chance of being kept when it was tested: min(1, p'(x)/q'(x)) with p' and q' the laws
    # left after its earlier siblings lost (the recursive rule); 1.0 or 0.0 in greedy mode; 0.0
    # when untested.
    accept_prob: float
    uniform: float | None  # the u ~ U(0, 1) that decided it; None in greedy mode or if untested
    verdict: str  # "accepted" (on the kept path), "rejected" (tested and lost) or "untested"
    special: str = ""  # a control token's name, "" for text (as DraftToken.special)


@dataclass(frozen=True)
class TreeRecord:
    """A cycle's draft tree: every node with its verdict, and how the target chose among them.

    The cycle's ``drafted`` tokens are the tree's main line (the kept path, then the first
    child tested and rejected below it and that child's first children), so every chain view
    reads a tree cycle as a chain; the tree panel reads the nodes.
    """

    nodes: tuple[TreeNode, ...]
    path: tuple[int, ...]  # the kept nodes, from the committed text's child down
    # "greedy" (descend while the target's argmax is a child), "traversal" (children drawn from
    # q without replacement, tested from the leaves up: a node's chance is that of keeping the
    # whole path down to it), "recursive" (drawn, siblings tested in turn with min(1, p'/q')) or
    # "recursive_one_hot" (children chosen, not drawn: each tested with p'(x)).
    rule: str
    # A node's children, the drafter's choice ("shape=2x2x1"; "nodes=16,depth=6,topk=4").
    shape: str = ""
    # Lookahead decoding's Jacobi window in the tree: per row (oldest first), the node holding
    # each slot, -1 for a slot left out; the other nodes are pooled n-grams. () otherwise.
    window_rows: tuple[tuple[int, ...], ...] = ()
    # The rest of the window's cycle, empty for other drafters. The last committed token, where
    # the window's positions count from (offset 0; its prob 1.0: it is committed).
    window_root: TokenProb | None = None
    # The target's first choice after each slot of the newest row, with its probability: the
    # window's next row (Jacobi's update); () when the tree left a slot out and the window waits.
    window_next: tuple[TokenProb, ...] = ()
    # Each pooled n-gram verified this cycle (the verification branch), most recently pooled
    # first: the node its last token reached, merged with the window's where tokens agree.
    window_guesses: tuple[int, ...] = ()
    # The window held all its rows, so each column read as an n-gram into the pool this cycle
    # (its foot, its tooth, the next row's token); False while the rows fill (the warm-up).
    window_harvest: bool = False

    @property
    def from_leaves(self) -> bool:
        """Whether the tree was tested from its leaves up (rule "traversal"): a tested node's
        chance is that of keeping the whole path down to it, and the kept path's nodes share
        the one test that kept them."""
        return self.rule == "traversal"

    def children(self, node: int) -> tuple[int, ...]:
        """The indices of node's children (-1: of the committed text), in rank order."""
        return tuple(index for index, item in enumerate(self.nodes) if item.parent == node)

    @property
    def speculative_token_tree(self) -> str:
        """The tree's shape as vLLM's ``speculative_token_tree`` writes one: a node is the tuple
        of 0-based sibling ranks on its way down from the committed text ((0,) the first guess
        for the next token, (0, 1) the second guess after it), listed breadth-first."""
        ways: list[tuple[int, ...]] = []
        for node in self.nodes:
            above = () if node.parent < 0 else ways[node.parent]
            ways.append((*above, node.rank - 1))
        return str(sorted(ways, key=lambda way: (len(way), way)))


@dataclass(frozen=True)
class Timing:
    """Wall-clock seconds spent in one cycle, split by what the time bought."""

    draft_s: float  # drafter forwards (including catching up on the last emitted token)
    verify_s: float  # the single target forward over the drafted tokens
    overhead_s: float  # sampling, acceptance test, cache rollback, detokenisation, records

    @property
    def total_s(self) -> float:
        return self.draft_s + self.verify_s + self.overhead_s


@dataclass(frozen=True)
class Totals:
    """Running counters since the start of the run.

    The prompt (or a long prompt's last chunk) is read by the first forward of each model, so its
    cost is part of the first cycle (or step) and of elapsed_s, for speculative and plain decoding
    alike; a long prompt's earlier chunks count in prefill_s.
    """

    new_tokens: int
    target_forwards: int  # forward passes of the target after prefill
    draft_forwards: int
    tested_positions: int  # draft positions that were actually tested (stop at first rejection)
    accepted_positions: int
    elapsed_s: float  # engine compute time after prefill: sum of cycle timings
    # Work before the first cycle: a long prompt's chunks before the last (both models), and a
    # drafter's own prefill.
    prefill_s: float

    @classmethod
    def pooled(cls, parts: Sequence[Totals]) -> Totals:
        """Counters summed over runs, so the ratios are pooled: Σ accepted / Σ tested, and so on."""
        return cls(
            new_tokens=sum(part.new_tokens for part in parts),
            target_forwards=sum(part.target_forwards for part in parts),
            draft_forwards=sum(part.draft_forwards for part in parts),
            tested_positions=sum(part.tested_positions for part in parts),
            accepted_positions=sum(part.accepted_positions for part in parts),
            elapsed_s=sum(part.elapsed_s for part in parts),
            prefill_s=sum(part.prefill_s for part in parts),
        )

    @property
    def acceptance_rate(self) -> float:
        """α: accepted / tested draft positions (untested tails after a rejection do not count)."""
        return self.accepted_positions / self.tested_positions if self.tested_positions else 0.0

    @property
    def tokens_per_target_pass(self) -> float:
        """τ: new tokens per target forward, counting resampled and bonus tokens."""
        return self.new_tokens / self.target_forwards if self.target_forwards else 0.0

    @property
    def tokens_per_s(self) -> float:
        return self.new_tokens / self.elapsed_s if self.elapsed_s > 0 else 0.0


@dataclass(frozen=True)
class Cycle:
    """One draft/verify cycle of speculative decoding."""

    index: int  # 0-based cycle number
    # How many tokens were drafted this cycle: len(drafted), at most this cycle's γ (draft_gamma),
    # fewer near the token budget, after an end-of-sequence draft or a stop rule, 0 for a plain
    # step. Named as accepted_len is, since drafted holds the tokens and γ is the setting.
    draft_len: int
    greedy: bool
    drafted: tuple[DraftToken, ...]
    accepted_len: int  # how many drafted tokens were accepted (0..draft_len)
    emitted: tuple[
        EmittedToken, ...
    ]  # accepted drafts then the resampled/bonus token, truncated at stop
    rejection: Rejection | None
    timing: Timing
    totals: Totals
    target_cache_len: int  # KV entries held by the target after rollback
    draft_cache_len: (
        int  # KV entries held by the drafter after rollback (0 for model-free drafters)
    )
    context_len: int  # prompt + generated tokens so far
    finished: bool
    stop_reason: str | None  # "eos" | "max_new_tokens" | None while running
    # Why the draft ended where it did: "gamma" (it reached γ), "budget" (the token budget),
    # "eos" (it drafted an end-of-sequence token), "confidence" (the per-token stop),
    # "cumulative" (the product-of-top-probabilities stop), "text_end" (a copying drafter copied
    # everything after its match, up to the end of the committed text), "no_match" (prompt
    # lookup found nothing to copy: no drafts, a plain decoding step), "prefill" (a drafter that
    # drafts with the target's own cache waits for the first forward to read the prompt: no
    # drafts, a plain decoding step).
    draft_end: str = "gamma"
    # The cumulative stop's estimate that guesses 1..k are all right is the product over them of
    # 1 - draft_doubt_scale × (1 - max q): the draft's doubts, scaled down when its guesses have so
    # far in this run been right more often than it expected (1.0: its own numbers).
    draft_doubt_scale: float = 1.0
    # Why a draft is shorter than γ, told from the cycle alone: the γ the draft was allowed this
    # cycle (the setting's, or its schedule's choice; 0 in records built by hand) and the run's two
    # stop thresholds (0 = off), so "drafted 1 of γ = 5: guess 0.04, below the 0.3 stop" needs
    # nothing but this record.
    draft_gamma: int = 0
    draft_stop_below: float = 0.0
    draft_stop_cumulative: float = 0.0
    # The kind of drafter that proposed this cycle's tokens, as the registry names it
    # ("draft-model", ...); "" in records built by hand.
    drafter: str = ""
    # What that drafter drafted with, as an option of its spec: layer skip's "skip=8-19" (the
    # 0-based decoder layers left out) or "exit=14" (the first 14 layers only); "" for drafters
    # without such a choice.
    drafter_detail: str = ""
    # Where each drafted token was copied from, for a copying drafter (prompt lookup): its index
    # in the committed context, prompt included (0 = the prompt's first token); None when the
    # drafter guessed rather than copied.
    copied_from: tuple[int, ...] | None = None
    # The whole draft tree, for a drafter that drafts trees; None for a chain.
    tree: TreeRecord | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict, with the derived rates (and a tree's shape in vLLM's words)."""
        record = asdict(self)
        if self.tree is not None:
            record["tree"]["speculative_token_tree"] = self.tree.speculative_token_tree
        return _with_rates(record, self.totals)


@dataclass(frozen=True)
class Prefill:
    """Progress through a long prompt, read in chunks before the first cycle (or step).

    The engine's streams yield one after each chunk but the last (which is read together with
    the first drafts), so a consumer can show it and stop the run between chunks.
    """

    done: int  # prompt tokens both models have read so far
    total: int  # the prompt's length in tokens

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return asdict(self)


@dataclass(frozen=True)
class Step:
    """One token of plain autoregressive decoding of the target (the baseline)."""

    index: int
    token: EmittedToken
    time_s: float  # engine time for this token (target forward + sampling)
    totals: Totals
    finished: bool
    stop_reason: str | None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict, with the derived rates included."""
        return _with_rates(asdict(self), self.totals)


def _with_rates(record: dict[str, Any], totals: Totals) -> dict[str, Any]:
    record["totals"].update(
        acceptance_rate=totals.acceptance_rate,
        tokens_per_target_pass=totals.tokens_per_target_pass,
        tokens_per_s=totals.tokens_per_s,
    )
    plain: dict[str, Any] = _plain(record)
    return plain


def _plain(value: Any) -> Any:
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value
