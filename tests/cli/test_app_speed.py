"""The app-speed measurement drives the app's /run endpoint with the inputs it takes."""

from __future__ import annotations

from types import SimpleNamespace

from specviz.app.builder import build_demo
from specviz.cli.app_speed import run_inputs
from specviz.core.settings import GenerationSettings
from specviz.models.loader import ModelCache
from specviz.models.presets import load_presets


def test_run_inputs_are_the_run_endpoints_parameters() -> None:
    presets = load_presets()
    endpoint = build_demo(presets, ModelCache()).get_api_info()["named_endpoints"]["/run"]
    parameters = [parameter["parameter_name"] for parameter in endpoint["parameters"]]
    preset = SimpleNamespace(id="p", chat_template=False, drafter="lookup")
    inputs = run_inputs(preset, "Hi", GenerationSettings(gamma=3, seed=7))
    assert sorted(inputs) == sorted(parameters)
    assert inputs["gamma"] == 3 and inputs["seed"] == 7 and inputs["race"] is False
    assert inputs["preset"] == "p" and inputs["prompt"] == "Hi" and inputs["drafter"] == "lookup"
