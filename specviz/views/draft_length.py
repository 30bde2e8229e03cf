"""Why a cycle's draft is as long as it is, in words, from the cycle's own record.

A draft ends before γ for one of a few reasons (``Cycle.draft_end``): a confidence stop, the
cumulative stop, a drafted end of text, the token budget, or, for prompt lookup, no match or the
end of the copied text. ``drafted_words`` says "drafted 1 of γ = 5" and ``short_draft_reason``
"the draft gave its guess “x” q = 0.043, below the 0.3 stop"; the cycle card shows both, the
inspector its longer sentence built on ``cumulative_factors``.
"""

from __future__ import annotations

import math

from specviz.core.events import Cycle, scaled_confidence
from specviz.text import DEFAULT_LANGUAGE, t
from specviz.views.numbers import prob
from specviz.views.token_text import quoted


def cumulative_factors(cycle: Cycle) -> list[float]:
    """The cumulative stop's factors 1 − scale × (1 − max q), one per drafted guess with a q."""
    scale = cycle.draft_doubt_scale
    return [scaled_confidence(token.top_q[0].prob, scale) for token in cycle.drafted if token.top_q]


def is_short(cycle: Cycle) -> bool:
    """Whether the draft ended before the γ it was allowed (for a reason worth telling)."""
    return cycle.draft_end != "gamma"


def drafted_words(cycle: Cycle, lang: str = DEFAULT_LANGUAGE) -> str:
    """ "drafted γ = 5", or "drafted 1 of γ = 5" when the draft ended early; for a tree,
    "drafted a tree of 16 guesses"."""
    count = len(cycle.drafted)
    if cycle.tree is not None:
        return t("cards.drafted_tree", lang, nodes=len(cycle.tree.nodes))
    if is_short(cycle) and cycle.draft_gamma > 0:
        return t("cards.drafted_of", lang, n=count, gamma=cycle.draft_gamma)
    return t("cards.drafted", lang, gamma=count)


def draft_end_values(cycle: Cycle) -> dict[str, str]:
    """The numbers that say why the draft ended where it did: the guess, its q and the stop for
    the confidence stop, the estimate and the stop for the cumulative stop, none otherwise."""
    end, last = cycle.draft_end, cycle.drafted[-1] if cycle.drafted else None
    if end == "confidence" and last is not None:
        token, q = quoted(last.text), prob(last.q_draft)
        return {"token": token, "q": q, "stop": f"{cycle.draft_stop_below:g}"}
    if end == "cumulative":
        total = prob(math.prod(cumulative_factors(cycle)))
        return {"total": total, "stop": f"{cycle.draft_stop_cumulative:g}"}
    return {}


# The card's clause for each reason a draft ends before γ (Cycle.draft_end).
_CARD_REASONS = {
    "confidence": "cards.end.confidence",
    "cumulative": "cards.end.cumulative",
    "eos": "cards.end.eos",
    "budget": "cards.end.budget",
    "text_end": "cards.end.text_end",
    "no_match": "cards.end.no_match",
    "prefill": "cards.end.prefill",
}


def short_draft_reason(cycle: Cycle, lang: str = DEFAULT_LANGUAGE) -> str:
    """Why the draft ended before γ, as a clause; "" when it reached γ."""
    if not is_short(cycle):
        return ""
    key = _CARD_REASONS.get(cycle.draft_end)
    values = draft_end_values(cycle)
    if key is None or (cycle.draft_end == "confidence" and not values):
        return cycle.draft_end
    return t(key, lang, **values)
