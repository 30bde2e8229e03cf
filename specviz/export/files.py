"""The three exports of a run written to files: the trace (JSON), the drafted tokens (CSV) and
the report (HTML). The command line writes the ones it is asked for; the app writes all three
into a fresh folder under Gradio's cache."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from specviz.export.draft_csv import draft_csv
from specviz.export.report import report_html
from specviz.export.trace import trace_from_dict, trace_text
from specviz.text import DEFAULT_LANGUAGE


@dataclass(frozen=True)
class ExportPaths:
    """Where each export goes; None: not wanted."""

    trace: Path | None = None
    csv: Path | None = None
    report: Path | None = None

    @classmethod
    def in_folder(cls, folder: Path, stem: str = "specviz-run") -> ExportPaths:
        """All three, named *stem* with their suffixes, in *folder*."""
        return cls(
            trace=folder / f"{stem}.json",
            csv=folder / f"{stem}-drafts.csv",
            report=folder / f"{stem}-report.html",
        )


def write_exports(
    trace: Mapping[str, Any], paths: ExportPaths, lang: str = DEFAULT_LANGUAGE
) -> list[Path]:
    """Write the exports *paths* names for *trace* (``build_trace``'s dict), the CSV's sentences
    and the report in *lang*; returns the paths written. The CSV and the report are drawn from
    the trace read back, so they show exactly what a replay of the file would."""
    recorded = trace_from_dict(dict(trace))
    contents: list[tuple[Path | None, Callable[[], str]]] = [
        (paths.trace, lambda: trace_text(trace)),
        (paths.csv, lambda: draft_csv(recorded.cycles, lang)),
        (paths.report, lambda: report_html(recorded, lang=lang)),
    ]
    written = []
    for path, content in contents:
        if path is None:
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        # The CSV keeps its own line ends (RFC 4180's CRLF): no newline translation.
        path.write_text(content(), encoding="utf-8", newline="")
        written.append(path)
    return written
