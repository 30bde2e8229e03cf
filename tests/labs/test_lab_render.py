"""Lab result panels: the numbers they state, and model text escaped."""

from __future__ import annotations

from ui_events import XSS, XSS_IMG

from specviz.core.events import Totals
from specviz.core.settings import GenerationSettings
from specviz.labs.exactness.greedy import GreedyReport
from specviz.labs.exactness.panel import greedy_html
from specviz.labs.speedup.gpu_projection import GPU_PRESETS, project_speedup
from specviz.labs.speedup.panel import projection_html
from specviz.labs.tasks.experiment import PromptRun, TaskReport, TaskResult
from specviz.labs.tasks.panel import tasks_html
from specviz.views.panels import panel_html, table_html


def test_tables_escape_every_cell() -> None:
    page = table_html(["a", XSS], [[XSS_IMG, "1"]]) + panel_html([XSS])
    assert "<script" not in page and "<img" not in page
    assert "&lt;script&gt;" in page


def _task(task: str, accepted: int, tested: int, text: str) -> TaskResult:
    # 128 new tokens a run: enough to rank the tasks (specviz.measure.firmness).
    spec = Totals(128, 32, 160, tested, accepted, 12.8, 0.1)
    plain = Totals(128, 128, 0, 0, 0, 25.6, 0.1)
    return TaskResult(task, (PromptRun("prompt", spec, plain, text, text),))


def test_tasks_panel_states_alpha_tau_speedup_and_escapes_samples() -> None:
    report = TaskReport(
        GenerationSettings(),
        (_task("code", 19, 20, "def f():"), _task("story", 10, 20, XSS_IMG)),
        complete=True,
    )
    page = tasks_html(report)
    assert "<td>95%</td><td>4.00</td><td>10.0</td><td>5.0</td><td>2.00×</td>" in page
    assert "How firm: indicative: 128 tokens a run; one run, so no spread" in page
    assert "<img" not in page and "&lt;img" in page
    assert "guesses code best" in page and "story worst" in page


def test_greedy_panel_says_where_outputs_part() -> None:
    same = GreedyReport((1, 2, 3), (1, 2, 3), "abc", "abc", None, "float32")
    parted = GreedyReport((1, 2, 9), (1, 2, 3), "ab" + XSS, "abc", 2, "bfloat16")
    assert "Identical: all 3 tokens" in greedy_html(same)
    page = greedy_html(parted)
    assert "part at token 3 of 3 (bfloat16)" in page and "round differently" in page
    assert "<script" not in page


def test_projection_panel_is_labelled_as_a_projection() -> None:
    projection = project_speedup(
        0.8,
        GPU_PRESETS["NVIDIA H100 SXM"],
        3e9,
        1e9,
        1.5e9,
        0.5e9,
        target_layers=28,
        draft_layers=24,
    )
    page = projection_html(projection)
    assert "PROJECTION, not a measurement" in page and "sv-projection" in page
    assert "Assumptions:" in page
