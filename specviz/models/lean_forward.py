"""A lean decoding step for Llama/Qwen2-style models: the same model, less Python around it.

A decoding step of a small model on a CPU spends a noticeable share of its time outside the matrix
products: transformers' generic forward builds masks, dispatches attention through a registry,
checks output options and updates a general cache in every layer. Speculative decoding multiplies
the number of small forwards (γ draft steps per cycle), so that overhead is paid many times.

`LeanDecoder(model)` wraps a loaded transformers model of a supported family in a forward that
calls the model's own modules (embedding, rotary embedding, norms, projections, MLP, output
layer) in the order transformers does, on (tokens, hidden) rows. Attention is computed in float32
against a float32 KV cache written in place (see grouped_attention for why: more faithful
than transformers' bfloat16 paths, and faster than its CPU SDPA kernel). Tests compare the logits
with the same weights in float32; what a step saves against transformers' forward:
docs/performance.md#the-lean-decoding-step-and-float32-attention. specviz.models.runner decides
per model whether this step or transformers' forward runs: models of other families, configured
in ways this step does not reproduce, or whose logits a first-use check finds different, keep
transformers' forward.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from specviz.text import Phrase

# Families whose decoder layer is: x + o(attn(norm(x))), then + down(act(gate(n)) * up(n)), with
# rotary embeddings on q and k and grouped-query attention.
SUPPORTED_MODEL_TYPES = frozenset({"llama", "qwen2"})


class LeanCache:
    """Keys and values per layer in float32, with DynamicCache's length and crop.

    Each layer's keys live in a preallocated (kv_heads, capacity, head_dim) buffer filled up to
    the cache length, so a step writes its new positions in place instead of copying the whole
    cache into a longer tensor (torch.cat), and a rollback only shortens the length. Float32
    because attention is computed in float32 (see LeanDecoder._attention).
    """

    def __init__(self, layers: int) -> None:
        self.keys: list[torch.Tensor | None] = [None] * layers
        self.values: list[torch.Tensor | None] = [None] * layers
        self.length = 0

    def get_seq_length(self) -> int:
        return self.length

    def crop(self, tokens_to_remove: int) -> None:
        """Drop the last -tokens_to_remove positions (0: none), as transformers 5's crop does."""
        if tokens_to_remove > 0:
            raise ValueError(f"crop takes minus the tokens to remove, got {tokens_to_remove}")
        self.length = max(0, self.length + tokens_to_remove)

    def extend(
        self, index: int, key: torch.Tensor, value: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Layer index's keys and values with (kv_heads, L, D) new ones after the cached length.

        The length itself moves on once the whole forward is done (advance()).
        """
        start, end = self.length, self.length + key.shape[1]
        keys, values = self.keys[index], self.values[index]
        if keys is None or values is None or keys.shape[1] < end:
            capacity = max(end, 2 * (0 if keys is None else keys.shape[1]), 256)
            shape = (key.shape[0], capacity, key.shape[2])
            grown_keys = torch.empty(shape, dtype=torch.float32, device=key.device)
            grown_values = torch.empty_like(grown_keys)
            if keys is not None and values is not None:
                grown_keys[:, :start] = keys[:, :start]
                grown_values[:, :start] = values[:, :start]
            keys, values = grown_keys, grown_values
            self.keys[index], self.values[index] = keys, values
        keys[:, start:end] = key
        values[:, start:end] = value
        return keys[:, :end], values[:, :end]

    def advance(self, tokens: int) -> None:
        self.length += tokens

    def keep(self, start: int, offsets: Sequence[int]) -> None:
        """Keep, of the positions from *start* on, those at *offsets* after it (in that order),
        and drop the rest: what a tree forward wrote for its root and accepted path stays, its
        other branches go. A gather, no forward."""
        picked = torch.tensor([start + offset for offset in offsets], dtype=torch.long)
        for keys, values in zip(self.keys, self.values, strict=True):
            if keys is not None and values is not None:
                index = picked.to(keys.device)
                keys[:, start : start + len(offsets)] = keys.index_select(1, index)
                values[:, start : start + len(offsets)] = values.index_select(1, index)
        self.length = start + len(offsets)

    def scratch(self) -> LeanCache:
        """A cache over the same buffers whose length starts at this one's.

        What a forward writes through it lies past this cache's length, where this cache's next
        forward overwrites it: temporary entries, such as a self-speculative draft's (layer
        skip). A buffer it grows is grown for both. Layers it does not feed get no entry.
        """
        view = LeanCache(0)
        view.keys, view.values, view.length = self.keys, self.values, self.length
        return view

    def prefix_copy(self, length: int) -> LeanCache:
        """A cache with buffers of its own holding this one's first length positions."""
        copy = LeanCache(len(self.keys))
        for index, (keys, values) in enumerate(zip(self.keys, self.values, strict=True)):
            if keys is not None and values is not None:
                copy.keys[index] = keys[:, :length].clone()
                copy.values[index] = values[:, :length].clone()
        copy.length = min(length, self.length)
        return copy


@dataclass(frozen=True)
class LeanOutput:
    logits: torch.Tensor  # (1, logits_to_keep, V)


Rows = Callable[[torch.Tensor], torch.Tensor]  # (tokens, features) -> (tokens, features')


@dataclass(frozen=True)
class _LayerSteps:
    """One decoder layer's pieces, looked up once: a step then reads no module attributes.

    Each is the module's bound forward, not the module: torch's Module.__call__ wrapper costs a
    few microseconds, and a draft step makes ~240 such calls (10 per layer, 24 layers). That
    wrapper is also what runs forward hooks, so models with hooks keep transformers' forward.
    """

    input_norm: Rows
    query: Rows
    key: Rows
    value: Rows
    output: Rows
    post_norm: Rows
    gate: Rows
    up: Rows
    down: Rows
    act: Rows
    scaling: float


def rows_of(module: Any) -> Rows:
    """The module's computation over (tokens, features) rows: its forward_rows where it has one
    (the quantized and kernel layers, which skip their reshaping), else its forward."""
    forward_rows = getattr(module, "forward_rows", None)
    return forward_rows if callable(forward_rows) else module.forward  # type: ignore[no-any-return]


def _layer_steps(layer: Any) -> _LayerSteps:
    attention, mlp = layer.self_attn, layer.mlp
    return _LayerSteps(
        input_norm=layer.input_layernorm.forward,
        query=rows_of(attention.q_proj),
        key=rows_of(attention.k_proj),
        value=rows_of(attention.v_proj),
        output=rows_of(attention.o_proj),
        post_norm=layer.post_attention_layernorm.forward,
        gate=rows_of(mlp.gate_proj),
        up=rows_of(mlp.up_proj),
        down=rows_of(mlp.down_proj),
        act=mlp.act_fn.forward,
        scaling=float(attention.scaling),
    )


class LeanDecoder:
    """Callable like the wrapped model for what the engine uses: input_ids, cache, logits_to_keep."""

    def __init__(self, model: torch.nn.Module) -> None:
        self.model = model
        # transformers' submodules are reached by attribute; typed loosely (Any), checked by
        # supports_lean_decoding() before a LeanDecoder is built.
        wrapped: Any = model
        inner = wrapped.model
        self.embed: Any = inner.embed_tokens
        self.rotary: Any = inner.rotary_emb
        self.norm: Any = inner.norm
        self.layers: list[Any] = list(inner.layers)
        self.lm_head: Any = wrapped.lm_head
        config: Any = getattr(model, "config", None)
        self.heads: int = config.num_attention_heads
        self.kv_heads: int = config.num_key_value_heads
        self.head_dim: int = self.layers[0].self_attn.head_dim
        self.steps = [_layer_steps(layer) for layer in self.layers]
        # Opt-in (a drafter that reads the target's state, such as Medusa's heads): the final
        # normed hidden rows of the last logits computed, (rows, hidden), kept in last_hidden.
        self.keep_hidden = False
        self.last_hidden: torch.Tensor | None = None

    def new_cache(self) -> LeanCache:
        return LeanCache(len(self.layers))

    @torch.inference_mode()
    def __call__(
        self,
        *,
        input_ids: torch.Tensor,
        past_key_values: Any,
        use_cache: bool = True,
        logits_to_keep: int = 1,
        layers: Sequence[int] | None = None,
    ) -> LeanOutput:
        """The last logits_to_keep positions' logits; the cache grows by the tokens fed.

        layers: the decoder layers to run, in order (None: all of them). A layer left out passes
        its input on unchanged and writes no cache entry, as in layer skipping and early exit;
        the final norm and the output layer always run.
        """
        cache = _lean_cache(past_key_values)
        past, length = cache.get_seq_length(), input_ids.shape[1]
        device = input_ids.device
        positions = torch.arange(past, past + length, device=device)
        mask = None
        if length > 1:
            # Several new queries (a prompt, or drafts to verify after a cached prefix): query i
            # sees keys up to past + i ("lower-right" causal alignment).
            keys_at = torch.arange(past + length, device=device)
            mask = _additive_mask(keys_at[None, :] <= positions[:, None])
        hidden = self._hidden(input_ids[0], positions, mask, cache, layers)
        cache.advance(length)
        return LeanOutput(self._logits(hidden[-logits_to_keep:, :]).unsqueeze(0))

    @torch.inference_mode()
    def branch_logits(self, branch_ids: torch.Tensor, cache: LeanCache) -> torch.Tensor:
        """(B, V) next-token logits after each row of branch_ids (B, L), each fed after the cache.

        The B·L new tokens go through one forward as one sequence whose mask lets each token see
        the cached context and the tokens before it in its own row, at the positions it would
        have alone (past + 0..L-1): the rows are branches of a tree rooted at the cache. The
        cache is left as it was.
        """
        cache = _lean_cache(cache)
        branches, length = branch_ids.shape
        past, device = cache.get_seq_length(), branch_ids.device
        offsets = torch.arange(length, device=device).repeat(branches)  # (B·L,)
        rows = torch.arange(branches, device=device).repeat_interleave(length)  # (B·L,)
        sees_new = (rows[None, :] == rows[:, None]) & (offsets[None, :] <= offsets[:, None])
        sees_cached = torch.ones(branches * length, past, dtype=torch.bool, device=device)
        mask = _additive_mask(torch.cat([sees_cached, sees_new], dim=1))
        hidden = self._hidden(branch_ids.reshape(-1), past + offsets, mask, cache)
        # The cache wrote the B·L branch positions after the context; they are dropped unseen.
        return self._logits(hidden.view(branches, length, -1)[:, -1, :])

    @torch.inference_mode()
    def tree_logits(
        self,
        token_ids: torch.Tensor,
        positions: torch.Tensor,
        sees: torch.Tensor,
        cache: LeanCache,
    ) -> torch.Tensor:
        """(N, V) logits after each of token_ids (N,) fed after the cache as part of one tree:
        token i at positions[i], seeing every cached position before the tree and, of the last
        T cached positions and the N new ones, those that sees[i] (N, T + N) allows (its
        ancestors and itself). T is 0 when the tree starts here and the tree entries read
        earlier when it grows by a depth. The cache grows by N; LeanCache.keep then keeps the
        accepted path's entries."""
        cache = _lean_cache(cache)
        before = cache.get_seq_length() + len(token_ids) - sees.shape[1]
        sees_cached = torch.ones(len(token_ids), before, dtype=torch.bool, device=token_ids.device)
        mask = _additive_mask(torch.cat([sees_cached, sees.to(token_ids.device)], dim=1))
        hidden = self._hidden(token_ids, positions, mask, cache)
        cache.advance(len(token_ids))
        return self._logits(hidden)

    def _hidden(
        self,
        token_ids: torch.Tensor,
        positions: torch.Tensor,
        mask: torch.Tensor | None,
        cache: LeanCache,
        layers: Sequence[int] | None = None,
    ) -> torch.Tensor:
        """(tokens, hidden) final hidden states of token_ids (tokens,) at the given positions,
        through the given decoder layers (None: all).

        Batch size is 1: hidden states are (tokens, hidden), keys and values (kv_heads, S, D),
        so no step reshapes a batch dimension in and out.
        """
        hidden: torch.Tensor = self.embed(token_ids)
        cos, sin = self.rotary(hidden, positions.unsqueeze(0))  # (1, L, D): broadcast over heads
        for index in range(len(self.steps)) if layers is None else layers:
            hidden = self._layer(index, self.steps[index], hidden, cos, sin, mask, cache)
        return hidden

    def _logits(self, hidden: torch.Tensor) -> torch.Tensor:
        """(rows, V) logits of (rows, hidden) final hidden states."""
        normed = self.norm(hidden)
        if self.keep_hidden:
            self.last_hidden = normed
        return self.lm_head(normed)  # type: ignore[no-any-return]

    def _layer(
        self,
        index: int,
        steps: _LayerSteps,
        hidden: torch.Tensor,
        cos: torch.Tensor,
        sin: torch.Tensor,
        mask: torch.Tensor | None,
        cache: LeanCache,
    ) -> torch.Tensor:
        length, dim = hidden.shape[0], self.head_dim
        normed = steps.input_norm(hidden)
        query = steps.query(normed).view(length, self.heads, dim).transpose(0, 1)
        key = steps.key(normed).view(length, self.kv_heads, dim).transpose(0, 1)
        value = steps.value(normed).view(length, self.kv_heads, dim).transpose(0, 1)
        query = query * cos + _rotate_half(query) * sin
        key = key * cos + _rotate_half(key) * sin
        keys, values = cache.extend(index, key, value)
        out = grouped_attention(query, keys, values, steps.scaling, mask)  # (H, L, D)
        out = out.transpose(0, 1).reshape(length, -1).contiguous()
        hidden = hidden + steps.output(out)
        normed = steps.post_norm(hidden)
        return hidden + steps.down(steps.act(steps.gate(normed)) * steps.up(normed))


def grouped_attention(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    scaling: float,
    mask: torch.Tensor | None,
) -> torch.Tensor:
    """softmax(q·kᵀ · scaling + mask) · v in float32, query heads grouped by their key/value head.

    Why float32: transformers' eager attention multiplies q·kᵀ in the model dtype, so in
    bfloat16 every score is rounded to 3 significant digits before the softmax. On the bundled
    target (138 prompt positions, against the same model in float32) that gave a mean KL of
    0.0061 and 97.8 % argmax agreement, against 0.0006 and 99.3 % for PyTorch's SDPA kernel,
    which keeps scores in float32. Here scores, softmax and the weighted sum are float32
    (keys and values are cached in float32), and only the result is rounded to the model
    dtype: 0.0005 and 100 % (scripts/attention_fidelity.py).

    Why grouped: the g query heads that share one key/value head become g·L rows of one
    product against the cache, instead of repeating the cache per head (transformers' eager
    path copies it every layer) or calling SDPA, whose CPU kernel is slow for one query
    against a long cache (timed at the target's shapes:
    docs/performance.md#the-lean-decoding-step-and-float32-attention).
    """
    heads, length, dim = query.shape
    kv_heads, positions = key.shape[0], key.shape[1]
    groups = heads // kv_heads
    # (H, L, D), H = kv_heads · groups, kv-head major as transformers' repeat_kv pairs them.
    grouped = query.float().reshape(kv_heads, groups * length, dim)
    scores = torch.matmul(grouped, key.transpose(1, 2)) * scaling
    if mask is not None:
        scores = (scores.view(kv_heads, groups, length, positions) + mask).view(
            kv_heads, groups * length, positions
        )
    weights = torch.softmax(scores, dim=-1)
    return torch.matmul(weights, value).view(heads, length, dim).to(query.dtype)


def _lean_cache(cache: object) -> LeanCache:
    if not isinstance(cache, LeanCache):
        raise TypeError("a LeanDecoder needs the LeanCache from its new_cache()")
    return cache


def _additive_mask(allowed: torch.Tensor) -> torch.Tensor:
    """(1, 1, queries, keys): 0 where a query may see a key, -inf elsewhere (added to scores)."""
    zero = torch.zeros((), dtype=torch.float32, device=allowed.device)
    return torch.where(allowed, zero, -torch.inf).view(1, 1, *allowed.shape)


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


# What LeanDecoder reads: on the model, its inner model, its config and on every decoder layer.
_MODEL_PARTS = ("model", "lm_head")
_INNER_PARTS = ("embed_tokens", "rotary_emb", "norm", "layers")
_CONFIG_FIELDS = ("num_attention_heads", "num_key_value_heads")
_LAYER_PARTS = ("input_layernorm", "post_attention_layernorm", "self_attn", "mlp")
_ATTENTION_PARTS = ("q_proj", "k_proj", "v_proj", "o_proj", "head_dim", "scaling")
_MLP_PARTS = ("gate_proj", "up_proj", "down_proj", "act_fn")


def lean_support_problem(model: torch.nn.Module) -> Phrase | None:
    """Why LeanDecoder cannot compute this model (None: its family, layout and setup are covered).

    Checks the family and configuration, then every attribute the lean step reads, so a model
    whose modules are renamed or missing is refused here rather than failing inside a step.
    """
    config = getattr(model, "config", None)
    model_type = getattr(config, "model_type", None)
    if model_type not in SUPPORTED_MODEL_TYPES:
        supported = ", ".join(sorted(SUPPORTED_MODEL_TYPES))
        return Phrase("forward.why.model_type", model_type=repr(model_type), supported=supported)
    attention_kernel = getattr(config, "_attn_implementation", None)
    if attention_kernel not in ("sdpa", "eager"):
        # Other kernels (flash-attention, flex) are for GPUs and batches; keep theirs.
        return Phrase("forward.why.attention", kernel=repr(attention_kernel))
    if getattr(model, "hf_device_map", None):
        # Split across devices by accelerate: rotary tables and masks would sit on the wrong one.
        return Phrase("forward.why.split")
    if model.training:
        return Phrase("forward.why.training")
    if any(module._forward_hooks or module._forward_pre_hooks for module in model.modules()):
        return Phrase("forward.why.hooks")
    missing = _missing_part(model, _MODEL_PARTS, "model") or _missing_part(
        config, _CONFIG_FIELDS, "config"
    )
    if missing:
        return missing
    inner: Any = model.model
    if missing := _missing_part(inner, _INNER_PARTS, "model.model"):
        return missing
    if not len(inner.layers):
        return Phrase("forward.why.no_layers")
    for index, layer in enumerate(inner.layers):
        where = f"model.model.layers[{index}]"
        if missing := _missing_part(layer, _LAYER_PARTS, where):
            return missing
        attention = layer.self_attn
        if missing := _missing_part(attention, _ATTENTION_PARTS, f"{where}.self_attn"):
            return missing
        if getattr(attention, "sliding_window", None) is not None:
            return Phrase("forward.why.sliding_window", where=f"{where}.self_attn")
        if missing := _missing_part(layer.mlp, _MLP_PARTS, f"{where}.mlp"):
            return missing
    return None


def _missing_part(owner: object, names: tuple[str, ...], where: str) -> Phrase | None:
    absent = [name for name in names if not hasattr(owner, name)]
    return Phrase("forward.why.missing", where=where, parts=", ".join(absent)) if absent else None


def supports_lean_decoding(model: torch.nn.Module) -> bool:
    """True when LeanDecoder computes this model (see lean_support_problem for why not)."""
    return lean_support_problem(model) is None


def lean_decoder(model: torch.nn.Module) -> LeanDecoder | torch.nn.Module:
    """A new lean step for the model when supported, else the model itself (for scripts).

    Nothing is kept on the model, so a later change to its modules is seen by the next call.
    The app, the labs and the bench go through ModelRunner, which also checks the logits.
    """
    return LeanDecoder(model) if supports_lean_decoding(model) else model
