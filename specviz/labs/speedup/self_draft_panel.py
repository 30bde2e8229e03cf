"""The self-drafting lab's result in words and tables: Medusa's acceptance per head with the
cumulative reach it gives, or lookahead's passes by accepted n-gram length, then what a pass
sends and costs, and the predicted speedup beside the measured one.

Pure: a SelfDraftLab in, rows of plain text (the CLI prints them) or escaped HTML out.
"""

from __future__ import annotations

from specviz.labs.speedup.heads_theory import HeadsTheory
from specviz.labs.speedup.ngram_theory import NgramTheory
from specviz.labs.speedup.self_draft_lab import SelfDraftLab
from specviz.text import DEFAULT_LANGUAGE, t
from specviz.views.panels import panel_html, table_html

HEADS_HEADERS = (
    "self_draft.heads.column.head",
    "self_draft.heads.column.reached",
    "self_draft.heads.column.kept",
    "self_draft.heads.column.alpha",
    "self_draft.heads.column.first",
    "self_draft.heads.column.reach",
)
NGRAM_HEADERS = (
    "self_draft.ngrams.column.length",
    "self_draft.ngrams.column.passes",
    "self_draft.ngrams.column.share",
    "self_draft.ngrams.column.guess",
)


def heads_rows(theory: HeadsTheory) -> list[list[str]]:
    """Per head: its chances, its successes, α_d, the share kept with its first guess, and the
    model's chance Π_{k≤d} α_k that a pass reaches its depth."""
    return [
        [
            str(head.head),
            str(head.reached),
            str(head.kept),
            f"{head.rate:.2f}",
            f"{head.first_guess_rate:.2f}",
            f"{theory.reach(head.head):.2f}",
        ]
        for head in theory.heads
    ]


def ngram_rows(theory: NgramTheory) -> list[list[str]]:
    """Per accepted length 0, 1, ...: the passes that accepted it, their share, and how many of
    them a pooled n-gram carried."""
    return [
        [str(length), str(count), f"{theory.share(length):.0%}", str(theory.from_guess[length])]
        for length, count in enumerate(theory.lengths)
    ]


def table_of(lab: SelfDraftLab) -> tuple[tuple[str, ...], list[list[str]]]:
    """The header keys and rows of the lab's table: per head, or per accepted length."""
    if lab.heads is not None:
        return HEADS_HEADERS, heads_rows(lab.heads)
    if lab.ngrams is not None:
        return NGRAM_HEADERS, ngram_rows(lab.ngrams)
    return (), []


def self_draft_paragraphs(lab: SelfDraftLab, lang: str) -> list[str]:
    """What the run's acceptance makes by its paper's model, what a pass costs here, and the
    predicted speedup beside the measured one, with how firm that is."""
    model_tau = f"{lab.model_tau:.2f}"
    if lab.heads is not None:
        found = t(
            "self_draft.heads.summary",
            lang,
            spec=lab.spec,
            cycles=lab.heads.cycles,
            heads=len(lab.heads.heads),
            model_tau=model_tau,
            tau=f"{lab.tau:.2f}",
        )
    else:
        ngrams = lab.ngrams
        assert ngrams is not None  # a lab measures one of the two
        found = t(
            "self_draft.ngrams.summary",
            lang,
            spec=lab.spec,
            cycles=ngrams.cycles,
            mean=f"{ngrams.mean_accepted:.2f}",
            ngram=ngrams.ngram,
            longest=max(ngrams.ngram - 1, 0),
            model_tau=model_tau,
            tau=f"{lab.tau:.2f}",
            guesses=f"{ngrams.mean_guesses:.1f}",
        )
    sent = lab.pass_tokens
    predicted = lab.predicted
    cost = t(
        "self_draft.cost",
        lang,
        mean_tokens=f"{sum(sent) / len(sent):.1f}" if sent else "—",
        most=lab.most_tokens,
        verify=f"{predicted.verify_cost:.2f}",
        draft=f"{predicted.draft_cost:.2f}",
        model_tau=model_tau,
        predicted=f"{predicted.speedup:.2f}",
        measured=f"{lab.speedup:.2f}",
        tps=f"{lab.tokens_per_s:.2f}",
        plain_tps=f"{lab.plain_tokens_per_s:.2f}",
        seconds=f"{lab.elapsed_s:.0f}",
    )
    paragraphs = [found, cost]
    if not lab.runs_complete:
        paragraphs.append(t("speedup.refused.cut", lang))
    elif not lab.tree_curve.complete:
        largest = lab.tree_curve.points[-1].new_tokens
        paragraphs.append(t("self_draft.curve_cut", lang, largest=largest))
    paragraphs.append(t("labs.firmness", lang, line=lab.firmness.line))
    return paragraphs


def self_draft_html(lab: SelfDraftLab | None, *, lang: str = DEFAULT_LANGUAGE) -> str:
    """The lab's paragraphs around its table (a placeholder before a measurement)."""
    if lab is None:
        return panel_html([t("self_draft.placeholder", lang)], css="sv-self-draft")
    keys, rows = table_of(lab)
    paragraphs = self_draft_paragraphs(lab, lang)
    table = table_html([t(key, lang) for key in keys], rows)
    # The table under the paragraph it counts for, before the costs.
    return panel_html(paragraphs[:1], table, css="sv-self-draft", after=paragraphs[1:])
