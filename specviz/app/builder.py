"""The Gradio app: build_demo(presets, model_cache) -> gr.Blocks.

Thin wiring only. The run state and model work live in ``specviz.app.session``; everything shown is
rendered from the session's event records by ``specviz.views.run_html`` and ``specviz.views.run_charts``. Heavy handlers share one
concurrency group, and one lock guards the models, so a small machine never runs two
generations at once even after a Stop leaves a cycle finishing in its worker thread.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import gradio as gr

from specviz.app import lab_tabs as labs
from specviz.app import speedup_tabs as speedup_labs
from specviz.app.session import App, Session, stats
from specviz.app.session import final_text as run_text
from specviz.models.loader import ModelCache
from specviz.models.presets import TASKS, Preset, default_preset
from specviz.views import run_charts as charts
from specviz.views import run_html as render

ASSETS = Path(__file__).resolve().parents[2] / "assets"
ENGINE = "engine"  # the concurrency group every handler that runs a model belongs to
CHART_EVERY_S = 1.5  # live charts are redrawn at most this often; HTML updates every cycle
RACE_EVERY_S = 0.1  # the plain run's panel is redrawn at most this often
REPLAY_FPS = 12

# Clicks on the stream's tokens become a "click" event carrying the cycle number (1-based).
STREAM_CLICK_JS = (
    "element.addEventListener('click', (event) => {"
    " const cycle = event.target.closest('[data-cycle]');"
    " if (cycle) trigger('click', {cycle: Number(cycle.dataset.cycle)}); });"
)

INTRO = (
    "A small **draft** model guesses the next γ tokens; the large **target** model checks all of "
    "them in **one** forward pass, keeps the longest prefix it agrees with (each guess passes with "
    "probability min(1, p/q)), and adds one token of its own. The output follows the target's "
    "distribution exactly, in fewer target passes."
)


def launch_options() -> dict[str, Any]:
    """Keyword arguments for ``demo.launch``: Gradio 6 takes the theme and CSS there."""
    return {"css_paths": [ASSETS / "specviz.css"], "theme": gr.themes.Soft()}


def build_demo(
    presets: Mapping[str, Preset],
    model_cache: ModelCache | None = None,
    *,
    title: str = "specviz: speculative decoding, live",
) -> gr.Blocks:
    """The whole app, wired to the given presets and model cache (shared across sessions)."""
    app = App(presets, model_cache or ModelCache())
    first = default_preset(presets)
    with gr.Blocks(title=title) as demo:
        session = gr.State(None)
        lab_inputs = gr.State(None)  # outside the tabs: a State among Tabs' children confuses them
        gr.Markdown(f"# {title}\n{INTRO}", elem_classes="sv-title")
        with gr.Row(equal_height=False):
            with gr.Column(scale=1, min_width=320):
                preset = gr.Dropdown(
                    choices=[(p.label, p.id) for p in presets.values()],
                    value=first.id,
                    label="Model pair (draft → target)",
                )
                preset_note = gr.Markdown(first.description)
                prompt = gr.Textbox(
                    label="Prompt", lines=3, value=_first_prompt(first), elem_id="sv-prompt"
                )
                with gr.Row(elem_classes="sv-run-row"):
                    run_btn = gr.Button("▶ Run", variant="primary", elem_id="sv-run")
                    step_btn = gr.Button("▷ Step", elem_id="sv-step")
                    stop_btn = gr.Button("■ Stop", variant="stop", elem_id="sv-stop")
                race = gr.Checkbox(
                    value=False,
                    label="Race: afterwards, run plain decoding of the target for comparison",
                    elem_id="sv-race-toggle",
                )
                task = gr.Radio(
                    choices=_tasks(first), value=_tasks(first)[0], label="Examples by task"
                )
                examples = gr.Dataset(
                    components=[prompt],
                    samples=_samples(first, _tasks(first)[0]),
                    label="Click an example",
                    elem_id="sv-examples",
                )
                chat = gr.Checkbox(
                    value=first.chat_template,
                    label="Apply the chat template (off: send the raw prompt)",
                )
                with gr.Accordion("Decoding settings", open=True):
                    gamma = gr.Slider(
                        1, 16, value=first.gamma, step=1, label="γ: tokens drafted per cycle"
                    )
                    adaptive = gr.Checkbox(
                        value=first.adaptive_gamma,
                        label="Adaptive γ (+2 after a full accept, −1 after a rejection)",
                    )
                    temperature = gr.Slider(
                        0,
                        2,
                        value=first.temperature,
                        step=0.05,
                        label="Temperature (0 = greedy)",
                        elem_id="sv-temperature",
                    )
                    with gr.Row():
                        top_k = gr.Number(
                            value=first.top_k, precision=0, label="Top-k (0 = off)", minimum=0
                        )
                        top_p = gr.Slider(
                            0.05, 1, value=first.top_p, step=0.05, label="Top-p (1 = off)"
                        )
                    with gr.Row():
                        seed = gr.Number(value=0, precision=0, label="Seed")
                        max_new = gr.Slider(
                            1,
                            512,
                            value=first.max_new_tokens,
                            step=1,
                            label="Max new tokens",
                            elem_id="sv-max-new",
                        )
            with gr.Column(scale=3), gr.Tabs(elem_id="sv-tabs") as tabs:
                with gr.Tab("Live run", id="live", elem_id="sv-tab-live"):
                    status = gr.HTML(
                        render.status_html("Ready. Pick an example and press Run."),
                        elem_id="sv-status",
                    )
                    gr.HTML(render.legend_html(), elem_id="sv-legend")
                    stream = gr.HTML(
                        render.stream_html(
                            [], placeholder="The generated text appears here, token by token."
                        ),
                        elem_id="sv-stream",
                        # A click on a token opens that cycle in the inspector (see labs).
                        js_on_load=STREAM_CLICK_JS,
                    )
                    cards = gr.HTML(render.cycle_cards_html(None), elem_id="sv-cards")
                    counters = gr.HTML(render.counters_html(None), elem_id="sv-counters")
                    with gr.Row():
                        rejection_plot = gr.Plot(
                            charts.rejection_chart(None),
                            label="Last rejection",
                            show_label=False,
                            scale=3,
                        )
                        rejection_note = gr.HTML(render.rejection_caption(None), scale=2)
                    with gr.Group(visible=False) as race_group:
                        race_view = gr.HTML(render.race_html([], []), elem_id="sv-race")
                        replay_btn = gr.Button(
                            "⟲ Replay the race at measured speed",
                            interactive=False,
                            elem_id="sv-replay",
                        )
                    with gr.Row():
                        accept_plot = gr.Plot(charts.acceptance_by_position([]), show_label=False)
                        hist_plot = gr.Plot(charts.accepted_length_histogram([]), show_label=False)
                    with gr.Row():
                        tokens_plot = gr.Plot(charts.tokens_vs_passes([]), show_label=False)
                        time_plot = gr.Plot(charts.time_split([]), show_label=False)
                    with gr.Accordion("Output text and stats", open=False):
                        final_text = gr.Textbox(
                            label="Generated text", lines=6, elem_id="sv-final-text"
                        )
                        final_stats = gr.JSON(label="Stats", elem_id="sv-final-stats")
                inspector = labs.inspector_tab(session, tabs, stream)
                settings_controls = [
                    preset,
                    prompt,
                    chat,
                    gamma,
                    adaptive,
                    temperature,
                    top_k,
                    top_p,
                    seed,
                    max_new,
                ]
                wiring = labs.LabWiring(app, settings_controls, ENGINE, lab_inputs)
                labs.exactness_tab(wiring)
                measured_alpha = speedup_labs.speedup_tab(wiring)
                speedup_labs.cost_tab(wiring, measured_alpha)  # projects at the measured α
                labs.tasks_tab(wiring)

        controls = [*settings_controls, race]  # the live run also takes the race switch
        outputs = [
            session,
            status,
            stream,
            cards,
            counters,
            rejection_plot,
            rejection_note,
            race_view,
            replay_btn,
            accept_plot,
            hist_plot,
            tokens_plot,
            time_plot,
            *inspector.outputs,
            final_text,  # the API's last two outputs: text and stats
            final_stats,
        ]

        def views(
            sess: Session, message: str, kind: str = "info", *, charts_too: bool
        ) -> dict[Any, Any]:
            """Component updates for the session's state; charts only when asked (they cost more)."""
            cycles = sess.cycles
            last = cycles[-1] if cycles else None
            update: dict[Any, Any] = {
                session: sess,
                status: render.status_html(message, kind=kind),
                stream: render.stream_html(cycles),
                cards: render.cycle_cards_html(last),
                counters: render.counters_html(
                    last.totals if last else None, gamma_now=last.gamma if last else None
                ),
            }
            if last is not None and last.rejection is not None:
                update[rejection_plot] = charts.rejection_chart(last.rejection)
                update[rejection_note] = render.rejection_caption(last.rejection, last.index + 1)
            if charts_too:
                update.update(
                    {
                        accept_plot: charts.acceptance_by_position(cycles),
                        hist_plot: charts.accepted_length_histogram(cycles),
                        tokens_plot: charts.tokens_vs_passes(cycles, sess.steps),
                        time_plot: charts.time_split(cycles),
                        final_text: run_text(sess),
                        final_stats: stats(sess),
                    }
                    | inspector.latest(sess)
                )
            return update

        # Explicit parameters keep the API's argument order fixed, and Gradio finds gr.Progress
        # only among positional parameters, as a default value.
        def run(
            sess: Session | None,
            preset_id: str,
            prompt_text: str,
            chat_on: bool,
            gamma_value: float,
            adaptive_on: bool,
            temperature_value: float,
            top_k_value: float,
            top_p_value: float,
            seed_value: float,
            max_new_value: float,
            race_on: bool,
            progress: gr.Progress = gr.Progress(),  # noqa: B008
        ) -> Iterator[dict[Any, Any]]:
            inputs = app.inputs(
                preset_id, prompt_text, chat_on, gamma_value, adaptive_on, temperature_value,
                top_k_value, top_p_value, seed_value, max_new_value, race_on,
            )  # fmt: skip
            sess = app.prepare(sess, inputs, progress)
            if not sess.cycles:
                yield views(sess, "Running…", charts_too=False) | {
                    race_view: render.race_html([], [])
                }
            last_chart = time.perf_counter()
            while (cycle := app.advance(sess)) is not None:
                due = time.perf_counter() - last_chart >= CHART_EVERY_S
                last_chart = time.perf_counter() if due else last_chart
                update = views(sess, f"Running… cycle {cycle.index + 1}", charts_too=due)
                if inputs.race:
                    update[race_view] = render.race_html(sess.cycles, [], status="speculative run")
                yield update
            if inputs.race:
                last_draw = 0.0
                for step in app.plain_steps(sess, inputs):
                    if step.finished or time.perf_counter() - last_draw >= RACE_EVERY_S:
                        last_draw = time.perf_counter()
                        yield {
                            race_view: render.race_html(sess.cycles, sess.steps, status="plain run")
                        }
            done = views(sess, _done_message(sess), "done", charts_too=True)
            if inputs.race:
                done[race_view] = render.race_html(sess.cycles, sess.steps, status="finished")
                done[replay_btn] = gr.Button(interactive=sess.race_done)
            yield done

        def step(
            sess: Session | None,
            preset_id: str,
            prompt_text: str,
            chat_on: bool,
            gamma_value: float,
            adaptive_on: bool,
            temperature_value: float,
            top_k_value: float,
            top_p_value: float,
            seed_value: float,
            max_new_value: float,
            race_on: bool,
            progress: gr.Progress = gr.Progress(),  # noqa: B008
        ) -> dict[Any, Any]:
            inputs = app.inputs(
                preset_id, prompt_text, chat_on, gamma_value, adaptive_on, temperature_value,
                top_k_value, top_p_value, seed_value, max_new_value, race_on,
            )  # fmt: skip
            sess = app.prepare(sess, inputs, progress)
            cycle = app.advance(sess)
            if cycle is None or cycle.finished:
                return views(sess, _done_message(sess), "done", charts_too=True)
            message = f"Paused after cycle {cycle.index + 1}. Step advances one cycle, Run plays the rest; changing the prompt or a setting starts over."
            return views(sess, message, charts_too=True)

        def replay(sess: Session | None) -> Iterator[str]:
            if sess is None or not sess.race_done:
                raise gr.Error("Run a race first (tick Race, then press Run).")
            duration = render.replay_duration(sess.cycles, sess.steps)
            began = time.perf_counter()
            while (elapsed := time.perf_counter() - began) < duration:
                yield render.replay_frame(sess.cycles, sess.steps, elapsed)
                time.sleep(1 / REPLAY_FPS)
            yield render.replay_frame(sess.cycles, sess.steps, duration)

        def stopped(sess: Session | None) -> str:
            if sess is not None and sess.paused:
                return render.status_html(
                    f"Stopped after cycle {len(sess.cycles)}. Run continues, Step advances one cycle."
                )
            return render.status_html("Stopped.")

        def on_preset(preset_id: str) -> dict[Any, Any]:
            chosen = presets[preset_id]
            tasks = _tasks(chosen)
            return {
                preset_note: chosen.description,
                gamma: chosen.gamma,
                adaptive: chosen.adaptive_gamma,
                temperature: chosen.temperature,
                top_k: chosen.top_k,
                top_p: chosen.top_p,
                max_new: chosen.max_new_tokens,
                chat: chosen.chat_template,
                prompt: _first_prompt(chosen),
                task: gr.Radio(choices=tasks, value=tasks[0]),
                examples: gr.Dataset(samples=_samples(chosen, tasks[0])),
            }

        heavy = {"concurrency_id": ENGINE, "concurrency_limit": 1}
        # Loading progress and errors show on the status line, not as overlays on every output.
        shown = {"show_progress_on": status}
        run_event = run_btn.click(
            run, [session, *controls], outputs, api_name="run", **heavy, **shown
        )
        step_event = step_btn.click(
            step, [session, *controls], outputs, api_name="step", **heavy, **shown
        )
        for button in (run_btn, step_btn):  # the live run shows on its own tab
            button.click(
                lambda: gr.Tabs(selected="live"),
                None,
                tabs,
                queue=False,
                api_visibility="private",
            )
        replay_event = replay_btn.click(
            replay, session, race_view, api_name="replay", concurrency_limit=None
        )
        stop_btn.click(
            stopped,
            session,
            status,
            cancels=[run_event, step_event, replay_event, *wiring.events],
            queue=False,
            api_visibility="private",
        )
        race.change(
            lambda on: gr.Group(visible=on), race, race_group, queue=False, api_visibility="private"
        )
        preset.change(
            on_preset,
            preset,
            [
                preset_note,
                gamma,
                adaptive,
                temperature,
                top_k,
                top_p,
                max_new,
                chat,
                prompt,
                task,
                examples,
            ],
            api_visibility="private",
        )
        task.change(
            lambda name, p: gr.Dataset(samples=_samples(presets[p], name)),
            [task, preset],
            examples,
            api_visibility="private",
        )
        examples.click(lambda sample: sample[0], examples, prompt, api_visibility="private")

        def generate(
            prompt: str,
            preset: str = first.id,
            gamma: int = first.gamma,
            adaptive_gamma: bool = first.adaptive_gamma,
            temperature: float = first.temperature,
            top_k: int = first.top_k,
            top_p: float = first.top_p,
            seed: int = 0,
            max_new_tokens: int = first.max_new_tokens,
            chat_template: bool = True,
            race: bool = False,
        ) -> tuple[str, dict[str, Any]]:  # a generator: one (text, stats) per cycle, final last
            """Run speculative decoding (and, with race, plain decoding); stream (text, stats)."""
            inputs = app.inputs(
                preset,
                prompt,
                chat_template,
                gamma,
                adaptive_gamma,
                temperature,
                top_k,
                top_p,
                seed,
                max_new_tokens,
                race,
            )
            sess = app.prepare(None, inputs, None)
            while app.advance(sess) is not None:
                yield run_text(sess), stats(sess)
            if inputs.race:
                for _ in app.plain_steps(sess, inputs):
                    pass
            yield run_text(sess), stats(sess)

        # Resolve the string annotations (from __future__) so the API lists two typed outputs.
        generate.__signature__ = inspect.signature(generate, eval_str=True)  # type: ignore[attr-defined]
        gr.api(generate, api_name="generate", **heavy)
    return demo


def _done_message(sess: Session) -> str:
    if not sess.cycles:
        return "Nothing was generated."
    totals = sess.cycles[-1].totals
    reason = {"eos": "the model ended its answer", "max_new_tokens": "the token limit was reached"}
    why = reason.get(sess.cycles[-1].stop_reason or "", "stopped")
    return (
        f"Finished: {why}. {totals.new_tokens} tokens in {len(sess.cycles)} target passes "
        f"(α {totals.acceptance_rate:.0%}, τ {totals.tokens_per_target_pass:.2f}, "
        f"{totals.tokens_per_s:.1f} tokens/s)."
    )


def _tasks(preset: Preset) -> list[str]:
    return [task for task in TASKS if preset.prompts.get(task)]


def _samples(preset: Preset, task: str) -> list[list[str]]:
    return [[text] for text in preset.prompts.get(task, ())]


def _first_prompt(preset: Preset) -> str:
    flat = preset.prompts_flat()
    return flat[0][1] if flat else ""
