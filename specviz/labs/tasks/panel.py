"""The task lab's result table: α, τ and speedup per task with how firm it is, and the narrative
(or why no ranking is drawn)."""

from __future__ import annotations

from specviz.labs.tasks.experiment import TaskReport, TaskResult
from specviz.measure.spread import NOISY_SPREAD
from specviz.models.presets import task_label
from specviz.text import DEFAULT_LANGUAGE, t
from specviz.views.panels import panel_html, table_html

_HEADERS = (
    "tasks.column.task",
    "tasks.column.alpha",
    "tasks.column.tau",
    "tasks.column.spec_tps",
    "tasks.column.plain_tps",
    "tasks.column.speedup",
    "tasks.column.firmness",
    "tasks.column.sample",
)


def tasks_html(report: TaskReport | None, *, lang: str = DEFAULT_LANGUAGE) -> str:
    """Per-task numbers and the one-sentence narrative; with repeats, how the speedup was taken
    and, when its repeats scattered widely, that the machine was noisy."""
    if report is None or not report.tasks:
        return panel_html([t("tasks.placeholder", lang)])
    rows = [
        [
            task_label(result.task, lang),
            f"{result.acceptance_rate:.0%}",
            f"{result.tokens_per_target_pass:.2f}",
            f"{result.speculative.tokens_per_s:.1f}",
            f"{result.plain.tokens_per_s:.1f}",
            speedup_cell(result, lang),
            report.task_firmness(result).label.text(lang),
            result.sample,
        ]
        for result in report.tasks
    ]
    headers = [t(key, lang) for key in _HEADERS]
    lines = [report.narrative(lang)]
    repeats = max(result.speedups.count for result in report.tasks)
    if repeats > 1:
        lines.append(t("tasks.repeats_note", lang, repeats=repeats))
    if report.complete and report.noisy:
        lines.append(
            t(
                "tasks.noisy",
                lang,
                percent=f"{100 * report.widest_spread:.0f}",
                threshold=f"{100 * NOISY_SPREAD:.0f}",
            )
        )
    return panel_html(lines, table_html(headers, rows))


def speedup_cell(result: TaskResult, lang: str) -> str:
    """The task's median speedup, with the range over its repeats when there are several."""
    spread = result.speedups
    if spread.count < 2:
        return f"{spread.median:.2f}×"
    return t(
        "tasks.speedup.range",
        lang,
        median=f"{spread.median:.2f}",
        low=f"{spread.low:.2f}",
        high=f"{spread.high:.2f}",
    )
