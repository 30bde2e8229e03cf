"""Lab records -> escaped HTML summaries shown beside the labs' charts.

Pure functions like ``render``: a record in, a string out, every model-made string through ``_esc``.
"""

from __future__ import annotations

from collections.abc import Sequence

from specviz.render import _esc
from specviz.task_dependence import TaskReport


def table_html(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A small table; cells are escaped here, so callers pass plain text."""
    head = "".join(f"<th>{_esc(cell)}</th>" for cell in headers)
    body = "".join(
        "<tr>" + "".join(f"<td>{_esc(cell)}</td>" for cell in row) + "</tr>" for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def panel_html(paragraphs: Sequence[str], table: str = "", css: str = "") -> str:
    """A result panel: escaped paragraphs, then an already-built table."""
    text = "".join(f"<p>{_esc(paragraph)}</p>" for paragraph in paragraphs)
    return f'<div class="sv-lab-result {_esc(css)}">{text}{table}</div>'


def tasks_html(report: TaskReport | None) -> str:
    """Per-task numbers and the one-sentence narrative."""
    if report is None or not report.tasks:
        return panel_html(
            ["Press the button: each task's example prompt runs speculatively and plainly."]
        )
    rows = [
        [
            result.task,
            f"{result.acceptance_rate:.0%}",
            f"{result.tokens_per_target_pass:.2f}",
            f"{result.speculative.tokens_per_s:.1f}",
            f"{result.plain.tokens_per_s:.1f}",
            f"{result.speedup:.2f}×",
            result.sample,
        ]
        for result in report.tasks
    ]
    headers = ["task", "α", "τ", "spec tok/s", "plain tok/s", "speedup", "output begins"]
    return panel_html([report.narrative()], table_html(headers, rows))
