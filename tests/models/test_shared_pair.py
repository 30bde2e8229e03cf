"""The pair a hosted room shares is the host's choice and survives a visitor's request for another:
the presets offered, the memory check before a load, and eviction only after the new pair loaded."""

from __future__ import annotations

import dataclasses
import json
import struct
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from specviz.app.limits import hosted_presets
from specviz.models import loader, memory_room
from specviz.models.loader import ModelCache, ModelLoadError
from specviz.models.presets import ModelSource, default_preset, load_presets
from specviz.text import UserError

PRESETS = load_presets()
DEFAULT = default_preset(PRESETS)
ROOT = Path(__file__).resolve().parents[2]


# --- the presets a hosted app offers -------------------------------------------------------------


def test_a_hosted_app_offers_the_bundled_pair_alone_unless_the_host_allows_more() -> None:
    assert list(hosted_presets(PRESETS)) == [DEFAULT.id]
    assert DEFAULT.draft.kind == DEFAULT.target.kind == "bundled"
    chosen = hosted_presets(PRESETS, f"{DEFAULT.id}, gpt2-to-gpt2-xl")
    assert set(chosen) == {DEFAULT.id, "gpt2-to-gpt2-xl"}
    assert set(hosted_presets(PRESETS, "all")) == set(PRESETS)  # all hub or bundled


def test_a_host_naming_an_unknown_preset_is_told_which() -> None:
    with pytest.raises(UserError, match="no-such-pair"):
        hosted_presets(PRESETS, "no-such-pair")
    remote = dataclasses.replace(DEFAULT, id="remote", trust_remote_code=True)
    with pytest.raises(UserError, match="remote"):
        hosted_presets({"remote": remote}, "remote")


def test_app_py_refuses_an_unknown_hosted_preset_in_one_line_before_serving() -> None:
    done = subprocess.run(
        [sys.executable, "app.py", "--hosted", "--presets", "no-such-pair", "--port", "1"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert "no-such-pair" in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


# --- sizes read without loading ------------------------------------------------------------------


def _safetensors(path: Path, shapes: dict[str, list[int]]) -> None:
    header = {name: {"dtype": "BF16", "shape": shape, "data_offsets": [0, 0]}
              for name, shape in shapes.items()}  # fmt: skip
    header["__metadata__"] = {"format": "pt"}  # type: ignore[assignment]
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw)


def test_parameters_are_counted_from_safetensors_headers(tmp_path) -> None:
    _safetensors(tmp_path / "model-1.safetensors", {"a": [3, 4], "b": [5]})
    _safetensors(tmp_path / "model-2.safetensors", {"c": [2, 2, 2]})
    assert memory_room.folder_parameters(tmp_path) == 12 + 5 + 8
    source = ModelSource("local", str(tmp_path))
    assert memory_room.pair_bytes([source, source], torch.float32) == 2 * 25 * 4
    assert memory_room.pair_bytes([source], torch.bfloat16) == 25 * 2


def test_an_unknown_hub_model_has_no_size_offline(monkeypatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert memory_room.source_parameters(ModelSource("hub", "nobody/not-cached")) is None


def test_the_bundled_models_have_a_size_before_they_are_joined(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("SPECVIZ_CACHE", str(tmp_path))  # nothing joined or converted here
    counts = [memory_room.source_parameters(source) for source in (DEFAULT.draft, DEFAULT.target)]
    assert 0.3e9 < counts[0] < 1e9 and 1.2e9 < counts[1] < 2.5e9  # type: ignore[operator]


# --- the one-pair cache --------------------------------------------------------------------------


@dataclasses.dataclass
class Room:
    """What the stand-in loader saw: each source loaded with the pairs then in memory; the
    parameters each source reports and the bytes free."""

    cache: ModelCache
    loads: list[tuple[str, list[str]]]
    parameters: dict[str, int | None]
    free: list[int]
    failing: set[str]


@pytest.fixture
def room(monkeypatch, tmp_path) -> Room:
    from tiny_models import OneWordVocab, tiny_qwen

    monkeypatch.setenv("SPECVIZ_CACHE", str(tmp_path))
    cache = ModelCache(max_pairs=1)
    state = Room(cache, [], {}, [8 * 2**30], set())

    def load_model(source, device, dtype, trust_remote_code=False, progress=None):
        if str(source) in state.failing:
            raise RuntimeError("the download broke off")
        state.loads.append((str(source), cache.loaded_pairs()))
        return tiny_qwen(len(state.loads))

    monkeypatch.setattr(loader, "load_model", load_model)
    monkeypatch.setattr(loader, "load_tokenizer", lambda source, trust, progress: OneWordVocab())
    monkeypatch.setattr(
        memory_room, "source_parameters", lambda source: state.parameters.get(str(source), 10**6)
    )
    monkeypatch.setattr(memory_room, "available_bytes", lambda device: state.free[0])
    return state


def _pair(name: str, draft: str, target: str):
    return dataclasses.replace(
        DEFAULT,
        id=name,
        label=f"pair {name}",
        draft=ModelSource("hub", draft),
        target=ModelSource("hub", target),
        draft_quantization="none",
    )


ONE, TWO = _pair("one", "a/d", "a/t"), _pair("two", "b/d", "b/t")


def test_the_pair_in_use_is_dropped_only_after_the_next_one_has_loaded(room: Room) -> None:
    room.cache.load_pair(ONE, device="cpu", dtype="float32")
    room.cache.load_pair(TWO, device="cpu", dtype="float32")
    assert room.cache.loaded_pairs() == ["two|none|cpu|torch.float32"]
    one = ["one|none|cpu|torch.float32"]
    assert room.loads == [("hub:a/t", []), ("hub:a/d", []), ("hub:b/t", one), ("hub:b/d", one)]


def test_a_pair_too_big_for_the_free_memory_is_refused_and_the_room_keeps_its_pair(
    room: Room,
) -> None:
    kept = room.cache.load_pair(ONE, device="cpu", dtype="float32")
    room.parameters["hub:b/t"] = 7 * 10**9  # 7B in float32: 28 GB
    with pytest.raises(ModelLoadError) as refused:
        room.cache.load_pair(TWO, device="cpu", dtype="float32")
    message = refused.value.message()
    assert "pair two" in message and "GB" in message and "stays loaded" in message
    assert [source for source, _ in room.loads] == ["hub:a/t", "hub:a/d"]  # nothing else read
    assert room.cache.loaded_pairs() == ["one|none|cpu|torch.float32"]
    assert room.cache.load_pair(ONE, device="cpu", dtype="float32").target is kept.target


def test_a_pair_whose_size_cannot_be_read_is_refused(room: Room) -> None:
    room.cache.load_pair(ONE, device="cpu", dtype="float32")
    room.parameters["hub:b/d"] = None
    with pytest.raises(ModelLoadError, match="size"):
        room.cache.load_pair(TWO, device="cpu", dtype="float32")
    assert room.cache.loaded_pairs() == ["one|none|cpu|torch.float32"]


def test_a_failed_load_leaves_the_pair_in_use_and_nothing_half_loaded(room: Room) -> None:
    kept = room.cache.load_pair(ONE, device="cpu", dtype="float32")
    room.failing.add("hub:b/d")  # the target loads, then the draft fails
    with pytest.raises(RuntimeError, match="broke off"):
        room.cache.load_pair(TWO, device="cpu", dtype="float32")
    assert room.cache.loaded_pairs() == ["one|none|cpu|torch.float32"]
    held = {key[0] for key in room.cache._models}
    assert held == {"hub:a/t", "hub:a/d"}  # the new target was freed again
    assert room.cache.load_pair(ONE, device="cpu", dtype="float32").target is kept.target


def test_models_already_loaded_need_no_room(room: Room) -> None:
    room.cache.load_pair(ONE, device="cpu", dtype="float32")
    room.free[0] = 0  # nothing free: a pair sharing both models still loads
    same_models = dataclasses.replace(ONE, id="one-again")
    room.cache.load_pair(same_models, device="cpu", dtype="float32")
    assert room.cache.loaded_pairs() == ["one-again|none|cpu|torch.float32"]
    assert len(room.loads) == 2


def test_a_cache_without_a_pair_limit_checks_no_room(room: Room) -> None:
    cache = ModelCache()
    room.free[0] = 0
    cache.load_pair(ONE, device="cpu", dtype="float32")  # local use: the user's own choice
    assert cache.loaded_pairs() == ["one|none|cpu|torch.float32"]
