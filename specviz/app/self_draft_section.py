"""Medusa heads and lookahead against their papers, under the speedup lab: a drafter to measure,
a time budget and a button; the table and words come from ``self_draft_panel``. Wiring only; the
work is in ``specviz.labs.speedup.self_draft_lab``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import gradio as gr

from specviz.app.lab_tabs import (
    LabRun,
    LabWiring,
    run_button,
    speedup_shown,
    status_box,
)
from specviz.drafters.registry import drafter_label
from specviz.labs.speedup import self_draft_lab, self_draft_panel
from specviz.measure.harness import Staged
from specviz.text import t


@dataclass(frozen=True)
class SelfDraftSection:
    """The self-drafting lab's controls and what it shows."""

    drafter: gr.Dropdown
    budget: gr.Slider
    button: gr.Button
    status: gr.HTML
    summary: gr.HTML

    def wire(self, wiring: LabWiring) -> None:
        """Start the lab from the button, and show its stages as they come."""
        lang = wiring.lang
        cap = int(self.budget.maximum)

        def work(lab: LabRun, drafter_value: str, budget_value: float) -> Iterator[Any]:
            wiring.app.checks.check_lab_size(budget_value, cap, "app.self_draft.budget")
            chosen = drafter_value or self_draft_lab.DEFAULT_SPEC
            # A drafter it does not model is refused in the page's words before any work.
            spec = wiring.app.run_locked(
                lambda: self_draft_lab.check_modelled(chosen), "app.doing.self_draft"
            )
            wiring.app.prepare(spec, lab.pair, lab.progress)  # Medusa's heads, if not trained
            yield from wiring.run_staged(
                lab,
                lambda: self_draft_lab.iter_self_draft_lab(
                    lab.pair,
                    lab.prompt_ids,
                    lab.inputs.settings,
                    spec=spec,
                    time_budget_s=float(budget_value),
                ),
                "app.doing.self_draft",
            )

        def show(stage: Staged[Any]) -> dict[Any, Any]:
            return speedup_shown(
                stage,
                self.status,
                lang,
                lambda measured: {
                    self.summary: self_draft_panel.self_draft_html(measured, lang=lang)
                },
            )

        outputs = [self.status, self.summary]
        wiring.start(self.button, work, show, [self.drafter, self.budget], outputs, self.status)


def self_draft_section(wiring: LabWiring, cap: int) -> SelfDraftSection:
    """The lab's controls and outputs, laid out where it is called: the drafters it models, by
    the registry's labels."""
    lang = wiring.lang
    gr.Markdown(
        t("app.self_draft.intro", lang), elem_classes="sv-lab-intro", elem_id="sv-self-draft-intro"
    )
    choices = [(drafter_label(kind, lang), kind) for kind in self_draft_lab.modelled_kinds()]
    with gr.Row():
        drafter = gr.Dropdown(
            choices,
            value=self_draft_lab.DEFAULT_SPEC,
            label=t("app.self_draft.drafter", lang),
            allow_custom_value=True,  # a spec with options: lookahead:window=5,ngram=4
            scale=2,
            min_width=260,  # its own line on a phone: the labels are long
            elem_id="sv-self-draft-drafter",
        )
        budget = wiring.size_slider(20, cap, 90, 10, "app.self_draft.budget", scale=2)
        button = run_button(t("app.button.measure_self_draft", lang), "sv-self-draft-run")
    status = status_box(t("app.status.not_run", lang), "sv-self-draft-status")
    summary = gr.HTML(
        self_draft_panel.self_draft_html(None, lang=lang), elem_id="sv-self-draft-summary"
    )
    return SelfDraftSection(drafter, budget, button, status, summary)
