"""How a token reads on screen: escaped, control tokens named, split characters joined.

A token's text comes from a model and may contain anything, so it goes through ``esc`` before it
lands in an element or an attribute. Four kinds of token would read wrongly as plain text:

- a control token (end of text, a chat marker such as ``<|im_end|>``) has no text (core/detok.py
  names it in ``special``): it is shown as a small labelled marker, its name only on hover;
- a token that ends mid-character (a byte-fallback piece of a character written by several
  tokens) adds "" until the token that completes the character: the pieces shrink to a thin mark
  joined to the completing token, and each one's tooltip says what it is part of;
- a token of whitespace only gets muted glyphs (␣ for a space, ⇥ for a tab, ↵ for a newline);
- a newline inside a token keeps its line break, with a muted ↵ before it.

The sentence that says why a draft was kept or thrown away is ``verdicts``'s; probabilities are
formatted by ``numbers``.
"""

from __future__ import annotations

import html
from collections.abc import Iterable
from dataclasses import dataclass

from specviz.core.events import EmittedToken
from specviz.text import DEFAULT_LANGUAGE, t
from specviz.views.numbers import NO_VALUE


def esc(text: str) -> str:
    """Text for an element or an attribute: html.escape with quotes."""
    return html.escape(text, quote=True)


def num(value: float | None, digits: int = 4) -> str:
    """A number to `digits` places for a data attribute (read by scripts and tests, not people;
    a probability people read is ``numbers.prob``), or a dash for a value that does not exist."""
    return NO_VALUE if value is None else f"{value:.{digits}f}"


def quoted(text: str) -> str:
    """Token text for a line of text: in curly quotes, a newline or a tab spelled out."""
    spelled = text.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t")
    return f"“{spelled}”"


# --- control tokens -------------------------------------------------------------------------------

# Control tokens by their bare name (the vocabulary's spelling without <, |, [ and their pairs):
# the ones a reader meets, in words. Any other reads "control token <bare name>".
_SPECIAL_WORDS = {
    "endoftext": "token.special.end_of_text",
    "end_of_text": "token.special.end_of_text",
    "eos": "token.special.end_of_text",
    "/s": "token.special.end_of_text",
    "eot": "token.special.end_of_text",
    "end": "token.special.end_of_text",
    "im_end": "token.special.end_of_turn",
    "eot_id": "token.special.end_of_turn",
    "eom_id": "token.special.end_of_turn",
    "end_of_turn": "token.special.end_of_turn",
    "im_start": "token.special.start_of_turn",
    "start_of_turn": "token.special.start_of_turn",
    "start_header_id": "token.special.start_of_turn",
    "s": "token.special.start_of_text",
    "bos": "token.special.start_of_text",
    "begin_of_text": "token.special.start_of_text",
    "startoftext": "token.special.start_of_text",
}


def special_words(name: str, lang: str = DEFAULT_LANGUAGE) -> str:
    """A control token's name in words: "<|im_end|>" reads "end of turn"."""
    bare = name.strip("<>|[] ")
    key = _SPECIAL_WORDS.get(bare.lower())
    return t(key, lang) if key is not None else t("token.special.other", lang, name=bare)


# --- characters written by several tokens ---------------------------------------------------------


@dataclass(frozen=True)
class Joined:
    """A token's share of text written by several byte tokens (a character split between them)."""

    text: str  # what the tokens write together: the completing token's text ("" if never done)
    tokens: int  # how many tokens wrote it
    completes: bool  # this is the token that completes it (the others add "")


def is_piece(text: str, special: str) -> bool:
    """A token that ends mid-character: it adds no text of its own until the next one."""
    return text == "" and not special


def joined_characters(tokens: Iterable[EmittedToken]) -> dict[int, Joined]:
    """By seq_index: every kept token that wrote part of a character split over tokens."""
    joined: dict[int, Joined] = {}
    pieces: list[int] = []
    for token in tokens:
        if is_piece(token.text, token.special):
            pieces.append(token.seq_index)
            continue
        if pieces and not token.special:
            whole = Joined(token.text, len(pieces) + 1, completes=False)
            joined |= dict.fromkeys(pieces, whole)
            joined[token.seq_index] = Joined(token.text, len(pieces) + 1, completes=True)
        pieces = []  # a control token ends an unfinished character: its pieces stay unnamed
    return joined


# --- a token's text as HTML -----------------------------------------------------------------------

_WHITESPACE_GLYPHS = {" ": "␣", "\t": "⇥", "\u3000": "␣", "\r": "␍"}
_NEWLINE = '<span class="sv-nl" aria-hidden="true">↵</span>\n'


def shown(text: str, special: str = "", lang: str = DEFAULT_LANGUAGE) -> str:
    """Token text for display in an element: escaped, a control token as a labelled marker, a
    piece of a character as a thin mark, whitespace made visible."""
    if special:
        return f'<span class="sv-special-mark">{esc(special_words(special, lang))}</span>'
    if is_piece(text, special):
        return '<span class="sv-piece-mark" aria-hidden="true"></span>'
    if text.isspace():
        return "".join(
            _NEWLINE
            if char == "\n"
            else f'<span class="sv-ws" aria-hidden="true">{_WHITESPACE_GLYPHS.get(char, "␣")}</span>'
            for char in text
        )
    return esc(text).replace("\n", _NEWLINE)


def token_classes(text: str, special: str, joined: Joined | None) -> str:
    """Extra CSS classes of a token span: a marker, a piece, or the token that joins the pieces."""
    if special:
        return " sv-special"
    if is_piece(text, special):
        return " sv-piece"
    return " sv-joined" if joined is not None else ""


def text_tip(text: str, special: str, joined: Joined | None, lang: str) -> list[str]:
    """Tooltip lines about the token's text itself: what a marker or a piece stands for."""
    if special:
        return [t("tip.special", lang, name=quoted(special))]
    if joined is not None:
        key = "tip.joined.end" if joined.completes else "tip.joined.piece"
        return [t(key, lang, text=quoted(joined.text), n=joined.tokens)]
    if is_piece(text, special):
        return [t("tip.piece", lang)]
    return []


def tip_name(text: str, special: str) -> str:
    """The token as its tooltip's first line quotes it: a control token by its name."""
    return quoted(special or text)
