"""How firm a raced speedup is: firm, indicative or inconclusive, and the words that say why.

A ratio of two measured speeds can mislead in three ways, and the spread of the repeats shows
only one of them:

- too few tokens. Each run's time includes the first pass that reads the prompt (a 128-token
  read costs 2 to 7 one-token target steps on the CPUs in docs/performance.md) and a handful of
  cycles whose luck decides τ. Greedy repeats decode the very same tokens, so their spread shows
  the clock's noise but never how representative those few cycles were: only more tokens do.
- repeats that scatter, measured by the spread of the paired ratios (`Spread.relative`), and
  repeats that disagree on which lane is faster (some ratios below 1, some above).
- other programs on the CPU (`specviz.models.cpu_load.OthersShare`): they slow every lane and
  make the timings jumpy; interleaving evens the drift out only in part.

The rule (`judge`), from the fewest new tokens any compared run made, the speedup's spread and
the CPU share other programs took:

- inconclusive: fewer than MIN_TOKENS tokens, or the repeats disagree on which is faster. No
  ranking is drawn; the refusal says what would give one.
- firm: at least FIRM_TOKENS tokens, at least FIRM_REPEATS repeats whose ratios' range is at
  most FIRM_SPREAD of their centre, and other programs took at most BUSY_SHARE of the CPU. A load
  that could not be measured (no /proc/stat) does not stop a firm result; the words say so.
- indicative: everything in between.

The labs and the advisor judge their findings by the same rule (`judge_lab`: the same
thresholds, worded for a measurement rather than a race; a ranking by α, which repeats on both
sides of 1 do not unsettle, can leave that test out), a verification-cost curve by its repeated
forwards (`judge_forward_times`), and a finding drawn from several measurements (a ranking, a
recommendation) is as firm as the weakest of them (`weakest`).

Pure and torch-free: the race's records, the labs, their views and the exports call it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum

from specviz.measure.spread import DEFAULT_REPEATS, NOISY_SPREAD, Spread
from specviz.models.cpu_load import BUSY_SHARE
from specviz.text import Joined, Phrase

__all__ = [
    "BUSY_SHARE",
    "FIRM_REPEATS",
    "FIRM_SPREAD",
    "FIRM_TOKENS",
    "MIN_SIZES",
    "MIN_TOKENS",
    "Firmness",
    "Judgement",
    "judge",
    "judge_forward_times",
    "judge_lab",
    "weakest",
]

# Below this many new tokens a run is about ten cycles or fewer (τ ≈ 3), so one cycle more or
# less moves its time by 10 % or more, and reading a 128-token prompt (up to 7 target steps) is
# a fifth or more of plain decoding's time, pulling every ratio towards 1: no ranking.
MIN_TOKENS = 32
# From here one cycle is 2–3 % of a run and the prompt's read at most about 5 % of plain
# decoding's time; it is also the app's default max_new_tokens, so a default race can be firm.
FIRM_TOKENS = 128
# The median of three resists one disturbed run; of two it is their mean, and one run is no spread.
FIRM_REPEATS = DEFAULT_REPEATS
# Repeats scattered past the noise threshold: more than the differences between drafters.
FIRM_SPREAD = NOISY_SPREAD
# A cost curve of one size is no curve: the speedup model then assumes verification is free.
MIN_SIZES = 2


@dataclass(frozen=True)
class _Words:
    """The keys of the facts and refusal that name what was measured: a race or a lab."""

    one_run: Phrase
    busy: str
    crosses: str


_RACE = _Words(Phrase("firmness.one_run"), "firmness.load.busy", "firmness.refuse.crosses")
_LAB = _Words(
    Phrase("firmness.lab.one_run", firm=FIRM_REPEATS),
    "firmness.lab.load.busy",
    "firmness.lab.refuse.crosses",
)


class Firmness(Enum):
    """How far a measured speedup can be trusted."""

    FIRM = "firm"
    INDICATIVE = "indicative"  # a direction to read with care
    INCONCLUSIVE = "inconclusive"  # no ranking can be drawn from it

    @property
    def label(self) -> Phrase:
        """The level in one word."""
        return _LABELS[self]


_LABELS = {
    Firmness.FIRM: Phrase("firmness.firm"),
    Firmness.INDICATIVE: Phrase("firmness.indicative"),
    Firmness.INCONCLUSIVE: Phrase("firmness.inconclusive"),
}


@dataclass(frozen=True)
class Judgement:
    """A speedup's firmness, with what was measured in words."""

    level: Firmness
    # One short clause each: the tokens, the repeats and their spread, the CPU load.
    facts: tuple[Phrase, ...]
    refusal: Phrase | None  # inconclusive: the sentence shown instead of a ranking
    busy: bool  # other programs took more than BUSY_SHARE of the CPU

    @property
    def label(self) -> Phrase:
        return self.level.label

    @property
    def why(self) -> Joined:
        """The facts as one clause list: "24 tokens a run (firm from 128); one raced run…"."""
        return Joined("firmness.separator", self.facts)

    @property
    def line(self) -> Phrase:
        """The level and why in one sentence."""
        return Phrase("firmness.line", label=self.label, why=self.why)

    @property
    def conclusive(self) -> bool:
        return self.level is not Firmness.INCONCLUSIVE


def judge(tokens: int, speedup: Spread, others_share: float | None) -> Judgement:
    """The firmness of *speedup* (its centre and the range of the paired repeats' ratios),
    measured over runs of at least *tokens* new tokens each while other programs took
    *others_share* of the CPU (None: not measured)."""
    return _judge(tokens, speedup, others_share, _RACE, against_plain=True)


def judge_lab(
    tokens: int, speedup: Spread, others_share: float | None, *, against_plain: bool = True
) -> Judgement:
    """`judge` for a lab's measurement, worded for it. With *against_plain* False the finding is
    a ranking by a count (α), not whether speculation beats plain decoding, so repeats whose
    speedups lie on both sides of 1 do not refuse it; their spread still counts."""
    return _judge(tokens, speedup, others_share, _LAB, against_plain=against_plain)


def judge_forward_times(sizes: int, times: Spread, others_share: float | None) -> Judgement:
    """The firmness of a verification-cost curve of *sizes* sizes, *times* being a typical size's
    repeated forward times: inconclusive below MIN_SIZES (no curve to fit); firm with at least
    FIRM_REPEATS repeats within FIRM_SPREAD and a quiet CPU; indicative otherwise."""
    busy = others_share is not None and others_share > BUSY_SHARE
    facts = (
        Phrase("firmness.sizes", sizes=sizes),
        *_spread_facts(times, False, _LAB, wide="firmness.times.wide"),
        _load_fact(others_share, _LAB),
    )
    refusal = Phrase("firmness.refuse.sizes", least=MIN_SIZES) if sizes < MIN_SIZES else None
    firm = times.count >= FIRM_REPEATS and times.relative <= FIRM_SPREAD and not busy
    return Judgement(_level(refusal, firm), facts, refusal, busy)


def weakest(judgements: Iterable[Judgement]) -> Judgement | None:
    """The least firm of *judgements* (the first among equals), None for none: a finding drawn
    from several measurements is as firm as the weakest it rests on."""
    order = {Firmness.INCONCLUSIVE: 0, Firmness.INDICATIVE: 1, Firmness.FIRM: 2}
    return min(judgements, key=lambda judgement: order[judgement.level], default=None)


def _judge(
    tokens: int, speedup: Spread, others_share: float | None, words: _Words, *, against_plain: bool
) -> Judgement:
    crosses = against_plain and speedup.count > 1 and speedup.low < 1 < speedup.high
    busy = others_share is not None and others_share > BUSY_SHARE
    facts = (
        _tokens_fact(tokens),
        *_spread_facts(speedup, crosses, words),
        _load_fact(others_share, words),
    )
    refusal = None
    if tokens < MIN_TOKENS:
        refusal = Phrase(
            "firmness.refuse.tokens", least=MIN_TOKENS, firm=FIRM_TOKENS, tokens=tokens
        )
    elif crosses:
        refusal = Phrase(words.crosses)
    firm = (
        tokens >= FIRM_TOKENS
        and speedup.count >= FIRM_REPEATS
        and speedup.relative <= FIRM_SPREAD
        and not busy
    )
    return Judgement(_level(refusal, firm), facts, refusal, busy)


def _level(refusal: Phrase | None, firm: bool) -> Firmness:
    if refusal is not None:
        return Firmness.INCONCLUSIVE
    return Firmness.FIRM if firm else Firmness.INDICATIVE


def _tokens_fact(tokens: int) -> Phrase:
    if tokens < MIN_TOKENS:
        return Phrase("firmness.tokens.few", tokens=tokens, least=MIN_TOKENS)
    if tokens < FIRM_TOKENS:
        return Phrase("firmness.tokens.short", tokens=tokens, firm=FIRM_TOKENS)
    return Phrase("firmness.tokens.enough", tokens=tokens)


def _spread_facts(
    speedup: Spread, crosses: bool, words: _Words, wide: str = "firmness.spread.wide"
) -> tuple[Phrase, ...]:
    if speedup.count < 2:
        return (words.one_run,)
    spread = _percent(speedup.relative, FIRM_SPREAD)
    limit = f"{100 * FIRM_SPREAD:.0f}"
    facts = []
    if speedup.count < FIRM_REPEATS:
        facts.append(Phrase("firmness.repeats.few", repeats=speedup.count, firm=FIRM_REPEATS))
    if speedup.relative > FIRM_SPREAD:
        facts.append(Phrase(wide, percent=spread, limit=limit))
    else:
        facts.append(Phrase("firmness.spread.narrow", repeats=speedup.count, percent=spread))
    if crosses:
        facts.append(Phrase("firmness.spread.crosses"))
    return tuple(facts)


def _load_fact(others_share: float | None, words: _Words = _RACE) -> Phrase:
    if others_share is None:
        return Phrase("firmness.load.unknown")
    percent = _percent(others_share, BUSY_SHARE)
    if others_share > BUSY_SHARE:
        return Phrase(words.busy, percent=percent, limit=f"{100 * BUSY_SHARE:.0f}")
    return Phrase("firmness.load.quiet", percent=percent)


def _percent(value: float, limit: float) -> str:
    """*value* as a whole percent, with a decimal where that would read as *limit* while being
    on the other side of it (15.3 % against a 15 % limit)."""
    whole = f"{100 * value:.0f}"
    if whole == f"{100 * limit:.0f}" and value != limit:
        return f"{100 * value:.1f}"
    return whole
