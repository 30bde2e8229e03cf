"""specviz.text: every key the code uses exists, every table matches English, values are escaped.

Japanese (ja.py) must have every English key with the same fields. A fake language ("xx",
English wrapped in ⟦ ⟧, easy to spot) shows that a table missing a key or a field is caught, and
that every view takes its words from the language it is given, per call, while token text stays
escaped.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from ui_events import REJECTION, XSS, XSS_IMG, plain_run, race_result, sample_run

from specviz.text import (
    TABLES,
    Html,
    Joined,
    Phrase,
    TextError,
    UserError,
    placeholders,
    supported_language,
    t,
    t_html,
    table_problems,
)
from specviz.text.en import TABLE as ENGLISH

PACKAGE = Path(__file__).resolve().parents[2] / "specviz"
LOOKUPS = {"t", "t_html", "UserError", "Phrase", "ModelLoadError", "BundledModelError"}
# A catalogue key: dotted lower-case words whose first word names a section of the English table.
SECTIONS = {key.split(".")[0] for key in ENGLISH}
KEY_SHAPE = re.compile(r"^[a-z_]+(\.[a-z0-9_]+)+$")


def _sources() -> Iterator[tuple[Path, ast.Module]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.parent.name != "text":
            yield path, ast.parse(path.read_text(encoding="utf-8"))


def _lookups() -> Iterator[tuple[str, ast.Call]]:
    """Every call of t, t_html or UserError in the package, with where it is."""
    for path, tree in _sources():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) in LOOKUPS:
                yield f"{path.relative_to(PACKAGE)}:{node.lineno}", node


def _key_literals() -> Iterator[tuple[str, str]]:
    """Every string constant in the package shaped like a catalogue key."""
    for path, tree in _sources():
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and KEY_SHAPE.match(node.value)
                and node.value.split(".")[0] in SECTIONS
            ):
                yield f"{path.relative_to(PACKAGE)}:{node.lineno}", node.value


# --- the code and the catalogue agree ----------------------------------------------------------


def test_the_scan_sees_the_lookups() -> None:
    # Guards the tests below against passing because the scan found nothing.
    assert sum(1 for _ in _lookups()) > 200
    assert sum(1 for _ in _key_literals()) > 300


def test_every_key_written_in_the_code_is_in_the_english_table() -> None:
    missing = [f"{where}: {key}" for where, key in _key_literals() if key not in ENGLISH]
    assert missing == []


def test_keys_are_never_built_from_pieces() -> None:
    # A key assembled at run time (f"origin.{kind}") would escape the scan; name each key whole.
    built = [
        where
        for where, call in _lookups()
        if call.args and isinstance(call.args[0], ast.JoinedStr | ast.BinOp)
    ]
    assert built == []


def test_constant_keys_with_their_values_format() -> None:
    # A call that names its key and values outright must supply exactly the template's fields.
    for where, call in _lookups():
        if not (call.args and isinstance(call.args[0], ast.Constant)):
            continue
        if any(keyword.arg is None for keyword in call.keywords):  # **values
            continue
        given = {keyword.arg for keyword in call.keywords if keyword.arg != "lang"}
        assert given == placeholders(ENGLISH[call.args[0].value]), where


def _setting_keys() -> set[str]:
    """The keys the settings schema words its settings with (``setting.<name>``, ``.help``)."""
    from specviz.core.settings import settings_schema

    return {key for item in settings_schema() for key in (item.label_key, item.help_key)}


def _drafter_keys() -> set[str]:
    """The label keys of the registered drafters (``drafter.<kind>``, looked up by convention)."""
    from specviz.drafters.registry import DRAFTERS

    return {entry.label_key for entry in DRAFTERS.values()}


def test_every_setting_is_worded_in_the_english_table() -> None:
    assert sorted(_setting_keys() - set(ENGLISH)) == []


def test_every_registered_drafter_is_worded_in_the_english_table() -> None:
    assert sorted(_drafter_keys() - set(ENGLISH)) == []


def test_every_english_text_is_used_somewhere() -> None:
    used = {key for _, key in _key_literals()} | _setting_keys() | _drafter_keys()
    assert sorted(set(ENGLISH) - used) == []


# --- tables -------------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", sorted(TABLES))
def test_every_table_has_every_english_key_with_the_same_fields(lang: str) -> None:
    assert table_problems(TABLES[lang]) == []


def test_japanese_is_a_language_and_its_table_is_japanese() -> None:
    assert set(TABLES) == {"en", "ja"}
    japanese = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")
    # Every template with an English word outside its fields has Japanese words; those that are
    # only fields, symbols and variable names (γ, {reason}, q_draft = {q}) stay as they are.
    worded = [
        key
        for key, text in ENGLISH.items()
        if re.search(r"[a-z]{4,}", re.sub(r"\{\w+\}|<br>", "", text))
    ]
    untranslated = [key for key in worded if not japanese.search(TABLES["ja"][key])]
    assert len(worded) > 600
    assert untranslated == ["tip.q_and_p", "tip.p_target"]


def test_the_japanese_table_missing_a_key_or_a_field_is_caught() -> None:
    japanese = dict(TABLES["ja"])
    del japanese["cards.title"]
    japanese["race.speedup"] = "{speed}倍 速い"
    assert table_problems(japanese) == [
        "missing key 'cards.title'",
        "'race.speedup' has fields speed, wants ratio",
    ]


def test_templates_hold_plain_named_fields_and_no_straight_double_quote() -> None:
    # No format spec: numbers are formatted in the code. No ": catalogue text may sit in an
    # attribute, where t_html leaves it unescaped except for & < >.
    for lang, table in TABLES.items():
        for key, template in table.items():
            placeholders(template)  # raises on a spec, a conversion or a positional field
            assert '"' not in template, (lang, key)


def _pseudo() -> dict[str, str]:
    """English wrapped in ⟦ ⟧: a complete second table whose text is easy to spot."""
    return {key: f"⟦{template}⟧" for key, template in ENGLISH.items()}


def test_a_second_table_missing_a_key_or_a_field_is_caught() -> None:
    assert table_problems(_pseudo()) == []
    missing_key = _pseudo()
    del missing_key["race.method"]
    assert table_problems(missing_key) == ["missing key 'race.method'"]
    missing_field = _pseudo() | {"counter.alpha.note": "{accepted} of the tested drafts"}
    (problem,) = table_problems(missing_field)
    assert problem == "'counter.alpha.note' has fields accepted, wants accepted, tested"
    renamed = _pseudo() | {"race.speedup": "{speedup}× faster"}
    assert table_problems(renamed) == ["'race.speedup' has fields speedup, wants ratio"]
    extra = _pseudo() | {"race.new": "x"}
    assert table_problems(extra) == ["unknown key 'race.new'"]
    spec = _pseudo() | {"race.speedup": "{ratio:.2f}× faster"}
    (problem,) = table_problems(spec)
    assert "must be a plain name" in problem


@pytest.fixture
def pseudo_language(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setitem(TABLES, "xx", _pseudo())  # type: ignore[index]
    return "xx"


# --- look-ups -----------------------------------------------------------------------------------


def test_values_fill_named_fields() -> None:
    assert t("race.speedup", ratio="2.25") == "2.25× faster"
    assert t("race.speedup", "en", ratio="2.25") == "2.25× faster"


def test_a_missing_or_unexpected_value_raises() -> None:
    with pytest.raises(TextError, match="needs a value for ratio"):
        t("race.speedup")
    with pytest.raises(TextError, match="no field speed"):
        t("race.speedup", ratio="2", speed="3")
    with pytest.raises(TextError, match="needs a value"):
        t_html("caption.rejection", where="x", rejected="y", q="0.1")


def test_an_unknown_key_or_language_raises() -> None:
    with pytest.raises(TextError, match=r"no text 'race\.nope'"):
        t("race.nope")
    with pytest.raises(TextError, match="no text table for language 'fr'"):
        t("race.method", "fr")
    assert supported_language("fr") == "en" and supported_language(None) == "en"


def test_the_language_is_chosen_per_call(pseudo_language: str) -> None:
    assert supported_language(pseudo_language) == pseudo_language
    assert t("race.speedup", pseudo_language, ratio="2") == "⟦2× faster⟧"
    assert t("race.speedup", ratio="2") == "2× faster"  # English, in the same process


def test_html_escapes_values_but_not_markup_the_code_built() -> None:
    page = t_html("caption.where_cycle", cycle=XSS, position=1)
    assert "<script" not in page and "&lt;script&gt;alert(&quot;x&quot;)" in page
    assert t_html("cards.new_tokens", n=Html("<b>3</b>")) == "<b>3</b> new tokens"
    # Catalogue text reads as text: its < becomes &lt;.
    assert t_html("verdict.math.below", u="0.1", accept="0.29") == "u = 0.1 &lt; min(1, p/q) = 0.29"
    assert isinstance(t_html("legend.hint"), Html)


# --- errors the user can fix --------------------------------------------------------------------


def test_a_user_error_carries_its_key_and_words_itself_per_language(pseudo_language: str) -> None:
    error = UserError("error.unknown_gpu", name="'nope'", known="A, B")
    assert isinstance(error, ValueError)  # handlers that only know ValueError still show words
    assert str(error) == "unknown GPU 'nope'; known: A, B"
    assert (error.key, error.values) == ("error.unknown_gpu", {"name": "'nope'", "known": "A, B"})
    assert error.message(pseudo_language) == "⟦unknown GPU 'nope'; known: A, B⟧"


def test_a_user_error_with_a_wrong_key_or_values_fails_where_it_is_raised() -> None:
    with pytest.raises(TextError):
        UserError("error.nope")
    with pytest.raises(TextError):
        UserError("error.unknown_gpu", name="x")


def test_the_cli_prints_a_user_error_as_a_sentence(capsys: pytest.CaptureFixture[str]) -> None:
    from specviz.cli.main import main

    assert main(["project", "--gpu", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: unknown GPU 'nope'; known: ") and "Traceback" not in err


def test_the_cli_words_errors_in_the_language_asked_for(
    pseudo_language: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from specviz.cli.main import main

    assert main(["--lang", pseudo_language, "project", "--gpu", "nope"]) == 2
    assert capsys.readouterr().err.startswith("⟦error: ⟦unknown GPU 'nope'")


# --- every view speaks the language it is given, and still escapes token text -----------------


def _views(lang: str) -> dict[str, str]:
    """Each view's output in ``lang``, as one string per view (figures as JSON)."""
    from specviz.labs import inspector
    from specviz.labs.tasks import charts as task_charts
    from specviz.views import race_html
    from specviz.views import run_charts as charts
    from specviz.views import run_html as render

    cycles, steps = sample_run(), plain_run(9, per_token_s=0.1)
    return {
        "stream": render.stream_html(cycles, lang=lang),
        "plain": render.plain_stream_html(steps, lang=lang),
        "legend": render.legend_html(include_target=True, lang=lang),
        "cards": render.cycle_cards_html(cycles[0], lang=lang),
        "caption": render.rejection_caption(REJECTION, 1, lang=lang),
        "counters": render.counters_html(cycles[-1].totals, gamma_now=2, lang=lang),
        "race": race_html.race_html(race_result([1.0, 1.5], {"lookup": [1.0, 1.0]}), lang=lang),
        "acceptance": charts.acceptance_by_position(cycles, lang=lang).to_json(),
        "rejection": charts.rejection_chart(REJECTION, lang=lang).to_json(),
        "time": charts.time_split(cycles, lang=lang).to_json(),
        "inspector": inspector.inspector_html(cycles[0], 3, lang=lang),
        "inspector_figure": inspector.inspector_figure(cycles[0], lang=lang).to_json(),
        "inspector_lines": "\n".join(inspector.inspector_lines(cycles[0], lang)),
        "tasks": task_charts.task_chart(None, lang=lang).to_json(),
    }


def test_every_view_takes_its_words_from_the_language_given(pseudo_language: str) -> None:
    english, pseudo = _views("en"), _views(pseudo_language)
    for name in english:
        assert "⟦" not in english[name], name
        assert "⟦" in pseudo[name], name
    assert "⟦accepted draft⟧" in pseudo["legend"]


def test_token_text_is_escaped_in_every_language(pseudo_language: str) -> None:
    for lang in ("en", pseudo_language):
        views = _views(lang)
        for name in ("stream", "cards", "caption", "inspector"):
            assert "<script" not in views[name] and "<img" not in views[name], (lang, name)
        assert "&lt;img src=x onerror=alert(1)&gt;" in views["caption"]
        assert XSS_IMG not in views["rejection"]


# --- the app takes every word from the catalogue ------------------------------------------------

APP = PACKAGE / "app"
# Keyword arguments that show words to the user, on any call.
SHOWN_KEYWORDS = {"label", "info", "placeholder", "title", "message", "desc"}
# Calls whose first argument (or value=) is shown: Markdown text, a button's or a tab's title, an
# error, a status line (its second argument, the kind, is a CSS class).
SHOWING_FIRST = {
    "Markdown", "Button", "Tab", "Accordion", "Error", "Warning", "Info", "status_line",
    "status_html", "lab_tab", "run_button", "status_box",
}  # fmt: skip


def _words(node: ast.expr) -> list[str]:
    """The literal words in an argument: string constants (also inside f-strings, lists and
    tuples) that contain a letter."""
    return [
        part.value
        for part in ast.walk(node)
        if isinstance(part, ast.Constant)
        and isinstance(part.value, str)
        and re.search(r"[^\W\d_]", part.value)
    ]


def _shown_literals(tree: ast.Module) -> Iterator[tuple[int, str]]:
    """Literal words passed to a Gradio component, a status line or an error in one module."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = getattr(node.func, "attr", None) or getattr(node.func, "id", None)
        shown = [k.value for k in node.keywords if k.arg in SHOWN_KEYWORDS]
        if name in SHOWING_FIRST:
            shown += node.args[:1] + [k.value for k in node.keywords if k.arg == "value"]
        for argument in shown:
            if isinstance(argument, ast.Call):  # t(...), t_html(...) and views build their own
                continue
            for words in _words(argument):
                yield node.lineno, words


def test_the_app_passes_no_literal_words_to_gradio() -> None:
    found = [
        f"{path.relative_to(PACKAGE)}:{line}: {words!r}"
        for path in sorted(APP.glob("*.py"))
        for line, words in _shown_literals(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert found == []


def test_the_app_scan_catches_literal_words() -> None:
    # The scan above must flag what it is there to flag, and pass what is allowed.
    source = (
        'gr.Markdown("Hello")\ngr.Slider(1, 2, label="Cycle", elem_id="sv-x")\n'
        'raise gr.Error(f"Bad {x}")\nstatus_line("Done.", "done")\n'
        'gr.Button(t("app.button.run", lang), elem_classes="sv-run")\ngr.HTML("", js_on_load=JS)\n'
    )
    found = [words for _, words in _shown_literals(ast.parse(source))]
    assert found == ["Hello", "Cycle", "Bad ", "Done."]


def _shown_text(component: object) -> list[str]:
    """The words a built component shows: its label, info, placeholder, a Markdown's or a
    Button's value, and a Radio's choices."""
    texts = [getattr(component, name, None) for name in ("label", "info", "placeholder")]
    if type(component).__name__ in {"Markdown", "Button"}:
        texts.append(getattr(component, "value", None))
    if type(component).__name__ == "Radio":
        texts += [label for label, _ in getattr(component, "choices", ())]
    return [text for text in texts if isinstance(text, str) and re.search(r"[^\W\d_]", text)]


def test_the_app_is_worded_in_the_language_it_is_built_with(pseudo_language: str) -> None:
    import gradio as gr
    from gradio.components.api_component import Api

    from specviz.app.builder import build_demo
    from specviz.models.loader import ModelCache
    from specviz.models.presets import load_presets

    presets = load_presets()
    demo = build_demo(presets, ModelCache(), lang=pseudo_language)
    descriptions = {preset.description for preset in presets.values()}
    shown = [
        text
        for block in demo.blocks.values()
        if not isinstance(block, Api)  # the API's parameters, not shown on the page
        for text in _shown_text(block)
        if text not in descriptions  # a preset's own description is the preset file's words
    ]
    assert len(shown) > 40
    english = [text for text in shown if "⟦" not in text]
    assert english == []
    tabs = [block.label for block in demo.blocks.values() if isinstance(block, gr.Tab)]
    assert tabs and all(label.startswith("⟦") for label in tabs)


# --- errors from bad input reach the reader as catalogue sentences ------------------------------


def test_bad_settings_in_the_app_are_worded_in_its_language(pseudo_language: str) -> None:
    import gradio as gr

    from specviz.app.session import App
    from specviz.models.loader import ModelCache
    from specviz.models.presets import default_preset, load_presets

    presets = load_presets()
    preset = default_preset(presets).id
    with pytest.raises(gr.Error) as english:
        App(presets, ModelCache()).checks.inputs(preset, "hi", {"gamma": 0})
    assert english.value.message == "Check the settings: γ must be between 1 and 16, got 0."
    with pytest.raises(gr.Error) as pseudo:
        App(presets, ModelCache(), lang=pseudo_language).checks.inputs(preset, "hi", {"gamma": 0})
    # Every part is worded in the app's language: the frame, the label, the reason, the range.
    message = pseudo.value.message
    assert message.startswith("⟦Check the settings: ")
    for part in ("⟦γ⟧", "⟦must be ⟦between 1 and 16⟧, got 0⟧"):
        assert part in message
    with pytest.raises(gr.Error) as empty:
        App(presets, ModelCache(), lang=pseudo_language).checks.inputs(preset, " ", {})
    assert empty.value.message.startswith("⟦The prompt is empty")


def test_bad_settings_on_the_command_line_are_worded_in_its_language(
    pseudo_language: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from specviz.cli.main import main

    assert main(["generate", "--prompt", "hi", "--gamma", "0", "--top-p", "0"]) == 2
    assert capsys.readouterr().err == (
        "error: γ must be between 1 and 16, got 0; Top-p must be above 0 and at most 1, got 0.0\n"
    )
    assert main(["--lang", pseudo_language, "generate", "--prompt", "hi", "--gamma", "0"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("⟦error: ⟦⟦⟦γ⟧ ⟦must be ⟦between 1 and 16⟧, got 0⟧⟧")


def test_setting_errors_are_user_errors_that_pickle() -> None:
    import pickle

    from specviz.core.settings import GenerationSettings, SettingError, settings_from_mapping

    with pytest.raises(SettingError) as raised:
        settings_from_mapping({"gama": 1, "seed": "3"}, GenerationSettings())
    error = raised.value
    assert isinstance(error, UserError)
    clone = pickle.loads(pickle.dumps(error))
    assert (str(clone), clone.problems, clone.message()) == (str(error), error.problems, str(error))
    user = UserError("error.alpha", alpha=2)
    assert str(pickle.loads(pickle.dumps(user))) == "α must be in [0, 1], got 2"


def test_a_phrase_is_worded_in_the_outer_language(pseudo_language: str) -> None:
    error = UserError(
        "error.problems",
        problems=Joined("error.separator", (Phrase("error.lean_step.counts"), "as is")),
    )
    assert error.message() == (
        "context length, blocks and steps per block must be at least 1; as is"
    )
    assert error.message(pseudo_language) == (
        "⟦⟦context length, blocks and steps per block must be at least 1⟧⟦; ⟧as is⟧"
    )
    assert t_html("error.preset", pseudo_language, reason=Phrase("error.preset.empty")) == (
        "⟦⟦must not be empty⟧⟧"
    )
    with pytest.raises(TextError):
        Phrase("error.nope")


@pytest.mark.parametrize(
    ("raise_it", "key"),
    [
        (lambda: __import__("specviz.drafters.registry").drafters.registry.make_drafter(
            "nope", None), "error.drafter.unknown"),
        (lambda: __import__("specviz.drafters.base").drafters.base.DrafterSpec.parse(
            "draft-model:x"), "error.drafter.option_form"),
    ],
)  # fmt: skip
def test_drafter_spec_errors_carry_keys(raise_it: object, key: str) -> None:
    with pytest.raises(UserError) as raised:
        raise_it()  # type: ignore[operator]
    assert raised.value.key == key


def test_preset_errors_carry_keys(tmp_path: Path, pseudo_language: str) -> None:
    from specviz.models.presets import PresetError, load_preset

    path = tmp_path / "x.toml"
    path.write_text('id = "x"\nlabl = "typo"\n', encoding="utf-8")
    with pytest.raises(PresetError) as raised:
        load_preset(path)
    error = raised.value
    assert (error.key, error.field) == ("error.preset.at_field", "labl")
    assert str(error).startswith(f"{path}: field 'labl': unknown field (typo?); known fields are")
    assert error.message(pseudo_language).startswith(f"⟦{path}: field 'labl': ⟦unknown field")


# --- progress, model loading, the forward in use and task names carry keys, not sentences -------

# Calls whose arguments reach the reader: none may pass a sentence (a string or f-string whose
# text has a space); they pass catalogue keys, Phrases and values.
WORDED_CALLS = {"ModelLoadError", "BundledModelError", "ForwardChoice", "progress", "report"}


def _strings(node: ast.expr) -> list[str]:
    """The literal text of a string constant or of an f-string's fixed parts."""
    return [
        part.value
        for part in ast.walk(node)
        if isinstance(part, ast.Constant) and isinstance(part.value, str)
    ]


def test_progress_load_errors_and_forward_reasons_pass_no_sentences() -> None:
    found = []
    for path, tree in _sources():
        for node in ast.walk(tree):
            name = isinstance(node, ast.Call) and (
                getattr(node.func, "id", None) or getattr(node.func, "attr", None)
            )
            if name not in WORDED_CALLS:
                continue
            for argument in [*node.args, *(keyword.value for keyword in node.keywords)]:
                if not isinstance(argument, ast.JoinedStr | ast.Constant):
                    continue
                if any(" " in text for text in _strings(argument)):
                    found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert found == []


def test_measurement_progress_is_worded_per_language(pseudo_language: str) -> None:
    from specviz.measure.harness import Method, Outcome, iter_measurements

    methods = [Method("A", lambda trial: Outcome(1)), Method("B", lambda trial: Outcome(1))]
    messages = [update.message for update in iter_measurements(methods, repeats=2)]
    assert [str(message) for message in messages][:2] == ["A (1/2)", "B (1/2)"]
    assert messages[-1].text(pseudo_language) == "⟦done⟧"
    assert messages[0].text(pseudo_language) == "⟦⟦A⟧ (1/2)⟧"


def test_the_app_words_progress_and_load_errors_in_its_language(pseudo_language: str) -> None:
    import gradio as gr

    from specviz.app.session import App
    from specviz.models.loader import ModelCache
    from specviz.models.presets import ModelSource, load_presets

    app = App(load_presets(), ModelCache(), lang=pseudo_language)
    shown: list[tuple[float, str]] = []
    bar = app.progress_bar(lambda fraction, desc: shown.append((fraction, desc)))
    bar(1.5, Phrase("load.tokenizer", ref="org/model"))
    assert shown == [(1.0, "⟦Loading tokenizer of org/model⟧")]
    preset = next(iter(app.presets.values()))
    missing = ModelSource("local", "/nonexistent/model")
    broken = type(preset)(**{**preset.__dict__, "draft": missing, "target": missing})
    with pytest.raises(gr.Error) as raised:
        app.load(broken)
    assert raised.value.message == (
        "⟦Could not load the models: ⟦Local model folder '/nonexistent/model' does not exist.⟧⟧"
    )


def test_load_errors_carry_keys_and_pickle(pseudo_language: str, tmp_path: Path) -> None:
    import pickle

    import torch

    from specviz.models.bundled import BundledModel, BundledModelError, part_files
    from specviz.models.loader import ModelLoadError, load_model
    from specviz.models.presets import ModelSource

    with pytest.raises(ModelLoadError) as raised:
        load_model(
            ModelSource("gguf", str(tmp_path / "none.gguf")), torch.device("cpu"), torch.float32
        )
    error = raised.value
    assert isinstance(error, UserError) and isinstance(error, RuntimeError)
    assert error.key == "error.load.gguf_missing"
    assert error.message(pseudo_language).startswith("⟦GGUF file ")
    assert pickle.loads(pickle.dumps(error)).key == error.key
    fake = BundledModel("fake", "Fake", "specviz_no_such_part", 1, "1.0", 1, "0" * 64)
    with pytest.raises(BundledModelError) as missing_part:
        part_files(fake)
    assert missing_part.value.key == "error.bundled.not_installed"


def test_an_empty_prompt_is_the_catalogues_error(tiny_pair) -> None:
    from specviz.models.loader import ModelPair

    pair = ModelPair(
        tiny_pair.draft,
        tiny_pair.target,
        tiny_pair.tokenizer,
        frozenset(),
        None,
        None,  # type: ignore[arg-type]
    )
    with pytest.raises(UserError) as raised:
        pair.encode_prompt("  ")
    assert raised.value.key == "error.prompt_empty"


def test_the_forward_note_words_the_fallback_reason(pseudo_language: str) -> None:
    from specviz.app.live_tab import forwards_note
    from specviz.app.session import Session
    from specviz.models.runner import ForwardChoice

    session = Session(
        forwards={
            "draft": ForwardChoice("transformers", Phrase("forward.why.training")),
            "target": ForwardChoice("lean", None),
        }
    )
    assert forwards_note(session) == (
        "Forward: draft: transformers' forward (the model is in training mode); target: lean step."
    )
    assert "⟦the model is in training mode⟧" in forwards_note(session, pseudo_language)


def test_task_names_are_worded_and_a_custom_task_keeps_its_name(pseudo_language: str) -> None:
    from specviz.app.run_controls import task_choices
    from specviz.models.presets import TASKS, task_label

    assert all(task_label(task, pseudo_language) == f"⟦{task}⟧" for task in TASKS)
    assert task_choices(["code", "poems"], pseudo_language) == [
        ("⟦code⟧", "code"),
        ("poems", "poems"),
    ]


def test_the_setting_flags_help_follows_lang(
    pseudo_language: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from specviz.cli.main import main

    with pytest.raises(SystemExit):
        main(["--lang", pseudo_language, "generate", "--help"])
    out = capsys.readouterr().out
    assert "⟦stop after this many generated tokens⟧" in out
    with pytest.raises(SystemExit):
        main(["generate", "--help"])
    assert "⟦" not in capsys.readouterr().out
