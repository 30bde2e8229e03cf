"""The live run tab: the coloured stream (with the prompt above it for a drafter that copies from
it), the cycle cards, counters, charts and the race panel, and the Run / Step / Replay / Stop
handlers that fill them from the session's event records."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import gradio as gr

from specviz.app.gpu_work import Runs
from specviz.app.lab_tabs import NODE_CLICK_JS, InspectorTab
from specviz.app.race_panel import RacePanel, race_panel, race_updates, race_view, replay_frames
from specviz.app.refusals import leave_refusals_to_app, refusing
from specviz.app.run_controls import PRIVATE, RunControls
from specviz.app.session import Session, Started, stats
from specviz.app.session import final_text as run_text
from specviz.core.events import Prefill
from specviz.text import DEFAULT_LANGUAGE, t
from specviz.views import race_html
from specviz.views import run_charts as charts
from specviz.views import run_html as render
from specviz.views.fable import fable_help_html, fable_html
from specviz.views.prompt_strip import prompt_strip_html

CHART_EVERY_S = 1.5  # live charts are redrawn at most this often; HTML updates every cycle

# A click on a token (or on a cycle's mark) becomes a "click" event carrying the cycle number
# (1-based): the player shows that cycle (present.wire_player), as Back and Forward would. Enter
# on a focused token does the same, and so does the "sv-show-cycle" event the page's script sends
# the stream for a click on a chart's point (assets/linked.js). On a touch screen (no hover) the
# first tap on a token shows its details (the tooltip opens on focus) and a second tap on the
# same token moves the player. Gradio patches a gr.HTML's DOM in place, node by node, so the
# stream cut back to that cycle keeps the token itself, and with it the focus and the tooltip.
# Hovering (or focusing) a copied token lights up where it was copied from: the span its cycle
# copied (data-from-span) in sv-src, the token's own source (data-from-seq) in sv-src-own as well.
# The sources are the generated tokens (data-seq 0, 1, ...) and the prompt strip's (-1 is the
# prompt's last token: views/prompt_strip.py); a rejected guess shares its seq with the token that
# replaced it, so only kept tokens light up. The strip scrolls by itself (never the page, which
# would move the hovered token from under the pointer) to show the token's own source.
STREAM_JS = (
    "let shownTip = null;"
    " const show = (cycle) => { if (cycle >= 1) trigger('click', {cycle}); };"
    " element.addEventListener('click', (event) => {"
    " const cycle = event.target.closest('[data-cycle]'); if (!cycle) return;"
    " const tok = event.target.closest('.sv-tok');"
    " if (tok && tok !== shownTip && window.matchMedia('(hover: none)').matches) {"
    " shownTip = tok; tok.focus(); return; }"
    " shownTip = null; show(Number(cycle.dataset.cycle)); });"
    " element.addEventListener('keydown', (event) => {"
    " const tok = event.target.closest('.sv-tok[data-cycle]');"
    " if (event.key !== 'Enter' || !tok) return;"
    " event.preventDefault(); show(Number(tok.dataset.cycle)); });"
    " element.addEventListener('sv-show-cycle', (event) => show(Number(event.detail?.cycle)));"
    " const strip = () => element.getRootNode().querySelector('#sv-prompt-strip .sv-prompt-toks');"
    " const sources = (box, seq) => [element, box].filter(Boolean).flatMap((where) =>"
    " [...where.querySelectorAll('[data-seq=\"' + seq + '\"]')])"
    ".filter((tok) => !tok.matches('.sv-rejected, .sv-untested'));"
    " const light = (event, on) => {"
    " const copy = event.target.closest('[data-from-seq]'); if (!copy) return;"
    " const box = strip(), own = copy.dataset.fromSeq;"
    " (copy.dataset.fromSpan || own).split(' ').forEach((seq) => sources(box, seq).forEach((tok)"
    " => { tok.classList.toggle('sv-src', on); tok.classList.toggle('sv-src-own', on && seq === own);"
    " }));"
    " const shown = on && box && sources(box, own).find((tok) => box.contains(tok));"
    " if (!shown) return;"
    " const at = shown.getBoundingClientRect(), view = box.getBoundingClientRect();"
    " if (at.top < view.top || at.bottom > view.bottom)"
    " box.scrollTop += at.top - view.top - (view.height - at.height) / 2; };"
    " element.addEventListener('mouseover', (event) => light(event, true));"
    " element.addEventListener('mouseout', (event) => light(event, false));"
    " element.addEventListener('focusin', (event) => light(event, true));"
    " element.addEventListener('focusout', (event) => light(event, false));"
)


@dataclass
class LiveTab:
    """The live tab's components, and the updates that show a session in them."""

    status: gr.HTML
    stream: gr.HTML
    prompt_strip: gr.HTML  # the prompt as tokens, where a copying drafter's copies come from
    cards: gr.HTML
    counters: gr.HTML
    rejection_plot: gr.Plot
    rejection_note: gr.HTML
    race: RacePanel
    accept_plot: gr.Plot
    hist_plot: gr.Plot
    tokens_plot: gr.Plot
    time_plot: gr.Plot
    final_text: gr.Textbox
    final_stats: gr.JSON
    fable: gr.HTML  # the story of the cycle shown (fable mode)
    fable_group: gr.Group  # the story and its help, shown while fable mode is on
    headline: gr.HTML  # the race's final speedup above the stream, shown in presentation mode
    lang: str

    @property
    def outputs(self) -> list[Any]:
        """Every component a live run updates; the API's last two outputs are text and stats
        (the first four: status, stream, cards, counters)."""
        return [
            self.status,
            self.stream,
            self.cards,
            self.counters,
            self.rejection_plot,
            self.rejection_note,
            self.race.view,
            self.race.replay,
            self.accept_plot,
            self.hist_plot,
            self.tokens_plot,
            self.time_plot,
            self.fable,
            self.headline,
            self.prompt_strip,
        ]

    def told(self, message: str, kind: str = "info") -> dict[Any, Any]:
        """The update that shows *message* on the status line and leaves every other view."""
        return {self.status: render.status_html(message, kind=kind)}

    def views(self, sess: Session, message: str, kind: str, *, charts_too: bool) -> dict[Any, Any]:
        """Updates for the session's state; charts only when asked (they cost more)."""
        cycles, lang = sess.cycles, self.lang
        last = cycles[-1] if cycles else None
        update: dict[Any, Any] = self.told(message, kind) | {
            self.stream: render.stream_html(cycles, lang=lang, prompt_shown=bool(sess.prompt)),
            # The same prompt each cycle: Gradio sends a generator's changes only.
            self.prompt_strip: gr.HTML(
                prompt_strip_html(sess.prompt, lang=lang), visible=bool(sess.prompt)
            ),
            self.cards: render.cycle_cards_html(last, lang=lang, run=cycles, heads=sess.heads),
            self.fable: fable_html(cycles, lang=lang),
            self.counters: render.counters_html(
                last.totals if last else None,
                gamma_now=last.draft_len if last else None,
                gain=sess.gain,
                lang=lang,
            ),
        }
        # The latest rejection among the cycles shown (the player may show an earlier cycle).
        rejected = next((cycle for cycle in reversed(cycles) if cycle.rejection is not None), None)
        if rejected is not None and rejected.rejection is not None:
            update[self.rejection_plot] = charts.rejection_chart(rejected.rejection, lang=lang)
            update[self.rejection_note] = render.rejection_caption(
                rejected.rejection, rejected.index + 1, lang=lang
            )
        if charts_too:
            update |= {
                self.accept_plot: charts.acceptance_by_position(cycles, lang=lang),
                self.hist_plot: charts.accepted_length_histogram(cycles, lang=lang),
                self.tokens_plot: charts.tokens_vs_passes(cycles, sess.steps, lang=lang),
                self.time_plot: charts.time_split(cycles, lang=lang),
                # The race is measured after the run, so its headline changes only here.
                self.headline: race_html.present_headline_html(sess.race, lang=lang),
                self.final_text: run_text(sess),
                self.final_stats: stats(sess),
            }
        return update


def live_tab(lang: str) -> LiveTab:
    """Tab 0: the run in progress, cycle by cycle."""
    with gr.Tab(t("app.tab.live", lang), id="live", elem_id="sv-tab-live"):
        status = gr.HTML(render.status_html(t("app.status.ready", lang)), elem_id="sv-status")
        headline = gr.HTML("", elem_id="sv-headline")
        gr.HTML(render.legend_html(lang=lang), elem_id="sv-legend")
        prompt_strip = gr.HTML("", visible=False, elem_id="sv-prompt-strip", js_on_load=None)
        stream = gr.HTML(
            render.stream_html([], placeholder=t("app.stream.placeholder", lang), lang=lang),
            elem_id="sv-stream",
            js_on_load=STREAM_JS,  # a click on a token shows its cycle (the player moves there)
        )
        with gr.Group(visible=False, elem_id="sv-fable-panel") as fable_group:
            fable = gr.HTML(fable_html([], lang=lang), elem_id="sv-fable")
            with gr.Accordion(t("app.fable.help", lang), open=False, elem_id="sv-fable-help"):
                gr.HTML(fable_help_html(lang=lang))
        cards = gr.HTML(
            render.cycle_cards_html(None, lang=lang),
            elem_id="sv-cards",
            js_on_load=NODE_CLICK_JS,  # "Inspect this cycle", or a tree node, in the inspector
        )
        counters = gr.HTML(render.counters_html(None, lang=lang), elem_id="sv-counters")
        with gr.Row():
            rejection_plot = gr.Plot(
                charts.rejection_chart(None, lang=lang),
                label=t("app.live.last_rejection", lang),
                show_label=False,
                scale=3,
            )
            rejection_note = gr.HTML(render.rejection_caption(None, lang=lang), scale=2)
        race = race_panel(lang)
        with gr.Row():
            accept_plot = gr.Plot(charts.acceptance_by_position([], lang=lang), show_label=False)
            hist_plot = gr.Plot(charts.accepted_length_histogram([], lang=lang), show_label=False)
        with gr.Row():
            tokens_plot = gr.Plot(charts.tokens_vs_passes([], lang=lang), show_label=False)
            time_plot = gr.Plot(charts.time_split([], lang=lang), show_label=False)
        with gr.Accordion(t("app.live.output", lang), open=False):
            final_text = gr.Textbox(
                label=t("app.live.text", lang), lines=6, elem_id="sv-final-text"
            )
            final_stats = gr.JSON(label=t("app.live.stats", lang), elem_id="sv-final-stats")
    return LiveTab(
        status, stream, prompt_strip, cards, counters, rejection_plot, rejection_note, race,
        accept_plot, hist_plot, tokens_plot, time_plot, final_text, final_stats, fable,
        fable_group, headline, lang,
    )  # fmt: skip


def wire_live_run(
    runs: Runs,
    controls: RunControls,
    live: LiveTab,
    inspector: InspectorTab,
    session: gr.State,
    tabs: gr.Tabs,
    engine_group: str,
) -> list[Any]:
    """Run, Step and Replay (public API endpoints /run, /step, /replay) and the race switch.

    Returns the events the Stop button cancels. The handlers draw here; the model work is done
    where ``runs`` does it (on ZeroGPU, in its worker: ``specviz.app.gpu_work``).
    """
    outputs = [session, *live.outputs, *inspector.outputs, live.final_text, live.final_stats]
    app, lang = runs.app, runs.app.lang
    checks = app.checks  # the run's inputs, checked once: by the validator, taken by the handler

    def views(sess: Session, message: str, kind: str = "info", *, charts_too: bool) -> dict:
        update = live.views(sess, message, kind, charts_too=charts_too) | {session: sess}
        return update | inspector.latest(sess) if charts_too else update

    def lasting(updates: Iterator[dict[Any, Any]]) -> Iterator[dict[Any, Any]]:
        """The updates; on an error, its words on the status line as well as in the toast, where
        they stay until the next action (the toast fades, and the line would show the last
        status again)."""
        try:
            yield from updates
        except gr.Error as error:
            yield live.told(error.message, kind="error")
            raise

    # Gradio finds gr.Progress only among positional parameters, as a default value; the run's
    # inputs arrive by name (inputs_kwargs): preset, drafter, prompt, chat_template, the settings,
    # race and the race's lanes and repeats.
    def run(
        sess: Session | None,
        request: gr.Request,
        progress: gr.Progress = gr.Progress(),  # noqa: B008
        **values: Any,
    ) -> Iterator[dict[Any, Any]]:
        with app.one_run(request.session_hash):  # one run per visitor at a time
            yield from lasting(run_updates(sess, progress, values))

    def run_updates(
        sess: Session | None, progress: gr.Progress, values: dict[str, Any]
    ) -> Iterator[dict[Any, Any]]:
        inputs = checks.read(values)
        sess = sess or Session()
        last_chart = time.perf_counter()
        for record in runs.play(sess, inputs, progress):
            if isinstance(record, Started):
                yield views(sess, t("app.status.running", lang), charts_too=False) | {
                    live.race.view: race_view(sess, lang, "app.race.status.waiting"),
                    live.race.replay: gr.Button(interactive=False),
                }
            elif isinstance(record, Prefill):  # a long prompt, read chunk by chunk: Stop ends it
                yield views(sess, reading_status(record, lang), charts_too=False)
            else:
                due = time.perf_counter() - last_chart >= CHART_EVERY_S
                last_chart = time.perf_counter() if due else last_chart
                running = t("app.status.running_cycle", lang, cycle=record.index + 1)
                yield views(sess, running, charts_too=due)
        raced = (yield from race_updates(runs, sess, inputs, live.race)) if inputs.race else {}
        yield views(sess, done_message(sess, lang), "done", charts_too=True) | raced

    def step(
        sess: Session | None,
        request: gr.Request,
        progress: gr.Progress = gr.Progress(),  # noqa: B008
        **values: Any,
    ) -> Iterator[dict[Any, Any]]:
        with app.one_run(request.session_hash):
            yield from lasting(step_update(sess, progress, values))

    def step_update(
        sess: Session | None, progress: gr.Progress, values: dict[str, Any]
    ) -> Iterator[dict[Any, Any]]:
        inputs = checks.read(values)
        sess = sess or Session()
        cycle = None
        for record in runs.play(sess, inputs, progress, take=1):
            if isinstance(record, Prefill):  # a long prompt, read chunk by chunk: Stop ends it
                yield views(sess, reading_status(record, lang), charts_too=False)
            elif not isinstance(record, Started):
                cycle = record
        if cycle is None or cycle.finished:
            yield views(sess, done_message(sess, lang), "done", charts_too=True)
        else:
            yield views(sess, t("app.status.paused", lang, cycle=cycle.index + 1), charts_too=True)

    def replay(sess: Session | None) -> Iterator[str]:
        if sess is None or not sess.race_done:
            raise app.error("error.app.no_race")
        yield from replay_frames(sess, lang, app.limits.replay_seconds)

    heavy = {"concurrency_id": engine_group, "concurrency_limit": 1}
    # Loading progress and errors show on the status line, not as overlays on every output.
    shown = {"show_progress_on": live.status}
    run_inputs = controls.run_inputs() | {"race": controls.race} | controls.race_lanes.inputs()
    # Refused before the queue: the run's inputs read as the handler reads them, each refusal on
    # the input it is about (the session first, then the run's inputs by name). A value past a
    # control's range reaches that check rather than Gradio's bare "400 Bad Request".
    leave_refusals_to_app(run_inputs.values())
    validator = refusing(
        lambda _, **values: checks.read_ahead(values), ["session", *run_inputs], "prompt"
    )
    events = [
        button.click(
            handler,
            [session],
            outputs,
            inputs_kwargs=run_inputs,
            api_name=name,
            validator=validator,
            **heavy,
            **shown,
        )
        for button, handler, name in ((controls.run, run, "run"), (controls.step, step, "step"))
    ]
    for button in (controls.run, controls.step):  # the live run shows on its own tab
        button.click(lambda: gr.Tabs(selected="live"), None, tabs, queue=False, **PRIVATE)
    events.append(
        live.race.replay.click(
            replay,
            session,
            live.race.view,
            api_name="replay",
            concurrency_id="replay",  # the trace uploads' group: replays hold no engine
            concurrency_limit=app.limits.replay_concurrency,
        )
    )
    controls.race.change(
        lambda on: (gr.Group(visible=on), gr.Group(visible=on)),
        controls.race,
        [live.race.group, controls.race_lanes.group],
        queue=False,
        **PRIVATE,
    )
    return events


def reading_status(prefill: Prefill, lang: str = DEFAULT_LANGUAGE) -> str:
    """The status line's words while a long prompt is read: "Reading the prompt: 512 / 1,024
    tokens" (``LiveTab.views`` makes them the status line's HTML, as every status)."""
    done, total = f"{prefill.done:,}", f"{prefill.total:,}"
    return t("app.status.reading_prompt", lang, done=done, total=total)


def stopped_status(sess: Session | None, lang: str = DEFAULT_LANGUAGE) -> str:
    """The status line after Stop."""
    if sess is not None and sess.paused:
        return render.status_html(t("app.status.stopped_after", lang, cycle=len(sess.cycles)))
    return render.status_html(t("app.status.stopped", lang))


# Why a run ended, by Cycle.stop_reason; any other reason reads "stopped".
_STOP_REASONS = {"eos": "app.done.eos", "max_new_tokens": "app.done.max_new_tokens"}


def done_message(sess: Session, lang: str = DEFAULT_LANGUAGE) -> str:
    """The status line when a run ends: why, and its numbers."""
    if not sess.cycles:
        return t("app.done.nothing", lang)
    totals = sess.cycles[-1].totals
    why = _STOP_REASONS.get(sess.cycles[-1].stop_reason or "", "app.done.stopped")
    return t(
        "app.done",
        lang,
        why=t(why, lang),
        tokens=totals.new_tokens,
        passes=len(sess.cycles),
        alpha=f"{totals.acceptance_rate:.0%}",
        tau=f"{totals.tokens_per_target_pass:.2f}",
        tps=f"{totals.tokens_per_s:.1f}",
        forwards=forwards_note(sess, lang),
    ).rstrip()


# The models' roles as Session.forwards names them.
_ROLES = {"draft": "app.forward.role.draft", "target": "app.forward.role.target"}


def forwards_note(sess: Session, lang: str = DEFAULT_LANGUAGE) -> str:
    """Which forward computed each model (the lean step, or transformers' forward and why), then
    the step costs measured on this machine and the draft format they chose."""
    parts = []
    for name, choice in sess.forwards.items():
        role = t(_ROLES[name], lang) if name in _ROLES else name
        if choice.kind == "lean":
            parts.append(t("app.forward.lean", lang, role=role))
        else:
            reason = choice.fallback_reason
            parts.append(t("app.forward.transformers", lang, role=role, reason=reason))
    separator = t("app.forward.separator", lang)
    note = t("app.forward", lang, parts=separator.join(parts)) if parts else ""
    if sess.costs is not None:  # the measured step costs, and the draft format they chose
        note = f"{note} {sess.costs.text(lang)}".strip()
    return note
