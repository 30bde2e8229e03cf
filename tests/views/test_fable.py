"""Fable mode: each cycle's story is built from that cycle's records, in English and Japanese.

Hand-built cycles (ui_events) pin every branch with known numbers; runs of the tiny models pin
that the story of cycle k names exactly cycle k's sealed, crossed-out, wiped and written words.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import torch
from tiny_models import TinyPair
from ui_events import XSS, XSS_IMG, draft, make_cycle, sample_run

from specviz.core.engine import GenerationSettings, speculative_generate
from specviz.core.events import Cycle, Origin, TokenProb, Totals
from specviz.drafters.registry import make_drafter
from specviz.text import TABLES
from specviz.views.fable import (
    CAST,
    Line,
    Word,
    Words,
    fable_help_html,
    fable_html,
    narrate,
    story_html,
    story_text,
)
from specviz.views.numbers import prob
from specviz.views.token_text import quoted

SEEDS = Path("/work/shared/seeds")
PROMPT = torch.tensor([list(b"def fib(n): return fib(n-1) + fib(n-2)")])


def keys(cycle: Cycle) -> list[str]:
    return [line.key for line in narrate(cycle).lines]


def lines_of(cycle: Cycle, key: str) -> list[Line]:
    return [line for line in narrate(cycle).lines if line.key == key]


# --- every branch, on hand-built cycles -------------------------------------------------------


def test_a_rejection_seals_crosses_out_wipes_and_writes_the_masters_word() -> None:
    cycle = sample_run()[0]  # drafts def, f (accepted), cat (rejected), XSS (untested)
    assert keys(cycle) == [
        "fable.draft.guess",
        "fable.glance",
        "fable.seal",
        "fable.seal",
        "fable.cross",
        "fable.wiped",
        "fable.resample",
        "fable.tally",
    ]
    seals = [line.values["word"] for line in lines_of(cycle, "fable.seal")]
    assert seals == [Word("def", "", "accepted"), Word(" f", "", "accepted")]
    (cross,) = lines_of(cycle, "fable.cross")
    assert cross.values["word"] == Word(" cat", "", "rejected")
    (wiped,) = lines_of(cycle, "fable.wiped")
    assert wiped.values["words"] == Words((Word(XSS, "", "untested"),))
    (resample,) = lines_of(cycle, "fable.resample")
    assert resample.values["word"] == Word(XSS_IMG, "", "resampled")
    english = story_text(narrate(cycle), "en")
    assert english[2] == (
        "“def” is sealed: the master thought it likely (p 0.60), the apprentice was fairly sure "
        "(q 0.80); sealed with chance 0.75, the die showed 0.10."
    )
    assert "“ cat” is crossed out" in english[4] and "the die showed 0.93" in english[4]
    assert english[-1] == "2 of 4 sealed; the page grows by 3 words for one glance."
    japanese = story_text(narrate(cycle), "ja")
    assert japanese[2].startswith("“def” に印。") and "0.75" in japanese[2]
    assert (
        "抹消" in japanese[4] and "ロールバック" in japanese[5] and "再サンプリング" in japanese[6]
    )


def test_a_full_slate_gets_the_free_word() -> None:
    cycle = sample_run()[1]
    assert "fable.bonus" in keys(cycle) and "fable.cross" not in keys(cycle)
    (bonus,) = lines_of(cycle, "fable.bonus")
    assert bonus.values["word"] == Word("\n", "", "bonus")
    assert len(lines_of(cycle, "fable.seal")) == 4
    text = " ".join(story_text(narrate(cycle), "en"))
    assert "so it comes free: “\\n” (p 0.42)" in text and "4 of 4 sealed" in text
    assert "ボーナストークン" in " ".join(story_text(narrate(cycle), "ja"))


def test_greedy_speaks_of_the_masters_first_choice_without_dice() -> None:
    rejected = replace(
        draft(2, 1, " y", accepted=False, q=1.0, p=0.1, u=None),
        top_p=(TokenProb(5, " z", 0.7),),
    )
    cycle = make_cycle(
        0,
        0,
        [draft(1, 0, " x", accepted=True, u=None), rejected],
        (" z", Origin.RESAMPLED),
        Totals(2, 1, 2, 2, 1, 0.1, 0.0),
        greedy=True,
    )
    assert keys(cycle)[2:5] == ["fable.seal.greedy", "fable.cross.greedy", "fable.resample.greedy"]
    text = story_text(narrate(cycle), "en")
    assert text[2] == "“ x” is sealed: the master's own first choice too (p 0.60)."
    assert text[3] == (
        "“ y” is crossed out: the master gave it p 0.10, and the master's own first choice there "
        "was “ z”."
    )
    assert "die" not in " ".join(text)
    assert "第一候補" in story_text(narrate(cycle), "ja")[3]
    # On a tie in p (bfloat16), the first choice named is the token the master wrote.
    tied = replace(rejected, top_p=(TokenProb(5, " z", 0.4), TokenProb(6, " w", 0.4)))
    cycle = make_cycle(
        0,
        0,
        [draft(1, 0, " x", accepted=True, u=None), tied],
        (" w", Origin.RESAMPLED),
        Totals(2, 1, 2, 2, 1, 0.1, 0.0),
        greedy=True,
    )
    assert story_text(narrate(cycle), "en")[3].endswith("was “ w”.")


def test_a_copied_slate_says_where_it_was_copied_from() -> None:
    cycle = replace(sample_run()[1], drafter="lookup", copied_from=(11, 12, 13, 14))
    (copy,) = lines_of(cycle, "fable.draft.copy")
    assert copy.values["start"] == 12
    assert "copies 4 words from an earlier page" in story_text(narrate(cycle), "en")[0]
    assert "書き写します" in story_text(narrate(cycle), "ja")[0]


def test_layer_skip_has_no_apprentice() -> None:
    cycle = replace(sample_run()[1], drafter="layerskip", drafter_detail="skip=8-19")
    first = story_text(narrate(cycle), "en")[0]
    assert first.startswith("No apprentice this time") and "(skip=8-19)" in first


def test_lookahead_has_no_apprentice_and_fills_a_row_of_blanks() -> None:
    cycle = replace(sample_run()[1], drafter="lookahead", drafter_detail="window=4,ngram=3")
    assert keys(cycle)[0] == "fable.draft.window"
    first = story_text(narrate(cycle), "en")[0]
    assert first.startswith("No apprentice this time") and "row of blanks" in first
    assert "空欄の列" in story_text(narrate(cycle), "ja")[0]


def test_an_empty_slate_is_the_masters_word_alone() -> None:
    cycle = make_cycle(0, 0, [], ("a", Origin.BONUS), Totals(1, 1, 0, 0, 0, 0.1, 0.0))
    cycle = replace(cycle, draft_end="no_match")
    assert keys(cycle) == ["fable.empty.no_match", "fable.alone", "fable.alone.word"]
    assert story_text(narrate(cycle), "en")[2] == "The word is “a” (p 0.42)."
    assert keys(replace(cycle, draft_end="prefill"))[0] == "fable.empty.prefill"
    assert keys(replace(cycle, draft_end="budget"))[0] == "fable.empty.budget"


@pytest.mark.parametrize(
    ("changes", "told"),
    [
        ({"draft_end": "confidence", "draft_stop_below": 0.3}, "felt shaky (q 0.90, under the 0.3"),
        ({"draft_end": "cumulative", "draft_stop_cumulative": 0.5}, "fell to 0.10, under the 0.5"),
        ({"draft_end": "eos"}, "the last word ends the text"),
        ({"draft_end": "budget"}, "the page had room for no more words"),
        ({"draft_end": "text_end"}, "the earlier page ran out"),
    ],
)
def test_a_short_slate_says_why(changes: dict[str, Any], told: str) -> None:
    guess = replace(
        draft(1, 8, " no", accepted=False, q=0.9, p=0.05, u=0.4),
        top_q=(TokenProb(1, " no", 0.1),),
    )
    cycle = replace(sample_run()[2], drafted=(guess,), draft_gamma=5, **changes)
    (short,) = story_text(narrate(cycle), "en")[1:2]
    assert short.startswith("The slate had room for 5, but the drafting stopped early: ")
    assert told in short
    assert "下書きは早めに止まりました" in story_text(narrate(cycle), "ja")[1]
    assert "fable.short" not in keys(replace(cycle, draft_end="gamma"))


def test_the_end_of_the_text_and_of_the_budget() -> None:
    last = sample_run()[2]
    assert keys(last)[-1] == "fable.finish.budget"
    assert keys(replace(last, stop_reason="eos"))[-1] == "fable.finish.eos"
    assert story_text(narrate(replace(last, stop_reason="eos")), "ja")[-1] == (
        "文章が完結し、師匠は筆を置きます。"
    )
    assert not keys(sample_run()[0])[-1].startswith("fable.finish")


def test_a_control_token_is_named_in_words() -> None:
    cycle = sample_run()[1]
    end = replace(cycle.emitted[-1], text="", special="<|im_end|>")
    cycle = replace(cycle, emitted=(*cycle.emitted[:-1], end))
    assert "[end of turn]" in story_text(narrate(cycle), "en")[-2]


# --- HTML: the stream's colours, escaped text --------------------------------------------------


def test_the_story_html_escapes_token_text_and_uses_the_streams_classes() -> None:
    page = fable_html(sample_run(), lang="en")
    assert "<script" not in page and "<img" not in page
    assert "&lt;script&gt;" in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    first = story_html(narrate(sample_run()[0]), "en")
    for kind in ("accepted", "rejected", "untested", "resampled"):
        assert f'class="sv-tok sv-{kind}"' in first
    assert 'class="sv-tok sv-bonus"' in story_html(narrate(sample_run()[1]), "en")


def test_the_panel_tells_the_cycle_shown_after_the_two_before_it() -> None:
    cycles = sample_run()
    page = fable_html(cycles[:2], lang="ja")
    assert page.count("sv-fable-current") == 1
    assert re.findall(r'class="sv-fable-cycle[^"]*" data-cycle="(\d)"', page) == ["1", "2"]
    assert 'sv-fable-current" data-cycle="2"' in page and "サイクル 2" in page
    assert "sv-placeholder" in fable_html([], lang="en")
    # A sentence a span; English puts a space between sentences, Japanese none after its 。
    assert '</span> <span class="sv-fable-line"' in fable_html(cycles, lang="en")
    assert '。</span><span class="sv-fable-line"' in page


def test_the_help_panel_lists_the_whole_cast_in_both_languages() -> None:
    for lang in ("en", "ja"):
        table = fable_help_html(lang=lang)
        assert table.count("<tr>") == len(CAST) + 1
    assert "min(1, p/q)" in fable_help_html(lang="en")
    assert "メモリ帯域幅" in fable_help_html(lang="ja") and "並列検証" in fable_help_html(lang="ja")


# --- the seed's facts carry over, its sentences do not ------------------------------------------


def test_no_sentence_of_the_seed_is_in_the_fable_text() -> None:
    (seed,) = SEEDS.glob("003_*.txt") if SEEDS.exists() else pytest.skip("no seeds here")
    text = re.sub(r"\s", "", seed.read_text(encoding="utf-8"))
    runs = {text[i : i + 12] for i in range(len(text) - 11)}
    ours = [
        re.sub(r"\s", "", template)
        for key, template in TABLES["ja"].items()
        if key.startswith(("fable.", "app.fable."))
    ]
    assert len(ours) > 40
    copied = [run for template in ours for run in runs if run in template]
    assert copied == []
    for name in ("バルタザール", "レオ", "大学士"):  # the seed's characters are not ours
        assert not any(name in template for template in ours)


# --- real runs: the story of cycle k is cycle k's -----------------------------------------------


def spoken_words(cycle: Cycle, key: str) -> list[str]:
    return [line.values["word"].text for line in lines_of(cycle, key)]  # type: ignore[union-attr]


def check_story_matches_records(cycle: Cycle) -> None:
    accepted = [token.text for token in cycle.drafted if token.accepted]
    assert spoken_words(cycle, "fable.seal") + spoken_words(cycle, "fable.seal.greedy") == accepted
    crossed = spoken_words(cycle, "fable.cross") + spoken_words(cycle, "fable.cross.greedy")
    if cycle.rejection is not None:
        assert crossed == [cycle.rejection.rejected_token.text]
        written = spoken_words(cycle, "fable.resample")
        written += spoken_words(cycle, "fable.resample.greedy")
        assert written == [token.text for token in cycle.emitted[cycle.accepted_len :]]
    else:
        assert crossed == []
    wiped = lines_of(cycle, "fable.wiped")
    untested = [token.text for token in cycle.drafted if not token.tested]
    assert [w.text for line in wiped for w in line.values["words"].words] == untested  # type: ignore[union-attr]
    bonus = spoken_words(cycle, "fable.bonus")
    full = cycle.drafted and cycle.accepted_len == len(cycle.drafted)
    extra = [token.text for token in cycle.emitted[cycle.accepted_len :]]
    assert bonus == (extra if full else [])
    if cycle.drafted:
        (tally,) = lines_of(cycle, "fable.tally")
        assert (tally.values["sealed"], tally.values["drafted"]) == (
            cycle.accepted_len,
            len(cycle.drafted),
        )
    text = " ".join(story_text(narrate(cycle), "en"))
    for token in cycle.drafted:
        if token.tested and not token.special:
            assert quoted(token.text) in text
            assert f"p {prob(token.p_target)}" in text


@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_every_cycle_of_a_real_run_tells_its_own_records(
    tiny_pair: TinyPair, temperature: float
) -> None:
    settings = GenerationSettings(
        gamma=4, temperature=temperature, max_new_tokens=40, stop_on_eos=False, seed=3
    )
    drafter = make_drafter("draft-model", tiny_pair)
    cycles = list(speculative_generate(tiny_pair, PROMPT, settings, drafter))
    for cycle in cycles:
        assert narrate(cycle).cycle == cycle.index + 1
        check_story_matches_records(cycle)
    told = {key for cycle in cycles for key in keys(cycle)}
    if temperature:
        assert {"fable.seal", "fable.cross", "fable.resample"} <= told
    else:
        assert "fable.cross.greedy" in told  # two unrelated tiny models rarely agree
    assert keys(cycles[-1])[-1] == "fable.finish.budget"
    # The stories differ from cycle to cycle: each is told from its own cycle.
    assert len({tuple(story_text(narrate(cycle), "en")) for cycle in cycles}) == len(cycles)


def test_the_target_as_its_own_draft_seals_every_word_and_gets_the_free_word(
    tiny_pair: TinyPair,
) -> None:
    own = TinyPair(tiny_pair.target, tiny_pair.target, tiny_pair.tokenizer, frozenset())
    settings = GenerationSettings(gamma=4, max_new_tokens=21, stop_on_eos=False)
    cycles = list(speculative_generate(own, PROMPT, settings, make_drafter("draft-model", own)))
    for cycle in cycles[:-1]:
        assert keys(cycle) == [
            "fable.draft.guess",
            "fable.glance",
            *["fable.seal.greedy"] * 4,
            "fable.bonus",
            "fable.tally",
        ]
        check_story_matches_records(cycle)


def test_a_lookup_run_tells_the_copies(tiny_pair: TinyPair) -> None:
    settings = GenerationSettings(gamma=4, max_new_tokens=30, stop_on_eos=False)
    prompt = torch.tensor([list(b"abcdefgh abcdefgh abcdefgh abcd")])
    cycles = list(
        speculative_generate(tiny_pair, prompt, settings, make_drafter("hybrid", tiny_pair))
    )
    copied = [cycle for cycle in cycles if cycle.copied_from]
    assert copied
    for cycle in copied:
        (copy,) = lines_of(cycle, "fable.draft.copy")
        assert copy.values["start"] == cycle.copied_from[0] + 1  # type: ignore[index]
        check_story_matches_records(cycle)
    guessed = [cycle for cycle in cycles if cycle.drafted and not cycle.copied_from]
    assert all(keys(cycle)[0] == "fable.draft.guess" for cycle in guessed)


# --- the CLI ----------------------------------------------------------------------------------


def test_generate_fable_prints_each_cycles_story(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tiny_pair: Any
) -> None:
    from commands import EncodingPair

    import specviz.cli.options
    from specviz.cli.main import main

    pair = EncodingPair(tiny_pair.draft, tiny_pair.target, tiny_pair.tokenizer, frozenset())
    monkeypatch.setattr(specviz.cli.options, "load_pair_for", lambda args, preset: pair)
    run = ["generate", "--prompt", "abcabc", "--raw", "--max-new-tokens", "8", "--fable"]
    assert main(run) == 0
    out = capsys.readouterr().out
    assert "Cycle 1\n" in out and "The master checks the whole slate in one glance" in out
    assert "The page is full" in out and "γ=" not in out
    assert main([*run, "--lang", "ja"]) == 0
    out = capsys.readouterr().out
    assert "サイクル 1\n" in out and "師匠は石板全体をひと目で確かめます" in out


def test_a_quoted_line_break_shows_its_glyph_and_does_not_break_the_sentence() -> None:
    cycle = sample_run()[0]
    broken = replace(cycle, drafted=(replace(cycle.drafted[0], text=":\n    "), *cycle.drafted[1:]))
    words = re.findall(
        r"<span[^>]*data-fable-word[^>]*>.*?</span>”", story_html(narrate(broken), "en"), re.S
    )
    assert words and all("\n" not in word for word in words)
    assert any("↵" in word for word in words)
