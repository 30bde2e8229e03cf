"""The settings schema (specviz.core.settings): one description per setting, and everything that
is derived from it: validation, CLI flags, preset parsing, the app's controls and API."""

from __future__ import annotations

import argparse
import dataclasses
import pickle
from collections.abc import Iterator
from pathlib import Path

import gradio as gr
import pytest

from specviz.app.setting_controls import setting_controls, with_setting_parameters
from specviz.core.settings import (
    GAMMA_MAX,
    GAMMA_MIN,
    GenerationSettings,
    SettingError,
    add_setting_arguments,
    setting,
    settings_from_args,
    settings_from_mapping,
    settings_schema,
)
from specviz.models import presets
from specviz.text import TABLES


def parse(*argv: str, settings_type: type[GenerationSettings] = GenerationSettings):
    parser = argparse.ArgumentParser()
    add_setting_arguments(parser, settings_type=settings_type)
    return parser.parse_args(list(argv))


def test_every_field_is_described_once_with_valid_default() -> None:
    schema = settings_schema()
    assert [item.name for item in schema] == [
        f.name for f in dataclasses.fields(GenerationSettings)
    ]
    for item in schema:
        assert item.label_key == f"setting.{item.name}" and item.label() and item.help()
        assert item.type in (int, float, bool)
        assert item.check(item.default) == item.default
        if item.slider_range is not None:  # the app's slider stays inside the limits
            low, high = item.slider_range
            assert item.check(low) == low and item.check(high) == high
    gamma = next(item for item in schema if item.name == "gamma")
    assert (gamma.spec.low, gamma.spec.high) == (GAMMA_MIN, GAMMA_MAX)


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"gamma": 0}, "γ must be between 1 and 16, got 0"),
        ({"gamma": 17}, "γ must be between 1 and 16, got 17"),
        ({"gamma": 5.0}, "γ must be an integer between 1 and 16, got float 5.0"),
        ({"gamma": True}, "γ must be an integer between 1 and 16, got boolean true"),
        ({"temperature": 2.5}, "Temperature must be between 0 and 2, got 2.5"),
        ({"temperature": float("nan")}, "Temperature must be between 0 and 2, got nan"),
        ({"top_p": 0.0}, "Top-p must be above 0 and at most 1, got 0.0"),
        ({"top_k": -1}, "Top-k must be at least 0, got -1"),
        ({"max_new_tokens": 4097}, "Max new tokens must be between 1 and 4096, got 4097"),
        ({"draft_stop_below": 1.0}, "Draft stop below must be at least 0 and below 1, got 1.0"),
        ({"adaptive_gamma": 1}, "Adaptive γ must be true or false, got integer 1"),
        (
            {"seed": "3"},
            "Seed must be an integer between 0 and 18446744073709551615, got string '3'",
        ),
    ],
)
def test_bad_values_are_named_in_words(values: dict[str, object], message: str) -> None:
    with pytest.raises(SettingError) as raised:
        GenerationSettings(**values)  # type: ignore[arg-type]
    assert str(raised.value) == message
    assert [problem.name for problem in raised.value.problems] == list(values)


def test_every_problem_is_reported_and_the_error_pickles() -> None:
    with pytest.raises(SettingError) as raised:
        settings_from_mapping({"gama": 3, "gamma": 0, "top_p": 2.0}, GenerationSettings())
    error = raised.value
    assert [problem.name for problem in error.problems] == ["gama", "gamma", "top_p"]
    assert "'gama' is not a setting; known: gamma, adaptive_gamma" in str(error)
    clone = pickle.loads(pickle.dumps(error))
    assert (str(clone), clone.problems) == (str(error), error.problems)


def test_numbers_are_stored_as_their_declared_type() -> None:
    settings = GenerationSettings(temperature=1, top_p=1)  # type: ignore[arg-type]
    assert isinstance(settings.temperature, float) and isinstance(settings.top_p, float)
    # A form or a JSON API sends whole numbers as floats; exact=False takes them, not 4.5.
    loose = settings_from_mapping({"gamma": 4.0, "seed": 7.0}, settings, exact=False)
    assert (loose.gamma, loose.seed) == (4, 7) and isinstance(loose.gamma, int)
    with pytest.raises(SettingError, match="γ must be an integer"):
        settings_from_mapping({"gamma": 4.5}, settings, exact=False)
    with pytest.raises(SettingError, match="Seed is blank"):
        settings_from_mapping({"seed": None}, settings, exact=False)


def test_cli_flags_keep_their_names_and_default_to_the_preset() -> None:
    preset_defaults = GenerationSettings(gamma=3, temperature=0.5, draft_stop_below=0.3)
    assert settings_from_args(parse(), preset_defaults) == preset_defaults
    args = parse(
        "--gamma", "7", "--adaptive", "--temperature", "1", "--top-k", "5", "--top-p", "0.9",
        "--seed", "4", "--max-new-tokens", "20", "--no-stop", "--draft-stop-cumulative", "0.2",
    )  # fmt: skip
    # Every flag given lands in its setting; draft_stop_below, not given, keeps the preset's.
    assert settings_from_args(args, preset_defaults) == GenerationSettings(
        gamma=7, adaptive_gamma=True, temperature=1.0, top_k=5, top_p=0.9, seed=4,
        max_new_tokens=20, stop_on_eos=False, draft_stop_below=0.3, draft_stop_cumulative=0.2,
    )  # fmt: skip
    with pytest.raises(SettingError, match="γ must be between 1 and 16, got 0"):
        settings_from_args(parse("--gamma", "0"), preset_defaults)


def test_cli_flags_can_leave_settings_out() -> None:
    parser = argparse.ArgumentParser()
    add_setting_arguments(parser, exclude=("gamma", "seed"))
    assert "--gamma" not in parser.format_help() and "--temperature" in parser.format_help()
    args = parser.parse_args(["--temperature", "1"])
    assert settings_from_args(args, GenerationSettings(gamma=3)).gamma == 3


# --- adding a setting touches the schema, and its words the text tables ------------------


@dataclasses.dataclass(frozen=True)
class WithWarmth(GenerationSettings):
    """The schema with one more setting, declared the way every setting is."""

    draft_warmth: float = setting(0.5, low=0.0, high=1.0, step=0.1)


@pytest.fixture(autouse=True)
def warmth_words(monkeypatch: pytest.MonkeyPatch) -> None:
    """The new setting's label and help in the English table, as its author would add them."""
    english = dict(TABLES["en"]) | {
        "setting.draft_warmth": "Draft warmth",
        "setting.draft_warmth.help": "how warm the draft is",
    }
    monkeypatch.setitem(TABLES, "en", english)  # type: ignore[index]


def test_a_new_setting_reaches_the_cli() -> None:
    args = parse("--draft-warmth", "0.25", settings_type=WithWarmth)
    assert settings_from_args(args, WithWarmth()).draft_warmth == 0.25
    with pytest.raises(SettingError, match=r"Draft warmth must be between 0 and 1, got 2\.0"):
        settings_from_args(parse("--draft-warmth", "2", settings_type=WithWarmth), WithWarmth())


def test_a_new_setting_reaches_preset_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(presets, "GenerationSettings", WithWarmth)
    text = (
        'id = "warm"\nlabel = "Warm"\ndraft = "hub:gpt2"\ntarget = "hub:gpt2"\n'
        'dtype = "float32"\ngamma = 3\ndraft_warmth = {}\n\n[prompts]\ncode = ["x"]\n'
    )
    good = tmp_path / "warm.toml"
    good.write_text(text.format("0.75"))
    preset = presets.load_preset(good)
    assert isinstance(preset.settings, WithWarmth)
    assert (preset.settings.draft_warmth, preset.settings.gamma) == (0.75, 3)
    good.write_text(text.format("1.5"))
    with pytest.raises(presets.PresetError) as raised:
        presets.load_preset(good)
    assert raised.value.field == "draft_warmth" and "warm.toml" in str(raised.value)
    assert "must be between 0 and 1, got 1.5" in str(raised.value)


def test_a_new_setting_reaches_the_app_controls_and_api() -> None:
    with gr.Blocks():
        controls = setting_controls(WithWarmth())
    warmth = controls.components["draft_warmth"]
    assert isinstance(warmth, gr.Slider)
    assert (warmth.label, warmth.info) == ("Draft warmth", "how warm the draft is")
    assert (warmth.minimum, warmth.maximum, warmth.step, warmth.value) == (0.0, 1.0, 0.1, 0.5)

    def stream(settings: dict[str, float]) -> Iterator[dict[str, float]]:
        yield settings

    endpoint = with_setting_parameters(stream, [], [], WithWarmth)
    assert list(endpoint.__signature__.parameters)[-1] == "draft_warmth"  # type: ignore[attr-defined]
    assert endpoint.__annotations__["draft_warmth"] == float | None
    assert list(endpoint(draft_warmth=0.2)) == [{"draft_warmth": 0.2}]
