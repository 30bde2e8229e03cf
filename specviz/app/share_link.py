"""The shared link: a URL query restores the controls when a page opens, and a button writes the
link for the controls as they stand (the query's format: ``specviz.app.url_state``).

A link whose pair is not the page's first restores in two steps: choosing the pair shows its
defaults (``run_controls``), and the rest of the link is applied after that, so the pair's
defaults never overwrite it.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

import gradio as gr

from specviz.app.limits import Limits
from specviz.app.live_tab import LiveTab
from specviz.app.present import PresentBar
from specviz.app.run_controls import PRIVATE, RunControls, drafter_choices
from specviz.app.url_state import (
    SHARED_SETTINGS,
    SharedSetup,
    example_id,
    from_query,
    shared_prompt,
    to_query,
)
from specviz.models.presets import Preset, default_preset
from specviz.text import t

# Before the link is written, the page fills in what only it knows: the open tab (from its
# button's element id, "sv-tab-<id>-button") and its own address (the /ja/ page's path included;
# behind a proxy the server would not know it).
PAGE_JS = """
(...values) => {
  const tab = document.querySelector('#sv-tabs [role="tab"][aria-selected="true"]');
  const id = tab && tab.id ? tab.id.replace(/^sv-tab-/, '').replace(/-button$/, '') : '';
  return [...values.slice(0, -2), id, window.location.origin + window.location.pathname];
}
"""
# A copy on the clipboard where the browser allows it; the box's own copy button otherwise.
COPY_JS = """
(link) => { try { navigator.clipboard.writeText(link).catch(() => {}); } catch (error) {} }
"""


def link_box(lang: str) -> gr.Textbox:
    """The box that shows the link once the button is pressed, with a copy button."""
    return gr.Textbox(
        label=t("app.link.label", lang),
        info=t("app.link.info", lang),
        visible=False,
        interactive=False,
        buttons=["copy"],
        elem_id="sv-link",
    )


def wire_share_link(
    demo: gr.Blocks,
    bar: PresentBar,
    box: gr.Textbox,
    controls: RunControls,
    tabs: gr.Tabs,
    live: LiveTab,
    presets: Mapping[str, Preset],
    limits: Limits,
    tab_ids: Collection[str],
) -> None:
    """Restore the controls from the page's query on load, and write the link on the bar's
    button (``?present=1``, ``?fable=1`` and ``?animate=1`` stay with ``present``'s own load
    events)."""
    lang = bar.lang
    first = default_preset(presets)
    settings = [controls.settings.components[name] for name in SHARED_SETTINGS]
    pending = gr.State(None)  # the rest of a link whose pair is being shown
    shown = [controls.drafter, controls.prompt, *settings, tabs]

    def setup_shown(setup: SharedSetup, preset: Preset) -> dict[Any, Any]:
        """Updates that show *setup* in the controls, over *preset*'s own values."""
        updates: dict[Any, Any] = {}
        if setup.drafter is not None:
            choices = drafter_choices(preset, lang)
            if setup.drafter not in (spec for _, spec in choices):
                choices.append((setup.drafter, setup.drafter))
            updates[controls.drafter] = gr.Dropdown(choices=choices, value=setup.drafter)
        prompt = shared_prompt(setup, preset, lang)
        if prompt is not None:
            updates[controls.prompt] = prompt  # a textbox's value: never read as HTML
        for name, value in setup.settings.items():
            updates[controls.settings.components[name]] = value
        if setup.tab is not None:
            updates[tabs] = gr.Tabs(selected=setup.tab)
        return updates

    def restore(request: gr.Request) -> dict[Any, Any]:
        params = dict(request.query_params)
        setup, problems = from_query(params, presets, limits, lang=lang, tabs=tab_ids)
        # Never an empty dict: Gradio would read it as one value for all its outputs.
        told = live.told(" ".join(problems), kind="error") if problems else {pending: None}
        if setup.pair is not None and setup.pair != first.id:
            return told | {controls.preset: setup.pair, pending: setup}
        return told | setup_shown(setup, first)

    def after_pair(setup: SharedSetup | None) -> dict[Any, Any]:
        if setup is None or setup.pair not in presets:  # a pair chosen by hand
            return {pending: None}
        return setup_shown(setup, presets[setup.pair]) | {pending: None}

    quiet: dict[str, Any] = {"queue": False, "show_progress": "hidden", **PRIVATE}
    demo.load(restore, None, [live.status, controls.preset, pending, *shown], **quiet)
    controls.pair_shown.then(after_pair, pending, [pending, *shown], **quiet)

    def write_link(
        preset_id: str,
        drafter: str | None,
        prompt: str,
        present: bool,
        fable: bool,
        animate: bool,
        *rest: Any,
    ) -> gr.Textbox:
        *values, tab, address = rest
        preset = presets.get(preset_id)
        example = example_id(preset, prompt, lang) if preset is not None and prompt else None
        setup = SharedSetup(
            pair=preset_id,
            drafter=drafter or None,
            example=example,
            prompt=None if example is not None else prompt or None,
            settings={
                name: value
                for name, value in zip(SHARED_SETTINGS, values, strict=True)
                if value is not None
            },
            tab=tab or None,
            present=bool(present),
            fable=bool(fable),
            animate=bool(animate),
        )
        return gr.Textbox(value=f"{address}?{to_query(setup)}", visible=True)

    page_values = [gr.Textbox(visible=False) for _ in range(2)]  # the tab and the address
    inputs = [
        controls.preset,
        controls.drafter,
        controls.prompt,
        bar.toggle,
        bar.fable,
        bar.animate,
    ]
    bar.link.click(write_link, [*inputs, *settings, *page_values], box, js=PAGE_JS, **quiet).then(
        None, box, None, js=COPY_JS, **quiet
    )
