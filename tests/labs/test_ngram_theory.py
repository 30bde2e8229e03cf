"""Lookahead's model from a run's records: the passes by accepted n-gram length, who carried
them, the guesses and tokens each pass sent, and τ = 1 + E[accepted length]."""

from __future__ import annotations

from dataclasses import replace

import pytest
from lookahead_records import lookahead_cycle

from specviz.labs.speedup.ngram_theory import measure_ngrams


def test_passes_are_counted_by_accepted_length_and_what_carried_them() -> None:
    by_guess = lookahead_cycle()  # guess 1 (" cat sat") kept whole: 2 tokens
    nothing = lookahead_cycle(path=())
    by_window = lookahead_cycle(path=(4,))  # the window's row t−1 slot 0 (" dog") kept
    warming = lookahead_cycle(path=(), window_rows=((0, 1),), window_harvest=False)
    theory = measure_ngrams([by_guess, nothing, by_window, warming])
    assert theory.ngram == 3  # two rows when full: N − 1
    assert theory.lengths == (2, 1, 1) and theory.from_guess == (0, 0, 1)
    assert theory.cycles == 4
    assert theory.mean_accepted == pytest.approx((0 + 0 + 1 + 2) / 4)
    assert theory.tau == pytest.approx(1.75)
    assert theory.share(0) == pytest.approx(0.5)
    assert theory.guesses == (2, 2, 2, 2) and theory.mean_guesses == 2.0
    assert theory.pass_tokens == (8, 8, 8, 8)  # the root and the tree's seven nodes


def test_every_length_a_pooled_n_gram_could_give_has_a_row() -> None:
    theory = measure_ngrams([lookahead_cycle(path=())])
    assert theory.lengths == (1, 0, 0) and theory.tau == 1.0


def test_cycles_without_a_window_are_left_out() -> None:
    chain = replace(lookahead_cycle(), tree=None)
    tree = lookahead_cycle(window_rows=())
    theory = measure_ngrams([chain, tree])
    assert theory.cycles == 0 and theory.lengths == () and theory.tau == 1.0
    assert theory.mean_guesses == 0.0 and theory.share(0) == 0.0
