"""Cached weights are verified, not trusted: a flipped byte in a converted file or in the joined GGUF,
with its size and mtime kept as bit rot keeps them, is found by SHA-256 before a token is produced,
and the cache is rebuilt from checked bytes so the model computes what it did before the damage.

Everything runs on a tiny Qwen2 GGUF written here with the gguf package (one layer, byte vocabulary),
converted into a cache under tmp_path: the shared cache is never touched.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import struct
from pathlib import Path
from typing import Any

import gguf
import numpy as np
import pytest
import torch

from specviz.models import loader
from specviz.models.bundled import BundledModel, assemble
from specviz.models.loader import ModelLoadError, load_model, load_tokenizer
from specviz.models.presets import ModelSource

PROMPT_IDS = torch.tensor([[71, 68, 75, 75, 78, 220, 64]])  # "hello a" in the byte vocabulary


def write_tiny_gguf(path: Path) -> Path:
    """A one-layer Qwen2 in float32 with a byte-level BPE tokenizer, as llama.cpp lays it out."""
    from transformers.convert_slow_tokenizer import bytes_to_unicode

    rng = np.random.default_rng(0)
    tokens = [*bytes_to_unicode().values(), "ab", "<|endoftext|>"]
    vocab, hidden, ffn, kv_width = len(tokens), 32, 64, 16  # 4 query heads of 8, 2 key/value heads
    writer = gguf.GGUFWriter(str(path), "qwen2")
    writer.add_context_length(128)
    writer.add_embedding_length(hidden)
    writer.add_feed_forward_length(ffn)
    writer.add_block_count(1)
    writer.add_head_count(4)
    writer.add_head_count_kv(2)
    writer.add_rope_freq_base(10000.0)
    writer.add_layer_norm_rms_eps(1e-6)
    writer.add_vocab_size(vocab)
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("qwen2")
    writer.add_token_list(tokens)
    writer.add_token_types([1] * (vocab - 1) + [3])
    writer.add_token_merges(["a b"])
    writer.add_eos_token_id(vocab - 1)
    writer.add_bos_token_id(vocab - 1)

    def tensor(name: str, *shape: int, scale: float = 0.3) -> None:
        writer.add_tensor(name, (rng.standard_normal(shape) * scale).astype(np.float32))

    tensor("token_embd.weight", vocab, hidden, scale=1.0)
    writer.add_tensor("blk.0.attn_norm.weight", np.ones(hidden, np.float32))
    for name, rows in (("attn_q", hidden), ("attn_k", kv_width), ("attn_v", kv_width)):
        tensor(f"blk.0.{name}.weight", rows, hidden)
        tensor(f"blk.0.{name}.bias", rows)
    tensor("blk.0.attn_output.weight", hidden, hidden)
    writer.add_tensor("blk.0.ffn_norm.weight", np.ones(hidden, np.float32))
    tensor("blk.0.ffn_gate.weight", ffn, hidden)
    tensor("blk.0.ffn_up.weight", ffn, hidden)
    tensor("blk.0.ffn_down.weight", hidden, ffn)
    writer.add_tensor("output_norm.weight", np.ones(hidden, np.float32))
    tensor("output.weight", vocab, hidden, scale=3.0)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def flip(path: Path, offset: int, bit: int = 0x01) -> None:
    """Flip one bit in place and set the mtime back, as bit rot leaves a file."""
    info = path.stat()
    data = bytearray(path.read_bytes())
    data[offset] ^= bit
    path.write_bytes(bytes(data))
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (info.st_size, info.st_mtime_ns)


def safetensors_offset(path: Path, tensor: str) -> int:
    """Where a tensor's first value starts in a safetensors file."""
    raw = path.read_bytes()
    (header_size,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + header_size])
    return 8 + header_size + int(header[tensor]["data_offsets"][0])


def gguf_offset(path: Path, tensor: str) -> int:
    """Where a tensor's first value starts in a GGUF file."""
    reader = gguf.GGUFReader(str(path))
    return int(next(item.data_offset for item in reader.tensors if item.name == tensor))


def logits(model: torch.nn.Module) -> torch.Tensor:
    with torch.no_grad():
        return model(PROMPT_IDS).logits  # type: ignore[no-any-return]


def raw_logits(folder: Path) -> torch.Tensor:
    """What from_pretrained makes of a folder as it is, with no check in between."""
    from transformers import AutoModelForCausalLM

    return logits(AutoModelForCausalLM.from_pretrained(str(folder), dtype=torch.float32).eval())


class Heard:
    """A progress callback that keeps the catalogue keys it was told."""

    def __init__(self) -> None:
        self.keys: list[str] = []

    def __call__(self, fraction: float, message: Any) -> None:
        self.keys.append(message.key)


def load(source: ModelSource, heard: Heard | None = None) -> torch.nn.Module:
    return load_model(source, torch.device("cpu"), torch.float32, progress=heard or Heard())


def new_process() -> None:
    """What a fresh process knows of the files hashed so far: nothing."""
    loader._HASHED.clear()


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "cache"
    monkeypatch.setenv("SPECVIZ_CACHE", str(root))
    monkeypatch.setattr(loader, "_HASHED", {})
    return root


@pytest.fixture
def own_gguf(tmp_path: Path, cache: Path) -> tuple[ModelSource, Path]:
    """A user's own GGUF source, loaded once, and the folder its conversion went to."""
    path = write_tiny_gguf(tmp_path / "tiny.gguf")
    source = ModelSource("gguf", str(path))
    load(source)
    (folder,) = (cache / "gguf").iterdir()
    return source, folder


def test_a_flipped_byte_in_the_converted_weights_is_found_and_rebuilt(own_gguf) -> None:
    source, folder = own_gguf
    before = logits(load(source))
    weights = folder / "model.safetensors"
    flip(weights, safetensors_offset(weights, "model.norm.weight") + 1)  # bfloat16 1.0 -> 0.25
    assert not torch.equal(raw_logits(folder), before)  # the damage matters if it is loaded
    new_process()
    heard = Heard()
    after = logits(load(source, heard))
    assert "load.damaged" in heard.keys and "load.dequantizing" in heard.keys
    assert torch.equal(after, before)
    assert torch.equal(raw_logits(folder), before)  # the cache itself is whole again


def test_config_damage_that_still_parses_is_found(own_gguf) -> None:
    source, folder = own_gguf
    before = logits(load(source))
    config = folder / "config.json"
    text = config.read_bytes()
    flip(config, text.index(b"10000.0"), 0x02)  # rope_theta 10000.0 -> 30000.0: still valid JSON
    assert json.loads(config.read_text())["rope_parameters"]["rope_theta"] == 30000.0
    assert not torch.equal(raw_logits(folder), before)
    new_process()
    heard = Heard()
    after = logits(load(source, heard))
    assert "load.damaged" in heard.keys
    assert torch.equal(after, before)
    assert config.read_bytes() == text


def test_tokenizer_damage_is_found_before_the_tokenizer_loads(own_gguf) -> None:
    from transformers import AutoTokenizer

    source, folder = own_gguf
    before = load_tokenizer(source, False, Heard())("a ab")["input_ids"]
    tokenizer_file = folder / "tokenizer.json"
    text = tokenizer_file.read_bytes()
    flip(tokenizer_file, text.index(b'"a": 64,') + 6)  # "a" gets the id 65 ("b"'s)
    assert AutoTokenizer.from_pretrained(str(folder))("a ab")["input_ids"] != before
    new_process()
    heard = Heard()
    after = load_tokenizer(source, False, heard)("a ab")["input_ids"]
    assert "load.damaged" in heard.keys
    assert after == before
    assert tokenizer_file.read_bytes() == text


def test_an_own_gguf_damaged_in_place_is_refused_not_converted(own_gguf) -> None:
    source, folder = own_gguf
    path = Path(source.ref)
    flip(path, gguf_offset(path, "output_norm.weight") + 3)  # float32 1.0 -> 0.25
    flip(folder / "model.safetensors", 100)
    new_process()
    with pytest.raises(ModelLoadError, match="has changed since it was converted") as caught:
        load(source)
    assert caught.value.key == "error.load.gguf_damaged"
    assert caught.value.values["expected"] != caught.value.values["digest"]


def test_each_file_is_hashed_once_per_process(own_gguf, monkeypatch) -> None:
    source, _ = own_gguf
    new_process()
    hashed: list[Path] = []
    real = loader.file_sha256
    monkeypatch.setattr(loader, "file_sha256", lambda path: hashed.append(path) or real(path))
    load_tokenizer(source, False, Heard())
    first = len(hashed)
    load(source)
    load(source)
    assert first >= 3 and len(hashed) == first  # the model's loads found every digest known


# --- the bundled path: chunk packages joined into a GGUF ----------------------------------------


def bundled_tiny(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[BundledModel, bytes]:
    """The tiny GGUF as data-only chunk packages on sys.path, registered as a bundled model."""
    data = write_tiny_gguf(tmp_path / "tiny.gguf").read_bytes()
    chunks = [data[:40_000], data[40_000:80_000], data[80_000:]]
    site = tmp_path / "site"
    for number, chunk in enumerate(chunks, start=1):
        package = site / f"specviz_tiny_part{number}"
        (package / "data").mkdir(parents=True)
        (package / "__init__.py").write_text("raise ImportError('data only')\n")
        (package / "data" / f"part{number:02d}.bin").write_bytes(chunk)
    monkeypatch.syspath_prepend(str(site))
    model = BundledModel(
        name="tiny-test",
        label="Tiny test model",
        package_prefix="specviz_tiny_part",
        parts=len(chunks),
        version="1.0",
        size=len(data),
        sha256=hashlib.sha256(data).hexdigest(),
    )
    monkeypatch.setitem(loader.BUNDLED, model.name, model)
    return model, data


def test_assemble_verify_joins_a_damaged_file_again(tmp_path: Path, monkeypatch) -> None:
    model, data = bundled_tiny(tmp_path, monkeypatch)
    path = assemble(model, tmp_path / "joined")
    flip(path, 50_000)
    assert assemble(model, tmp_path / "joined") == path  # size and mtime alone: not noticed
    heard = Heard()
    assert assemble(model, tmp_path / "joined", heard, verify=True) == path
    assert heard.keys[0] == "load.gguf_damaged" and "load.joining" in heard.keys
    assert path.read_bytes() == data


@pytest.mark.parametrize(
    "damage_conversion",
    [
        lambda folder: shutil.rmtree(folder),
        lambda folder: flip(folder / "model.safetensors", 200),
        lambda folder: loader.forget_conversion(folder),  # what a failed from_pretrained does
    ],
    ids=["conversion deleted", "conversion damaged too", "conversion forgotten"],
)
def test_a_flipped_byte_in_the_joined_gguf_is_found_before_converting_again(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch, damage_conversion: Any
) -> None:
    model, data = bundled_tiny(tmp_path, monkeypatch)
    source = ModelSource("bundled", model.name)
    before = logits(load(source))
    joined = cache / "bundled" / model.name / model.file_name
    flip(joined, gguf_offset(joined, "output_norm.weight") + 3)  # float32 1.0 -> 0.25
    damage_conversion(cache / "bundled" / model.name / "converted")
    new_process()
    heard = Heard()
    after = logits(load(source, heard))
    assert "load.gguf_damaged" in heard.keys and "load.joining" in heard.keys
    assert torch.equal(after, before)
    assert joined.read_bytes() == data


def test_the_damaged_gguf_would_have_changed_the_output(tmp_path: Path, monkeypatch) -> None:
    """The control for the test above: converted without the SHA-256 check, the same flipped
    byte gives other logits (so that test fails if the check is skipped)."""
    model, _ = bundled_tiny(tmp_path, monkeypatch)
    path = assemble(model, tmp_path / "joined")
    reference = raw_logits(loader._convert(path, model.sha256, tmp_path / "good", Heard()))
    flip(path, gguf_offset(path, "output_norm.weight") + 3)
    damaged = loader._convert(path, model.sha256, tmp_path / "bad", Heard())
    assert not torch.equal(raw_logits(damaged), reference)
