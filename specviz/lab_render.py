"""Lab records -> escaped HTML summaries shown beside the labs' charts.

Pure functions like ``render``: a record in, a string out, every model-made string through ``_esc``.
"""

from __future__ import annotations

from collections.abc import Sequence

from specviz.exactness import ExactnessReport, GreedyReport
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


def exactness_html(report: ExactnessReport | None) -> str:
    """What the exactness run measured, the tests' verdicts, and the sample sizes behind them."""
    if report is None:
        return panel_html(
            [
                "Press the button: N continuations are drawn with plain sampling and N with "
                "speculative sampling from the same prompt and settings, and their distributions "
                "are compared."
            ]
        )
    rule = (
        "the paper's rule"
        if report.rule == "exact"
        else "a deliberately WRONG rule (every draft accepted)"
    )
    first = report.comparisons[0]
    detected = first.homogeneity.p_value < 0.01
    verdict = (
        f"The chi-square test sees a difference (p = {first.homogeneity.p_value:.2g}): "
        "these samples do not come from one distribution."
        if detected
        else f"No detectable difference (p = {first.homogeneity.p_value:.2f}): the speculative "
        "samples are consistent with the target's own distribution."
    )
    paragraphs = [
        f"{report.samples:,} samples per arm, first {report.tokens} token(s), {rule}. "
        f"Took {report.elapsed_s:.1f} s: the target scored {report.target_prefixes} distinct "
        f"prefixes in {report.target_forwards} batched forwards and the draft "
        f"{report.draft_prefixes} in {report.draft_forwards} (samples that reach the same prefix "
        "share one forward; the models are deterministic, so this changes nothing).",
        verdict,
        f"Analytic check of the first token: the rule's output law differs from p by at most "
        f"{report.emission_max_error:.1e} (Leviathan et al., Theorem 1). The draft's q is "
        f"TV {report.draft_target_tv:.2f} away from p, which is what the wrong rule would ship.",
    ]
    sizes = ", ".join(f"TV {tv:g}: about {n:,}" for tv, n in report.samples_needed_by_tv)
    needed = f"Samples per arm for an 80 % chance to detect a shift at 5 % significance: {sizes}."
    if report.wrong_rule_samples_needed is not None:
        needed += f" The wrong rule's shift needs only about {report.wrong_rule_samples_needed:,}."
    paragraphs.append(needed)
    rows = [
        [
            "first token" if c.length == 1 else f"first {c.length} tokens",
            f"{c.tv_distance:.3f}",
            f"{c.tv_if_equal:.3f}",
            f"{c.homogeneity.p_value:.3g}",
            f"{c.speculative_fit.p_value:.3g}",
            f"{c.plain_fit.p_value:.3g}",
        ]
        for c in report.comparisons
    ]
    headers = [
        "outcome",
        "TV(plain, spec)",
        "TV from noise alone",
        "χ² p plain vs spec",
        "χ² p spec vs exact p",
        "χ² p plain vs exact p",
    ]
    css = "sv-lab-bad" if report.rule != "exact" else ""
    return panel_html(paragraphs, table_html(headers, rows), css)


GREEDY_PRECISION_NOTE = (
    "In exact arithmetic greedy speculative decoding returns the target's greedy text token for "
    "token: a draft is kept only if it is the target's top choice. On real hardware the target "
    "scores γ + 1 tokens in one batched pass during verification but one token per pass in plain "
    "decoding, and in bfloat16 (or float16) those two computations round differently. When two "
    "candidates are nearly tied, the rounding can pick the other one, and the texts continue "
    "differently from there. That is a property of reduced-precision kernels, not of the "
    "algorithm: in float32 the outputs match."
)


def greedy_html(report: GreedyReport | None) -> str:
    """Greedy speculative vs plain: equal or not, where they part, and the precision caveat."""
    if report is None:
        return panel_html(["At temperature 0 this compares greedy outputs token for token."])
    if report.identical:
        head = (
            f"Identical: all {len(report.plain_ids)} tokens of greedy speculative decoding equal "
            f"plain greedy decoding of the target ({report.target_dtype})."
        )
    else:
        index = report.first_difference or 0
        head = (
            f"The texts part at token {index + 1} of {len(report.plain_ids)} "
            f"({report.target_dtype}); everything before it is identical."
        )
    rows = [["speculative", report.speculative_text], ["plain", report.plain_text]]
    return panel_html([head, GREEDY_PRECISION_NOTE], table_html(["decoder", "text"], rows))
