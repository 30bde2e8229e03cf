"""Result panels beside the labs' charts: escaped paragraphs and tables.

Pure functions: plain text in, HTML out; every cell and paragraph is escaped here, so callers
pass model-made text as it is.
"""

from __future__ import annotations

from collections.abc import Sequence

from specviz.views.token_text import esc


def table_html(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A small table; cells are escaped here, so callers pass plain text."""
    head = "".join(f"<th>{esc(cell)}</th>" for cell in headers)
    body = "".join(
        "<tr>" + "".join(f"<td>{esc(cell)}</td>" for cell in row) + "</tr>" for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def panel_html(
    paragraphs: Sequence[str], table: str = "", css: str = "", after: Sequence[str] = ()
) -> str:
    """A result panel: escaped paragraphs, then an already-built table, then the paragraphs
    *after* it."""
    text = "".join(f"<p>{esc(paragraph)}</p>" for paragraph in paragraphs)
    rest = "".join(f"<p>{esc(paragraph)}</p>" for paragraph in after)
    return f'<div class="sv-lab-result {esc(css)}">{text}{table}{rest}</div>'
