"""Every cycle card says why its draft is shorter than γ, from the cycle's own records."""

from __future__ import annotations

import math
from html import unescape

import pytest
import torch
from tiny_models import TinyPair

from specviz.core.engine import GenerationSettings, speculative_generate
from specviz.core.events import Cycle
from specviz.drafters.registry import make_drafter
from specviz.views.draft_length import cumulative_factors, drafted_words, short_draft_reason
from specviz.views.numbers import prob
from specviz.views.run_html import cycle_cards_html

PROMPT = torch.tensor([list(b"def fib(n):")])


def run(pair: TinyPair, drafter: str = "draft-model", **settings: float) -> list[Cycle]:
    chosen = GenerationSettings(
        **{"gamma": 5, "temperature": 1.0, "max_new_tokens": 40, "stop_on_eos": False, **settings}
    )
    return list(speculative_generate(pair, PROMPT, chosen, make_drafter(drafter, pair)))


def card_text(cycle: Cycle) -> str:
    return unescape(cycle_cards_html(cycle))


def test_the_card_names_the_per_token_stop_and_the_guess_below_it(tiny_pair: TinyPair) -> None:
    cycle = next(c for c in run(tiny_pair, draft_stop_below=0.9) if c.draft_end == "confidence")
    assert (cycle.draft_gamma, cycle.draft_stop_below) == (5, 0.9)
    last = cycle.drafted[-1]
    assert last.q_draft < 0.9
    text = card_text(cycle)
    assert f"drafted {len(cycle.drafted)} of γ = 5: the draft gave its guess" in text
    assert f"q = {prob(last.q_draft)}, below the 0.9 stop" in text


def test_the_card_names_the_cumulative_stop_and_the_estimate_that_fell(
    tiny_pair: TinyPair,
) -> None:
    cycle = next(
        c for c in run(tiny_pair, draft_stop_cumulative=0.5) if c.draft_end == "cumulative"
    )
    total = math.prod(cumulative_factors(cycle))
    assert total < 0.5
    text = card_text(cycle)
    assert f"drafted {len(cycle.drafted)} of γ = 5" in text
    assert f"fell to {prob(total)}, below the 0.5 cumulative stop" in text


def test_the_card_says_the_token_budget_cut_the_draft(tiny_pair: TinyPair) -> None:
    first = run(tiny_pair, gamma=8, max_new_tokens=4)[0]
    assert first.draft_end == "budget" and len(first.drafted) == 3  # room for 3 drafts + 1
    assert "drafted 3 of γ = 8: only that many tokens were left" in card_text(first)


def test_the_card_says_when_the_lookup_found_nothing_to_copy(tiny_pair: TinyPair) -> None:
    cycle = next(c for c in run(tiny_pair, "lookup") if c.draft_end == "no_match")
    assert "drafted 0 of γ = 5: the lookup found nothing earlier to copy" in card_text(cycle)


def test_a_full_draft_has_no_reason_line(tiny_pair: TinyPair) -> None:
    cycle = next(c for c in run(tiny_pair) if c.draft_end == "gamma")
    assert short_draft_reason(cycle) == "" and drafted_words(cycle) == "drafted γ = 5"
    assert "sv-cards-why" not in cycle_cards_html(cycle)


@pytest.mark.parametrize("lang", ["en"])
def test_reason_words_come_from_the_catalogue_in_the_language_given(
    tiny_pair: TinyPair, lang: str
) -> None:
    cycle = next(c for c in run(tiny_pair, draft_stop_below=0.9) if c.draft_end == "confidence")
    assert short_draft_reason(cycle, lang) in unescape(cycle_cards_html(cycle, lang=lang))
