"""The incremental detokenizer's control tokens, with a tokenizer whose chat markers are added
tokens marked special but not among its special ids (as Qwen's <|im_start|> is)."""

from __future__ import annotations

from dataclasses import dataclass

from specviz.core.detok import IncrementalDetokenizer, control_ids

NAMES = {0: "a", 1: "b", 2: " c", 8: "<|endoftext|>", 9: "<|im_start|>"}


@dataclass(frozen=True)
class Added:
    content: str
    special: bool


class MarkerTokenizer:
    """Decodes by joining names; only end of text is a special id, the chat marker an added
    token marked special."""

    def __init__(self) -> None:
        self.all_special_ids = [8]
        self.added_tokens_decoder = {
            8: Added("<|endoftext|>", True),
            9: Added("<|im_start|>", True),
        }

    def decode(self, token_ids: list[int], skip_special_tokens: bool = False) -> str:
        return "".join(NAMES[i] for i in token_ids if not (skip_special_tokens and i in (8, 9)))


def test_a_generated_chat_marker_adds_no_text_and_is_named() -> None:
    tokenizer = MarkerTokenizer()
    assert control_ids(tokenizer) == {8, 9}
    detok = IncrementalDetokenizer(tokenizer, [0])
    assert detok.commit([1, 9, 2, 8]) == ["b", "", " c", ""]
    assert detok.special_name(9) == "<|im_start|>" and detok.special_name(8) == "<|endoftext|>"
    assert detok.special_name(2) == ""
