"""Model sources: bundled-pair assembly and verification, tokenizer compatibility, dtype choice."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from specviz.models.bundled import BUNDLED, BundledModel, BundledModelError, assemble, part_files
from specviz.models.loader import ModelLoadError, check_tokenizers, eos_ids, pick_dtype
from specviz.models.presets import default_preset, load_presets


def fake_packages(
    tmp_path: Path, prefix: str, chunks: list[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Lay out data-only packages like the real chunk packages and put them on sys.path."""
    site = tmp_path / "site"
    for number, chunk in enumerate(chunks, start=1):
        package = site / f"{prefix}{number}"
        (package / "data").mkdir(parents=True)
        (package / "__init__.py").write_text("raise ImportError('data only: never import me')\n")
        (package / "data" / f"part{number:02d}.bin").write_bytes(chunk)
    monkeypatch.syspath_prepend(str(site))


def model_for(chunks: list[bytes], prefix: str = "specviz_fake_part") -> BundledModel:
    data = b"".join(chunks)
    return BundledModel(
        name="fake-model",
        label="Fake model",
        package_prefix=prefix,
        parts=len(chunks),
        version="1.0",
        size=len(data),
        sha256=hashlib.sha256(data).hexdigest(),
    )


def test_assemble_joins_parts_in_order_and_reuses_the_verified_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chunks = [b"alpha-" * 1000, b"beta-" * 10, b"gamma"]
    fake_packages(tmp_path, "specviz_fake_part", chunks, monkeypatch)
    model = model_for(chunks)
    seen: list[float] = []
    path = assemble(model, tmp_path / "cache", lambda fraction, message: seen.append(fraction))
    assert path.read_bytes() == b"".join(chunks)
    assert seen and seen[-1] == pytest.approx(1.0)
    assert "specviz_fake_part1" not in sys.modules  # located, never imported
    mtime = path.stat().st_mtime_ns
    assert assemble(model, tmp_path / "cache") == path
    assert path.stat().st_mtime_ns == mtime  # trusted via the stamp, not rebuilt


def test_corrupt_part_is_a_clear_error_and_leaves_nothing_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chunks = [b"alpha", b"beta"]
    model = model_for(chunks)
    fake_packages(tmp_path, "specviz_fake_part", [b"alpha", b"bXta"], monkeypatch)
    with pytest.raises(BundledModelError, match=r"specviz-fake-part1\.\.2==1\.0 is corrupt"):
        assemble(model, tmp_path / "cache")
    assert not list((tmp_path / "cache").glob("*.gguf"))


def test_missing_part_names_the_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    chunks = [b"alpha", b"beta", b"gamma"]
    fake_packages(tmp_path, "specviz_fake_part", chunks[:2], monkeypatch)
    with pytest.raises(BundledModelError, match=r"specviz-fake-part3==1\.0 is not installed"):
        part_files(model_for(chunks))


def test_bundled_catalogue_matches_the_published_packages() -> None:
    draft, target = BUNDLED["qwen2.5-coder-0.5b-instruct"], BUNDLED["qwen2.5-coder-1.5b-instruct"]
    assert (draft.parts, draft.version, draft.size) == (6, "0.9.0", 491_400_064)
    assert (target.parts, target.version, target.size) == (22, "0.2.0", 1_117_320_768)
    requirements = Path(__file__).parents[2].joinpath("requirements.txt").read_text().split()
    for model in (draft, target):
        for part in range(1, model.parts + 1):
            assert model.requirement(part) in requirements


def test_tokenizer_mismatch_explains_why() -> None:
    preset = default_preset(load_presets())

    class Tok:
        def __init__(self, vocab: dict[str, int]) -> None:
            self.vocab = vocab

        def get_vocab(self) -> dict[str, int]:
            return self.vocab

        def __len__(self) -> int:
            return len(self.vocab)

    check_tokenizers(Tok({"a": 0, "b": 1}), Tok({"a": 0, "b": 1}), preset)
    with pytest.raises(ModelLoadError, match="must share the target's tokenizer"):
        check_tokenizers(Tok({"a": 0, "b": 1}), Tok({"a": 1, "b": 0}), preset)


def test_eos_ids_collects_config_lists_and_chat_end_tokens() -> None:
    model = SimpleNamespace(generation_config=SimpleNamespace(eos_token_id=[5, 6]))
    ids = {"<|im_end|>": 7}
    tokenizer = SimpleNamespace(
        eos_token_id=6, unk_token_id=None, convert_tokens_to_ids=lambda token: ids.get(token)
    )
    assert eos_ids(model, tokenizer) == frozenset({5, 6, 7})  # type: ignore[arg-type]


def test_dtype_choice() -> None:
    cpu = torch.device("cpu")
    assert pick_dtype("float32", cpu) is torch.float32
    assert pick_dtype("auto", cpu) in (torch.bfloat16, torch.float32)
