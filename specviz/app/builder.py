"""The Gradio app: build_demo(presets, model_cache) -> gr.Blocks.

Composition only: each area has its own builder (the controls column in ``run_controls``, the live
tab in ``live_tab``, the labs in ``lab_tabs``, ``speedup_tabs`` and ``cost_tab``, the API in
``api``); this module lays them out and wires what they share: the session, the Stop button and
the engine's queue. Heavy handlers share one concurrency group, and one lock guards the models, so
a small machine never runs two generations at once even after a Stop leaves a cycle finishing in
its worker thread.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import gradio as gr

from specviz.app import lab_tabs as labs
from specviz.app import speedup_tabs as speedup_labs
from specviz.app.advisor_tab import advisor_tab
from specviz.app.api import generate_endpoint, health_endpoint
from specviz.app.configs_panel import configs_panel
from specviz.app.cost_tab import cost_tab
from specviz.app.export_panel import export_panel, wire_exports
from specviz.app.glossary import glossary_panel, wire_glossary
from specviz.app.gpu_work import Runs
from specviz.app.language_switch import language_switch_html
from specviz.app.limits import LOCAL, Limits
from specviz.app.live_tab import live_tab, stopped_status, wire_live_run
from specviz.app.present import player_row, present_bar, wire_fable, wire_player, wire_present
from specviz.app.run_controls import PRIVATE, run_controls
from specviz.app.session import App
from specviz.app.share_link import link_box, wire_share_link
from specviz.app.startup import Startup, startup_banner
from specviz.app.watch_tab import watch_tab
from specviz.export.trace import Trace
from specviz.models.loader import ModelCache
from specviz.models.presets import Preset, default_preset
from specviz.text import DEFAULT_LANGUAGE, t

ASSETS = Path(__file__).resolve().parents[2] / "assets"
ENGINE = "engine"  # the concurrency group every handler that runs a model belongs to
REPLAY_GROUP = "replay"  # the trace replays' group (export_panel, live_tab): no model runs there


# The page's scripts in assets/, each a function of no arguments, run in this order when the page
# loads: presentation mode's keys and Run's scroll on a phone, the live tab's linked views, the
# guided cycle, the animated cycle.
PAGE_SCRIPTS = ("presenter.js", "linked.js", "guide.js", "animate.js")


def page_script() -> str:
    """The page's one script (Gradio takes a single function): each of PAGE_SCRIPTS called in turn,
    so one that fails leaves the others running."""
    calls = []
    for name in PAGE_SCRIPTS:
        source = (ASSETS / name).read_text(encoding="utf-8").strip().removesuffix(";")
        calls.append(f"try {{ ({source})(); }} catch (error) {{ console.error({name!r}, error); }}")
    return "() => {\n" + "\n".join(calls) + "\n}"


def mount_options(limits: Limits = LOCAL) -> dict[str, Any]:
    """Keyword arguments for ``gr.mount_gradio_app``: Gradio 6 takes the theme, CSS and the page's
    script there (``page_script``: presentation mode's keys, Run's scroll on a phone, linked views,
    the guide, the animation); uploads are capped (the app takes no files, but Gradio's upload
    route is open). A hosted app never shows an exception's own text (mount's default shows it):
    a handler's gr.Error is worded by the catalogue, anything else reaches a visitor as Gradio's
    bare "Error"."""
    return {
        "css_paths": [ASSETS / "specviz.css", ASSETS / "guide.css"],
        "js": page_script(),
        "theme": gr.themes.Soft(),
        "max_file_size": limits.max_file_size,
        "show_error": not limits.hosted,
    }


def launch_options(limits: Limits = LOCAL) -> dict[str, Any]:
    """Keyword arguments for ``demo.launch``: the mount's, and the visitor sessions Gradio keeps
    (launch sets it again, over what build_demo set)."""
    return mount_options(limits) | {"state_session_capacity": limits.sessions_kept}


def queue_options(limits: Limits = LOCAL) -> dict[str, Any]:
    """Keyword arguments for ``demo.queue``: the most events that may wait (a visitor past it is
    told the app is busy and to try again; Gradio shows each waiting visitor their place)."""
    return {"max_size": limits.queue_size}


class CheckedBlocks(gr.Blocks):
    """gr.Blocks whose events refuse a call with too few or too many values in plain words.

    Gradio's own check raises an error whose text the visitor never sees when there are too few,
    and drops extra values silently; the browser always sends exactly one value per input.
    """

    def __init__(self, lang: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.lang = lang

    def validate_inputs(self, block_fn: Any, inputs: list[Any]) -> None:
        """Refuse *inputs* unless there is one per input of the event (checked for an event's
        validator too, so a miscounted call is refused before the queue, in these words)."""
        needed = len(block_fn.inputs)
        if len(inputs) != needed:
            raise gr.Error(t("error.app.arguments", self.lang, needed=needed, got=len(inputs)))
        super().validate_inputs(block_fn, inputs)


def build_demo(
    presets: Mapping[str, Preset],
    model_cache: ModelCache | None = None,
    *,
    title: str | None = None,
    lang: str = DEFAULT_LANGUAGE,
    limits: Limits = LOCAL,
    replay: Trace | None = None,
    engine_lock: threading.Lock | None = None,
    startup: bool | Startup = False,
) -> gr.Blocks:
    """The whole app, wired to the given presets and model cache (shared across sessions), its
    text in *lang* (every tab and message takes its words from that table of the catalogue),
    every request held to *limits* (``specviz.app.limits``: local or hosted); a *replay* trace
    plays in the live tab when a page opens; *engine_lock* shared with the other languages'
    demos over the same models (``specviz.app.site``). *startup*: True loads and warms the
    default pair now, in the background, with its progress in the page (``specviz.app.startup``),
    instead of on the first Run; a Startup already begun by the caller (one for every language's
    page) only shows its progress."""
    app = App(presets, model_cache or ModelCache(), lang=lang, limits=limits, lock=engine_lock)
    runs = Runs(app)  # the model work, done here or (ZeroGPU) in spaces' worker
    if isinstance(startup, Startup):
        preload: Startup | None = startup
    else:
        preload = Startup(app, default_preset(presets)) if startup else None
    title = title if title is not None else t("app.title", lang)
    demo = CheckedBlocks(lang, title=title, delete_cache=limits.delete_cache)
    # Read when the page is mounted (the bilingual site); demo.launch takes it from launch_options.
    demo.state_session_capacity = limits.sessions_kept
    with demo:
        session = gr.State(None)
        lab_inputs = gr.State(None)  # outside the tabs: a State among Tabs' children confuses them
        # One column holds the page, so presentation mode is one class on it (present.py).
        with gr.Column(elem_id="sv-page") as page:
            gr.HTML(language_switch_html(lang), elem_id="sv-language")
            gr.Markdown(
                t("app.heading", lang, title=title, intro=t("app.intro", lang)),
                elem_classes="sv-title",
            )
            if preload is not None:
                startup_banner(preload, lang)
            bar = present_bar(presets, lang)
            link = link_box(lang)
            with gr.Row(equal_height=False, elem_id="sv-main"):
                with gr.Column(scale=1, min_width=320, elem_id="sv-controls"):
                    controls = run_controls(presets, lang, limits)
                    player = player_row(lang)  # shown under the run buttons (assets/specviz.css)
                    exports = export_panel(lang)
                # Tabs that do not fit wrap onto a second row (at 150 % zoom, on a phone) rather than
                # hiding behind a "⋯" menu.
                with (
                    gr.Column(scale=3, elem_id="sv-tabs-col"),
                    gr.Tabs(elem_id="sv-tabs", overflow_behavior="wrap") as tabs,
                ):
                    live = live_tab(lang)
                    inspector = labs.inspector_tab(session, tabs, live.cards, lang)
                    wiring = labs.LabWiring(runs, controls.run_inputs(), ENGINE, lab_inputs)
                    labs.exactness_tab(wiring)
                    measured_alpha = speedup_labs.speedup_tab(wiring)
                    cost_tab(wiring, measured_alpha)  # projects at the measured α
                    labs.tasks_tab(wiring)
                    advisor_tab(wiring, default_preset(presets))
                    configs_panel(controls, presets, lang, wiring)
                    watch_tab(default_preset(presets), lang, limits)

        glossary = glossary_panel(lang)  # a sidebar belongs to the page's top level
        live_events = wire_live_run(runs, controls, live, inspector, session, tabs, ENGINE)
        replays = wire_exports(
            app, exports, controls, live, inspector, session, live_events, demo, replay
        )
        wire_present(demo, page, bar, presets, controls)
        wire_fable(demo, bar, live)
        tab_ids = [block.id for block in demo.blocks.values() if isinstance(block, gr.Tab)]
        wire_share_link(demo, bar, link, controls, tabs, live, presets, limits, tab_ids)
        wire_player(player, live, session, controls, tabs, [*live_events, *replays])
        wire_glossary(bar.glossary, glossary)
        controls.stop.click(
            lambda sess: stopped_status(sess, lang),
            session,
            live.status,
            cancels=[*live_events, *wiring.events],
            queue=False,
            **PRIVATE,
        )
        generate_endpoint(runs, default_preset(presets), ENGINE)
        health_endpoint(app)
    if preload is not None and startup is True:
        preload.start()
    return demo
