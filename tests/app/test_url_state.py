"""The shared link's query: written from a setup and read back, every value checked as the app's
controls are, a bad one dropped in the page's words."""

from __future__ import annotations

from urllib.parse import parse_qsl

import pytest

from specviz.app.limits import HOSTED, LOCAL, hosted_presets
from specviz.app.url_state import SharedSetup, example_id, from_query, shared_prompt, to_query
from specviz.models.presets import default_preset, load_presets

TABS = ("live", "inspector", "exactness")


@pytest.fixture(scope="module")
def presets():
    return load_presets()


def read(query: str, presets, limits=LOCAL, lang: str = "en"):
    """from_query over *query* as a browser's URL carries it."""
    return from_query(dict(parse_qsl(query)), presets, limits, lang=lang, tabs=TABS)


def test_a_setup_comes_back_from_its_query(presets) -> None:
    pair = next(preset for preset in presets.values() if preset.id != default_preset(presets).id)
    setup = SharedSetup(
        pair=pair.id,
        drafter="lookup:max_ngram=3",
        example="code.1",
        settings={"gamma": 3, "temperature": 0.7, "seed": 11, "max_new_tokens": 64},
        tab="inspector",
        present=True,
        fable=True,
        animate=True,
    )
    query = to_query(setup)
    assert query.endswith("&present=1&fable=1&animate=1")
    assert "+" not in query and " " not in query
    assert read(query, presets) == (setup, [])
    text = replace_example(setup, "Once upon a time, & then: 50% <b>more</b>?\nThe end.")
    assert read(to_query(text), presets) == (text, [])


def replace_example(setup: SharedSetup, prompt: str) -> SharedSetup:
    return SharedSetup(setup.pair, setup.drafter, None, prompt, setup.settings, setup.tab)


def test_an_example_is_written_as_its_id_and_read_in_the_pages_language(presets) -> None:
    preset = default_preset(presets)
    task, prompts = next(iter(preset.example_prompts("en").items()))
    assert example_id(preset, prompts[-1], "en") == f"{task}.{len(prompts)}"
    assert example_id(preset, "a prompt of my own", "en") is None
    setup, problems = read(f"example={task}.1", presets, lang="ja")
    assert problems == []
    assert shared_prompt(setup, preset, "ja") == preset.example_prompts("ja")[task][0]


@pytest.mark.parametrize(
    ("query", "words"),
    [
        ("pair=no-such-pair", "pair 'no-such-pair' is not offered"),
        ("drafter=lookup:ngram=3", "does not take ngram"),
        ("drafter=telepathy", "unknown drafter 'telepathy'"),
        ("example=code.99", "example 'code.99' is not one of"),
        ("example=nonsense", "example 'nonsense'"),
        ("prompt=%20%20", "The prompt is empty"),
        ("prompt=a%00b", "U+0000"),
        ("gamma=0", "γ must be between 1 and 16, got 0"),
        ("gamma=three", "string 'three'"),
        ("gamma=2.5", "2.5"),
        ("temperature=9", "got 9.0"),
        ("temperature=nan", "string 'nan'"),
        ("seed=-1", "got -1"),
        ("seed=" + "9" * 400, "'" + "9" * 40 + "…'"),
        ("max_new_tokens=100000", "at most 512 here"),
        ("tab=nowhere", "tab 'nowhere'"),
        ("present=yes", "present must be 1 or 0, got 'yes'"),
        ("fable=2", "fable must be 1 or 0"),
        ("animate=yes", "animate must be 1 or 0"),
    ],
)
def test_each_bad_value_is_dropped_with_one_line(presets, query: str, words: str) -> None:
    setup, problems = read(query, presets)
    name = query.partition("=")[0]
    kept = {
        "pair": setup.pair,
        "drafter": setup.drafter,
        "example": setup.example,
        "prompt": setup.prompt,
        "tab": setup.tab,
    }.get(name)
    assert kept is None and name not in setup.settings
    assert not setup.present and not setup.fable and not setup.animate
    assert len(problems) == 1 and words in problems[0], problems
    assert "\n" not in problems[0] and "Traceback" not in problems[0]


def test_problems_are_worded_in_the_pages_language(presets) -> None:
    _, problems = read("gamma=0&tab=nowhere&pair=x", presets, lang="ja")
    assert len(problems) == 3
    assert all("リンク" in line for line in problems)


def test_good_values_survive_beside_bad_ones_and_other_names_are_ignored(presets) -> None:
    setup, problems = read("gamma=0&seed=11&lang=ja&__theme=dark&present=1", presets)
    assert setup.settings == {"seed": 11} and setup.present
    assert len(problems) == 1


def test_html_in_the_prompt_stays_text(presets) -> None:
    attack = '<img src=x onerror="alert(1)"><script>alert(2)</script>'
    setup, problems = read(to_query(SharedSetup(prompt=attack)), presets)
    assert problems == [] and setup.prompt == attack  # the textbox shows it as typed
    _, problems = read("pair=%3Cscript%3E", presets)
    assert "<script>" in problems[0]  # words for the status line, which escapes them


def test_hosted_mode_refuses_a_pair_it_does_not_offer_and_holds_its_caps(presets) -> None:
    offered = hosted_presets(presets)
    unoffered = next(preset_id for preset_id in presets if preset_id not in offered)
    setup, problems = read(f"pair={unoffered}&gamma=12&max_new_tokens=300", offered, HOSTED)
    assert setup.pair is None and setup.settings == {}
    assert len(problems) == 3 and unoffered in problems[0]
    assert "at most 8 here" in problems[1] and "at most 256 here" in problems[2]
