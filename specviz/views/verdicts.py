"""Why each token of a cycle is where it is, in one sentence: its verdict, then the reason.

A sampled draft x is kept when the die u ~ U(0, 1) falls below min(1, p(x)/q(x)) (Leviathan et al.
2023, Algorithm 1), so its sentence names both numbers: "rejected: the die showed 0.86, above the
0.63 chance of keeping it". A draft the target rates at least as high as the drafter (p ≥ q) is
kept whatever the die shows; a draft chosen by rule (a copy, q = 1) has p itself as its chance. A
tree verified from its leaves up tests a whole path with one die, so its chance is the path's. In
greedy mode there is no die: a draft is kept while it is the target's top choice. A draft after
the first rejection is never tested. The token that closes a cycle is the resampled replacement,
drawn from norm(max(0, p − q)), or the bonus token from p, each with its probability.

``draft_verdict`` and ``extra_verdict`` give a ``Verdict`` (catalogue phrases, no language yet):
the cards show its reason under their own headline, the stream's tooltips, the inspector and the
CSV export its whole ``text``. The numbers are ``numbers.prob``'s, and the die and the chance it
is compared with always read unequal (``numbers.prob_pair``); the fable tells the same numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

from specviz.core.events import Cycle, DraftToken, EmittedToken, Origin
from specviz.drafters.registry import find_drafter
from specviz.text import DEFAULT_LANGUAGE, Phrase, t
from specviz.views.numbers import NO_VALUE, prob, prob_pair
from specviz.views.token_text import quoted


@dataclass(frozen=True)
class Verdict:
    """A token's verdict ("accepted") and its reason ("the die showed 0.42, below ..."), worded
    in a language by ``text``."""

    verdict: Phrase
    reason: Phrase

    def text(self, lang: str = DEFAULT_LANGUAGE) -> str:
        """The whole sentence: "accepted: the die showed 0.42, below the 0.63 chance ..."."""
        return t("verdict.sentence", lang, verdict=self.verdict, reason=self.reason)


def decided_by_path(cycle: Cycle) -> bool:
    """Whether the cycle's tree was verified from its leaves up (specviz.core.tree_traversal):
    a tested guess's chance is then that of keeping the whole path down to it, not min(1, p/q),
    and the guesses of the kept path share the one test that kept them."""
    return cycle.tree is not None and cycle.tree.from_leaves


def has_dice_roll(cycle: Cycle, token: DraftToken) -> bool:
    """Whether min(1, p/q) decided the token: a sampled cycle's tested draft. Greedy keeps a
    draft when it is the target's argmax, and an untested draft was never judged."""
    return token.tested and not cycle.greedy


def dice_numbers(token: DraftToken) -> tuple[str, str]:
    """(u, min(1, p/q)) as the sentence, the card and the fable print them: never equal-looking
    unless equal."""
    if token.uniform is None:
        return NO_VALUE, prob(token.accept_prob)
    return prob_pair(token.uniform, token.accept_prob)


def accept_text(cycle: Cycle, token: DraftToken) -> str:
    """min(1, p/q) where it decided the token (as the sentence prints it), a dash where not."""
    return dice_numbers(token)[1] if has_dice_roll(cycle, token) else NO_VALUE


def math_text(cycle: Cycle, token: DraftToken, lang: str = DEFAULT_LANGUAGE) -> str:
    """The comparison that decided a sampled draft, in symbols: "u = 0.93 ≥ min(1, p/q) = 0.29"
    (the path's chance where the tree was verified from its leaves up)."""
    u, accept = dice_numbers(token)
    if decided_by_path(cycle):
        key = "verdict.math.path_below" if token.accepted else "verdict.math.path_above"
    else:
        key = "verdict.math.below" if token.accepted else "verdict.math.above"
    return t(key, lang, u=u, accept=accept)


def chance_text(cycle: Cycle, token: DraftToken, lang: str = DEFAULT_LANGUAGE) -> str:
    """The card's line under the bar: min(1, p/q), or the path's chance, where a die decided."""
    key = "card.path_prob" if decided_by_path(cycle) else "card.accept_prob"
    return t(key, lang, accept=accept_text(cycle, token))


def drafted_by_rule(cycle: Cycle) -> bool:
    """Whether the cycle's drafts were chosen by rule (q = 1, so the chance of keeping is p)."""
    entry = find_drafter(cycle.drafter)
    return cycle.copied_from is not None or (entry is not None and entry.drafts.chooses)


def greedy_choice(cycle: Cycle, token: DraftToken) -> tuple[str, str] | None:
    """(text, special) of the target's own choice where a greedy cycle rejected *token*: the token
    the cycle emitted at its place. Not the first of ``top_p``: two tokens can tie in p (bfloat16
    often rounds them equal), and the argmax the engine took need not be the one listed first."""
    for emitted in cycle.emitted:
        if emitted.seq_index == token.seq_index:
            return emitted.text, emitted.special
    if token.top_p:
        return token.top_p[0].text, ""
    return None


def draft_verdict(cycle: Cycle, token: DraftToken) -> Verdict:
    """Why this drafted token was accepted, rejected or never tested."""
    if not token.tested:
        return Verdict(Phrase("verdict.untested"), Phrase("verdict.reason.untested"))
    word = Phrase("verdict.accepted") if token.accepted else Phrase("verdict.rejected")
    if cycle.greedy:
        if token.accepted:
            return Verdict(word, Phrase("verdict.reason.greedy_top"))
        choice = greedy_choice(cycle, token)
        top = quoted(choice[1] or choice[0]) if choice is not None else "?"
        return Verdict(word, Phrase("verdict.reason.greedy_other", top=top))
    if decided_by_path(cycle):
        u, accept = dice_numbers(token)
        if token.accepted and token.accept_prob >= 1.0:
            return Verdict(word, Phrase("verdict.reason.path_always", accept=accept))
        key = "verdict.reason.path_below" if token.accepted else "verdict.reason.path_above"
        return Verdict(word, Phrase(key, u=u, accept=accept))
    if token.accepted and token.accept_prob >= 1.0:  # p ≥ q: kept whatever the die shows
        p, q = prob(token.p_target), prob(token.q_draft)
        return Verdict(word, Phrase("verdict.reason.always", p=p, q=q))
    u, accept = dice_numbers(token)
    if drafted_by_rule(cycle):
        key = "verdict.reason.rule_below" if token.accepted else "verdict.reason.rule_above"
        return Verdict(word, Phrase(key, u=u, accept=accept))
    key = "verdict.reason.below" if token.accepted else "verdict.reason.above"
    return Verdict(word, Phrase(key, u=u, accept=accept))


def extra_verdict(cycle: Cycle, token: EmittedToken) -> Verdict:
    """Where the resampled or bonus token that closes the cycle came from, with its probability."""
    chance = prob(token.prob)
    if token.origin is Origin.RESAMPLED:
        key = "verdict.reason.resampled_greedy" if cycle.greedy else "verdict.reason.residual"
        return Verdict(Phrase("verdict.resampled"), Phrase(key, prob=chance))
    key = "verdict.reason.bonus" if cycle.drafted else "verdict.reason.alone"
    return Verdict(Phrase("verdict.bonus"), Phrase(key, prob=chance))


def draft_sentence(cycle: Cycle, token: DraftToken, lang: str = DEFAULT_LANGUAGE) -> str:
    """The drafted token's verdict as one sentence in ``lang``."""
    return draft_verdict(cycle, token).text(lang)
