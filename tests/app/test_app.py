"""The app's wiring without models: its API's parameters, the settings controls built from the
schema, and how a run's inputs are read through the schema (no model is loaded here)."""

from __future__ import annotations

from pathlib import Path

import gradio as gr
import pytest

from specviz.app.builder import build_demo
from specviz.app.session import App
from specviz.app.setting_controls import setting_controls, shown_settings
from specviz.core.settings import GenerationSettings, settings_schema
from specviz.models.loader import ModelCache
from specviz.models.presets import default_preset, load_presets

PRESETS = load_presets()
DEFAULT = default_preset(PRESETS)


@pytest.fixture(scope="module")
def api() -> dict:
    demo = build_demo(PRESETS, ModelCache())
    endpoints = demo.get_api_info()["named_endpoints"]
    return {
        name: [parameter["parameter_name"] for parameter in endpoint["parameters"]]
        for name, endpoint in endpoints.items()
    }


def test_run_and_step_take_the_controls_by_name_in_a_fixed_order(api: dict) -> None:
    shown = [item.name for item in shown_settings(GenerationSettings)]
    expected = [
        "preset", "drafter", "prompt", "chat_template", *shown, "race", "race_drafters",
        "race_repeats",
    ]  # fmt: skip
    assert api["/run"] == api["/step"] == expected
    assert shown == [
        "gamma", "adaptive_gamma", "cost_gamma", "temperature", "top_k", "top_p", "seed",
        "max_new_tokens", "draft_stop_below", "draft_stop_cumulative",
    ]  # fmt: skip


def test_generate_takes_every_setting(api: dict) -> None:
    names = [item.name for item in settings_schema()]
    assert api["/generate"] == ["prompt", "preset", *names, "chat_template", "race", "drafter"]


def test_controls_follow_the_schema() -> None:
    settings = GenerationSettings(gamma=7, top_p=0.9, max_new_tokens=64)
    with gr.Blocks():
        controls = setting_controls(settings)
    components = controls.components
    assert list(components) == [item.name for item in shown_settings(GenerationSettings)]
    gamma, top_p, max_new = components["gamma"], components["top_p"], components["max_new_tokens"]
    assert isinstance(gamma, gr.Slider) and (gamma.minimum, gamma.maximum, gamma.step) == (1, 16, 1)
    assert (gamma.label, gamma.value, gamma.elem_id) == ("γ", 7, "sv-gamma")
    assert isinstance(components["adaptive_gamma"], gr.Checkbox)
    assert isinstance(components["top_k"], gr.Number) and components["top_k"].minimum == 0
    assert (top_p.minimum, top_p.maximum, top_p.value) == (0.05, 1.0, 0.9)  # the slider's range
    assert (max_new.maximum, max_new.elem_id) == (512, "sv-max-new-tokens")
    assert "stop_on_eos" not in components  # the app always stops at the end of the answer
    assert controls.updates(DEFAULT.settings)[gamma] == DEFAULT.settings.gamma


def test_the_draft_stops_are_controls_starting_at_the_presets_values() -> None:
    with gr.Blocks():
        controls = setting_controls(DEFAULT.settings)
    below = controls.components["draft_stop_below"]
    cumulative = controls.components["draft_stop_cumulative"]
    assert isinstance(below, gr.Slider) and isinstance(cumulative, gr.Slider)
    assert (below.value, cumulative.value) == (0.3, 0.2)  # the bundled preset's tuning
    assert (below.elem_id, below.maximum) == ("sv-draft-stop-below", 0.95)
    other = next(preset for preset in PRESETS.values() if preset.settings.draft_stop_below == 0)
    updates = controls.updates(other.settings)
    assert updates[below] == 0.0 and updates[cumulative] == other.settings.draft_stop_cumulative


def test_inputs_read_the_controls_through_the_schema_over_the_preset() -> None:
    app = App(PRESETS, ModelCache())
    inputs = app.checks.inputs(
        DEFAULT.id, "hi", {"gamma": 3.0, "temperature": 1}, chat=False, race=True
    )
    assert inputs.settings == GenerationSettings(
        **{**vars(DEFAULT.settings), "gamma": 3, "temperature": 1.0}
    )
    assert inputs.settings.draft_stop_below == DEFAULT.settings.draft_stop_below == 0.3
    assert (inputs.chat, inputs.race) == (False, True)
    settings = GenerationSettings(gamma=2)
    assert app.checks.inputs(DEFAULT.id, "hi", settings).settings is settings


def test_a_request_is_checked_once_the_validator_keeping_its_inputs_for_the_handler() -> None:
    from specviz.app.request_checks import RequestChecks

    checks = RequestChecks(PRESETS)
    checked: list[str] = []
    real = checks.inputs
    checks.inputs = lambda *args, **kwargs: checked.append(args[1]) or real(*args, **kwargs)  # type: ignore[method-assign]
    values = {"preset": DEFAULT.id, "prompt": "hi", "chat_template": False, "gamma": 3}
    ahead = checks.read_ahead(values)
    assert checks.read(dict(values)) is ahead and checked == ["hi"]  # taken, not checked again
    assert checks.read(values) == ahead and checked == ["hi", "hi"]  # taken once only
    # Python counts True and 1 equal; the schema refuses 1 for a switch, and so does the read.
    checks.read_ahead(values | {"adaptive_gamma": True})
    with pytest.raises(gr.Error, match="Adaptive γ must be true or false, got integer 1"):
        checks.read(values | {"adaptive_gamma": 1})
    with pytest.raises(gr.Error, match="The prompt is empty"):  # a refusal keeps nothing
        checks.read_ahead(values | {"prompt": " "})
    assert checks.read(values | {"race_drafters": ["lookup"]}).race_drafters == ("lookup",)


@pytest.mark.parametrize(
    ("chosen", "expected"),
    [(None, DEFAULT.drafter), ("", DEFAULT.drafter), ("lookup", "lookup"),
     (" hybrid:max_ngram=3 ", "hybrid:max_ngram=3")],
)  # fmt: skip
def test_the_run_drafts_with_the_chosen_drafter_or_the_presets(chosen, expected) -> None:
    inputs = App(PRESETS, ModelCache()).checks.inputs(DEFAULT.id, "hi", {}, drafter=chosen)
    assert str(inputs.drafter) == expected
    assert inputs.drafter in inputs.key  # another drafter is another run, not a continuation


@pytest.mark.parametrize(
    ("chosen", "message"),
    [("nope", "Check the drafter: unknown drafter 'nope'"),
     ("lookup:max_ngram=x", "Check the drafter: drafter 'lookup': max_ngram must be a whole")],
)  # fmt: skip
def test_a_bad_drafter_is_a_plain_error(chosen: str, message: str) -> None:
    with pytest.raises(gr.Error, match=message):
        App(PRESETS, ModelCache()).checks.inputs(DEFAULT.id, "hi", {}, drafter=chosen)


def test_the_drafter_dropdown_offers_every_registered_kind_worded() -> None:
    from specviz.app.run_controls import drafter_choices
    from specviz.drafters.base import DrafterSpec
    from specviz.drafters.registry import DRAFTERS

    choices = drafter_choices(DEFAULT, "en")
    # Every kind, each followed by the specs its entry lists (the tree's teaching shape).
    listed = [
        spec for entry in DRAFTERS.values() for spec in (entry.kind, *dict(entry.listed_specs))
    ]
    assert [value for _, value in choices] == listed
    assert "tree:shape=2x2x1" in listed
    # each as a link or a config writes it back (options in order), so the menu names it
    assert all(str(DrafterSpec.parse(spec)) == spec for spec in listed)
    assert all(label != value for label, value in choices)  # a sentence, not the bare kind
    assert len({label for label, _ in choices}) == len(choices)


@pytest.mark.parametrize(
    ("preset", "prompt", "settings", "message"),
    [
        ("nope", "hi", {}, "Unknown preset 'nope'"),
        (DEFAULT.id, "  ", {}, "The prompt is empty"),
        (DEFAULT.id, "hi", {"gamma": 99}, "Check the settings: γ must be between 1 and 16, got 99"),
        (DEFAULT.id, "hi", {"seed": None}, "Check the settings: Seed is blank"),
        (DEFAULT.id, "hi", {"gama": 3}, "'gama' is not a setting"),
    ],
)
def test_bad_inputs_are_plain_errors(
    preset: str, prompt: str, settings: dict, message: str
) -> None:
    with pytest.raises(gr.Error, match=message):
        App(PRESETS, ModelCache()).checks.inputs(preset, prompt, settings)


def test_the_status_line_names_each_models_forward_and_why_not_lean() -> None:
    from specviz.app.live_tab import forwards_note
    from specviz.app.session import Session
    from specviz.models.runner import ForwardChoice

    sess = Session(
        forwards={
            "draft": ForwardChoice("lean", None),
            "target": ForwardChoice("transformers", "model type 'gpt2' is not Llama/Qwen2"),
        }
    )
    note = forwards_note(sess)
    assert "draft: lean step" in note
    assert "target: transformers' forward (model type 'gpt2' is not Llama/Qwen2)" in note
    assert forwards_note(Session()) == ""


def test_the_model_info_shows_the_step_costs_and_the_draft_format_they_chose() -> None:
    from specviz.app.live_tab import forwards_note
    from specviz.app.session import Session
    from specviz.core.cost_model import StepCosts
    from specviz.models.runner import ForwardChoice
    from specviz.models.step_costs import CostReport, DraftTrial

    costs = StepCosts((1.0, 1.68, 2.52), 0.12, 0.21, "int8wo")
    trials = (
        DraftTrial("none", 0.3, 0.06, 0.84, 50, 3.0),
        DraftTrial("int8wo", 0.12, 0.03, 0.84, 50, 1.5),
    )
    sess = Session(
        forwards={"draft": ForwardChoice("lean", None)},
        costs=CostReport(costs, trials, auto=True).phrase(),
    )
    note = forwards_note(sess)
    assert note.startswith("Forward: draft: lean step.")
    assert "one target step 210 ms" in note and "1.00, 1.68, 2.52 steps" in note
    assert "one draft step (int8wo) costs 0.12 of a target step" in note
    assert "unquantized (c 0.30, a 128-token read 12.0 steps, agreement 84%)" in note


def test_a_lab_handler_gets_a_lab_run_and_may_answer_once_or_stream() -> None:
    # LabWiring.start loads the pair and prompt once for every lab, then calls the work with a
    # LabRun and shows each record it returns or yields; Gradio must still find the progress bar,
    # and both kinds of work must reach it.
    import inspect

    from gradio.helpers import special_args

    from specviz.app.gpu_work import Runs
    from specviz.app.lab_tabs import LabRun, LabWiring
    from specviz.text import Phrase

    class Loaded(App):
        def load_with_prompt(self, inputs, progress=None):
            return "pair", "prompt ids"

    bars: list[str] = []

    def once(lab: LabRun, value: float) -> tuple:
        lab.progress(0.5, Phrase("progress.done"))
        return (lab.inputs, lab.pair, lab.prompt_ids, value)

    def streaming(lab: LabRun, value: float):
        yield from range(2)

    with gr.Blocks() as demo:
        runs = Runs(Loaded(PRESETS, ModelCache()), remote=False)
        wiring = LabWiring(runs, {}, "engine", gr.State(None))
        number, status, button = gr.Number(3), gr.HTML(), gr.Button()
        for work in (once, streaming):
            wiring.start(button, work, lambda record: {"shown": record}, [number], [status], status)
    handlers = [fn.fn for fn in demo.fns.values() if fn.fn and fn.fn.__name__ == "run_lab"]
    results = []
    for run in handlers:
        assert inspect.isgeneratorfunction(run)
        values, progress_index, _, _ = special_args(run, ["inputs", 3.0])
        assert progress_index == 0
        values[0] = lambda fraction, desc: bars.append(desc)
        results.append(list(run(*values)))
    assert results == [
        [{"shown": ("inputs", "pair", "prompt ids", 3.0)}],
        [{"shown": 0}, {"shown": 1}],
    ]
    assert bars == ["done"]
    assert sorted(runs.labs) == ["lab-0", "lab-1"]  # each lab's work, registered by name


def test_the_race_lanes_and_repeats_are_checked_within_the_caps() -> None:
    app = App(PRESETS, ModelCache())
    inputs = app.checks.inputs(DEFAULT.id, "hi", {}, drafter="lookup")
    assert (inputs.race_drafters, inputs.race_repeats) == (("lookup",), 3)  # the run's drafter
    lanes = ["draft-model", " hybrid:max_ngram=3 ", "lookup"]
    chosen = app.checks.inputs(DEFAULT.id, "hi", {}, race_drafters=lanes, race_repeats=5.0)
    assert chosen.race_drafters == ("draft-model", "hybrid:max_ngram=3", "lookup")
    assert chosen.race_repeats == 5
    refused = [
        ({"race_drafters": ["lookup", "lookup"]}, "lists lookup twice"),
        ({"race_drafters": ["lookup", "hybrid", "layerskip", "draft-model"]}, "1 to 3 drafters"),
        ({"race_drafters": ["nope"]}, "nope"),
        ({"race_drafters": 5}, "1 to 3 drafters here, got integer 5"),
        ({"race_repeats": 6}, "from 1 to 5, got 6"),
        ({"race_repeats": 2.5}, "from 1 to 5, got 2.5"),
        ({"race_repeats": float("nan")}, "from 1 to 5, got nan"),
        ({"race_repeats": True}, "from 1 to 5, got True"),
    ]
    for values, message in refused:
        with pytest.raises(gr.Error, match=message):
            app.checks.inputs(DEFAULT.id, "hi", {}, **values)


def test_hosted_mode_allows_fewer_lanes_and_repeats() -> None:
    from specviz.app.limits import HOSTED

    app = App(PRESETS, ModelCache(), limits=HOSTED)
    assert app.checks.inputs(DEFAULT.id, "hi", {}).race_repeats == 3
    with pytest.raises(gr.Error, match="from 1 to 2 drafters here, got 3"):
        app.checks.inputs(DEFAULT.id, "hi", {}, race_drafters=["draft-model", "lookup", "hybrid"])
    with pytest.raises(gr.Error, match="from 1 to 3, got 4"):
        app.checks.inputs(DEFAULT.id, "hi", {}, race_repeats=4)


def test_llama_cpps_lanes_are_a_race_choice_only_off_a_space(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from llama_fakes import fake_llama_binary

    from specviz.app.limits import HOSTED
    from specviz.app.llama_lanes import llama_choice, split_llama

    monkeypatch.setenv("SPECVIZ_LLAMA_SERVER", str(fake_llama_binary(tmp_path)))
    assert [value for _, value in llama_choice(False, "en")] == ["llama.cpp"]
    assert llama_choice(True, "en") == []  # a Space's visitors never start a second engine
    local = App(PRESETS, ModelCache())
    chosen = local.checks.inputs(DEFAULT.id, "hi", {}, race_drafters=["lookup", "llama.cpp"])
    assert split_llama(chosen.race_drafters) == (("lookup",), True)
    hosted = App(PRESETS, ModelCache(), limits=HOSTED)
    with pytest.raises(gr.Error, match="only where specviz runs on your own machine"):
        hosted.checks.inputs(DEFAULT.id, "hi", {}, race_drafters=["lookup", "llama.cpp"])
    from specviz.app.llama_lanes import llama_pool
    from specviz.text import UserError

    with pytest.raises(UserError, match="only where specviz runs on your own machine"):
        llama_pool(True)  # the advisor's hidden box, ticked by a hand-built request
    monkeypatch.setenv("SPECVIZ_LLAMA_SERVER", str(tmp_path / "gone"))
    assert llama_choice(False, "en") == []  # a binary that is not there is no choice


def test_a_race_asks_zerogpu_for_each_of_its_runs() -> None:
    from specviz.app import zerogpu
    from specviz.app.gpu_work import race_seconds, run_seconds

    app = App(PRESETS, ModelCache())
    inputs = app.checks.inputs(DEFAULT.id, "hi", {"max_new_tokens": 8}, race=True)
    assert run_seconds(inputs) == zerogpu.gpu_seconds(8)
    assert race_seconds(inputs) == zerogpu.gpu_seconds(8 * 2 * 3)  # plain and its drafter, 3 times
    lanes = app.checks.inputs(
        DEFAULT.id, "hi", {"max_new_tokens": 8}, race_drafters=["lookup", "hybrid"]
    )
    assert race_seconds(lanes) == zerogpu.gpu_seconds(8 * 3 * 3)
