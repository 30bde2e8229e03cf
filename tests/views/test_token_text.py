"""Tokens as people read them (specviz.views.token_text through the stream, cards and inspector):
control tokens as labelled markers, a character split over byte tokens shown joined, whitespace
made visible, and rejected and resampled tokens told apart by more than hue."""

from __future__ import annotations

import re
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path

from ui_events import draft, make_cycle, sample_run

from specviz.core.events import Cycle, Origin, Totals
from specviz.labs.inspector import inspector_html
from specviz.views import run_html as render

CSS = Path(__file__).resolve().parents[2] / "assets" / "specviz.css"


class _Visible(HTMLParser):
    """The text a reader sees (element text, not attributes), and every span's attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.text: list[str] = []
        self.spans: list[dict[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "span":
            self.spans.append(dict(attrs))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _read(markup: str) -> _Visible:
    parser = _Visible()
    parser.feed(markup)
    return parser


def _tokens(markup: str) -> list[dict[str, str | None]]:
    return [span for span in _read(markup).spans if "sv-tok" in (span.get("class") or "")]


def _ending_with(extra: str, special: str) -> Cycle:
    """A finished cycle: two accepted drafts, then the target's end-of-turn token (a bonus)."""
    cycle = make_cycle(
        0,
        0,
        [draft(1, 0, "Hi", accepted=True), draft(2, 1, "!", accepted=True)],
        (extra, Origin.BONUS),
        Totals(3, 1, 2, 2, 2, 0.1, 0.0),
        finished=True,
    )
    last = replace(cycle.emitted[-1], special=special)
    return replace(cycle, emitted=(*cycle.emitted[:-1], last), stop_reason="eos")


def test_a_control_token_is_a_labelled_marker_never_its_raw_name() -> None:
    cycle = _ending_with("", "<|im_end|>")
    stream = render.stream_html([cycle])
    seen = "".join(_read(stream).text)
    assert "im_end" not in seen and "<|" not in seen
    marker = _tokens(stream)[-1]
    assert "sv-special" in (marker["class"] or "")
    assert "end of turn" in seen
    assert "<|im_end|>" in (marker["data-tip"] or "")  # its name on hover, escaped
    card = render.cycle_cards_html(cycle)
    assert "end of turn" in card and "im_end" not in "".join(_read(card).text)


def test_control_token_names_read_as_words() -> None:
    for name, words in [
        ("<|endoftext|>", "end of text"),
        ("</s>", "end of text"),
        ("<|eot_id|>", "end of turn"),
        ("<|im_start|>", "start of turn"),
        ("<|fim_middle|>", "control token fim_middle"),
    ]:
        seen = "".join(_read(render.stream_html([_ending_with("", name)])).text)
        assert words in seen, name


def _japanese() -> list[Cycle]:
    """本 (three UTF-8 bytes) split over two byte tokens: the first adds "" until the second
    completes the character; the split straddles the cycle boundary."""
    first = make_cycle(
        0,
        0,
        [draft(1, 0, "日", accepted=True), draft(2, 1, "", accepted=True)],
        ("本", Origin.BONUS),
        Totals(3, 1, 2, 2, 2, 0.1, 0.0),
    )
    second = make_cycle(
        1,
        3,
        [draft(1, 3, "", accepted=True), draft(2, 4, "語", accepted=False, q=0.9, p=0.1, u=0.9)],
        ("語", Origin.RESAMPLED),
        Totals(5, 2, 4, 4, 3, 0.2, 0.0),
    )
    return [first, second]


def test_a_character_split_over_byte_tokens_is_shown_joined() -> None:
    cycles = _japanese()
    stream = render.stream_html(cycles)
    assert "∅" not in "".join(_read(stream).text)
    spans = _tokens(stream)
    piece, whole = spans[1], spans[2]
    assert "sv-piece" in (piece["class"] or "") and "sv-joined" in (whole["class"] or "")
    # The split is still there on hover: each piece says what it is part of.
    assert "“本”" in (piece["data-tip"] or "") and "2 tokens" in (piece["data-tip"] or "")
    assert "2 tokens" in (whole["data-tip"] or "")
    # A piece whose character is completed in the next cycle, by a different origin.
    assert "“語”" in (spans[3]["data-tip"] or "")


def test_whitespace_tokens_get_a_visible_muted_glyph() -> None:
    cycle = make_cycle(
        0,
        0,
        [draft(1, 0, " ", accepted=True), draft(2, 1, "\t", accepted=True)],
        ("\n\n", Origin.BONUS),
        Totals(3, 1, 2, 2, 2, 0.1, 0.0),
    )
    stream = render.stream_html([cycle])
    glyphs = re.findall(r'<span class="sv-(?:ws|nl)" aria-hidden="true">([^<]*)</span>', stream)
    assert glyphs == ["␣", "⇥", "↵", "↵"]
    assert "↵</span>\n" in stream  # the newline itself is kept
    cards = render.cycle_cards_html(cycle)
    assert cards.count('class="sv-ws"') == 2 and cards.count('class="sv-nl"') == 2
    # A token with words in it keeps its spaces as they are.
    assert "sv-ws" not in render.stream_html(sample_run()[:1]).split("sv-untested")[0]


def test_token_text_stays_escaped_in_markers_and_pieces() -> None:
    cycle = _ending_with("", '<img src=x onerror="alert(1)">')
    for markup in (render.stream_html([cycle]), render.cycle_cards_html(cycle)):
        assert "<img" not in markup
        # Only the tags the views write (the cards' Inspect button among them), none of the token's.
        allowed = {"div", "span", "b", "br", "button"}
        assert {tag for tag in re.findall(r"<(\w+)", markup)} <= allowed


def test_the_inspector_reads_tokens_the_same_way() -> None:
    cycle = _japanese()[0]
    table = inspector_html(cycle)
    assert "∅" not in table and "sv-piece" in table


def _declarations(selector: str) -> str:
    """Every declaration of the rules whose selector list names exactly `selector`."""
    css = re.sub(r"/\*.*?\*/", "", CSS.read_text(encoding="utf-8"), flags=re.S)
    found = []
    for selectors, body in re.findall(r"([^{}]+)\{([^{}]*)\}", css):
        if selector in [part.strip() for part in selectors.split(",")]:
            found.append(body)
    return "".join(found)


def test_rejected_and_resampled_differ_in_shape_not_only_hue() -> None:
    rejected, resampled = _declarations(".sv-rejected"), _declarations(".sv-resampled")
    assert "line-through" in rejected
    # The replacement is boxed in a solid border and bold: visible on a washed-out projector.
    assert re.search(r"(border|outline)[^;]*\bsolid\b", resampled)
    assert re.search(r"font-weight:\s*(bold|[6-9]00)", resampled)
    # The rejected guess is hollow (no fill) and dashed, so the two never read as one block.
    assert "dashed" in rejected and "background: transparent" in rejected
