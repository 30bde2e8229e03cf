"""Incremental detokenisation: the text each new token adds, decoded in context.

Decoding tokens one at a time in isolation breaks byte-level BPE: a multi-byte UTF-8 character can
span tokens, and tokenizers drop or add leading spaces at the start of a decode. So each token's text
is the difference between decoding a short window of context with and without it, and a token that
ends mid-character contributes "" until the character completes (the approach of TGI and vLLM).
A control token (end of text, a chat marker) adds no text either: it is named by special_name, so a
view can show it as a marker while the text a reader gets never holds it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

# Tokens of context decoded before the new ones; enough for any merge to settle.
_CONTEXT_TOKENS = 5
_INCOMPLETE = "\ufffd"


class TokenizerLike(Protocol):
    """The one tokenizer method the engine needs."""

    def decode(self, token_ids: list[int], skip_special_tokens: bool = False) -> str: ...

    @property
    def all_special_ids(self) -> list[int]:
        """The control tokens' ids (end of text, chat markers, padding)."""
        ...


def control_ids(tokenizer: TokenizerLike) -> frozenset[int]:
    """The tokenizer's control tokens: its special ids and the added tokens it marks special
    (the chat template's markers: Qwen's <|im_start|> is only among the latter)."""
    added = getattr(tokenizer, "added_tokens_decoder", {})
    marked = {id_ for id_, token in added.items() if getattr(token, "special", False)}
    return frozenset(tokenizer.all_special_ids) | marked


class IncrementalDetokenizer:
    """Tracks the committed token sequence and turns new tokens into text pieces."""

    def __init__(self, tokenizer: TokenizerLike, prompt_ids: Sequence[int]) -> None:
        self._tokenizer = tokenizer
        self._special = control_ids(tokenizer)  # all_special_ids is recomputed per call by HF
        self._ids = list(prompt_ids)
        # Text already emitted ends at read_offset; prefix_offset starts the context window.
        self._read_offset = len(self._ids)
        self._prefix_offset = max(0, self._read_offset - _CONTEXT_TOKENS)

    def peek(self, new_ids: Sequence[int]) -> list[str]:
        """Texts of new_ids as if appended, without committing them (for drafted tokens)."""
        pieces, _, _ = self._pieces(new_ids)
        return pieces

    def commit(self, new_ids: Sequence[int]) -> list[str]:
        """Append new_ids for good and return the text each one adds."""
        pieces, self._prefix_offset, self._read_offset = self._pieces(new_ids)
        self._ids.extend(new_ids)
        return pieces

    def special_name(self, token_id: int) -> str:
        """A control token's name as the vocabulary spells it (e.g. "<|im_end|>"), "" for text."""
        return self._decode([token_id]) if token_id in self._special else ""

    def _pieces(self, new_ids: Sequence[int]) -> tuple[list[str], int, int]:
        # Work on a window that starts at prefix_offset, so the committed list is never copied in
        # full; offsets inside the loop are relative to `base` and returned absolute.
        base = self._prefix_offset
        window = self._ids[base:] + list(new_ids)
        prefix, read = 0, self._read_offset - base
        pieces: list[str] = []
        for end in range(len(self._ids) - base + 1, len(window) + 1):
            before = self._decode(window[prefix:read])
            after = self._decode(window[prefix:end])
            if after.endswith(_INCOMPLETE) or len(after) < len(before):
                pieces.append("")  # mid-character: wait for the bytes that complete it
                continue
            # A control token's own text is its name, not text: it adds "" (special_name has it).
            special = window[end - 1] in self._special
            pieces.append("" if special else after[len(before) :])
            prefix, read = read, end
        return pieces, prefix + base, read + base

    def _decode(self, ids: list[int]) -> str:
        return self._tokenizer.decode(ids, skip_special_tokens=False) if ids else ""
