"""Tests for specviz.models.presets: the shipped preset files and the validator."""

from __future__ import annotations

import pickle
import re
import types
from pathlib import Path

import pytest

from specviz.core.settings import GenerationSettings
from specviz.models.presets import (
    DEFAULT_DRAFTER,
    PRESETS_DIR,
    TASKS,
    ModelSource,
    Preset,
    PresetError,
    default_preset,
    load_preset,
    load_presets,
)

BUNDLED_ID = "qwen2.5-coder-bundled"

# A minimal valid preset; invalid cases are made by editing one line of it, so
# each test checks exactly one rule.
VALID = """\
id = "{id}"
label = "Test pair"
draft = "hub:Qwen/Qwen2.5-0.5B-Instruct"
target = "hub:Qwen/Qwen2.5-7B-Instruct"
dtype = "bfloat16"
gamma = 5

[prompts]
code = ["Write a function.", "Write a SQL query."]
story = ["Write a story."]
"""


def write_preset(directory: Path, name: str, text: str | None = None) -> Path:
    path = directory / f"{name}.toml"
    path.write_text(VALID.format(id=name) if text is None else text, encoding="utf-8")
    return path


def replace_line(name: str, prefix: str, new_line: str) -> str:
    """Return the VALID preset for *name* with the line starting *prefix* replaced."""
    lines = VALID.format(id=name).splitlines()
    matches = [i for i, line in enumerate(lines) if line.startswith(prefix)]
    assert len(matches) == 1, prefix
    lines[matches[0]] = new_line
    return "\n".join(lines) + "\n"


def assert_error(excinfo: pytest.ExceptionInfo[PresetError], path: Path, field: str) -> None:
    message = str(excinfo.value)
    assert path.name in message
    assert f"'{field}'" in message
    assert excinfo.value.field == field


# --- shipped presets -----------------------------------------------------------------


def shipped_files() -> list[Path]:
    return sorted(PRESETS_DIR.glob("*.toml"))


def test_presets_dir_is_repo_folder() -> None:
    assert Path(__file__).resolve().parents[2] / "presets" == PRESETS_DIR
    assert len(shipped_files()) >= 5


@pytest.mark.parametrize("path", shipped_files(), ids=lambda p: p.stem)
def test_every_shipped_file_loads(path: Path) -> None:
    preset = load_preset(path)
    assert preset.id == path.stem
    assert preset.label.strip()
    assert preset.description.strip()
    # A Japanese page shows the Japanese description, written in Japanese (kana present).
    assert preset.describe("ja") != preset.description
    assert re.search(r"[\u3040-\u30ff]", preset.describe("ja"))
    assert preset.prompts_flat()
    assert preset.trust_remote_code is False


@pytest.mark.parametrize("path", shipped_files(), ids=lambda p: p.stem)
def test_hub_presets_say_they_need_internet(path: Path) -> None:
    preset = load_preset(path)
    if preset.draft.kind != "hub" and preset.target.kind != "hub":
        pytest.skip("not a hub preset")
    assert "internet" in preset.description.lower()
    assert len(preset.prompts) >= 3


def test_load_presets_default_first_then_sorted() -> None:
    presets = load_presets()
    ids = list(presets)
    assert ids[0] == BUNDLED_ID
    assert ids[1:] == sorted(ids[1:])
    assert {p.stem for p in shipped_files()} == set(ids)
    assert [p.id for p in presets.values() if p.default] == [BUNDLED_ID]
    assert default_preset(presets).id == BUNDLED_ID


def test_bundled_preset_contents() -> None:
    preset = load_presets()[BUNDLED_ID]
    assert str(preset.draft) == "bundled:qwen2.5-coder-0.5b-instruct"
    assert str(preset.target) == "bundled:qwen2.5-coder-1.5b-instruct"
    assert (preset.dtype, preset.draft_quantization, preset.chat_template) == ("bfloat16", "int4dual", True)  # fmt: skip
    assert preset.drafter == DEFAULT_DRAFTER
    assert preset.settings == GenerationSettings(
        gamma=5, max_new_tokens=96, draft_stop_below=0.3, draft_stop_cumulative=0.2
    )
    assert tuple(preset.prompts) == TASKS
    for task in TASKS:
        assert 2 <= len(preset.prompts[task]) <= 3


def test_expected_hub_pairs() -> None:
    presets = load_presets()
    expected = {
        "qwen2.5-0.5b-to-7b": (
            "Qwen/Qwen2.5-0.5B-Instruct",
            "Qwen/Qwen2.5-7B-Instruct",
            5,
        ),
        "llama-3.2-1b-to-3.1-8b": (
            "meta-llama/Llama-3.2-1B-Instruct",
            "meta-llama/Llama-3.1-8B-Instruct",
            5,
        ),
        "smollm2-135m-to-1.7b": (
            "HuggingFaceTB/SmolLM2-135M-Instruct",
            "HuggingFaceTB/SmolLM2-1.7B-Instruct",
            4,
        ),
        "gpt2-to-gpt2-xl": ("openai-community/gpt2", "openai-community/gpt2-xl", 4),
    }
    for pid, (draft, target, gamma) in expected.items():
        preset = presets[pid]
        assert preset.draft == ModelSource("hub", draft)
        assert preset.target == ModelSource("hub", target)
        assert preset.settings.gamma == gamma
    gpt2 = presets["gpt2-to-gpt2-xl"]
    assert (gpt2.dtype, gpt2.chat_template) == ("float32", False)


# --- Preset behaviour ------------------------------------------------------------------


def test_defaults_and_read_only_prompts(tmp_path: Path) -> None:
    preset = load_preset(write_preset(tmp_path, "minimal"))
    assert preset.description == ""
    # Settings the file leaves out keep the schema's defaults.
    assert preset.settings == GenerationSettings(gamma=5)
    assert preset.settings.temperature == 0.0 and isinstance(preset.settings.temperature, float)
    assert preset.drafter == "draft-model"
    assert preset.chat_template is True
    assert preset.trust_remote_code is False
    assert preset.default is False
    assert isinstance(preset.prompts, types.MappingProxyType)
    assert preset.prompts["code"] == ("Write a function.", "Write a SQL query.")
    with pytest.raises(TypeError):
        preset.prompts["code"] = ("x",)  # type: ignore[index]
    hash(preset)  # frozen presets can be used as dict keys / in caches


def test_prompts_flat_follows_tasks_order(tmp_path: Path) -> None:
    text = VALID.format(id="order").replace(
        "[prompts]\n",
        '[prompts]\nrewriting = ["Rewrite."]\ntranslation = ["Translate."]\n',
    )
    preset = load_preset(write_preset(tmp_path, "order", text))
    assert preset.prompts_flat() == [
        ("code", "Write a function."),
        ("code", "Write a SQL query."),
        ("story", "Write a story."),
        ("translation", "Translate."),
        ("rewriting", "Rewrite."),
    ]
    assert tuple(preset.prompts) == ("code", "story", "translation", "rewriting")


def test_japanese_examples_stand_in_task_by_task(tmp_path: Path) -> None:
    text = VALID.format(id="ja") + '\n[prompts_ja]\ncode = ["関数を書いてください。"]\n'
    preset = load_preset(write_preset(tmp_path, "ja", text))
    assert preset.example_prompts("ja")["code"] == ("関数を書いてください。",)
    # A task with no Japanese example shows the [prompts] ones; English never changes.
    assert preset.example_prompts("ja")["story"] == preset.prompts["story"]
    assert preset.example_prompts("en") == dict(preset.prompts)
    assert preset.prompts_flat("ja")[0] == ("code", "関数を書いてください。")


@pytest.mark.parametrize(
    ("table", "field", "message"),
    [
        ('[prompts_ja]\npoems = ["x"]', "prompts_ja.poems", "unknown task"),
        ("[prompts_ja]\ncode = []", "prompts_ja.code", "at least one prompt"),
        ('[prompts_fr]\ncode = ["x"]', "prompts_fr", "unknown field"),
    ],
)
def test_translated_examples_are_checked(
    tmp_path: Path, table: str, field: str, message: str
) -> None:
    path = write_preset(tmp_path, "bad", VALID.format(id="bad") + "\n" + table + "\n")
    with pytest.raises(PresetError, match=message) as excinfo:
        load_preset(path)
    assert_error(excinfo, path, field)


def test_the_bundled_preset_has_japanese_examples_for_every_task() -> None:
    preset = default_preset(load_presets())
    japanese = preset.translated_prompts["ja"]
    assert tuple(japanese) == TASKS
    for task, prompts in japanese.items():
        # Written in Japanese, or (translation into Japanese) asking for it.
        assert all(
            re.search("[\u3040-\u30ff]", prompt) or "Japanese" in prompt for prompt in prompts
        ), task
    # Translation goes both ways: into Japanese and out of it.
    assert any("Japanese" in prompt for prompt in japanese["translation"])
    assert any("英語" in prompt for prompt in japanese["translation"])


def test_integer_floats_are_accepted(tmp_path: Path) -> None:
    text = VALID.format(id="ints").replace("gamma = 5\n", "gamma = 5\ntemperature = 1\ntop_p = 1\n")
    preset = load_preset(write_preset(tmp_path, "ints", text))
    assert preset.settings.temperature == 1.0 and isinstance(preset.settings.temperature, float)
    assert preset.settings.top_p == 1.0 and isinstance(preset.settings.top_p, float)


def test_preset_built_in_code_is_validated() -> None:
    source = ModelSource("hub", "gpt2")
    kwargs: dict[str, object] = {
        "id": "custom",
        "label": "Custom",
        "description": "",
        "draft": source,
        "target": source,
        "dtype": "auto",
        "settings": GenerationSettings(gamma=4, temperature=0.7, top_k=50, top_p=0.9),
        "chat_template": False,
        "trust_remote_code": False,
        "default": False,
        "prompts": {"story": ["Once upon a time"]},
    }
    preset = Preset(**kwargs)  # type: ignore[arg-type]
    assert preset.prompts == {"story": ("Once upon a time",)}
    with pytest.raises(PresetError, match="field 'settings'"):
        Preset(**{**kwargs, "settings": {"gamma": 4}})  # type: ignore[arg-type]
    with pytest.raises(PresetError, match="field 'drafter'"):
        Preset(**{**kwargs, "drafter": " "})  # type: ignore[arg-type]


# --- ModelSource -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "kind", "ref", "revision"),
    [
        ("hub:Qwen/Qwen2.5-0.5B-Instruct", "hub", "Qwen/Qwen2.5-0.5B-Instruct", None),
        ("hub:gpt2", "hub", "gpt2", None),
        ("hub:org/name@v1.0", "hub", "org/name", "v1.0"),
        ("hub:org/name@refs/pr/1", "hub", "org/name", "refs/pr/1"),
        ("local:/models/my model@2", "local", "/models/my model@2", None),
        ("local:C:\\models\\qwen", "local", "C:\\models\\qwen", None),
        ("gguf:/path/x.gguf", "gguf", "/path/x.gguf", None),
        (
            "bundled:qwen2.5-coder-0.5b-instruct",
            "bundled",
            "qwen2.5-coder-0.5b-instruct",
            None,
        ),
    ],
)
def test_model_source_round_trip(text: str, kind: str, ref: str, revision: str | None) -> None:
    source = ModelSource.parse(text)
    assert (source.kind, source.ref, source.revision) == (kind, ref, revision)
    assert str(source) == text
    assert ModelSource.parse(str(source)) == source


def test_model_source_strips_spaces() -> None:
    assert ModelSource.parse("  hub: org/name @ main ") == ModelSource("hub", "org/name", "main")


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        ("Qwen/Qwen2.5-0.5B-Instruct", "no kind prefix"),
        ("http://example.com/model", "unknown model source kind 'http'"),
        ("HUB:gpt2", "unknown model source kind 'HUB'"),
        ("hub:", "empty reference"),
        ("local:   ", "empty reference"),
        ("bundled:", "empty reference"),
        ("hub:org/name@", "empty revision"),
        ("gguf:/path/model.bin", r"\.gguf"),
        ("hub:/home/me/model", "org/name"),
        ("hub:a/b/c", "org/name"),
        ("bundled:some/path", "not a path"),
    ],
)
def test_model_source_errors(text: str, pattern: str) -> None:
    with pytest.raises(PresetError, match=pattern):
        ModelSource.parse(text)


def test_model_source_constructor_validates() -> None:
    with pytest.raises(PresetError, match="only applies to hub"):
        ModelSource("local", "/models/x", revision="main")
    with pytest.raises(PresetError, match="unknown model source kind"):
        ModelSource("s3", "bucket/model")


def test_preset_error_pickles() -> None:
    error = PresetError("bad", path="x.toml", field="gamma")
    clone = pickle.loads(pickle.dumps(error))
    assert (str(clone), clone.path, clone.field) == (str(error), "x.toml", "gamma")


# --- invalid files ---------------------------------------------------------------------


def test_message_format(tmp_path: Path) -> None:
    path = write_preset(tmp_path, "zero", replace_line("zero", "gamma", "gamma = 0"))
    with pytest.raises(PresetError) as excinfo:
        load_preset(path)
    assert str(excinfo.value) == (f"{path}: field 'gamma': must be between 1 and 16, got 0")


@pytest.mark.parametrize(
    ("prefix", "new_line", "field", "pattern"),
    [
        ("gamma", "gama = 5", "gama", "unknown field"),
        ("gamma", "gamma = true", "gamma", "got boolean true"),
        ("gamma", 'gamma = "5"', "gamma", "got string '5'"),
        ("gamma", "gamma = 5.0", "gamma", "got float 5.0"),
        ("gamma", "gamma = 0", "gamma", "between 1 and 16, got 0"),
        ("gamma", "gamma = 17", "gamma", "between 1 and 16, got 17"),
        ("gamma", "gamma = 5\ntop_p = 0", "top_p", "above 0 and at most 1, got 0.0"),
        ("gamma", "gamma = 5\ntop_p = 1.5", "top_p", "above 0 and at most 1, got 1.5"),
        ("gamma", "gamma = 5\ntemperature = -0.1", "temperature", "between"),
        ("gamma", "gamma = 5\ntemperature = 2.5", "temperature", "between"),
        ("gamma", "gamma = 5\ntemperature = nan", "temperature", "between"),
        ("gamma", "gamma = 5\ntop_k = -1", "top_k", "at least 0, got -1"),
        (
            "gamma",
            "gamma = 5\nseed = 1.5",
            "seed",
            "must be an integer between 0 and 18446744073709551615, got float 1.5",
        ),
        ("gamma", "gamma = 5\nstop_on_eos = 0", "stop_on_eos", "true or false"),
        ("gamma", 'gamma = 5\ndrafter = ""', "drafter", "must not be empty"),
        ("gamma", "gamma = 5\ndrafter = 3", "drafter", "must be a string"),
        (
            "gamma",
            "gamma = 5\nmax_new_tokens = 0",
            "max_new_tokens",
            "between 1 and 4096",
        ),
        ("gamma", "gamma = 5\nmax_new_tokens = 5000", "max_new_tokens", "between"),
        ("gamma", "gamma = 5\nadaptive_gamma = 1", "adaptive_gamma", "true or false"),
        (
            "gamma",
            'gamma = 5\ntrust_remote_code = "yes"',
            "trust_remote_code",
            "true or false",
        ),
        ("dtype", 'dtype = "int8"', "dtype", "bfloat16"),
        (
            "draft",
            'draft = "s3:bucket/model"',
            "draft",
            "unknown model source kind 's3'",
        ),
        ("target", 'target = "gguf:/models/x.bin"', "target", ".gguf"),
        ("target", "target = 3", "target", "must be a string"),
        ("label", 'label = ""', "label", "must not be empty"),
        ("label", "#", "label", "required field is missing"),
        ("id", 'id = "other"', "id", "file name"),
        ("code", 'poetry = ["A poem."]', "prompts.poetry", "unknown task"),
        ("code", "code = []", "prompts.code", "at least one prompt"),
        ("code", 'code = "Write a function."', "prompts.code", "list of strings"),
        ("code", "code = [1]", "prompts.code[0]", "must be a string"),
        ("code", 'code = ["a", "a"]', "prompts.code[1]", "duplicate"),
    ],
)
def test_invalid_field(
    tmp_path: Path, prefix: str, new_line: str, field: str, pattern: str
) -> None:
    path = write_preset(tmp_path, "bad", replace_line("bad", prefix, new_line))
    with pytest.raises(PresetError, match=re.escape(pattern)) as excinfo:
        load_preset(path)
    assert_error(excinfo, path, field)


def test_id_not_a_slug(tmp_path: Path) -> None:
    path = write_preset(tmp_path, "Bad_Name", replace_line("x", "id", 'id = "Bad_Name"'))
    with pytest.raises(PresetError, match="slug") as excinfo:
        load_preset(path)
    assert_error(excinfo, path, "id")


def test_toml_syntax_error(tmp_path: Path) -> None:
    path = write_preset(tmp_path, "broken", replace_line("broken", "gamma", "gamma = "))
    with pytest.raises(PresetError, match="invalid TOML") as excinfo:
        load_preset(path)
    # There is no field to name; tomllib's message gives the line instead.
    assert path.name in str(excinfo.value)
    assert "line" in str(excinfo.value)
    assert excinfo.value.field is None


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.toml"
    with pytest.raises(PresetError, match="cannot read") as excinfo:
        load_preset(path)
    assert path.name in str(excinfo.value)


def test_empty_prompts_table(tmp_path: Path) -> None:
    text = VALID.format(id="empty").split("[prompts]")[0] + "[prompts]\n"
    path = write_preset(tmp_path, "empty", text)
    with pytest.raises(PresetError, match="at least one prompt") as excinfo:
        load_preset(path)
    assert_error(excinfo, path, "prompts")


def test_bundled_preset_needs_every_task(tmp_path: Path) -> None:
    text = replace_line("offline", "draft", 'draft = "bundled:qwen2.5-coder-0.5b-instruct"')
    path = write_preset(tmp_path, "offline", text)
    with pytest.raises(PresetError, match="every task; missing explanation") as excinfo:
        load_preset(path)
    assert_error(excinfo, path, "prompts")


# --- directories -----------------------------------------------------------------------


def test_two_defaults_in_directory(tmp_path: Path) -> None:
    for name in ("first", "second"):
        write_preset(tmp_path, name, replace_line(name, "gamma", "gamma = 5\ndefault = true"))
    with pytest.raises(PresetError, match="found 2") as excinfo:
        load_presets(tmp_path)
    assert_error(excinfo, tmp_path, "default")
    assert "first.toml" in str(excinfo.value)
    assert "second.toml" in str(excinfo.value)


def test_no_default_in_directory(tmp_path: Path) -> None:
    write_preset(tmp_path, "only")
    with pytest.raises(PresetError, match="found 0") as excinfo:
        load_presets(tmp_path)
    assert_error(excinfo, tmp_path, "default")


def test_directory_order_and_ignored_files(tmp_path: Path) -> None:
    write_preset(tmp_path, "b-pair")
    write_preset(tmp_path, "a-pair")
    write_preset(tmp_path, "z-pair", replace_line("z-pair", "gamma", "gamma = 5\ndefault = true"))
    (tmp_path / ".#a-pair.toml").write_text("not toml [", encoding="utf-8")
    (tmp_path / "README.md").write_text("notes", encoding="utf-8")
    presets = load_presets(tmp_path)
    assert list(presets) == ["z-pair", "a-pair", "b-pair"]
    assert default_preset(presets).id == "z-pair"


def test_bad_file_in_directory_names_that_file(tmp_path: Path) -> None:
    write_preset(tmp_path, "good", replace_line("good", "gamma", "gamma = 5\ndefault = true"))
    bad = write_preset(tmp_path, "bad", replace_line("bad", "gamma", "gamma = 17"))
    with pytest.raises(PresetError) as excinfo:
        load_presets(tmp_path)
    assert_error(excinfo, bad, "gamma")


def test_missing_or_empty_directory(tmp_path: Path) -> None:
    with pytest.raises(PresetError, match="does not exist"):
        load_presets(tmp_path / "missing")
    with pytest.raises(PresetError, match=r"no \*\.toml"):
        load_presets(tmp_path)


def test_default_preset_requires_exactly_one() -> None:
    presets = load_presets()
    non_default = {pid: p for pid, p in presets.items() if not p.default}
    with pytest.raises(PresetError, match="found 0"):
        default_preset(non_default)
    with pytest.raises(PresetError, match="found 0"):
        default_preset({})


@pytest.mark.parametrize(
    ("line", "field", "message"),
    [
        ('draft_quantization = "int4"', "draft_quantization", "none, int8"),
        ("draft_stop_below = 1.5", "draft_stop_below", "draft_stop_below"),
        ("draft_stop_cumulative = -0.1", "draft_stop_cumulative", "draft_stop_cumulative"),
    ],
)
def test_draft_options_are_validated(tmp_path: Path, line: str, field: str, message: str) -> None:
    text = (PRESETS_DIR / f"{BUNDLED_ID}.toml").read_text()
    # Top-level keys must come before the [prompts] table, so the new line goes first.
    rows = [row for row in text.splitlines() if not row.startswith(f"{field} =")]
    text = "\n".join([line, *rows]) + "\n"
    path = tmp_path / f"{BUNDLED_ID}.toml"
    path.write_text(text)
    with pytest.raises(PresetError) as raised:
        load_preset(path)
    assert path.name in str(raised.value) and field in str(raised.value)
    assert message in str(raised.value)


def test_a_description_in_another_language_is_shown_to_that_language_only(tmp_path: Path) -> None:
    text = replace_line("d", "label =", 'label = "Test pair"\ndescription = "English words"')
    with_ja = load_preset(
        write_preset(
            tmp_path,
            "d",
            text.replace(
                'description = "English words"',
                'description = "English words"\ndescription_ja = "日本語"',
            ),
        )
    )
    assert with_ja.describe("en") == "English words"
    assert with_ja.describe("ja") == "日本語"
    without = load_preset(write_preset(tmp_path, "d", text))
    assert without.describe("ja") == "English words"


def test_a_label_in_another_language_is_shown_to_that_language_only(tmp_path: Path) -> None:
    text = replace_line(
        "l", "label =", 'label = "Test pair (offline)"\nlabel_ja = "テスト（オフライン）"'
    )
    preset = load_preset(write_preset(tmp_path, "l", text))
    assert preset.label_in("en") == preset.label == "Test pair (offline)"
    assert preset.label_in("ja") == "テスト（オフライン）"
    every = load_presets()
    assert all(p.label_in("ja") != p.label for p in every.values())  # each shipped pair has one
    with pytest.raises(PresetError) as excinfo:
        load_preset(
            write_preset(tmp_path, "l", replace_line("l", "label =", 'label = "x"\nlabel_ja = ""'))
        )
    assert "label_ja" in str(excinfo.value)


def test_a_description_in_an_unknown_language_is_rejected(tmp_path: Path) -> None:
    text = replace_line("x", "label =", 'label = "Test pair"\ndescription_xx = "?"')
    path = write_preset(tmp_path, "x", text)
    with pytest.raises(PresetError) as excinfo:
        load_preset(path)
    assert_error(excinfo, path, "description_xx")


def test_a_prompts_file_is_read_like_a_presets_prompts_table(tmp_path: Path) -> None:
    from specviz.models.presets import load_prompts_file

    top_level = tmp_path / "mine.toml"
    top_level.write_text('editing = ["fix this", "and this"]\ncode = ["write f"]\n')
    assert dict(load_prompts_file(top_level)) == {
        "code": ("write f",),
        "editing": ("fix this", "and this"),
    }
    under_table = tmp_path / "table.toml"
    under_table.write_text('[prompts]\nstory = ["once"]\n')
    assert dict(load_prompts_file(under_table)) == {"story": ("once",)}
    # The shipped file of prompts in no preset reads.
    unseen = load_prompts_file(Path(__file__).parents[2] / "docs" / "unseen-prompts.toml")
    assert len(unseen["editing"]) >= 5


def test_the_unseen_prompts_are_in_no_preset() -> None:
    """docs/unseen-prompts.toml checks that results hold beyond the presets' examples: a prompt
    that a preset also holds (in any language) would be checked on what was tuned on."""
    from specviz.models.presets import load_presets, load_prompts_file

    unseen = load_prompts_file(Path(__file__).parents[2] / "docs" / "unseen-prompts.toml")
    examples = {
        " ".join(text.split())
        for preset in load_presets().values()
        for table in (preset.prompts, *preset.translated_prompts.values())
        for texts in table.values()
        for text in texts
    }
    shared = [
        text for texts in unseen.values() for text in texts if " ".join(text.split()) in examples
    ]
    assert shared == []


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        ('poetry = ["a"]\n', r"mine\.toml: field 'poetry': unknown task 'poetry'"),
        ('editing = "fix"\n', r"mine\.toml: field 'editing'"),
        ('editing = ["a", "a"]\n', r"mine\.toml: field 'editing\[1\]'"),
        ("editing = [\n", r"mine\.toml: "),
    ],
)
def test_a_bad_prompts_file_is_refused_naming_the_file_and_field(
    tmp_path: Path, text: str, pattern: str
) -> None:
    from specviz.models.presets import load_prompts_file

    path = tmp_path / "mine.toml"
    path.write_text(text)
    with pytest.raises(PresetError, match=pattern):
        load_prompts_file(path)
    with pytest.raises(PresetError, match="cannot read"):
        load_prompts_file(tmp_path / "missing.toml")
