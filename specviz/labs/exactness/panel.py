"""The exactness lab's summary: what was sampled, the tests' verdicts, the sample sizes."""

from __future__ import annotations

from specviz.labs.exactness.experiment import ExactnessReport
from specviz.labs.exactness.greedy import GreedyReport
from specviz.text import DEFAULT_LANGUAGE, t
from specviz.views.panels import panel_html, table_html

_HEADERS = (
    "exactness.column.outcome",
    "exactness.column.tv",
    "exactness.column.tv_noise",
    "exactness.column.plain_vs_spec",
    "exactness.column.spec_vs_exact",
    "exactness.column.plain_vs_exact",
)


def exactness_html(report: ExactnessReport | None, *, lang: str = DEFAULT_LANGUAGE) -> str:
    """What the exactness run measured, the tests' verdicts, and the sample sizes behind them."""
    if report is None:
        return panel_html([t("exactness.placeholder", lang)])
    rule = t("exactness.rule.exact" if report.rule == "exact" else "exactness.rule.wrong", lang)
    # The direct test of the claim: speculative samples against the target's exact law, which is
    # known here (the lab keeps every p it computed). 1 % level, stated, so one chance p = 0.03
    # among several tests is not read as a failure.
    fit = report.comparisons[0].speculative_fit
    verdict = (
        t("exactness.verdict.differs", lang, p_value=f"{fit.p_value:.2g}")
        if fit.p_value < 0.01
        else t("exactness.verdict.consistent", lang, p_value=f"{fit.p_value:.2f}")
    )
    paragraphs = [
        t(
            "exactness.run",
            lang,
            samples=f"{report.samples:,}",
            tokens=report.tokens,
            rule=rule,
            seconds=f"{report.elapsed_s:.1f}",
            target_prefixes=report.target_prefixes,
            target_forwards=report.target_forwards,
            draft_prefixes=report.draft_prefixes,
            draft_forwards=report.draft_forwards,
        ),
        verdict,
        t(
            "exactness.analytic" if report.rule == "exact" else "exactness.analytic.wrong",
            lang,
            error=f"{report.emission_max_error:.1e}",
            tv=f"{report.draft_target_tv:.2f}",
        ),
    ]
    sizes = t("list.separator", lang).join(
        t("exactness.size", lang, tv=f"{tv:g}", n=f"{n:,}") for tv, n in report.samples_needed_by_tv
    )
    needed = t("exactness.needed", lang, sizes=sizes)
    if report.wrong_rule_samples_needed is not None:
        needed += t("exactness.needed.wrong_rule", lang, n=f"{report.wrong_rule_samples_needed:,}")
    paragraphs.append(needed)
    rows = [
        [
            t("exactness.outcome.first", lang)
            if c.length == 1
            else t("exactness.outcome.first_n", lang, n=c.length),
            f"{c.tv_distance:.3f}",
            f"{c.tv_if_equal:.3f}",
            f"{c.homogeneity.p_value:.3g}",
            f"{c.speculative_fit.p_value:.3g}",
            f"{c.plain_fit.p_value:.3g}",
        ]
        for c in report.comparisons
    ]
    headers = [t(key, lang) for key in _HEADERS]
    css = "sv-lab-bad" if report.rule != "exact" else ""
    return panel_html(paragraphs, table_html(headers, rows), css)


def greedy_precision_note(lang: str = DEFAULT_LANGUAGE) -> str:
    """Why greedy speculative and plain texts can part in reduced precision."""
    return t("exactness.greedy.precision", lang)


def greedy_html(report: GreedyReport | None, *, lang: str = DEFAULT_LANGUAGE) -> str:
    """Greedy speculative vs plain: equal or not, where they part, and the precision caveat."""
    if report is None:
        return panel_html([t("exactness.greedy.placeholder", lang)])
    if report.identical:
        head = t(
            "exactness.greedy.identical",
            lang,
            n=len(report.plain_ids),
            dtype=report.target_dtype,
        )
    else:
        head = t(
            "exactness.greedy.parted",
            lang,
            index=(report.first_difference or 0) + 1,
            n=len(report.plain_ids),
            dtype=report.target_dtype,
        )
    rows = [
        [t("exactness.greedy.speculative", lang, drafter=report.drafter), report.speculative_text],
        [t("exactness.greedy.plain", lang), report.plain_text],
    ]
    headers = [t("exactness.greedy.column.decoder", lang), t("exactness.greedy.column.text", lang)]
    return panel_html([head, greedy_precision_note(lang)], table_html(headers, rows))
