"""Lookahead decoding (Fu et al., "Break the Sequential Dependency of LLM Inference Using
Lookahead Decoding", ICML 2024) as a tree drafter: ``lookahead:window=4,ngram=3,guesses=4``.

No second model: the target drafts for itself. Jacobi decoding guesses W future tokens at once
and lets the target correct all of them in one forward, again and again; the guesses rarely
settle on the right text by themselves, but the trajectories they trace are plausible phrases.
Lookahead keeps the last N − 1 Jacobi iterations as a 2D window (the paper's lookahead
branch), reads an n-gram off each of its W columns into a pool keyed by the n-gram's first
token, and each cycle offers up to G pooled n-grams that start with the last committed token as
guesses for the next N − 1 tokens (its verification branch). Both branches share one target
forward: the window's next row comes from the same pass that verifies the guesses.

The window (the reference implementation's ``past_tokens``, hao-ai-lab/LookaheadDecoding), with
offsets counted from the root (the last committed token, offset 0):

- row 0, the *spine*: W − 1 tokens at offsets 1 .. W − 1, the oldest iteration;
- row l (1 ≤ l ≤ N − 2): W tokens, slot i at offset l + i, one iteration newer per row.

The reference's mask (``j_make_causal_mask_multilevel``) lets slot i of row l attend to the root, the spine's first i tokens and
slot i of rows 1 .. l: a chain of consecutive positions, so every window token already sees a
path, and the window *is* a tree: the spine a chain under the root, and from the root and each
spine token a *tooth* climbing rows 1 .. N − 2. Here those paths go into the same DraftTree as
the guesses, merged where tokens agree (a node's logits depend on its path's tokens alone, so a
merged node scores exactly as both copies would). The one difference from the reference mask:
the reference keeps the guesses apart from the window, here a guess and a window path that
start alike share their first nodes, which saves tokens and changes no logit.

After the forward, the target's first choice after each tooth's top is the new row (Jacobi's
update); the column reads as an n-gram: the tooth's foot, its tokens, the new token. The rows
move up one (the oldest is dropped, the spine drops its first token): the window slides by one
position each cycle however many tokens were kept, as the reference does. The first N − 2 cycles
fill the rows (the reference's warm-up); before that, row 0 is W + N − 3 tokens copied from the
prompt in order.

With ``prompt=1`` the pool also takes the committed text's own n-grams, keyed alike (the
reference's POOL_FROM_PROMPT): the guesses then include prompt lookup's copies.

Exact at every temperature: the tree is a function of the committed text and of the target's
first choices at earlier window nodes, both fixed before this cycle's draws, and its tokens are
chosen, not drawn. specviz.core.tree's one-hot rule (each child accepted with p'(x), a rejection
taking x out of p') keeps the target's law for any tree so chosen, and greedy decoding keeps
its argmax; window nodes are candidates like any other. This is the paper's sampling
verification (SpecInfer's rule with one-hot proposals; the reference's
``jacobi_sample_multilevel``), whose window also takes the target's first choices.
"""

from __future__ import annotations

import itertools
import time
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import torch

from specviz.core.engine import ModelPairLike
from specviz.core.proposal import TreeProposal
from specviz.core.sampling import Sampler
from specviz.core.settings import GenerationSettings
from specviz.core.tree import ROOT, DraftTree, first_choices
from specviz.drafters.base import DrafterSpec
from specviz.drafters.lookup_tree import TokenTrie, chosen_tree_proposal
from specviz.drafters.tree_growth import MAX_NODES, MAX_WIDTH
from specviz.text import UserError

# Each option's (default, low, high). ngram from 3: the reference needs a row between the
# spine and the target's new guesses. The tree's depth W + N − 3 stays within GAMMA_MAX (16).
# prompt: 0 or 1.
OPTION_RANGES = {
    "window": (4, 1, 12),
    "ngram": (3, 3, 6),
    "guesses": (4, 0, MAX_WIDTH),
    "prompt": (0, 0, 1),
}


@dataclass(frozen=True)
class LookaheadOptions:
    """The window's width W, the n-gram size N and how many pooled n-grams G are verified."""

    window: int = 4  # W: future positions the window guesses at once
    ngram: int = 3  # N: tokens per pooled n-gram (its first is the key); N − 1 window rows
    guesses: int = 4  # G: n-grams kept per key and verified each cycle
    # Also pool the committed text's own n-grams, the prompt's and each emitted one's (the
    # reference's POOL_FROM_PROMPT, off there by default): prompt lookup's copies, keyed alike.
    prompt: bool = False

    @classmethod
    def from_spec(cls, spec: DrafterSpec) -> LookaheadOptions:
        """The spec's options, or a UserError naming the first one out of range."""
        spec.check_options(*OPTION_RANGES)
        values = {}
        for name, (default, low, high) in OPTION_RANGES.items():
            text = spec.option(name, str(default))
            if not text.isdigit() or not low <= int(text) <= high:
                raise UserError(
                    "error.drafter.lookahead_option",
                    name=name,
                    got=repr(text),
                    low=str(low),
                    high=str(high),
                )
            values[name] = int(text)
        options = cls(values["window"], values["ngram"], values["guesses"], values["prompt"] == 1)
        if options.most_nodes > MAX_NODES:
            raise UserError(
                "error.drafter.lookahead_too_big",
                spec=str(spec),
                size=str(options.most_nodes),
                most=str(MAX_NODES),
            )
        return options

    @property
    def depth(self) -> int:
        """The deepest window node: the last tooth's top, W − 1 + N − 2 from the root."""
        return self.window + self.ngram - 3

    @property
    def most_nodes(self) -> int:
        """The most tokens one tree can hold: the window's largest stage and every guess. With
        rows 1 .. f in place the spine holds W + N − 3 − f tokens and each row one more."""
        spines = ((self.depth - filled, filled) for filled in range(self.ngram - 1))
        window = max(spine + (spine + 1) * filled for spine, filled in spines)
        return window + self.guesses * (self.ngram - 1)

    def __str__(self) -> str:
        text = ",prompt=1" if self.prompt else ""
        return f"window={self.window},ngram={self.ngram},guesses={self.guesses}{text}"


class JacobiWindow:
    """The lookahead branch's N − 1 rows of past Jacobi iterations (module doc)."""

    def __init__(self, options: LookaheadOptions, filler: Iterator[int]) -> None:
        """*filler*: tokens for the first row and for a stop token's place in a new row."""
        self.options = options
        self.filler = filler
        self.rows: list[list[int]] = [[next(filler) for _ in range(options.depth)]]

    @property
    def warm(self) -> bool:
        """Every row is in place, so each cycle reads W n-grams off the window."""
        return len(self.rows) == self.options.ngram - 1

    def paths(self) -> list[list[list[int]]]:
        """Each slot's path from the root, by row: the spine's slot i is the spine's first
        i + 1 tokens; row l's slot i is the spine's first i tokens, then slot i of rows 1 .. l."""
        spine = self.rows[0]
        by_row = [[spine[: i + 1] for i in range(len(spine))]]
        for depth in range(1, len(self.rows)):
            columns = range(len(self.rows[depth]))
            teeth = [[row[i] for row in self.rows[1 : depth + 1]] for i in columns]
            by_row.append([spine[:i] + tooth for i, tooth in enumerate(teeth)])
        return by_row

    def advance(self, fresh: Sequence[int], root: int) -> list[tuple[int, tuple[int, ...]]]:
        """One Jacobi step: *fresh* the target's first choice after each slot of the newest row
        (the spine while it is the only row). Returns the n-grams (key, the N − 1 tokens after
        it) the columns read, then slides the window by one position."""
        fresh = list(fresh)
        rows = self.rows
        grams: list[tuple[int, tuple[int, ...]]] = []
        if self.warm:
            feet = [root, *rows[0]]  # tooth i stands on the root (i = 0) or the spine's token i - 1
            for i, new in enumerate(fresh):
                grams.append((feet[i], (*(row[i] for row in rows[1:]), new)))
            newer = [rows[1][1:], *rows[2:], fresh]
        else:
            # Warm-up: every row drops its first slot (now behind the root); the new row too,
            # once there is one to align with (fresh[i] guesses offset len(rows) + i).
            newer = [row[1:] for row in rows] + [fresh if len(rows) == 1 else fresh[1:]]
        self.rows = [[*row] for row in newer]
        return grams

    def replace_tokens(self, tokens: frozenset[int]) -> None:
        """Put filler tokens where the newest row holds one of *tokens* (stop tokens)."""
        newest = self.rows[-1]
        for i, token in enumerate(newest):
            if token in tokens:
                newest[i] = next(self.filler)


class NgramPool:
    """n-grams by their first token, the G most recently seen per key (the reference's
    GUESS_SET_SIZE, least recently seen dropped first)."""

    def __init__(self, per_key: int) -> None:
        self.per_key = per_key
        self._by_key: dict[int, OrderedDict[tuple[int, ...], None]] = {}

    def add(self, key: int, gram: tuple[int, ...]) -> None:
        """Keep *gram* under *key* as the most recent, dropping the oldest past per_key."""
        if self.per_key == 0:
            return
        grams = self._by_key.setdefault(key, OrderedDict())
        grams[gram] = None
        grams.move_to_end(gram)
        if len(grams) > self.per_key:
            grams.popitem(last=False)

    def guesses(self, key: int) -> list[tuple[int, ...]]:
        """The n-grams kept under *key* (the tokens after it), most recent first."""
        return list(reversed(self._by_key.get(key, {})))


def _prompt_filler(prompt: Sequence[int]) -> Iterator[int]:
    """The prompt's tokens in order, over and over (the reference copies from the prompt)."""
    return itertools.cycle(list(prompt))


class LookaheadDrafter:
    """Proposes the pooled n-grams and the Jacobi window in one tree (module doc)."""

    kind = "lookahead"

    @classmethod
    def check_spec(cls, spec: DrafterSpec) -> None:
        LookaheadOptions.from_spec(spec)

    @classmethod
    def most_guesses(cls, spec: DrafterSpec) -> int:
        """The window's tokens and every guess at their most: what one verifying forward reads
        besides the newest token."""
        return LookaheadOptions.from_spec(spec).most_nodes

    @classmethod
    def from_spec(cls, spec: DrafterSpec, pair: ModelPairLike) -> LookaheadDrafter:
        """The registry's factory: the target drafts for itself, so the pair is not read."""
        return cls(LookaheadOptions.from_spec(spec))

    def __init__(self, options: LookaheadOptions) -> None:
        self.options = options
        self.window = JacobiWindow(options, _prompt_filler([0]))
        self.pool = NgramPool(options.guesses)
        self._stop_ids: frozenset[int] = frozenset()
        # The last proposal: its tree, its root token and its window's newest-row nodes, kept
        # until the target's verdict on it arrives (read_verification).
        self._tree: DraftTree | None = None
        self._root = 0
        self._tips: list[int] | None = None
        self._pooled_to = 0  # the committed text's n-grams ending before this are pooled

    @property
    def cache_len(self) -> int:
        return 0  # the window's tokens live in the target's forward, not in a cache of ours

    def start(
        self, prompt_ids: torch.Tensor, settings: GenerationSettings, stop_ids: frozenset[int]
    ) -> float:
        self.window = JacobiWindow(self.options, _prompt_filler(prompt_ids[0].tolist()))
        self.pool = NgramPool(self.options.guesses)
        self._stop_ids = stop_ids
        self._tree, self._tips = None, None
        self._pooled_to = 0
        return 0.0

    def propose_tree(self, context: torch.Tensor, max_depth: int, sampler: Sampler) -> TreeProposal:
        """The guesses under the last committed token first, then the window's paths; window
        slots deeper than *max_depth* stay out, and the window waits for a cycle that scores
        all of its newest row."""
        began = time.perf_counter()
        if self.options.prompt:
            self._pool_text(context)
        root = int(context[-1])
        trie = TokenTrie()
        guesses: list[int] = []  # where each pooled n-gram ends in the tree, once each
        if max_depth > 0:
            for gram in self.pool.guesses(root):
                end = trie.add(self._cut(gram)[:max_depth], MAX_NODES - len(trie.tokens))
                if end is not None and end not in guesses:
                    guesses.append(end)
        window_nodes: list[list[int]] = []
        for row in self.window.paths():
            nodes = [
                trie.add(path, MAX_NODES - len(trie.tokens)) if len(path) <= max_depth else None
                for path in row
            ]
            window_nodes.append([ROOT if node is None else node for node in nodes])
        tree = trie.tree()
        newest = window_nodes[-1]
        self._tree, self._root = tree, root
        self._tips = newest if newest and ROOT not in newest else None
        return chosen_tree_proposal(
            tree,
            began,
            self.kind,
            str(self.options),
            window_rows=tuple(tuple(nodes) for nodes in window_nodes),
            window_guesses=tuple(guesses),
            window_harvest=self._tips is not None and self.window.warm,
        )

    def read_verification(
        self, tree: DraftTree, p_rows: torch.Tensor, path: tuple[int, ...]
    ) -> None:
        """Jacobi's update from the same forward: the target's first choice after each node of
        the window's newest row becomes its next row, and the columns go into the pool."""
        if tree is not self._tree or self._tips is None:
            return
        fresh = [token for token, _ in first_choices(p_rows, self._tips)]
        for key, gram in self.window.advance(fresh, self._root):
            self.pool.add(key, gram)
        self.window.replace_tokens(self._stop_ids)
        self._tree, self._tips = None, None

    def commit_tokens(self, tokens: Sequence[int]) -> None:
        """Nothing to keep: the kept tokens reach the drafter through the next context."""

    def _pool_text(self, context: torch.Tensor) -> None:
        """Pool each n-gram of the committed text that ends after the last one pooled."""
        size = self.options.ngram
        first_end = max(self._pooled_to, size - 1)
        base = first_end - size + 1
        tokens = context[base:].tolist() if len(context) > first_end else []
        for start in range(len(tokens) - size + 1):
            gram = tokens[start : start + size]
            self.pool.add(gram[0], tuple(gram[1:]))
        self._pooled_to = max(self._pooled_to, len(context))

    def _cut(self, gram: tuple[int, ...]) -> tuple[int, ...]:
        """*gram* cut after a stop token: nothing is drafted past an end of text."""
        for at, token in enumerate(gram):
            if token in self._stop_ids:
                return gram[: at + 1]
        return gram
