"""The task lab's result table: α, τ and speedup per task, with the narrative."""

from __future__ import annotations

from specviz.labs.tasks.experiment import TaskReport
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
    "tasks.column.sample",
)


def tasks_html(report: TaskReport | None, *, lang: str = DEFAULT_LANGUAGE) -> str:
    """Per-task numbers and the one-sentence narrative."""
    if report is None or not report.tasks:
        return panel_html([t("tasks.placeholder", lang)])
    rows = [
        [
            task_label(result.task, lang),
            f"{result.acceptance_rate:.0%}",
            f"{result.tokens_per_target_pass:.2f}",
            f"{result.speculative.tokens_per_s:.1f}",
            f"{result.plain.tokens_per_s:.1f}",
            f"{result.speedup:.2f}×",
            result.sample,
        ]
        for result in report.tasks
    ]
    headers = [t(key, lang) for key in _HEADERS]
    return panel_html([report.narrative(lang)], table_html(headers, rows))
