"""The speedup lab's summaries: measured against predicted, and the GPU projection."""

from __future__ import annotations

from specviz.labs.speedup.charts import break_even_paragraph
from specviz.labs.speedup.gpu_projection import Projection
from specviz.labs.speedup.theory import SpeedupLab
from specviz.views.panels import panel_html, table_html


def speedup_html(lab: SpeedupLab | None) -> str:
    """Measured against predicted, γ by γ, and the paragraph on when speculation cannot win."""
    if lab is None:
        return panel_html(
            [
                "Press the button: the prompt is decoded plainly once and speculatively at each "
                "γ, and the target's and draft's step times are measured."
            ]
        )
    theory = lab.theory
    predicted = {row.gamma: row for row in theory.rows}
    rows = [
        [
            str(run.gamma),
            f"{run.alpha:.2f}",
            f"{run.tau:.2f}",
            f"{predicted[run.gamma].tau:.2f}" if run.gamma in predicted else "—",
            f"{run.speedup:.2f}×",
            f"{predicted[run.gamma].speedup:.2f}×" if run.gamma in predicted else "—",
            "" if run.complete else "cut by the time budget",
        ]
        for run in lab.runs
    ]
    headers = ["γ", "α", "τ measured", "τ predicted", "speedup", "predicted", ""]
    head = (
        f"Plain decoding: {lab.plain_tokens_per_s:.2f} tokens/s. Pooled α = {theory.alpha:.2f}; "
        f"draft step {theory.draft_step_s * 1000:.1f} ms, target step "
        f"{theory.target_step_s * 1000:.1f} ms, so c = {theory.draft_cost:.2f}. Predicted best "
        f"γ = {theory.best_gamma} ({theory.best_speedup:.2f}×). Measured in {lab.elapsed_s:.0f} s. "
        "The prediction leaves out per-cycle overhead (sampling, the acceptance test, "
        "detokenisation) and every time is measured on a shared machine, so expect some gap."
    )
    return panel_html([head, break_even_paragraph(theory)], table_html(headers, rows))


def projection_html(projection: Projection | None) -> str:
    """A projection, labelled as one, with every assumption it rests on."""
    if projection is None:
        return panel_html(["Pick a GPU and press Project."], css="sv-projection")
    head = (
        f"PROJECTION, not a measurement: {projection.gpu.name} at α = {projection.alpha:.2f}. "
        f"Modelled target step {projection.target_step_s * 1000:.2f} ms, draft step "
        f"{projection.draft_step_s * 1000:.2f} ms (c = {projection.draft_cost:.2f}); best γ = "
        f"{projection.best_gamma}, about {projection.best_speedup:.2f}× over plain decoding."
    )
    return panel_html(
        [head, "Assumptions: " + "; ".join(projection.assumptions) + "."], css="sv-projection"
    )
