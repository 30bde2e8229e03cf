"""The task lab's result table: α, τ and speedup per task, with the narrative."""

from __future__ import annotations

from specviz.labs.tasks.experiment import TaskReport
from specviz.views.panels import panel_html, table_html


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
