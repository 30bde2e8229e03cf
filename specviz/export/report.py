"""A trace as one self-contained HTML page for a slide deck or an e-mail: no network needed.

The page holds the prompt, the results (``report_results``: the race's speedup with how firm it
is, the median speeds it divides, α beside vLLM's draft_acceptance_rate and why they differ), the
coloured output (the live tab's own stream and race from ``views``, with ``assets/specviz.css``
inlined), the vLLM-named summary, the live tab's charts (``views.run_charts``, drawn by plotly.js
inlined once in the page), the setup and machine, and a paragraph saying what was measured and
how. Drafters go by their catalogue names, the spec in a tooltip. Every piece of user or model
text goes through ``esc`` or the catalogue's ``t_html``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import plotly.graph_objects as go

from specviz.core.settings import GenerationSettings, settings_schema
from specviz.export.report_results import results_html
from specviz.export.trace import Trace
from specviz.text import DEFAULT_LANGUAGE, Html, t, t_html
from specviz.views import race_html as race_views
from specviz.views import run_charts as charts
from specviz.views import run_html as render
from specviz.views.token_text import esc

_STYLESHEET = Path(__file__).resolve().parents[2] / "assets" / "specviz.css"
# The page's own layout; the tokens, cards and counters keep the app's stylesheet.
_PAGE_STYLE = """
body { font-family: system-ui, sans-serif; max-width: 1100px; margin: 24px auto; padding: 0 16px;
  color: #1f2328; background: #fff; }
h1 { font-size: 22px; margin-bottom: 4px; } h2 { font-size: 17px; margin-top: 28px; }
.sv-report-meta { color: #57606a; }
.sv-report-prompt { white-space: pre-wrap; font-family: ui-monospace, monospace;
  background: #f6f8fa; padding: 10px 12px; border-radius: 8px; }
.sv-report-charts { display: grid; grid-template-columns: 1fr 1fr; gap: 8px; }
table.sv-report-table { border-collapse: collapse; font-size: 14px; }
.sv-report-table td, .sv-report-table th { border-bottom: 1px solid #d0d7de; padding: 4px 10px;
  text-align: left; vertical-align: top; }
.sv-report-table code { font-size: 13px; }
.sv-report-method { line-height: 1.5; }
.sv-report-firmness, .sv-report-note { color: #57606a; line-height: 1.5; }
.sv-race-head { display: none; }  /* the speedup heads the results already */
"""


def report_html(trace: Trace, *, lang: str = DEFAULT_LANGUAGE) -> str:
    """The report page for *trace*, worded in *lang*: a complete HTML document."""
    cycles, steps = trace.cycles, trace.steps
    title = t("report.title", lang, label=str(trace.models.get("label", "")))
    meta = t_html(
        "report.recorded",
        lang,
        date=trace.recorded_at,
        where=trace.where(),
        device=str(trace.hardware.get("device", "")),
    )
    if trace.race is not None:
        output = race_views.race_html(trace.race, lang=lang)
    else:
        output = render.stream_html(cycles, lang=lang)
    sections = [
        f"<h1>{esc(title)}</h1><p class='sv-report-meta'>{meta}</p>",
        _section(
            "report.section.prompt",
            f"<div class='sv-report-prompt'>{esc(trace.prompt)}</div>",
            lang,
        ),
        _section("report.section.results", results_html(trace, lang), lang),
        _section(
            "report.section.output",
            render.legend_html(include_target=bool(steps), lang=lang) + output,
            lang,
        ),
        _section("report.section.charts", _charts(trace, lang), lang),
        _section("report.section.summary", _summary_table(trace.summary), lang),
        _section("report.section.setup", _setup_table(trace, lang), lang),
        _section(
            "report.section.method", f"<p class='sv-report-method'>{_method(trace, lang)}</p>", lang
        ),
    ]
    stylesheet = _STYLESHEET.read_text(encoding="utf-8") if _STYLESHEET.exists() else ""
    return (
        f'<!doctype html><html lang="{esc(lang)}"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title><style>{stylesheet}{_PAGE_STYLE}</style></head>"
        f"<body>{''.join(sections)}</body></html>"
    )


def _section(heading_key: str, body: str, lang: str) -> str:
    return f"<section><h2>{t_html(heading_key, lang)}</h2>{body}</section>"


def _charts(trace: Trace, lang: str) -> str:
    """The live tab's four charts, plotly.js inlined with the first and reused by the rest."""
    cycles = trace.cycles
    figures = [
        charts.acceptance_by_position(cycles, lang=lang),
        charts.accepted_length_histogram(cycles, lang=lang),
        charts.tokens_vs_passes(cycles, trace.steps, lang=lang),
        charts.time_split(cycles, lang=lang),
    ]
    parts = [_figure_html(figure, inline_js=i == 0) for i, figure in enumerate(figures)]
    return f"<div class='sv-report-charts'>{''.join(parts)}</div>"


def _figure_html(figure: go.Figure, *, inline_js: bool) -> str:
    # Plotly writes the figure's own text (titles, token labels) into JSON inside a script,
    # escaping "<" and "/" there, so model text cannot close the script.
    html: str = figure.to_html(
        full_html=False,
        include_plotlyjs=inline_js,
        include_mathjax=False,
        config={"displaylogo": False, "responsive": True},
    )
    return html


def _table(rows: Sequence[tuple[str, str]]) -> str:
    """A two-column table; both cells are HTML the caller escaped."""
    body = "".join(f"<tr><th>{name}</th><td>{value}</td></tr>" for name, value in rows)
    return f"<table class='sv-report-table'>{body}</table>"


def _summary_table(summary: Mapping[str, Any]) -> str:
    """The summary under the engines' own names (vLLM's, then llama.cpp's), as code."""
    rows = [
        (f"<code>{esc(name)}</code>", f"<code>{esc(_shown(value))}</code>")
        for name, value in summary.items()
        if name not in ("llama_cpp", "specviz")
    ]
    llama = summary.get("llama_cpp", {})
    rows += [
        (f"<code>llama.cpp {esc(name)}</code>", esc(_shown(value))) for name, value in llama.items()
    ]
    return _table(rows)


def _shown(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.4f}"
    if isinstance(value, list) and len(value) > 40:
        return f"{value[:40]} …"
    return str(value)


def _setup_table(trace: Trace, lang: str) -> str:
    """Models, drafter, settings (by their labels), machine and versions."""
    models, hardware, versions = trace.models, trace.hardware, trace.versions
    draft, target = models.get("draft", {}), models.get("target", {})
    draft_words = (
        f"{draft.get('source', '')} ({models.get('dtype', '')}, {draft.get('format', '')})"
    )
    rows: list[tuple[str, str]] = [
        (t_html("report.setup.draft", lang), esc(draft_words)),
        (
            t_html("report.setup.target", lang),
            esc(f"{target.get('source', '')} ({models.get('dtype', '')})"),
        ),
        (t_html("report.setup.drafter", lang), race_views.drafter_html(trace.drafter, lang)),
    ]
    rows += [
        (esc(item.label(lang)), esc(str(trace.settings[item.name])))
        for item in settings_schema(GenerationSettings)
        if item.name in trace.settings
    ]
    flags = " ".join(hardware.get("cpu_flags", ())) or "—"
    rows += [
        (t_html("report.setup.device", lang), esc(str(hardware.get("device", "")))),
        (t_html("report.setup.cpu", lang), esc(str(hardware.get("cpu", "")))),
        (t_html("report.setup.flags", lang), esc(flags)),
        (
            t_html("report.setup.cores", lang),
            esc(f"{hardware.get('cores')} / {hardware.get('torch_threads')}"),
        ),
        (t_html("report.setup.gpu", lang), esc(str(hardware.get("gpu") or "—"))),
        (
            t_html("report.setup.versions", lang),
            esc(", ".join(f"{name} {value}" for name, value in versions.items() if value)),
        ),
    ]
    return _table(rows)


def _method(trace: Trace, lang: str) -> Html:
    """What was measured and how, with this run's numbers."""
    cycles = trace.cycles
    totals = cycles[-1].totals if cycles else None
    gain = trace.race.gain(trace.drafter) if trace.race is not None else None
    if gain is not None:
        runs = render.raced_runs_words(gain.speedup.count, lang)
        plain = t("report.method.plain", lang, runs=runs)
    else:
        plain = t("report.method.no_plain", lang)
    return t_html(
        "report.method",
        lang,
        tokens=totals.new_tokens if totals else 0,
        cycles=len(cycles),
        drafter=race_views.drafter_html(trace.drafter, lang),
        gamma=str(trace.settings.get("gamma", "")),
        temperature=str(trace.settings.get("temperature", "")),
        where=trace.where(),
        plain=plain,
    )
