"""The exactness lab's summary: what was sampled, the tests' verdicts, the sample sizes."""

from __future__ import annotations

from specviz.labs.exactness.experiment import ExactnessReport, GreedyReport
from specviz.views.panels import panel_html, table_html


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
    # The direct test of the claim: speculative samples against the target's exact law, which is
    # known here (the lab keeps every p it computed). 1 % level, stated, so one chance p = 0.03
    # among several tests is not read as a failure.
    fit = report.comparisons[0].speculative_fit
    verdict = (
        f"At the 1 % level the test sees a difference (speculative samples vs the target's exact "
        f"law: χ² p = {fit.p_value:.2g}): these samples do not follow p."
        if fit.p_value < 0.01
        else f"No detectable difference at the 1 % level (speculative samples vs the target's "
        f"exact law: χ² p = {fit.p_value:.2f}): consistent with exact sampling from p. About "
        "one test in twenty gives p < 0.05 by chance even when nothing is wrong."
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
