"""The self-drafting lab's words and tables: a row per head with its reach, a row per accepted
length, both languages, and nothing in a record written as markup."""

from __future__ import annotations

import pytest
from ui_events import XSS, XSS_IMG

from specviz.labs.speedup.cost_curve import CostCurve, CostPoint
from specviz.labs.speedup.heads_theory import HeadAcceptance, HeadsTheory
from specviz.labs.speedup.ngram_theory import NgramTheory
from specviz.labs.speedup.self_draft_lab import Prediction, SelfDraftLab
from specviz.labs.speedup.self_draft_panel import heads_rows, ngram_rows, self_draft_html

HEADS = HeadsTheory(
    (HeadAcceptance(1, 4, 3, (2, 1)), HeadAcceptance(2, 3, 2, (2,))), 4, (6, 6, 6, 6)
)
NGRAMS = NgramTheory(3, (2, 1, 1), (0, 0, 1), (2, 2, 2, 2), (8, 8, 8, 8))


def lab(
    spec: str,
    heads: HeadsTheory | None = None,
    ngrams: NgramTheory | None = None,
    timed_whole: bool = True,
) -> SelfDraftLab:
    points = (CostPoint(1, 0.1, (0.1,)), CostPoint(9, 0.2, (0.2,)))
    theory = heads or ngrams
    assert theory is not None
    return SelfDraftLab(
        spec=spec,
        heads=heads,
        ngrams=ngrams,
        most_tokens=16,
        plain_tokens_per_s=10.0,
        plain_new_tokens=200,
        tau=theory.tau,
        tokens_per_s=12.0,
        new_tokens=200,
        speedup=1.2,
        draft_s_per_cycle=0.001,
        predicted=Prediction(theory.tau, 0.01, 1.5, theory.tau / 1.51),
        tree_curve=CostCurve("cpu", 10, points, timed_whole),
        elapsed_s=30.0,
        runs_complete=True,
        others_share=0.0,
    )


def test_a_row_per_head_with_its_rate_first_guesses_and_reach() -> None:
    assert heads_rows(HEADS) == [
        ["1", "4", "3", "0.75", "0.50", "0.75"],
        ["2", "3", "2", "0.67", "0.67", "0.50"],
    ]
    html = self_draft_html(lab("medusa", heads=HEADS))
    assert (
        "Medusa heads (medusa), 4 drafting passes" in html and "2.25 tokens per target pass" in html
    )
    assert "reach Π α" in html and "Predicted: 2.25 / (0.01 + 1.50)" in html
    assert "到達率 Π α" in self_draft_html(lab("medusa", heads=HEADS), lang="ja")


def test_a_row_per_accepted_length_with_what_carried_it() -> None:
    assert ngram_rows(NGRAMS) == [
        ["0", "2", "50%", "0"],
        ["1", "1", "25%", "0"],
        ["2", "1", "25%", "1"],
    ]
    html = self_draft_html(lab("lookahead", ngrams=NGRAMS))
    assert "τ = 1 + 0.75 = 1.75" in html and "verified 2.0 pooled n-grams" in html
    assert "受理長" in self_draft_html(lab("lookahead", ngrams=NGRAMS), lang="ja")


def test_record_text_is_escaped() -> None:
    for hostile in (XSS, XSS_IMG):
        for made in (lab(hostile, heads=HEADS), lab(hostile, ngrams=NGRAMS)):
            for lang in ("en", "ja"):
                html = self_draft_html(made, lang=lang)
                assert hostile not in html and "&lt;" in html


def test_before_a_measurement_the_placeholder_says_what_it_will_show() -> None:
    assert "lookahead decoding" in self_draft_html(None)
    assert "Medusa" in self_draft_html(None, lang="ja")


def test_the_table_sits_under_the_paragraph_it_counts_for() -> None:
    html = self_draft_html(lab("lookahead", ngrams=NGRAMS))
    assert html.index("Lookahead (lookahead)") < html.index("<table>") < html.index("A pass sent")


def test_a_tree_forward_cut_short_says_where_its_timings_end() -> None:
    html = self_draft_html(lab("lookahead", ngrams=NGRAMS, timed_whole=False))
    assert "timings at 9 tokens" in html and "cut runs short" not in html
    assert "timings at" not in self_draft_html(lab("lookahead", ngrams=NGRAMS))


def test_the_json_record_carries_the_model_s_derived_numbers() -> None:
    heads = lab("medusa", heads=HEADS).to_dict()
    assert heads["model_tau"] == 2.25 and heads["ngrams"] is None
    first, second = heads["heads"]["heads"]
    assert (first["rate"], first["first_guess_rate"], first["reach"]) == (0.75, 0.5, 0.75)
    assert second["reach"] == pytest.approx(0.5) and second["kept_by_rank"] == (2,)
    ngrams = lab("lookahead", ngrams=NGRAMS).to_dict()
    assert ngrams["ngrams"]["mean_accepted"] == 0.75 and ngrams["ngrams"]["mean_guesses"] == 2.0
