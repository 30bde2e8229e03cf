"""Faults: a damaged model cache is noticed and rebuilt (or named), a model that cannot load leaves
the app serving the next preset, and the engine lock is released whatever a run raises."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import gradio as gr
import pytest
import torch
from hosted_fixtures import TinyCache
from safetensors import SafetensorError
from tiny_models import tiny_qwen

from specviz.app.gpu_work import Runs
from specviz.app.session import App, Session, Started
from specviz.core.events import Cycle
from specviz.models import loader
from specviz.models.loader import ModelLoadError, converted_gguf, forget_conversion
from specviz.models.presets import ModelSource, default_preset, load_presets

# --- the cached conversion of a GGUF file -----------------------------------------------------


def fake_conversion(tmp_path: Path) -> tuple[Path, Path]:
    """A GGUF file (not a real one) and a conversion folder stamped as made from it."""
    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"not really a gguf")
    folder = tmp_path / "converted"
    folder.mkdir()
    (folder / "model.safetensors").write_bytes(b"weights" * 100)
    (folder / "config.json").write_text("{}")
    (folder / loader._CONVERSION_STAMP).write_text(json.dumps(loader._source_stamp(gguf)))
    (folder / loader._FILES_STAMP).write_text(json.dumps(loader._files_stamp(folder)))
    return gguf, folder


def test_an_untouched_conversion_is_reused(tmp_path: Path) -> None:
    gguf, folder = fake_conversion(tmp_path)
    assert converted_gguf(gguf, folder) == folder  # no conversion attempted (it would fail)


def test_a_conversion_without_its_digests_is_converted_again(tmp_path: Path) -> None:
    gguf, folder = fake_conversion(tmp_path)
    (folder / loader._FILES_STAMP).unlink()
    # Nothing vouches for the files' bytes: converting again reads the GGUF (here not one).
    with pytest.raises(ModelLoadError, match="Could not read GGUF file"):
        converted_gguf(gguf, folder)


@pytest.mark.parametrize(
    "damage",
    [
        lambda folder: (folder / "model.safetensors").write_bytes(b"weights" * 99 + b"XXXXXXX"),
        lambda folder: (folder / "model.safetensors").write_bytes(b"weig"),
        lambda folder: (folder / "model.safetensors").unlink(),
    ],
    ids=["bytes changed", "truncated", "deleted"],
)
def test_a_damaged_conversion_is_converted_again(tmp_path: Path, damage: Any) -> None:
    gguf, folder = fake_conversion(tmp_path)
    damage(folder)
    # Converting again reads the GGUF, which here is not one: the attempt proves the damage was
    # noticed, and its failure is a named error, not a traceback.
    with pytest.raises(ModelLoadError, match="Could not read GGUF file"):
        converted_gguf(gguf, folder)


class FlakyLoad:
    """from_pretrained that fails on the first ``failures`` calls as a garbled file does."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.calls = 0

    def __call__(self, folder: str, **kwargs: Any) -> Any:
        self.calls += 1
        if self.calls <= self.failures:
            raise SafetensorError("Error while deserializing header: HeaderTooLarge")
        return tiny_qwen(1)


@pytest.fixture
def bundled_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[ModelSource, list]:
    folder = tmp_path / "converted"
    folder.mkdir()
    (folder / loader._CONVERSION_STAMP).write_text("{}")
    located: list[Path] = []

    def location(source: ModelSource, progress: Any) -> tuple[str, dict[str, Any]]:
        located.append((folder / loader._CONVERSION_STAMP).exists())
        return str(folder), {}

    monkeypatch.setattr(loader, "_model_location", location)
    return ModelSource.parse("bundled:qwen2.5-coder-0.5b-instruct"), located


def test_a_cache_that_fails_to_load_is_rebuilt_once(bundled_source, monkeypatch) -> None:
    import transformers

    source, located = bundled_source
    flaky = FlakyLoad(failures=1)
    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained", flaky)
    model = loader.load_model(source, torch.device("cpu"), torch.float32)
    assert model is not None and flaky.calls == 2
    # The second lookup found the stamp gone: the conversion is redone from the GGUF.
    assert located == [True, False]


def test_a_cache_that_stays_unreadable_is_named(bundled_source, monkeypatch) -> None:
    import transformers

    source, _ = bundled_source
    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained", FlakyLoad(5))
    with pytest.raises(ModelLoadError, match="could not be read even after rebuilding"):
        loader.load_model(source, torch.device("cpu"), torch.float32)


def test_forgetting_a_conversion_removes_only_its_stamp(tmp_path: Path) -> None:
    _, folder = fake_conversion(tmp_path)
    forget_conversion(folder)
    assert sorted(path.name for path in folder.iterdir()) == [
        "config.json",
        "model.safetensors",
        loader._FILES_STAMP,
    ]
    forget_conversion(folder)  # twice is fine


# --- the app keeps serving --------------------------------------------------------------------


class BrokenCache(TinyCache):
    """Hands out the tiny pair, except for presets whose load fails as named in ``failures``."""

    def __init__(self, failures: dict[str, BaseException]) -> None:
        super().__init__()
        self.failures = failures

    def load_pair(self, preset: Any, *args: Any, **kwargs: Any) -> Any:
        failure = self.failures.get(preset.id)
        if failure is not None:
            raise failure
        return self.pair


def presets_and_other() -> tuple[dict[str, Any], Any, Any]:
    presets = load_presets()
    default = default_preset(presets)
    other = next(preset for preset in presets.values() if preset.id != default.id)
    return presets, default, other


@pytest.mark.parametrize(
    ("failure", "message"),
    [
        (ModelLoadError("error.load.local_missing", path="'/gone'"), "does not exist"),
        (MemoryError(), "memory"),
        (RuntimeError("DefaultCPUAllocator: can't allocate memory"), "memory"),
    ],
    ids=["missing files", "MemoryError", "allocator"],
)
def test_a_model_that_cannot_load_leaves_the_app_serving(
    failure: BaseException, message: str
) -> None:
    presets, default, other = presets_and_other()
    app = App(presets, BrokenCache({other.id: failure}))  # type: ignore[arg-type]
    with pytest.raises(gr.Error, match=message):
        app.load(other)
    assert not app.engine_lock.locked()
    assert app.load(default) is not None  # the next preset still loads


def run_to_end(app: App, prompt: str, seed: int) -> str:
    """A run as the browser's Run button plays it (``Runs.play``), to its end; its text."""
    settings = {"seed": seed, "max_new_tokens": 8}
    inputs = app.checks.inputs(default_preset(app.presets).id, prompt, settings)
    session = Session()
    for _ in Runs(app, remote=False).play(session, inputs):
        pass
    return "".join(token.text for cycle in session.cycles for token in cycle.emitted)


def test_an_exception_mid_run_releases_the_engine_and_names_the_fault() -> None:
    presets, default, _ = presets_and_other()
    app = App(presets, TinyCache())  # type: ignore[arg-type]
    expected = run_to_end(app, "abc", seed=3)
    inputs = app.checks.inputs(default.id, "abc", {"seed": 3, "max_new_tokens": 8})
    session = Session()
    records = Runs(app, remote=False).play(session, inputs)
    assert isinstance(next(records), Started)  # begun: its cycles not yet run
    real = session.cycles_iter
    assert real is not None

    def faulty() -> Any:
        yield next(real)
        raise RuntimeError("injected fault in the second cycle")

    session.cycles_iter = faulty()
    assert isinstance(next(records), Cycle)
    with pytest.raises(gr.Error, match="injected fault"):
        next(records)
    assert not app.engine_lock.locked()
    assert app.advance(session) is None  # the broken run is over, not half-alive
    assert run_to_end(app, "abc", seed=3) == expected  # and the engine serves the next run
