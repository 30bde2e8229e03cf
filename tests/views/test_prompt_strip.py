"""specviz.views.prompt_strip: the prompt as tokens, where a copying drafter's copies come from.

Rendered to strings and compared (no browser); the session that carries the prompt's tokens runs
on the tiny pair. The browser check (hovering a copy lights its source here) is in
test_browser_copy.py.
"""

from __future__ import annotations

from dataclasses import replace
from html.parser import HTMLParser
from types import SimpleNamespace

import pytest
from hosted_fixtures import TinyCache
from tiny_models import ByteTokenizer
from ui_events import XSS, XSS_IMG, sample_run

from specviz.app.gpu_work import Runs
from specviz.app.session import App, Session, prompt_tokens
from specviz.models.presets import load_presets
from specviz.views import run_html as render
from specviz.views.prompt_strip import prompt_strip_html

PROMPT_LEN = 21  # sample_run's prompt: context_len - new_tokens

# The chat template's opening, as Qwen's tokenizer reads it: a control token, then text.
CHAT = (("", "<|im_start|>"), ("user", ""), ("\n", ""), ("Fix", ""), (" this", ""))


class _Tags(HTMLParser):
    """(tag, attrs) for every start tag, and the text of the whole markup."""

    def __init__(self, markup: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.feed(markup)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _tokens(markup: str) -> list[dict[str, str | None]]:
    """The attributes of every token span."""
    return [
        attrs
        for tag, attrs in _Tags(markup).tags
        if tag == "span" and "sv-tok" in (attrs.get("class") or "").split()
    ]


def test_each_prompt_token_counts_back_from_the_prompts_end() -> None:
    markup = prompt_strip_html(CHAT)
    spans = _tokens(markup)
    assert [span["data-seq"] for span in spans] == ["-5", "-4", "-3", "-2", "-1"]
    assert all("sv-prompt-tok" in (span["class"] or "") for span in spans)
    assert "tabindex" not in spans[0]  # a long prompt adds no stops to the keyboard's path
    # The chat marker reads as the stream's control tokens do: a small marker, named on hover.
    assert "sv-special" in (spans[0]["class"] or "")
    assert "start of turn" in markup and "<|im_start|>" in (spans[0]["title"] or "")
    assert "prompt token 2 of 5" in (spans[1]["title"] or "")
    assert markup.startswith('<details class="sv-prompt-strip" open data-tokens="5">')
    assert "Prompt, as the target reads it (5 tokens)" in markup


def test_no_prompt_no_strip() -> None:
    assert prompt_strip_html(()) == ""


def test_prompt_text_is_escaped_in_elements_and_titles() -> None:
    markup = prompt_strip_html(((XSS, ""), (XSS_IMG, ""), ('" onmouseover="alert(1)', "")))
    tags = _Tags(markup)
    assert not [tag for tag, _ in tags.tags if tag in ("script", "img")]
    assert all(set(attrs) <= {"class", "data-seq", "title"} for _, attrs in tags.tags[2:])
    assert "&lt;script&gt;" in markup
    assert "".join(tags.text).count(XSS) == 1  # shown as text, once
    spans = _tokens(markup)
    assert XSS in (spans[0]["title"] or "") and "onmouseover" not in spans[2]


def test_a_character_split_over_byte_tokens_is_decoded_whole() -> None:
    # "日本" is six byte tokens: each character's first two add "" and its third writes it.
    pieces = prompt_tokens(ByteTokenizer(), list("日本".encode()))
    assert pieces == (("", ""), ("", ""), ("日", ""), ("", ""), ("", ""), ("本", ""))
    spans = _tokens(prompt_strip_html(pieces))
    assert ["sv-piece" in (span["class"] or "") for span in spans] == [True, True, False] * 2
    assert "sv-joined" in (spans[2]["class"] or "")
    assert "“日”" in (spans[0]["title"] or "")  # a piece's title says which character it begins


class ChatTokenizer(ByteTokenizer):
    """The byte tokenizer plus a chat marker that is special only among the added tokens, as
    Qwen's <|im_start|> is (its all_special_ids lists the end-of-text tokens alone)."""

    START = 257
    added_tokens_decoder = {START: SimpleNamespace(content="<|im_start|>", special=True)}  # noqa: RUF012

    def decode(self, token_ids: list[int], skip_special_tokens: bool = False) -> str:
        text = super().decode([i for i in token_ids if i != self.START], skip_special_tokens)
        return text if self.START not in token_ids else "<|im_start|>" + text


def test_a_chat_marker_among_the_added_tokens_is_a_control_token() -> None:
    start = ChatTokenizer.START
    pieces = prompt_tokens(ChatTokenizer(), [start, *b"user\n", ord("A")])
    assert pieces[0] == ("", "<|im_start|>")
    assert "".join(text for text, _ in pieces) == "user\nA"


def test_a_copy_from_the_prompt_points_at_its_source_in_the_strip() -> None:
    # Cycle 2 (index 1) accepted four drafts: say prompt lookup copied the prompt's last four.
    cycles = sample_run()
    copied = replace(
        cycles[1], drafter="lookup", copied_from=tuple(range(PROMPT_LEN - 4, PROMPT_LEN))
    )
    stream = render.stream_html([cycles[0], copied], prompt_shown=True)
    copies = [span for span in _tokens(stream) if "data-from-seq" in span]
    assert [span["data-from-seq"] for span in copies] == ["-4", "-3", "-2", "-1"]
    assert {span["data-from-span"] for span in copies} == {"-4 -3 -2 -1"}
    assert "copied from the prompt (its token 18, lit up above)" in (copies[0]["data-tip"] or "")
    # Every source the copy names is a token of the strip.
    strip = prompt_strip_html(tuple((f"t{i}", "") for i in range(PROMPT_LEN)))
    seqs = {span["data-seq"] for span in _tokens(strip)}
    assert {seq for span in copies for seq in (span["data-from-span"] or "").split()} <= seqs
    # Without the strip on the page (a replayed trace) the tooltip does not point above.
    tip = _tokens(render.stream_html([copied]))[0]["data-tip"] or ""
    assert "copied from the prompt (its token 18)" in tip and "above" not in tip


@pytest.mark.parametrize(
    ("drafter", "shown"), [("lookup", True), ("hybrid:max_ngram=3", True), ("draft-model", False)]
)
def test_the_session_carries_the_prompt_for_a_copying_drafter_only(
    drafter: str, shown: bool
) -> None:
    presets = load_presets()
    app = App(presets, TinyCache())  # type: ignore[arg-type]
    preset = next(iter(presets))
    inputs = app.checks.inputs(preset, "fix <b>this</b>", {}, chat=False, drafter=drafter)
    sess = Session()
    started = Runs(app, remote=False).begin(sess, inputs)  # as Run begins it
    assert sess.prompt == started.prompt
    if shown:
        assert "".join(text for text, _ in sess.prompt) == "fix <b>this</b>"
        assert len(sess.prompt) == started.setup.prompt_tokens
    else:
        assert sess.prompt == ()
