"""One model's forward and KV cache: what the engine, the drafters, the labs and the cost curve call.

A ModelRunner runs the lean decoding step (specviz.models.lean_forward) where it computes the
model, and transformers' own forward elsewhere, so every caller times and scores the forward the
app runs. The lean step is accepted per model by a first-use check: its logits against the
model's own forward on a short prompt and two more tokens after the cached prompt. A model the lean
step does not cover, or whose logits differ beyond the rounding of its dtype, keeps transformers'
forward, and the runner says why (`fallback_reason`), for the app's model info.

This lives in models/ beside the lean step it chooses: which forward computes a model is a
question about the model's family and module layout, the layer below the engine.
"""

from __future__ import annotations

import copy
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import torch
from transformers import DynamicCache

from specviz.core.device import device_of
from specviz.core.tree import (
    DraftTree,
    tree_attention_mask,
    tree_position_ids,
    tree_visibility,
)
from specviz.models.lean_forward import LeanCache, LeanDecoder, lean_support_problem
from specviz.models.model_steps import new_cache
from specviz.models.prompt_prefills import installed_prefills
from specviz.text import Phrase

RunnerKind = Literal["lean", "transformers"]

# The first-use check's feed: a short prompt, then two tokens after its cached keys (the shape of
# a verify step), so the cache, positions and the causal mask after a prefix are all exercised.
CHECK_PROMPT_LEN, CHECK_STEP_LEN = 5, 2


@dataclass(frozen=True)
class ForwardChoice:
    """Which forward computes a model, and why the lean step does not (None when it does)."""

    kind: RunnerKind
    fallback_reason: (
        Phrase | None
    )  # words (``forward.why.*``) the app puts in its reader's language


def logits_tolerance(dtype: torch.dtype, scale: float) -> float:
    """The largest logit difference from the model's own forward the lean step may show.

    In float32 both compute the same products in another order: 1e-4 relative. In bfloat16 or
    float16 the model's own forward rounds attention scores (and more) to 8 or 11 bits, and the
    lean step, which keeps attention in float32, sits about as far from the float32 truth on the
    other side (tests/models/test_lean_forward.py bounds each at 2 % of the largest logit plus
    0.01). A wrong position, mask, rotary sign or head grouping moves logits by far more.
    """
    if dtype in (torch.bfloat16, torch.float16):
        return 0.04 * scale + 0.02
    return 1e-4 * scale + 1e-4


class ModelRunner:
    """One model's forward and KV cache, batch size 1: feed tokens, read logits, roll back."""

    def __init__(self, model: torch.nn.Module) -> None:
        self.model = model
        self.device = device_of(model)
        # Built per runner, never kept on the model: a later module swap is seen by the next one.
        self._lean: LeanDecoder | None = None
        self.choice = choose_forward(model)
        if self.choice.kind == "lean":
            self._lean = LeanDecoder(model)
        self._cache: LeanCache | DynamicCache = self._new_cache()
        # Prompt heads read once for many runs (the advisor's); None everywhere else.
        self._prefills = installed_prefills()
        # Where the last tree forward began in the cache, until keep_path() settles it.
        self._tree_start: int | None = None
        # Opt-in (keep_hidden_states): the final normed hidden rows behind the last logits.
        self._keep_hidden = False
        self._last_hidden: torch.Tensor | None = None

    @property
    def kind(self) -> RunnerKind:
        """ "lean" when the lean step runs, "transformers" when the model's own forward does."""
        return self.choice.kind

    @property
    def fallback_reason(self) -> Phrase | None:
        """Why transformers' forward runs instead of the lean step (None when the lean one runs)."""
        return self.choice.fallback_reason

    @property
    def cache_len(self) -> int:
        """Positions the KV cache holds."""
        return self._cache.get_seq_length()

    @property
    def lean_step(self) -> tuple[LeanDecoder, LeanCache] | None:
        """The lean step and its live KV cache, for a drafter that runs this model's own layers
        (layer skip, writing temporary entries through LeanCache.scratch()); None where
        transformers' forward runs."""
        if self._lean is None or not isinstance(self._cache, LeanCache):
            return None
        return self._lean, self._cache

    def reset(self) -> None:
        """Start over with an empty KV cache (a new prompt)."""
        self._cache = self._new_cache()
        self._tree_start = None
        self._last_hidden = None
        if self._lean is not None:
            self._lean.last_hidden = None

    def keep_hidden_states(self) -> None:
        """From now on keep the final normed hidden rows (what the output layer reads) behind
        each forward's logits, in last_hidden: for a drafter that reads the target's state
        (Medusa's heads). Off by default, so other runs keep nothing."""
        self._keep_hidden = True
        if self._lean is not None:
            self._lean.keep_hidden = True

    @property
    def last_hidden(self) -> torch.Tensor | None:
        """(rows, hidden): the final normed hidden states behind the last forward's logits, row
        for row (after keep_hidden_states(); None before it or before any forward)."""
        if self._lean is not None:
            return self._lean.last_hidden
        return self._last_hidden

    @torch.inference_mode()
    def forward(self, input_ids: torch.Tensor, logits_to_keep: int = 1) -> torch.Tensor:
        """(logits_to_keep, V) logits of the last positions of input_ids (1, L) fed after the cache.

        The cache grows by L. Keeping only the logits needed saves the vocabulary projection of
        the others, a large share of a small model's cost.
        """
        if self._prefills is not None and self.cache_len == 0:
            input_ids = self._prefills.restore(self, input_ids, logits_to_keep)
        return self.forward_uncached(input_ids, logits_to_keep)

    @torch.inference_mode()
    def forward_uncached(self, input_ids: torch.Tensor, logits_to_keep: int = 1) -> torch.Tensor:
        """forward() computing every position of input_ids, never restoring a read prompt."""
        if self._lean is not None:
            out = self._lean(
                input_ids=input_ids, past_key_values=self._cache, logits_to_keep=logits_to_keep
            )
            logits: torch.Tensor = out.logits[0]
            return logits
        return self._own_forward(
            logits_to_keep, input_ids=input_ids, past_key_values=self._cache, use_cache=True
        )

    def _own_forward(self, logits_to_keep: int, **inputs: object) -> torch.Tensor:
        """(rows, V) logits of the model's own forward, its last logits_to_keep rows (0: all).
        Keeping hidden states, the base model and the output layer run apart, as the model's
        forward runs them, so the normed rows the output layer reads can be kept."""
        if not self._keep_hidden:
            out = self.model(**inputs, logits_to_keep=logits_to_keep)
            logits: torch.Tensor = out.logits[0]
            return logits
        wrapped: Any = self.model
        hidden = wrapped.model(**inputs).last_hidden_state[0]  # (L, hidden), after the final norm
        self._last_hidden = hidden[-logits_to_keep:] if logits_to_keep else hidden
        kept: torch.Tensor = wrapped.lm_head(self._last_hidden)
        return kept

    def snapshot(self) -> LeanCache | DynamicCache:
        """A copy of the KV cache as it stands, with buffers of its own."""
        if isinstance(self._cache, LeanCache):
            return self._cache.prefix_copy(self._cache.length)
        return copy.deepcopy(self._cache)

    def load(self, cache: LeanCache | DynamicCache) -> None:
        """Continue from a copy of a snapshot() of this model's cache (left as it is)."""
        if isinstance(cache, LeanCache):
            self._cache = cache.prefix_copy(cache.length)
        else:
            self._cache = copy.deepcopy(cache)

    def rollback(self, tokens: int) -> None:
        """Forget the last `tokens` cached positions (0: none); nothing is recomputed."""
        if tokens < 0:
            raise ValueError(f"rollback takes how many tokens to forget, got {tokens}")
        self._cache.crop(-tokens)
        self._tree_start = None

    @torch.inference_mode()
    def branch_logits(self, branch_ids: torch.Tensor) -> torch.Tensor:
        """(B, V) next-token logits after each row of branch_ids (B, L), each fed after the cache.

        One forward for all rows; the cache is left as it was. The lean step feeds the rows as
        branches of one tree over the shared cache; transformers' forward gets a copy of the
        cache repeated over the rows.
        """
        if self._lean is not None:
            return self._lean.branch_logits(branch_ids, self._cache)  # type: ignore[arg-type]
        cache = copy.deepcopy(self._cache)
        cache.batch_repeat_interleave(branch_ids.shape[0])  # type: ignore[union-attr]
        out = self.model(
            input_ids=branch_ids, past_key_values=cache, use_cache=True, logits_to_keep=1
        )
        logits: torch.Tensor = out.logits[:, -1]
        return logits

    @torch.inference_mode()
    def tree_forward(self, tree: DraftTree, root_id: int, read: int = 0) -> torch.Tensor:
        """(M + 1 - read, V) logits after the root and after each of the tree's M nodes, from
        entry *read* on, in one forward after the cache (specviz.core.tree: positions by depth,
        each node seeing its ancestors).

        read 0 starts a tree: the cache grows by M + 1, and keep_path() then keeps the root's and
        the accepted path's entries. read > 0 grows the tree of the previous tree_forward(), whose
        first *read* entries (the root, then nodes, in this tree's order) the cache holds: only
        the rest are fed, each seeing its ancestors among them all. A drafter growing a tree
        depth by depth reads each node once this way, not once per depth.
        """
        if read == 0:
            self._tree_start = self.cache_len
        elif self._tree_start is None or self.cache_len != self._tree_start + read:
            raise RuntimeError("tree_forward(read=...) grows the tree the cache ends with")
        past = self._tree_start
        ids = torch.tensor([root_id, *tree.tokens][read:], device=self.device)
        positions = tree_position_ids(tree, past, self.device)[:, read:]
        if self._lean is not None:
            return self._lean.tree_logits(
                ids,
                positions[0],
                tree_visibility(tree)[read:],
                self._cache,  # type: ignore[arg-type]
            )
        weight = next(iter(self.model.parameters()), None)
        dtype = torch.float32  # a model without weights (a test's chain) takes a float32 mask
        if weight is not None and weight.dtype.is_floating_point:
            dtype = weight.dtype
        mask = tree_attention_mask(tree, past, dtype, read=read)
        return self._own_forward(
            0,  # every row: each node's verdict needs p after it
            input_ids=ids[None],
            position_ids=positions,
            attention_mask=mask.to(self.device),
            past_key_values=self._cache,
            use_cache=True,
        )

    @torch.inference_mode()
    def keep_path(self, path: Sequence[int]) -> None:
        """After tree_forward(): keep the root's entry and the entries of the tree nodes in
        *path* (the accepted ones, root to leaf), so the cache is what plain decoding of the
        root and those tokens would have left."""
        start, self._tree_start = self._tree_start, None
        if start is None:
            raise RuntimeError("keep_path() follows a tree_forward()")
        kept = [0, *(node + 1 for node in path)]  # the root is offset 0, node i is 1 + i
        if isinstance(self._cache, LeanCache):
            self._cache.keep(start, kept)
            return
        index = torch.tensor([start + offset for offset in kept], device=self.device)
        for layer in self._cache.layers:
            for name in ("keys", "values"):
                held = getattr(layer, name)
                picked = held.index_select(-2, index)
                setattr(layer, name, torch.cat([held[..., :start, :], picked], dim=-2))

    def _new_cache(self) -> LeanCache | DynamicCache:
        if self._lean is not None:
            return self._lean.new_cache()
        return new_cache(self.model)


# First-use verdicts by model, with the module layout they were reached on (see _layout): a
# model is checked once, and again only if its modules change. Weak keys: nothing is kept alive.
_verdicts: weakref.WeakKeyDictionary[torch.nn.Module, tuple[tuple[object, ...], ForwardChoice]]
_verdicts = weakref.WeakKeyDictionary()


def choose_forward(model: torch.nn.Module) -> ForwardChoice:
    """The forward a ModelRunner of this model runs: the lean step if it passes its checks."""
    if problem := lean_support_problem(model):
        return ForwardChoice("transformers", problem)
    layout = _layout(model)
    known = _verdicts.get(model)
    if known is not None and known[0] == layout:
        return known[1]
    choice = _first_use_check(model)
    _verdicts[model] = (layout, choice)
    return choice


def _layout(model: torch.nn.Module) -> tuple[object, ...]:
    """What the lean step's verdict depends on: which modules, of which types, in which dtype."""
    first = next(iter((*model.parameters(), *model.buffers())), None)
    modules = tuple((name, id(module), type(module)) for name, module in model.named_modules())
    return (None if first is None else first.dtype, modules)


@torch.inference_mode()
def _first_use_check(model: torch.nn.Module) -> ForwardChoice:
    """Compare the lean step's logits with the model's own on a short prompt and a cached step."""
    try:
        lean = LeanDecoder(model)
        device = device_of(model)
        vocab = int(getattr(model.config, "vocab_size"))  # noqa: B009 (config is loosely typed)
        # Ids spread over the vocabulary; any ids exercise the arithmetic.
        ids = (torch.arange(1, CHECK_PROMPT_LEN + CHECK_STEP_LEN + 1, device=device) * 7919) % vocab
        own_cache = new_cache(model)
        lean_cache = lean.new_cache()
        for feed in (ids[:CHECK_PROMPT_LEN], ids[CHECK_PROMPT_LEN:]):
            feed = feed.view(1, -1)
            keep = feed.shape[1]
            own = model(
                input_ids=feed, past_key_values=own_cache, use_cache=True, logits_to_keep=keep
            ).logits.float()
            got = lean(input_ids=feed, past_key_values=lean_cache, logits_to_keep=keep).logits
            error = (got.float() - own).abs().max().item()
            tolerance = logits_tolerance(got.dtype, own.abs().max().item())
            if not error <= tolerance:  # also refuses NaN
                reason = Phrase(
                    "forward.why.logits",
                    error=f"{error:.3g}",
                    tolerance=f"{tolerance:.3g}",
                    dtype=str(got.dtype).removeprefix("torch."),
                )
                return ForwardChoice("transformers", reason)
    except Exception as error:  # any failure means the lean step does not compute this model
        failure = f"{type(error).__name__}: {error}"
        return ForwardChoice("transformers", Phrase("forward.why.failed", error=failure))
    return ForwardChoice("lean", None)
