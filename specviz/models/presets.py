"""Model-pair presets: which draft and target to load, how to draft, and the default settings.

A preset is model sources + a drafter spec + default generation settings, written as one TOML
file in the repository's ``presets/`` folder.  Keeping the pairs in data files (rather than in
Python) lets people add a pair without touching code, so the loader is strict: unknown keys,
wrong types and out-of-range values are rejected with a message naming the file and the field,
because a silently ignored typo (``gama = 8``) would make the UI behave in a way nobody asked for.

The format, top-level keys first::

    id = "my-pair"                               # required; must equal the file name
    label = "Qwen2.5 0.5B → 7B"                  # required; the dropdown's text
    description = "Needs internet ..."           # optional
    description_ja = "インターネットが必要 ..."     # optional; the description a Japanese page shows
    label_ja = "Qwen2.5 0.5B → 7B（要ネット）"     # optional; the label a Japanese page shows
    draft = "hub:Qwen/Qwen2.5-0.5B-Instruct"     # required; KIND:REF, KIND one of SOURCE_KINDS
    target = "hub:Qwen/Qwen2.5-7B-Instruct"      # required
    dtype = "bfloat16"                           # required; one of DTYPES
    draft_quantization = "none"                  # optional; one of DRAFT_QUANTIZATIONS
    drafter = "draft-model"                      # optional; which drafter proposes the guesses
    chat_template = true                         # optional; wrap prompts in the chat template
    trust_remote_code = false                    # optional
    default = false                              # optional; exactly one preset sets true

    # Any generation setting, by its field name in specviz.core.settings.GenerationSettings
    # (gamma, temperature, top_p, max_new_tokens, ...), checked by that schema; settings left
    # out keep the schema's defaults.
    gamma = 5

    [prompts]                                    # required; example prompts per task in TASKS
    code = ["Write a Python function that reverses a string."]

    [prompts_ja]                                 # optional; the examples a Japanese page shows
    code = ["文字列を逆順にする Python の関数を書いてください。"]
"""

from __future__ import annotations

import os
import re
import sys
import tomllib
import types
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path

from specviz.core.settings import (
    GenerationSettings,
    SettingError,
    describe_value,
    settings_from_mapping,
    settings_schema,
)
from specviz.text import DEFAULT_LANGUAGE, TABLES, Phrase, UserError, t

__all__ = [
    "DEFAULT_DRAFTER",
    "DRAFT_QUANTIZATIONS",
    "DTYPES",
    "PRESETS_DIR",
    "SOURCE_KINDS",
    "TASKS",
    "ModelSource",
    "Preset",
    "PresetError",
    "default_preset",
    "load_preset",
    "load_presets",
    "load_prompts_file",
    "served_presets",
    "task_label",
    "task_words",
    "warn_bad_preset",
]

#: Prompt categories, in the order the UI lists them.  The acceptance rate of a
#: draft differs a lot between predictable text (code, translation) and
#: open-ended text (stories), which is the contrast the visualiser is built to show;
#: editing prompts hold the text to change, which prompt lookup copies.
TASKS: tuple[str, ...] = ("code", "story", "explanation", "translation", "rewriting", "editing")

#: Where a model comes from: a Hugging Face Hub id, a local folder in
#: ``transformers`` layout, a single ``.gguf`` file, or a model shipped with the
#: project's offline packages.
SOURCE_KINDS: tuple[str, ...] = ("hub", "local", "gguf", "bundled")

#: How the draft's linear layers are stored: "int8" applies PyTorch's dynamic int8
#: quantization on the CPU, for a cheaper draft step
#: (docs/performance.md#why-the-draft-is-int4dual);
#: "int8wo" stores int8 weights only and keeps activations in the preset dtype, so the
#: draft's numbers barely depend on how many tokens a forward carries (specviz.models.quantize);
#: "int4wo" stores 4-bit weights the same way, half int8wo's bytes for a little agreement;
#: "int4head" stores only the output layer in 4 bits (the decoder layers in the preset dtype);
#: "int4dual" keeps the decoder layers both ways, 4-bit for one-token steps and the preset dtype
#: for reading many tokens, where each is faster on this machine (timed at load).
#: "auto" measures each of those on this machine at load and, of those that agree with the target
#: about as well as the best, keeps the quickest to read a prompt and draft
#: (specviz.models.step_costs).
#: Any draft keeps decoding lossless: the verifier uses the q the draft really had.
DRAFT_QUANTIZATIONS: tuple[str, ...] = (
    "none",
    "int8",
    "int8wo",
    "int4wo",
    "int4head",
    "int4dual",
    "auto",
)

#: Accepted ``dtype`` values; "auto" leaves the choice to the loader.
DTYPES: tuple[str, ...] = ("bfloat16", "float32", "float16", "auto")

#: The repository's preset folder; resolved from this file rather than the
#: working directory so the app finds it wherever it is launched from.
PRESETS_DIR: Path = Path(__file__).resolve().parents[2] / "presets"

# Dots are allowed because model sizes such as "qwen2.5" and "0.5b" are the most
# natural way to name a pair; the ends must be alphanumeric so ids stay tidy.
_ID_RE = re.compile(r"[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?")
# A Hub id is "name" or "org/name"; checking the shape catches the common slip of
# writing a filesystem path after "hub:" instead of "local:".
_HUB_REF_RE = re.compile(r"[\w.-]+(?:/[\w.-]+)?")

#: The drafter a preset uses unless it names another, and what the app, the CLI, the labs and the
#: bench draft with without a preset: the draft-model drafter (specviz.drafters builds it from
#: this spec; the drafters import this layer, so the one constant lives here).
DEFAULT_DRAFTER = "draft-model"

#: Each known task's name in words (a key of the text catalogue), for the example radio and the
#: task lab; a task without one is shown by its own name.
TASK_LABELS: Mapping[str, str] = types.MappingProxyType(
    {
        "code": "task.code",
        "story": "task.story",
        "explanation": "task.explanation",
        "translation": "task.translation",
        "rewriting": "task.rewriting",
        "editing": "task.editing",
    }
)


def task_words(task: str) -> Phrase | str:
    """A task's name as words each reader's language puts its own way (its name if unknown)."""
    key = TASK_LABELS.get(task)
    return task if key is None else Phrase(key)


def task_label(task: str, lang: str = DEFAULT_LANGUAGE) -> str:
    """A task's name in words, in *lang* (its name if unknown)."""
    words = task_words(task)
    return words if isinstance(words, str) else words.text(lang)


_REQUIRED_KEYS: tuple[str, ...] = ("id", "label", "draft", "target", "dtype", "prompts")
# The preset's own optional keys; every generation setting is an optional key too.
_OPTIONAL_DEFAULTS: Mapping[str, object] = types.MappingProxyType(
    {
        "description": "",
        "chat_template": True,
        "trust_remote_code": False,
        "draft_quantization": "none",
        "drafter": DEFAULT_DRAFTER,
        "default": False,
    }
)


class PresetError(UserError):
    """A preset or model source is invalid.

    The message is ``"<file>: field '<field>': <reason>"``, with either prefix
    left out when it is not known, so that a user who edits a preset file can go
    straight to the offending line.  The parts are also kept as attributes for
    callers (such as the UI) that want to show them separately; the reason is a
    catalogue Phrase, worded in the reader's language by ``message(lang)``.
    """

    def __init__(
        self, reason: Phrase, *, path: str | None = None, field: str | None = None
    ) -> None:
        self.reason = reason
        self.path = path
        self.field = field
        if path is not None and field is not None:
            super().__init__("error.preset.at_field", path=path, field=repr(field), reason=reason)
        elif path is not None:
            super().__init__("error.preset.at", path=path, reason=reason)
        elif field is not None:
            super().__init__("error.preset.field", field=repr(field), reason=reason)
        else:
            super().__init__("error.preset", reason=reason)

    def __reduce__(self) -> tuple[object, ...]:
        # Keyword-only arguments are not restored by the default exception
        # pickling, which would break errors sent across process boundaries.
        return (_rebuild_error, (self.reason, self.path, self.field))

    def at(self, path: str) -> PresetError:
        """Return a copy located in *path*, keeping an already known location."""
        if self.path is not None:
            return self
        return PresetError(self.reason, path=path, field=self.field)


def _rebuild_preset(values: dict[str, object]) -> Preset:
    return Preset(**values)  # type: ignore[arg-type]  # the fields of a Preset, as __reduce__ read them


def _thawed(value: object) -> object:
    """*value* with every mapping inside it a plain dict (a read-only view does not pickle)."""
    if isinstance(value, Mapping):
        return {key: _thawed(item) for key, item in value.items()}
    return value


def _rebuild_error(reason: Phrase, path: str | None, field: str | None) -> PresetError:
    return PresetError(reason, path=path, field=field)


@dataclass(frozen=True)
class ModelSource:
    """Where to load one model from; written in presets as ``"kind:ref"``."""

    kind: str
    ref: str
    revision: str | None = None

    def __post_init__(self) -> None:
        # Validated here as well as in parse() so that sources built in code
        # (e.g. a custom pair typed into the UI) get the same guarantees.
        if self.kind not in SOURCE_KINDS:
            raise PresetError(
                Phrase(
                    "error.preset.source_kind",
                    kind=repr(self.kind),
                    known=", ".join(SOURCE_KINDS),
                )
            )
        if not self.ref or self.ref != self.ref.strip():
            raise PresetError(
                Phrase("error.preset.source_ref", kind=repr(self.kind), ref=repr(self.ref))
            )
        if self.kind == "hub" and not _HUB_REF_RE.fullmatch(self.ref):
            raise PresetError(Phrase("error.preset.hub_ref", ref=repr(self.ref)))
        if self.kind == "gguf" and not self.ref.lower().endswith(".gguf"):
            raise PresetError(Phrase("error.preset.gguf_ref", ref=repr(self.ref)))
        if self.kind == "bundled" and ("/" in self.ref or "\\" in self.ref):
            raise PresetError(Phrase("error.preset.bundled_ref", ref=repr(self.ref)))
        if self.revision is not None:
            if self.kind != "hub":
                raise PresetError(
                    Phrase(
                        "error.preset.revision_kind",
                        kind=repr(self.kind),
                        revision=repr(self.revision),
                    )
                )
            if not self.revision or self.revision != self.revision.strip():
                raise PresetError(Phrase("error.preset.revision", revision=repr(self.revision)))

    @classmethod
    def parse(cls, text: str) -> ModelSource:
        """Parse ``"kind:ref"``, e.g. ``"hub:Qwen/Qwen2.5-0.5B-Instruct@main"``.

        Only hub sources take an ``@revision`` suffix: hub ids cannot contain
        ``@`` so the split is unambiguous, whereas a local path may.
        """
        if not isinstance(text, str):
            raise PresetError(Phrase("error.preset.source_type", got=describe_value(text)))
        stripped = text.strip()
        kind, sep, ref = stripped.partition(":")
        if not sep:
            raise PresetError(
                Phrase("error.preset.no_kind", text=repr(text), known=", ".join(SOURCE_KINDS))
            )
        kind = kind.strip()
        if kind not in SOURCE_KINDS:
            raise PresetError(
                Phrase(
                    "error.preset.source_kind_in",
                    kind=repr(kind),
                    text=repr(text),
                    known=", ".join(SOURCE_KINDS),
                )
            )
        ref = ref.strip()
        revision: str | None = None
        if kind == "hub" and "@" in ref:
            ref, _, revision = ref.partition("@")
            ref, revision = ref.strip(), revision.strip()
            if not revision:
                raise PresetError(Phrase("error.preset.empty_revision", text=repr(text)))
        if not ref:
            raise PresetError(Phrase("error.preset.empty_ref", text=repr(text), kind=repr(kind)))
        return cls(kind=kind, ref=ref, revision=revision)

    def __str__(self) -> str:
        text = f"{self.kind}:{self.ref}"
        if self.revision is not None:
            text += f"@{self.revision}"
        return text


@dataclass(frozen=True)
class Preset:
    """One draft/target pair: where the models come from, how to draft, and default settings."""

    id: str
    label: str
    description: str
    draft: ModelSource
    target: ModelSource
    dtype: str
    settings: GenerationSettings  # the defaults a run starts from
    chat_template: bool
    trust_remote_code: bool
    default: bool
    # Excluded from the hash because a mapping is unhashable; equality still
    # compares it.  __post_init__ freezes it into a read-only view.
    prompts: Mapping[str, tuple[str, ...]] = field(hash=False)
    draft_quantization: str = "none"  # int8 / int8wo / int4wo: a CPU draft format; "auto" (above)
    drafter: str = DEFAULT_DRAFTER  # the drafter spec, e.g. "draft-model"
    # Example prompts written in another language, by language then task ([prompts_ja]): the
    # page in that language shows them; a task without them shows the [prompts] ones.
    translated_prompts: Mapping[str, Mapping[str, tuple[str, ...]]] = field(
        default_factory=dict, hash=False
    )
    # The description in another language, by language (description_ja): the page in that
    # language shows it; a language without one shows ``description``.
    translated_descriptions: Mapping[str, str] = field(default_factory=dict, hash=False)
    # The label in another language, by language (label_ja): the dropdown and the settings line
    # of the page in that language; exports keep ``label``.
    translated_labels: Mapping[str, str] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        # All value checks live here, so presets built in code are held to the
        # same rules as files; load_preset() adds the file name to the error.
        if not isinstance(self.id, str) or not _ID_RE.fullmatch(self.id):
            raise PresetError(Phrase("error.preset.id", got=repr(self.id)), field="id")
        _check_text(self.label, "label", allow_empty=False)
        _check_text(self.description, "description", allow_empty=True)
        for name in ("draft", "target"):
            if not isinstance(getattr(self, name), ModelSource):
                got = describe_value(getattr(self, name))
                raise PresetError(Phrase("error.preset.not_source", got=got), field=name)
        if not isinstance(self.settings, GenerationSettings):
            raise PresetError(
                Phrase("error.preset.not_settings", got=describe_value(self.settings)),
                field="settings",
            )
        if self.draft_quantization not in DRAFT_QUANTIZATIONS:
            raise PresetError(
                Phrase(
                    "error.preset.one_of",
                    known=", ".join(DRAFT_QUANTIZATIONS),
                    got=repr(self.draft_quantization),
                ),
                field="draft_quantization",
            )
        _check_text(self.drafter, "drafter", allow_empty=False)
        if self.drafter != self.drafter.strip():
            raise PresetError(
                Phrase("error.preset.spaces", got=repr(self.drafter)), field="drafter"
            )
        if self.dtype not in DTYPES:
            raise PresetError(
                Phrase("error.preset.one_of", known=", ".join(DTYPES), got=repr(self.dtype)),
                field="dtype",
            )
        for name in ("chat_template", "trust_remote_code", "default"):
            value = getattr(self, name)
            if not isinstance(value, bool):
                raise PresetError(
                    Phrase("error.preset.bool", got=describe_value(value)), field=name
                )
        object.__setattr__(self, "prompts", _freeze_prompts(self.prompts, self._is_bundled()))
        translated = {}
        for lang, prompts in self.translated_prompts.items():
            name = _translated_prompts_key(lang)
            _check_language(lang, _TRANSLATED_PROMPTS_KEYS, name)
            translated[lang] = _freeze_prompts(prompts, self._is_bundled(), name)
        object.__setattr__(self, "translated_prompts", types.MappingProxyType(translated))
        for lang, text in self.translated_descriptions.items():
            name = _translated_description_key(lang)
            _check_language(lang, _TRANSLATED_DESCRIPTION_KEYS, name)
            _check_text(text, name, allow_empty=True)
        object.__setattr__(
            self,
            "translated_descriptions",
            types.MappingProxyType(dict(self.translated_descriptions)),
        )
        for lang, text in self.translated_labels.items():
            name = _translated_label_key(lang)
            _check_language(lang, _TRANSLATED_LABEL_KEYS, name)
            _check_text(text, name, allow_empty=False)
        object.__setattr__(
            self, "translated_labels", types.MappingProxyType(dict(self.translated_labels))
        )

    def __reduce__(self) -> tuple[object, ...]:
        # The prompt mappings are read-only views, which pickle refuses; a preset crosses to a
        # ZeroGPU worker (specviz.app.gpu_work) as its fields with plain dicts, frozen again there.
        values = {item.name: _thawed(getattr(self, item.name)) for item in fields(self)}
        return (_rebuild_preset, (values,))

    def _is_bundled(self) -> bool:
        return self.draft.kind == "bundled" or self.target.kind == "bundled"

    def prompts_flat(self, lang: str = DEFAULT_LANGUAGE) -> list[tuple[str, str]]:
        """Return ``[(task, prompt), ...]`` in ``TASKS`` order, for dropdowns (in *lang*)."""
        examples = self.example_prompts(lang)
        return [(task, prompt) for task in TASKS for prompt in examples.get(task, ())]

    def label_in(self, lang: str = DEFAULT_LANGUAGE) -> str:
        """The label for a page in *lang*: its translation where the preset has one."""
        return self.translated_labels.get(lang) or self.label

    def describe(self, lang: str = DEFAULT_LANGUAGE) -> str:
        """The description for a page in *lang*: its translation where the preset has one."""
        return self.translated_descriptions.get(lang) or self.description

    def example_prompts(self, lang: str = DEFAULT_LANGUAGE) -> Mapping[str, tuple[str, ...]]:
        """The example prompts per task for a page in *lang*: its translated ones where the
        preset has them, the ``[prompts]`` ones elsewhere."""
        translated = self.translated_prompts.get(lang, {})
        return {task: translated.get(task, prompts) for task, prompts in self.prompts.items()}


def load_preset(path: str | os.PathLike[str]) -> Preset:
    """Read and validate one preset file.

    Raises PresetError naming the file (and the field, where there is one) for
    unreadable files, TOML syntax errors, unknown or missing keys, wrong types
    and out-of-range values, and when ``id`` differs from the file stem.
    """
    path = Path(path)
    where = str(path)
    data = _read_toml(path)

    try:
        preset = _preset_from_mapping(data)
    except PresetError as exc:
        raise exc.at(where) from None

    # The id doubles as the file name so that "which file defines this preset?"
    # never needs a search, and two files cannot silently claim the same id.
    if preset.id != path.stem:
        raise PresetError(
            Phrase("error.preset.id_file", stem=repr(path.stem), got=repr(preset.id)),
            path=where,
            field="id",
        )
    return preset


def _read_toml(path: Path) -> dict[str, object]:
    """A TOML file's top-level table; PresetError naming the file when it cannot be read."""
    where = str(path)
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except OSError as exc:
        cause = exc.strerror or exc
        raise PresetError(Phrase("error.preset.unreadable", cause=cause), path=where) from exc
    except UnicodeDecodeError as exc:
        raise PresetError(Phrase("error.preset.not_utf8", cause=exc), path=where) from exc
    except tomllib.TOMLDecodeError as exc:
        raise PresetError(Phrase("error.preset.toml", cause=exc), path=where) from exc


def load_prompts_file(path: str | os.PathLike[str]) -> Mapping[str, tuple[str, ...]]:
    """Read a file of prompts per task group: a preset's ``[prompts]`` table on its own (task
    names as top-level keys, or under ``[prompts]``). Raises PresetError naming the file and
    the field, as for a preset."""
    path = Path(path)
    where = str(path)
    data = _read_toml(path)
    name = "prompts" if "prompts" in data else ""
    try:
        return _freeze_prompts(data.get("prompts", data), require_all_tasks=False, table=name)
    except PresetError as exc:
        raise exc.at(where) from None


def load_presets(
    directory: str | os.PathLike[str] | None = None,
    on_bad_file: Callable[[PresetError], None] | None = None,
) -> dict[str, Preset]:
    """Load every ``*.toml`` preset in *directory* (default: the repo's presets/).

    The result maps id to preset, ordered with the default preset first and the
    rest by id, so a UI can use it directly as its dropdown order.  Raises
    PresetError if the directory is missing or empty, any file is invalid, two
    files share an id, or not exactly one preset sets ``default = true``.
    With *on_bad_file* (a server, the command line: one bad file should not stop the
    others), a file that is invalid or repeats an id is handed to it and left out instead
    (``warn_bad_preset`` says so in one line); the default must still be among those left.
    """
    folder = PRESETS_DIR if directory is None else Path(directory)
    if not folder.is_dir():
        raise PresetError(Phrase("error.preset.no_directory"), path=str(folder))
    # Hidden files are skipped so editor lock/backup files (".#x.toml") are ignored.
    files = sorted(p for p in folder.glob("*.toml") if not p.name.startswith("."))
    if not files:
        raise PresetError(Phrase("error.preset.no_files"), path=str(folder))

    loaded: dict[str, Preset] = {}
    origin: dict[str, Path] = {}
    for file in files:
        try:
            preset = load_preset(file)
            if preset.id in loaded:
                raise PresetError(
                    Phrase(
                        "error.preset.duplicate_id", id=repr(preset.id), other=origin[preset.id]
                    ),
                    path=str(file),
                    field="id",
                )
        except PresetError as error:
            if on_bad_file is None:
                raise
            on_bad_file(error)
            continue
        loaded[preset.id] = preset
        origin[preset.id] = file

    defaults = [pid for pid, preset in loaded.items() if preset.default]
    if len(defaults) != 1:
        found = (
            ", ".join(str(origin[pid]) for pid in defaults)
            if defaults
            else Phrase("error.preset.none")
        )
        raise PresetError(
            Phrase("error.preset.defaults", count=len(defaults), found=found),
            path=str(folder),
            field="default",
        )
    ordered = defaults + sorted(pid for pid in loaded if pid != defaults[0])
    return {pid: loaded[pid] for pid in ordered}


def warn_bad_preset(error: PresetError, lang: str = DEFAULT_LANGUAGE) -> None:
    """Say on stderr, in one line, that a preset file is left out and why (load_presets'
    *on_bad_file* for a server or the command line)."""
    print(t("error.preset.skipped", lang, problem=error.message(lang)), file=sys.stderr)


def served_presets(lang: str = DEFAULT_LANGUAGE) -> dict[str, Preset]:
    """The presets a server starts with (app.py): a bad file is left out with a one-line
    warning naming it and the others are served. When none is left, or no default (the default
    preset's own file is the bad one: which pair a page opens on is unknown), each bad file's
    error is one line (else the error itself) and the process exits with status 2, no traceback.
    """
    skipped: list[PresetError] = []
    try:
        presets = load_presets(on_bad_file=skipped.append)
    except PresetError as error:
        # No default left after a bad file: that file's own error is the one to read.
        no_default = (
            error.reason.key == "error.preset.defaults" and not error.reason.values["count"]
        )
        for cause in skipped if skipped and no_default else [*skipped, error]:
            print(t("cli.error", lang, message=cause.message(lang)), file=sys.stderr)
        raise SystemExit(2) from None
    for cause in skipped:
        warn_bad_preset(cause, lang)
    return presets


def default_preset(presets: Mapping[str, Preset]) -> Preset:
    """Return the single preset marked ``default = true``.

    Raises PresetError when there is none or more than one, rather than
    guessing, because load_presets() already guarantees exactly one.
    """
    defaults = [preset for preset in presets.values() if preset.default]
    if len(defaults) != 1:
        names = ", ".join(p.id for p in defaults) if defaults else Phrase("error.preset.none")
        raise PresetError(
            Phrase("error.preset.defaults", count=len(defaults), found=names),
            field="default",
        )
    return defaults[0]


# --- helpers ---------------------------------------------------------------------


def _preset_from_mapping(data: Mapping[str, object]) -> Preset:
    """Turn a parsed TOML document into a Preset (without file context)."""
    setting_names = {item.name for item in settings_schema(GenerationSettings)}
    known = set(_REQUIRED_KEYS) | set(_OPTIONAL_DEFAULTS) | setting_names
    known |= set(_TRANSLATED_PROMPTS_KEYS.values()) | set(_TRANSLATED_DESCRIPTION_KEYS.values())
    known |= set(_TRANSLATED_LABEL_KEYS.values())
    for key in data:
        if key not in known:
            raise PresetError(
                Phrase("error.preset.unknown_field", known=", ".join(sorted(known))), field=key
            )
    for key in _REQUIRED_KEYS:
        if key not in data:
            raise PresetError(Phrase("error.preset.missing"), field=key)
    values: dict[str, object] = {**_OPTIONAL_DEFAULTS, **data}

    # TOML gives source strings; parsing here lets the error carry the field name.
    sources: dict[str, ModelSource] = {}
    for name in ("draft", "target"):
        raw = values[name]
        if not isinstance(raw, str):
            raise PresetError(
                Phrase("error.preset.source_string", got=describe_value(raw)), field=name
            )
        try:
            sources[name] = ModelSource.parse(raw)
        except PresetError as exc:
            raise PresetError(exc.reason, field=name) from None

    # The settings keys are the schema's fields, checked by the schema itself.
    try:
        settings = settings_from_mapping(
            {key: value for key, value in data.items() if key in setting_names},
            GenerationSettings(),
        )
    except SettingError as exc:
        problem = exc.problems[0]
        raise PresetError(problem.reason, field=problem.name) from None

    # Types are checked in Preset.__post_init__; the ignores below are needed
    # only because the TOML values are statically typed as ``object``.
    return Preset(
        id=values["id"],  # type: ignore[arg-type]
        label=values["label"],  # type: ignore[arg-type]
        description=values["description"],  # type: ignore[arg-type]
        draft=sources["draft"],
        target=sources["target"],
        dtype=values["dtype"],  # type: ignore[arg-type]
        settings=settings,
        chat_template=values["chat_template"],  # type: ignore[arg-type]
        trust_remote_code=values["trust_remote_code"],  # type: ignore[arg-type]
        default=values["default"],  # type: ignore[arg-type]
        draft_quantization=values["draft_quantization"],  # type: ignore[arg-type]
        drafter=values["drafter"],  # type: ignore[arg-type]
        prompts=values["prompts"],  # type: ignore[arg-type]
        translated_prompts={
            lang: data[key]  # type: ignore[misc]  # checked in Preset.__post_init__
            for lang, key in _TRANSLATED_PROMPTS_KEYS.items()
            if key in data
        },
        translated_descriptions={
            lang: data[key]  # type: ignore[misc]  # checked in Preset.__post_init__
            for lang, key in _TRANSLATED_DESCRIPTION_KEYS.items()
            if key in data
        },
        translated_labels={
            lang: data[key]  # type: ignore[misc]  # checked in Preset.__post_init__
            for lang, key in _TRANSLATED_LABEL_KEYS.items()
            if key in data
        },
    )


def _translated_prompts_key(lang: str) -> str:
    """The TOML table holding the example prompts in *lang*: ``prompts_ja``."""
    return f"prompts_{lang}"


# One optional table of translated examples per language of the text catalogue but English.
_TRANSLATED_PROMPTS_KEYS: Mapping[str, str] = {
    lang: _translated_prompts_key(lang) for lang in TABLES if lang != DEFAULT_LANGUAGE
}


def _check_language(lang: str, keys: Mapping[str, str], field_name: str) -> None:
    """Raise a PresetError on *field_name* (``prompts_xx``, ``description_xx``) when *keys*, the
    translated fields by language, has no entry for *lang*."""
    if lang not in keys:
        raise PresetError(
            Phrase("error.preset.unknown_field", known=", ".join(keys.values())),
            field=field_name,
        )


def _translated_description_key(lang: str) -> str:
    """The top-level key holding the description in *lang*: ``description_ja``."""
    return f"description_{lang}"


_TRANSLATED_DESCRIPTION_KEYS: Mapping[str, str] = {
    lang: _translated_description_key(lang) for lang in TABLES if lang != DEFAULT_LANGUAGE
}


def _freeze_prompts(
    raw: object, require_all_tasks: bool, table: str = "prompts"
) -> Mapping[str, tuple[str, ...]]:
    """Validate the prompts table (named *table* in the file; "" for a file's top level) and
    return it as a read-only, TASKS-ordered view."""
    if not isinstance(raw, Mapping):
        raise PresetError(
            Phrase("error.preset.prompts_table", got=describe_value(raw)), field=table
        )
    for task in raw:
        if task not in TASKS:
            raise PresetError(
                Phrase("error.preset.unknown_task", task=repr(task), known=", ".join(TASKS)),
                field=_within(table, task),
            )
    frozen: dict[str, tuple[str, ...]] = {}
    for task in TASKS:
        if task not in raw:
            continue
        items = raw[task]
        # A bare string is a Sequence too, but would be split into characters.
        if isinstance(items, str) or not isinstance(items, Sequence):
            raise PresetError(
                Phrase("error.preset.prompt_list", got=describe_value(items)),
                field=_within(table, task),
            )
        if not items:
            raise PresetError(Phrase("error.preset.task_empty"), field=_within(table, task))
        seen: set[str] = set()
        for index, prompt in enumerate(items):
            name = _within(table, f"{task}[{index}]")
            _check_text(prompt, name, allow_empty=False)
            if prompt in seen:
                raise PresetError(Phrase("error.preset.duplicate_prompt"), field=name)
            seen.add(prompt)
        frozen[task] = tuple(items)
    if not frozen:
        raise PresetError(Phrase("error.preset.no_prompts"), field=table or None)
    if require_all_tasks:
        # The bundled pair is the offline default, so every task in the UI must
        # have ready-made examples without any download.
        missing = [task for task in TASKS if task not in frozen]
        if missing:
            raise PresetError(
                Phrase("error.preset.bundled_tasks", missing=", ".join(missing)), field=table
            )
    return types.MappingProxyType(frozen)


def _within(table: str, key: str) -> str:
    """The field name of *key* inside *table* ("prompts.code"), or *key* at a file's top level."""
    return f"{table}.{key}" if table else key


def _check_text(value: object, name: str, *, allow_empty: bool) -> None:
    if not isinstance(value, str):
        raise PresetError(Phrase("error.preset.string", got=describe_value(value)), field=name)
    if not allow_empty and not value.strip():
        raise PresetError(Phrase("error.preset.empty"), field=name)


def _translated_label_key(lang: str) -> str:
    """The top-level key holding the label in *lang*: ``label_ja``."""
    return f"label_{lang}"


_TRANSLATED_LABEL_KEYS: Mapping[str, str] = {
    lang: _translated_label_key(lang) for lang in TABLES if lang != DEFAULT_LANGUAGE
}
