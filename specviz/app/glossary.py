"""The glossary: a side panel one click away that explains every term the app shows."""

from __future__ import annotations

import gradio as gr

from specviz.app.run_controls import PRIVATE
from specviz.views.present_html import glossary_html


def glossary_panel(lang: str) -> gr.Sidebar:
    """The glossary as a closed side panel on the right, worded in *lang* (build it at the top
    level of the Blocks: a sidebar belongs to the page, not to a column)."""
    with gr.Sidebar(open=False, position="right", width=380, elem_id="sv-glossary") as panel:
        gr.HTML(glossary_html(lang=lang), elem_id="sv-glossary-terms")
    return panel


def wire_glossary(button: gr.Button, panel: gr.Sidebar) -> None:
    """The button opens the panel (its own arrow closes it)."""
    button.click(lambda: gr.Sidebar(open=True), None, panel, queue=False, **PRIVATE)
