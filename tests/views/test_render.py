"""specviz.views.run_html: hand-built events rendered to strings and compared (no browser, no model)."""

from __future__ import annotations

import re
from dataclasses import replace
from html import unescape
from html.parser import HTMLParser

from ui_events import REJECTION, XSS, XSS_IMG, sample_run

from specviz.core.events import Origin, TokenProb
from specviz.views import run_html as render


class _Tags(HTMLParser):
    """Collects (tag, attrs) for every start tag, so tests can count elements and read attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def _tags(markup: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = _Tags()
    parser.feed(markup)
    return parser.tags


def _token_spans(markup: str) -> list[dict[str, str | None]]:
    return [
        attrs
        for tag, attrs in _tags(markup)
        if tag == "span" and "sv-tok" in (attrs.get("class") or "").split()
    ]


def test_one_span_per_token_with_the_class_of_its_origin():
    spans = _token_spans(render.stream_html(sample_run()))
    classes = [span["class"].split()[1] for span in spans]
    # Cycle 1: 2 accepted, the rejected guess, the untested tail, the resampled replacement.
    # Cycle 2: 4 accepted and a bonus. Cycle 3: a rejected guess and its replacement.
    assert classes == [
        *["sv-accepted"] * 2, "sv-rejected", "sv-untested", "sv-resampled",
        *["sv-accepted"] * 4, "sv-bonus",
        "sv-rejected", "sv-resampled",
    ]  # fmt: skip
    assert [span["data-cycle"] for span in spans] == ["1"] * 5 + ["2"] * 5 + ["3"] * 2


def test_token_data_and_tooltip_carry_q_p_acceptance_u_cycle_and_position():
    rejected = _token_spans(render.stream_html(sample_run()))[2]
    assert rejected["data-origin"] == "rejected"
    assert (rejected["data-q"], rejected["data-p"]) == ("0.7000", "0.2000")
    assert rejected["data-accept"] == "0.2857"  # min(1, 0.2 / 0.7)
    assert rejected["data-u"] == "0.9300"
    assert rejected["data-pos"] == "3"
    tip = rejected["data-tip"]
    # The maths, then the same in words; probabilities to two significant figures.
    assert "q_draft = 0.70   p_target = 0.20" in tip
    assert "u = 0.93 ≥ min(1, p/q) = 0.29" in tip
    assert "rejected: the die showed 0.93, above the 0.29 chance of keeping it" in tip
    extras = [span["data-tip"] for span in _token_spans(render.stream_html(sample_run()))[4:10:5]]
    assert "resampled: drawn from what the target wanted beyond the draft" in extras[0]
    assert "bonus: every draft was kept" in extras[1] and "(p 0.42)" in extras[1]
    assert "cycle 1, draft position 3 of 4" in tip


def test_cycle_boundaries_are_marked():
    markup = render.stream_html(sample_run())
    assert re.findall(r'<span class="sv-cut" data-cycle="(\d+)"', markup) == ["1", "2", "3"]
    assert "token limit reached" in markup  # the last cycle finished the run


def test_token_text_is_escaped_in_elements_and_attributes():
    cycles = sample_run()
    for markup in (
        render.stream_html(cycles),
        render.cycle_cards_html(cycles[0]),
        render.rejection_caption(REJECTION, 1),
    ):
        assert "<script" not in markup and "<img" not in markup
        assert "&lt;img src=x onerror=alert(1)&gt;" in markup
    stream = render.stream_html(cycles)
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in stream
    # Parsed back, the attribute holds the original text and the page holds no injected tags.
    assert any(XSS in (span["data-tip"] or "") for span in _token_spans(stream))
    assert {tag for tag, _ in _tags(stream)} == {"div", "span"}


def test_quote_in_token_text_cannot_break_out_of_an_attribute():
    cycle = sample_run()[0]
    evil = '" onmouseover="alert(1)'
    drafted = (cycle.drafted[0].__class__(**{**cycle.drafted[0].__dict__, "text": evil}),)
    markup = render.cycle_tokens_html(cycle.__class__(**{**cycle.__dict__, "drafted": drafted}))
    assert all("onmouseover" not in attrs for _, attrs in _tags(markup))
    assert "&quot; onmouseover=&quot;alert(1)" in markup


def test_newlines_are_kept_and_made_visible():
    markup = render.stream_html(sample_run())
    assert '<span class="sv-nl" aria-hidden="true">↵</span>\n' in markup


def test_legend_names_every_origin_with_a_sample_of_its_style():
    legend = render.legend_html(include_target=True)
    for css, label in [
        ("sv-accepted", "accepted draft"),
        ("sv-rejected", "rejected draft"),
        ("sv-untested", "never tested"),
        ("sv-resampled", "resampled"),
        ("sv-bonus", "bonus"),
        ("sv-target", "plain decoding"),
    ]:
        assert f'<span class="sv-tok {css}">token</span><b>{label}</b>' in legend
    assert "cycle boundary" in legend


def test_cycle_cards_show_verdicts_bars_and_the_replacement():
    cards = render.cycle_cards_html(sample_run()[0])
    origins = re.findall(r'<div class="sv-card[^"]*" style="--i:\d+" data-origin="(\w+)"', cards)
    assert origins == ["accepted", "accepted", "rejected", "untested", "resampled"]
    assert 'style="width:75.0%"' in cards  # min(1, 0.6/0.8) for the accepted cards
    assert 'style="width:28.6%"' in cards  # the rejected card's acceptance probability
    assert 'style="left:93.0%"' in cards  # its u lies outside the bar: rejected
    # The tick is labelled, and each card says its verdict in words under the headline.
    assert '<span class="sv-bar-u-label">u = 0.93</span>' in cards
    assert "the die showed 0.93, above the 0.29 chance of keeping it" in cards
    assert "the die showed 0.10, below the 0.75 chance of keeping it" in cards
    assert "an earlier draft was rejected" in cards and "accept if" not in cards
    assert "q 0.70 · p 0.20<br>min(1, p/q) 0.29" in cards
    assert "rejected at draft 3" in cards and '<b class="sv-cards-new">3 new tokens</b>' in cards
    bonus = render.cycle_cards_html(sample_run()[1])
    assert "all accepted, plus a bonus token" in bonus and "★ bonus" in bonus
    assert "Press Run or Step" in render.cycle_cards_html(None)
    # A cycle cut short by the token limit emits its accepted drafts and no extra token.
    last = sample_run()[1]
    cut = replace(last, emitted=last.emitted[:4], finished=True, stop_reason="max_new_tokens")
    cards = render.cycle_cards_html(cut)
    assert "token limit was reached" in cards and "sv-card-extra" not in cards


def test_counters_show_the_running_totals():
    totals = sample_run()[-1].totals  # 9 tokens, 3 target passes, 6 of 8 accepted, 0.4 s
    counters = render.counters_html(totals, gamma_now=1)

    def value(key: str) -> str:
        match = re.search(rf'data-stat="{key}"><div class="sv-stat-value">([^<]+)<', counters)
        assert match, key
        return match.group(1)

    assert value("tokens") == "9"
    assert value("target_forwards") == "3"
    assert value("saved") == "6"
    assert value("draft") == "9"
    assert value("alpha") == "75%"
    assert value("tau") == "3.00"
    assert value("tps") == "22.5"
    assert value("gamma") == "1"
    assert "67% fewer passes than plain decoding" in counters


def test_empty_state_placeholders_are_escaped():
    assert "&lt;b&gt;" in render.stream_html([], placeholder="<b>")
    done = render.status_html("a & b", kind="done")
    assert 'class="sv-status sv-status-done" tabindex="0">a &amp; b<' in done
    assert XSS_IMG not in render.status_html(XSS_IMG)


def test_a_copied_token_says_so_and_points_at_its_source():
    # Cycle 3 (index 2) drafted " no" by prompt lookup, copied from context position 8 + 2 (the
    # prompt is context_len - new_tokens long): generated token 3, which the stream lights up.
    cycles = sample_run()
    last = cycles[2]
    prompt_len = last.context_len - last.totals.new_tokens
    copied = replace(last, drafter="lookup", copied_from=(prompt_len + 2,), greedy=False)
    html = render.stream_html([*cycles[:2], copied])
    span = _token_spans(html)[-2]
    assert span["data-from-seq"] == "2"
    assert "the 0.056 chance of keeping it (p itself: chosen by rule, q = 1)" in span["data-tip"]
    assert "copied from the generated text (token 3" in span["data-tip"]
    marks = [attrs for tag, attrs in _tags(html) if "sv-cut" in (attrs.get("class") or "")]
    assert [mark.get("data-drafter") for mark in marks] == [None, None, "lookup"]
    from_prompt = replace(copied, copied_from=(prompt_len - 1,))
    tip = _token_spans(render.stream_html([from_prompt]))[-2]["data-tip"]
    assert f"copied from the prompt (its token {prompt_len})" in tip
    # A guessed token has none of it.
    assert "data-from-seq" not in _token_spans(render.stream_html(cycles))[-2]


# --- greedy and never-tested tokens say what the inspector says --------------------------


def _greedy_run() -> list:
    """sample_run's first cycle in greedy mode, as the engine records it: min(1, p/q) is not the
    rule (accept_prob is 1 where the argmaxes match, else 0) and no u is drawn."""
    cycle = sample_run()[0]
    top = (TokenProb(7, " dog", 0.517), TokenProb(1023, " cat", 0.013))
    drafted = tuple(
        replace(token, accept_prob=1.0 if token.accepted else 0.0, uniform=None, top_p=top)
        for token in cycle.drafted
    )
    # Greedy, the token in the rejected draft's place is the target's top choice.
    emitted = tuple(
        replace(token, text=" dog") if token.origin is Origin.RESAMPLED else token
        for token in cycle.emitted
    )
    return [replace(cycle, greedy=True, drafted=drafted, emitted=emitted)]


def test_greedy_tooltips_show_the_argmax_rule_not_min_p_over_q():
    spans = _token_spans(render.stream_html(_greedy_run()))
    accepted, rejected, untested = spans[0]["data-tip"], spans[2]["data-tip"], spans[3]["data-tip"]
    for tip in (accepted, rejected, untested):
        assert "min(1, p/q)" not in tip and "0.000" not in tip
    assert "rejected: the target's top choice is “ dog”" in rejected  # the inspector's words
    assert "accepted: it is the target's top choice" in accepted
    assert "never tested: an earlier draft was rejected" in untested
    assert spans[2]["data-accept"] == "—" and spans[3]["data-accept"] == "—"


def test_greedy_cards_show_no_acceptance_probability():
    cards = render.cycle_cards_html(_greedy_run()[0])
    assert "min(1, p/q)" not in cards and "sv-bar-fill" not in cards
    words = unescape(cards)
    assert "the target's top choice is “ dog”" in words and "it is the target's top choice" in words


def test_a_never_tested_token_shows_no_number_to_beat():
    untested = _token_spans(render.stream_html(sample_run()))[3]
    assert "min(1, p/q)" not in untested["data-tip"]
    assert "never tested: an earlier draft was rejected" in untested["data-tip"]
    assert untested["data-accept"] == "—"
    card = render.cycle_cards_html(sample_run()[0]).split('data-origin="untested"')[1]
    assert "min(1, p/q)" not in card.split('data-origin="resampled"')[0]


def test_the_cards_and_the_stream_carry_what_the_linked_views_match():
    """The page outlines the card of a hovered token (same cycle, origin and position) and lights
    the accepted-length bar of its cycle; the cards open the inspector on their own button."""
    run = sample_run()
    stream = render.stream_html(run)
    assert re.findall(
        r'<span class="sv-cycle" data-cycle="(\d)" data-accepted="(\d)">', stream
    ) == [
        ("1", "2"),
        ("2", "4"),
        ("3", "0"),
    ]
    cards = render.cycle_cards_html(run[0])
    cards_at = [
        (attrs.get("data-origin"), attrs.get("data-pos"))
        for tag, attrs in _tags(cards)
        if tag == "div" and "sv-card" in (attrs.get("class") or "").split()
    ]
    tokens = [(attrs["data-origin"], attrs["data-pos"]) for attrs in _token_spans(stream)][:5]
    # Every token of the cycle has exactly one card: the resampled token's position is the
    # rejected guess's, and the origin tells them apart.
    assert (
        cards_at
        == tokens
        == [
            ("accepted", "1"),
            ("accepted", "2"),
            ("rejected", "3"),
            ("untested", "4"),
            ("resampled", "3"),
        ]
    )
    buttons = [attrs for tag, attrs in _tags(cards) if tag == "button"]
    assert buttons == [{"type": "button", "class": "sv-inspect-open", "data-cycle": "1"}]
    assert ">Inspect this cycle</button>" in cards
    assert "インスペクターで詳しく見る</button>" in render.cycle_cards_html(run[0], lang="ja")
    assert "<button" not in render.cycle_cards_html(None)  # nothing to inspect yet
