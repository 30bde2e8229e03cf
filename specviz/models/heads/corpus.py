"""The offline text the heads learn from, by task group, and the held-out part they are measured
on. Nothing is downloaded: every source is already on the machine where specviz runs.

- code: the Python standard library's own source (PSF licence);
- prose: English documentation installed with the packages (their README and METADATA
  descriptions, reStructuredText and Markdown files, each under its package's licence);
- ja: Japanese prose written for specviz itself (its Japanese text table, specviz's licence).

The heads learn the target's distributions on this text, not the text itself: the text only
sets the contexts the target is asked about.
"""

from __future__ import annotations

import hashlib
import site
import sysconfig
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

GROUPS = ("code", "prose", "ja")
HELD_OUT_EVERY = 10  # one document in ten (by a hash of its name) is held out
MIN_CHARS = 400  # shorter files are mostly boilerplate (an __init__, a one-line README)
# Each file gives one excerpt of about this many characters (a few hundred tokens), from its
# body rather than its head (licences and imports): a budget of ten thousand tokens then spans
# dozens of files. Whole files made a short training learn one or two modules by heart (train
# agreement 44 %, held-out 7 %).
EXCERPT_CHARS = 1200
PROSE_SUFFIXES = (".md", ".rst")
# Licence texts, which many packages ship word for word: left out of the prose, or the held-out
# part measures how well the heads recite a licence they read in training (a held-out excerpt of
# a BSD licence once put prose head 1 at 59 % where code's was 33 %).
LICENCE_NAMES = ("LICENSE", "LICENCE", "COPYING", "NOTICE")
LICENCE_PHRASES = (
    "redistribution and use in source and binary forms",
    "permission is hereby granted",
    "licensed under the apache license",
    "the software is provided",
    "gnu general public license",
    "without warranties or conditions",
)
JA_ENTRIES_PER_DOCUMENT = 24


@dataclass(frozen=True)
class Document:
    group: str
    name: str  # where it came from (a path, or the text table and an entry range)
    text: str

    @property
    def held_out(self) -> bool:
        return _hash(self.name) % HELD_OUT_EVERY == 0


def _hash(name: str) -> int:
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big")


def _shuffled(paths: list[Path]) -> list[Path]:
    """A fixed order that mixes folders (by a hash of the path), so a short budget still sees
    many modules rather than the first few alphabetically."""
    return sorted(paths, key=lambda path: _hash(str(path)))


def _read(path: Path) -> str | None:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return excerpt(text) if len(text) >= MIN_CHARS else None


def excerpt(text: str) -> str:
    """About EXCERPT_CHARS of *text* from the first line that starts past a third of it (the
    whole text when it is short), cut at a line end."""
    if len(text) <= 2 * EXCERPT_CHARS:
        return text[: 2 * EXCERPT_CHARS]
    start = text.find("\n", len(text) // 3) + 1
    end = text.rfind("\n", start, start + EXCERPT_CHARS)
    return text[start : end if end > start else start + EXCERPT_CHARS]


def code_documents() -> Iterator[Document]:
    """The standard library's .py files (its tests and site-packages left out)."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    paths = [
        path
        for path in stdlib.rglob("*.py")
        if "site-packages" not in path.parts and "test" not in path.parts
    ]
    for path in _shuffled(paths):
        if (text := _read(path)) is not None:
            yield Document("code", str(path.relative_to(stdlib)), text)


def prose_documents() -> Iterator[Document]:
    """Installed packages' documentation in English: package descriptions (METADATA) and their
    .md/.rst files, those that are mostly Latin letters."""
    roots = [Path(folder) for folder in site.getsitepackages() if Path(folder).is_dir()]
    paths: list[Path] = []
    for root in roots:
        paths += root.glob("*.dist-info/METADATA")
        paths += [path for suffix in PROSE_SUFFIXES for path in root.rglob(f"*{suffix}")]
    for path in _shuffled(paths):
        if path.name.upper().startswith(LICENCE_NAMES):
            continue
        text = _read(path)
        if text is not None and _latin_share(text) > 0.95 and not is_licence(text):
            yield Document("prose", str(path.relative_to(path.parents[1])), text)


def is_licence(text: str) -> bool:
    """Whether *text* quotes a common licence (LICENCE_PHRASES)."""
    lowered = " ".join(text.lower().split())
    return any(phrase in lowered for phrase in LICENCE_PHRASES)


def _latin_share(text: str) -> float:
    return sum(character.isascii() for character in text) / max(len(text), 1)


def ja_documents() -> Iterator[Document]:
    """specviz's Japanese text table, its entries in groups of JA_ENTRIES_PER_DOCUMENT."""
    from specviz.text import TABLES

    entries = [str(value) for _, value in sorted(TABLES["ja"].items())]
    for start in range(0, len(entries), JA_ENTRIES_PER_DOCUMENT):
        chunk = entries[start : start + JA_ENTRIES_PER_DOCUMENT]
        yield Document("ja", f"specviz/text/ja.py#{start}", "\n".join(chunk))


# What the features depend on besides the target: a features folder is named after it.
SIGNATURE = f"excerpt={EXCERPT_CHARS},every={HELD_OUT_EVERY},min={MIN_CHARS},licences=out"

SOURCES = {"code": code_documents, "prose": prose_documents, "ja": ja_documents}


def documents(group: str, held_out: bool) -> Iterator[Document]:
    """The group's training documents, or its held-out ones, in a fixed order."""
    return (doc for doc in SOURCES[group]() if doc.held_out == held_out)
