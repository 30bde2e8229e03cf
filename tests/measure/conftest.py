"""Fixtures of the bench and measure tests: the tiny pair as the commands see it, and the commands
made to load it instead of the preset's pair."""

from __future__ import annotations

import pytest
from commands import COMMAND_PRESET, EncodingPair
from tiny_models import TinyPair

from specviz.cli import bench as bench_cli
from specviz.cli import measure as measure_cli


@pytest.fixture(scope="module")
def pair(tiny_pair: TinyPair) -> EncodingPair:
    """The session's tiny pair, with what commands read of a loaded pair."""
    return EncodingPair(
        tiny_pair.draft, tiny_pair.target, tiny_pair.tokenizer, tiny_pair.eos_token_ids
    )


@pytest.fixture
def on_tiny_pair(pair: EncodingPair, monkeypatch: pytest.MonkeyPatch) -> None:
    """`python -m specviz bench` on the tiny pair instead of loading the preset's."""
    monkeypatch.setattr(bench_cli, "load_pair_for", lambda args, preset: pair)


@pytest.fixture
def tiny_loaded(pair: EncodingPair, monkeypatch: pytest.MonkeyPatch) -> EncodingPair:
    """`python -m specviz measure ...` commands that load the preset's pair get the tiny pair and
    the tiny preset instead."""
    monkeypatch.setattr(measure_cli, "load_pair_for", lambda args, preset: pair)
    monkeypatch.setattr(measure_cli, "preset_for", lambda args: COMMAND_PRESET)
    return pair
