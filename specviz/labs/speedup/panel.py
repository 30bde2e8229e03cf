"""The speedup labs' summaries: measured against predicted, each with how firm it is, the GPU
projection, and trees against the chain."""

from __future__ import annotations

from collections.abc import Sequence

from specviz.labs.speedup.charts import break_even_paragraph
from specviz.labs.speedup.fixed_cost import mode_words
from specviz.labs.speedup.gpu_projection import Projection
from specviz.labs.speedup.pass_costs import PassCost
from specviz.labs.speedup.theory import SpeedupLab, SpeedupTheory
from specviz.labs.speedup.tree_lab import TreeLab, median_error
from specviz.text import DEFAULT_LANGUAGE, t
from specviz.views.panels import panel_html, table_html
from specviz.views.race_html import drafter_name

_HEADERS = (
    "speedup.column.gamma",
    "speedup.column.alpha",
    "speedup.column.tau",
    "speedup.column.tau_predicted",
    "speedup.column.speedup",
    "speedup.column.predicted",
    "speedup.column.firmness",
)


def model_values(
    model: SpeedupTheory | Projection, *, digits: int = 2, ms_digits: int = 1
) -> dict[str, object]:
    """The numbers a sentence about a measured or projected speedup quotes (alpha, cost, draft_ms,
    target_ms, gamma, speedup), formatted: α and c to `digits` places, step times in ms to
    `ms_digits`."""
    return {
        "alpha": f"{model.alpha:.{digits}f}",
        "cost": f"{model.draft_cost:.{digits}f}",
        "draft_ms": f"{model.draft_step_s * 1000:.{ms_digits}f}",
        "target_ms": f"{model.target_step_s * 1000:.{ms_digits}f}",
        "gamma": model.best_gamma,
        "speedup": f"{model.best_speedup:.2f}",
    }


def speedup_html(lab: SpeedupLab | None, *, lang: str = DEFAULT_LANGUAGE) -> str:
    """Measured against predicted, γ by γ, each row with how firm it is; then the best γ and the
    paragraph on when speculation cannot win, or, when the lab is inconclusive, what would give
    them; and how firm the lab is, in words."""
    if lab is None:
        return panel_html([t("speedup.placeholder", lang)])
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
            lab.run_firmness(run).label.text(lang),
            "" if run.complete else t("speedup.cut", lang),
        ]
        for run in lab.runs
    ]
    headers = [*(t(key, lang) for key in _HEADERS), ""]
    values = model_values(theory)
    measured = {"plain_tps": f"{lab.plain_tokens_per_s:.2f}", "seconds": f"{lab.elapsed_s:.0f}"}
    firmness = lab.firmness
    if firmness.refusal is None:
        paragraphs = [
            t("speedup.summary", lang, **measured, **values),
            break_even_paragraph(theory, lang),
        ]
    else:
        unpredicted = {key: values[key] for key in ("alpha", "cost", "draft_ms", "target_ms")}
        paragraphs = [
            t("speedup.summary.measured", lang, **measured, **unpredicted),
            t("speedup.refused", lang, refusal=firmness.refusal),
        ]
        if not lab.plain_complete or not all(run.complete for run in lab.runs):
            paragraphs.append(t("speedup.refused.cut", lang))
    paragraphs.append(t("labs.firmness", lang, line=firmness.line))
    return panel_html(paragraphs, table_html(headers, rows))


def projection_html(
    projection: Projection | None,
    *,
    others: Sequence[Projection] = (),
    lang: str = DEFAULT_LANGUAGE,
) -> str:
    """A projection, labelled as one, with the fixed cost's share of each step, the same pair in
    the `others` execution modes, and every assumption it rests on."""
    if projection is None:
        return panel_html([t("speedup.projection.placeholder", lang)], css="sv-projection")
    head = t(
        "speedup.projection.summary",
        lang,
        gpu=projection.gpu.name,
        fixed=projection.fixed.words().text(lang),
        target_share=f"{projection.target_fixed_share:.0%}",
        draft_share=f"{projection.draft_fixed_share:.0%}",
        **model_values(projection, ms_digits=2),
    )
    paragraphs = [head]
    if others:
        separator = t("speedup.projection.assumption_separator", lang)
        compared = separator.join(
            t(
                "speedup.projection.other",
                lang,
                mode=mode_words(other.fixed.mode).text(lang),
                cost=f"{other.draft_cost:.2f}",
                gamma=other.best_gamma,
                speedup=f"{other.best_speedup:.2f}",
            )
            for other in others
        )
        paragraphs.append(t("speedup.projection.others", lang, others=compared))
    if any(shown.fixed.published for shown in (projection, *others)):
        paragraphs.append(t("speedup.projection.published_note", lang))
    separator = t("speedup.projection.assumption_separator", lang)
    assumptions = separator.join(phrase.text(lang) for phrase in projection.assumptions)
    paragraphs.append(t("speedup.projection.assumptions", lang, assumptions=assumptions))
    return panel_html(paragraphs, css="sv-projection")


def tree_lab_rows(lab: TreeLab, lang: str) -> list[list[str]]:
    """The chain's row, then each tree budget's: measured against predicted, and how firm."""
    rows = []
    for run, row, name in [
        (lab.chain, lab.chain_predicted, t("tree_lab.row.chain", lang, gamma=lab.gamma)),
        *(
            (run, lab.predicted_at(run.nodes), t("tree_lab.row.tree", lang, nodes=run.nodes))
            for run in lab.trees
        ),
    ]:
        rows.append(
            [
                name,
                f"{run.tau:.2f}",
                f"{row.tau:.2f}",
                f"{run.speedup:.2f}×",
                f"{row.speedup:.2f}×",
                lab.firmness(run).label.text(lang),
                "" if run.complete else t("speedup.cut", lang),
            ]
        )
    return rows


def tree_lab_paragraphs(lab: TreeLab, lang: str) -> list[str]:
    """What the lab found, in words: the rates it rests on, the predicted winner and why, and
    how far the prediction was from the runs."""
    ranks = t("tree_lab.rank_separator", lang).join(
        t(
            "tree_lab.rank",
            lang,
            rank=rank,
            rate=f"{lab.acceptance.rate(rank):.2f}",
            tested=lab.acceptance.tested[rank - 1],
        )
        for rank in range(1, len(lab.acceptance.tested) + 1)
    )
    best, chain = lab.best, lab.chain_predicted
    values = {
        "gamma": lab.gamma,
        "nodes": best.nodes,
        "best": f"{best.speedup:.2f}",
        "chain": f"{chain.speedup:.2f}",
        "tau": f"{best.tau:.2f}",
        "chain_tau": f"{chain.tau:.2f}",
        "verify": f"{best.verify_cost:.2f}",
        "chain_verify": f"{chain.verify_cost:.2f}",
        "size": best.nodes + 1,
    }
    return [
        t(
            "tree_lab.summary",
            lang,
            plain_tps=f"{lab.plain_tokens_per_s:.2f}",
            seconds=f"{lab.elapsed_s:.0f}",
            ranks=ranks or "—",
            tokens=lab.plain_new_tokens,
            alpha=f"{lab.chain_alpha:.2f}",
        ),
        *([_reached_paragraph(lab, lang)] if lab.reached else []),
        t(_verdict_key(lab), lang, **values),
        t("tree_lab.accuracy", lang, error=f"{median_error(lab):.0%}"),
    ] + ([] if lab.gpu is None else [_gpu_paragraph(lab, lang)])


def _reached_paragraph(lab: TreeLab, lang: str) -> str:
    """How near the drafter's trees came to the best tree of their budget, by budget."""
    shares = t("tree_lab.rank_separator", lang).join(
        t("tree_lab.reached_share", lang, nodes=nodes, share=f"{share:.0%}")
        for nodes, share in lab.reached
    )
    return t("tree_lab.reached", lang, shares=shares)


def _gpu_paragraph(lab: TreeLab, lang: str) -> str:
    """The projection onto a GPU, worded as one."""
    assert lab.gpu is not None
    gpu = lab.gpu
    return t(
        "tree_lab.gpu",
        lang,
        gpu=gpu.gpu,
        fixed=gpu.fixed.words().text(lang),
        gamma=lab.gamma,
        chain=f"{gpu.chain.speedup:.2f}",
        nodes=gpu.best.nodes,
        best=f"{gpu.best.speedup:.2f}",
        verify=f"{gpu.best.verify_cost:.2f}",
        size=gpu.best.nodes + 1,
    )


def _verdict_key(lab: TreeLab) -> str:
    if lab.too_close:
        return "tree_lab.verdict.close"
    return "tree_lab.verdict.chain" if lab.chain_wins else "tree_lab.verdict.tree"


def tree_lab_html(lab: TreeLab | None, *, lang: str = DEFAULT_LANGUAGE) -> str:
    """The tree lab's result: its paragraphs over the measured-against-predicted table."""
    if lab is None:
        return panel_html([t("tree_lab.placeholder", lang)], css="sv-tree-lab")
    rows = tree_lab_rows(lab, lang)
    headers = [t(key, lang) for key in _TREE_HEADERS] + [""]
    if not any(row[-1] for row in rows):  # no run was cut: no column for saying so
        headers, rows = headers[:-1], [row[:-1] for row in rows]
    table = table_html(headers, rows)
    return panel_html(tree_lab_paragraphs(lab, lang), table, css="sv-tree-lab")


_TREE_HEADERS = (
    "tree_lab.column.method",
    "speedup.column.tau",
    "speedup.column.tau_predicted",
    "speedup.column.speedup",
    "speedup.column.predicted",
    "speedup.column.firmness",
)


_PASS_HEADERS = (
    "speedup.pass.column.drafter",
    "speedup.pass.column.tokens",
    "speedup.pass.column.cost",
)


def pass_costs_html(rows: Sequence[PassCost], *, lang: str = DEFAULT_LANGUAGE) -> str:
    """Where each drafter's largest pass sits on the cost curve, and under the table that v(M) is
    also the tokens a pass it must keep (more than) to gain; empty before a curve is measured."""
    if not rows:
        return ""
    cells = []
    for row in rows:
        cost = f"{row.cost:.2f}×" + (" " + t("speedup.pass.fitted", lang) if row.fitted else "")
        cells.append([drafter_name(row.spec, lang), str(row.tokens), cost])
    table = table_html([t(key, lang) for key in _PASS_HEADERS], cells)
    return panel_html(
        [t("speedup.pass.intro", lang)],
        table,
        css="sv-pass-costs",
        after=[t("speedup.pass.gain", lang)],
    )
