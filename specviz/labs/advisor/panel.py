"""The advisor's result panel: the recommendation (or why none is drawn) with how firm it is, then
the ranked table of every candidate, each with how firm its speedup is."""

from __future__ import annotations

from specviz.labs.advisor.advice import Advice, EngineVerdict, Verdict
from specviz.text import DEFAULT_LANGUAGE, t
from specviz.views.panels import panel_html, table_html

_HEADERS = (
    "advisor.column.rank",
    "advisor.column.candidate",
    "advisor.column.alpha",
    "advisor.column.tau",
    "advisor.column.tps",
    "advisor.column.speedup",
    "advisor.column.ttft",
    "advisor.column.memory",
    "advisor.column.firmness",
)


def advice_html(advice: Advice | None, *, lang: str = DEFAULT_LANGUAGE) -> str:
    """The recommendation and the table, fastest candidate first; a placeholder before a run."""
    if advice is None or not advice.verdicts:
        return panel_html([t("advisor.placeholder", lang)])
    paragraphs = [advice.recommendation(lang), t("advisor.panel.plain", lang, **_plain(advice))]
    if advice.cut or advice.stopped:
        paragraphs.append(t("advisor.panel.cut", lang))
    rows = [_row(rank, verdict, lang) for rank, verdict in enumerate(advice.ranked(), start=1)]
    headers = [t(key, lang) for key in _HEADERS]
    table = table_html(headers, rows)
    if advice.engines:
        engine_headers = [t(key, lang) for key in ENGINE_HEADERS]
        engine_rows = [engine_row(verdict) for verdict in advice.engines]
        table += panel_html(
            [t("advisor.engines.intro", lang)], table_html(engine_headers, engine_rows)
        )
    return panel_html(paragraphs, table)


ENGINE_HEADERS = (
    "advisor.column.engine_lane",
    "advisor.column.alpha",
    "advisor.column.tau",
    "advisor.column.tps",
    "advisor.column.over_specviz",
    "advisor.column.over_own",
)


def engine_row(verdict: EngineVerdict) -> list[str]:
    """An engine lane's cells: α and τ (– for plain decoding), tokens/s, and its speed over
    specviz's plain decoding and over its own engine's."""
    alpha = "–" if verdict.alpha is None else f"{verdict.alpha:.0%}"
    tau = "–" if verdict.alpha is None else f"{verdict.tau:.2f}"
    own = "–" if verdict.own_speedup is None else f"{verdict.own_speedup:.2f}×"
    return [
        verdict.lane.name,
        alpha,
        tau,
        f"{verdict.tokens_per_s:.2f}",
        f"{verdict.speedup:.2f}×",
        own,
    ]


def memory_text(verdict: Verdict) -> str:
    """The memory a candidate adds, in MiB ("-" where it could not be read)."""
    if verdict.memory_bytes is None:
        return "-"
    return f"{verdict.memory_bytes / 2**20:.0f} MiB"


def _row(rank: int, verdict: Verdict, lang: str) -> list[str]:
    mark = "" if verdict.complete else " *"
    return [
        str(rank),
        verdict.candidate.name + mark,
        f"{verdict.alpha:.0%}",
        f"{verdict.tau:.2f}",
        f"{verdict.tokens_per_s:.2f}",
        f"{verdict.speedup:.2f}×",
        f"{verdict.ttft_s:.2f} s",
        memory_text(verdict),
        verdict.firmness.label.text(lang),
    ]


def _plain(advice: Advice) -> dict[str, str]:
    return {"plain": f"{advice.plain_tokens_per_s:.2f}", "ttft": f"{advice.plain_ttft_s:.2f}"}
