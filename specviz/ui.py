"""The Gradio app: build_demo(presets, model_cache) -> gr.Blocks.

Thin wiring only. A per-browser ``Session`` (held in ``gr.State``) owns the run in progress, so Step
can advance it one cycle at a time and Run can play the rest; everything shown is rendered from the
session's event records by ``specviz.render`` and ``specviz.charts``. Heavy handlers share one
concurrency group, and one lock guards the models, so a small machine never runs two
generations at once even after a Stop leaves a cycle finishing in its worker thread.
"""

from __future__ import annotations

import inspect
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gradio as gr

from specviz import charts, render
from specviz.drafters import ModelDrafter
from specviz.engine import GenerationSettings, autoregressive_generate, speculative_generate
from specviz.events import Cycle, Step
from specviz.models import ModelCache, ModelLoadError, ModelPair
from specviz.presets import TASKS, Preset, default_preset

ASSETS = Path(__file__).resolve().parent.parent / "assets"
ENGINE = "engine"  # the concurrency group every handler that runs a model belongs to
CHART_EVERY_S = 1.5  # live charts are redrawn at most this often; HTML updates every cycle
RACE_EVERY_S = 0.1  # the plain run's panel is redrawn at most this often
REPLAY_FPS = 12

INTRO = (
    "A small **draft** model guesses the next γ tokens; the large **target** model checks all of "
    "them in **one** forward pass, keeps the longest prefix it agrees with (each guess passes with "
    "probability min(1, p/q)), and adds one token of its own. The output follows the target's "
    "distribution exactly, in fewer target passes."
)


def launch_options() -> dict[str, Any]:
    """Keyword arguments for ``demo.launch``: Gradio 6 takes the theme and CSS there."""
    return {"css_paths": [ASSETS / "specviz.css"], "theme": gr.themes.Soft()}


@dataclass
class Session:
    """One browser tab's run: its identity, the records so far and the live generators."""

    key: tuple[Any, ...] | None = None
    cycles: list[Cycle] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    cycles_iter: Iterator[Cycle] | None = None
    race_done: bool = False

    @property
    def paused(self) -> bool:
        return self.cycles_iter is not None and bool(self.cycles) and not self.cycles[-1].finished


@dataclass
class Inputs:
    """The controls' values, validated: what a run is started from."""

    preset: Preset
    prompt: str
    chat: bool
    settings: GenerationSettings
    race: bool

    @property
    def key(self) -> tuple[Any, ...]:
        return (self.preset.id, self.prompt, self.chat, self.settings)


class App:
    """The handlers, closed over the presets, the model cache and the engine lock."""

    def __init__(self, presets: Mapping[str, Preset], model_cache: ModelCache) -> None:
        self.presets = dict(presets)
        self.cache = model_cache
        self.engine_lock = threading.Lock()

    # --- inputs, loading, running ---------------------------------------------------------------

    def inputs(self, preset_id: str, prompt: str, chat: bool, *numbers: Any) -> Inputs:
        """Validate the controls; a bad value becomes a gr.Error in plain words."""
        gamma, adaptive, temperature, top_k, top_p, seed, max_new, race = numbers
        if preset_id not in self.presets:
            raise gr.Error(f"Unknown preset {preset_id!r}. Pick one from the list.")
        if not (prompt or "").strip():
            raise gr.Error("The prompt is empty. Type one or click an example.")
        if any(value is None for value in numbers):
            raise gr.Error(
                "A setting is blank. Fill in γ, temperature, top-k, top-p, seed and max new tokens."
            )
        try:
            settings = GenerationSettings(
                gamma=int(gamma),
                adaptive_gamma=bool(adaptive),
                max_new_tokens=int(max_new),
                temperature=float(temperature),
                top_k=int(top_k),
                top_p=float(top_p),
                seed=int(seed),
            )
        except (TypeError, ValueError) as error:
            raise gr.Error(f"Check the settings: {error}.") from None
        return Inputs(self.presets[preset_id], prompt, bool(chat), settings, bool(race))

    def load(self, preset: Preset, progress: Callable[..., Any] | None = None) -> ModelPair:
        """The preset's pair from the cache (loaded on first use, with a progress bar)."""

        def report(message: str, fraction: float) -> None:
            if progress is not None:
                progress(max(0.0, min(1.0, fraction)), desc=message)

        try:
            with self.engine_lock:
                return self.cache.load_pair(preset, progress=report)
        except ModelLoadError as error:
            raise gr.Error(f"Could not load the models: {error}") from None
        except (MemoryError, RuntimeError) as error:
            raise gr.Error(_plain_failure("loading the models", error)) from None

    def start(self, session: Session, inputs: Inputs, pair: ModelPair) -> None:
        """Begin a new speculative run for these inputs (the old one, if any, is dropped)."""
        try:
            prompt_ids = pair.encode_prompt(inputs.prompt, chat=inputs.chat)
        except ValueError as error:
            raise gr.Error(str(error)) from None
        if inputs.chat and not getattr(pair.tokenizer, "chat_template", None):
            gr.Warning("This model has no chat template, so the prompt is sent as raw text.")
        session.key = inputs.key
        session.cycles, session.steps, session.race_done = [], [], False
        session.cycles_iter = speculative_generate(
            pair, prompt_ids, inputs.settings, ModelDrafter(pair.draft)
        )

    def advance(self, session: Session) -> Cycle | None:
        """One more cycle of the session's run, or None when it is over."""
        cycles = session.cycles_iter
        if cycles is None:
            return None
        try:
            with self.engine_lock:
                cycle = next(cycles, None)
        except Exception as error:
            session.cycles_iter = None
            raise gr.Error(_plain_failure("generating", error)) from None
        if session.cycles_iter is not cycles:
            return None  # a handler cancelled by Stop finished its cycle after a new run began
        if cycle is None:
            session.cycles_iter = None
            return None
        session.cycles.append(cycle)
        return cycle

    def prepare(self, session: Session | None, inputs: Inputs, progress: Any) -> Session:
        """The session, with a run for these inputs ready to advance (a paused one is continued)."""
        session = session or Session()
        if session.key != inputs.key or not session.paused:
            pair = self.load(inputs.preset, progress)
            self.start(session, inputs, pair)
        return session

    def plain_steps(self, session: Session, inputs: Inputs) -> Iterator[Step]:
        """The race's baseline: plain decoding of the same target with the same settings and seed."""
        pair = self.load(inputs.preset)
        prompt_ids = pair.encode_prompt(inputs.prompt, chat=inputs.chat)
        steps = autoregressive_generate(pair, prompt_ids, inputs.settings)
        session.steps = []
        while True:
            try:
                with self.engine_lock:
                    step = next(steps, None)
            except Exception as error:
                raise gr.Error(_plain_failure("running plain decoding", error)) from None
            if step is None:
                session.race_done = True
                return
            session.steps.append(step)
            yield step


def _plain_failure(doing: str, error: BaseException) -> str:
    text = str(error)
    if isinstance(error, MemoryError) or "out of memory" in text.lower():
        return (
            f"Out of memory while {doing}. Try a smaller preset, fewer new tokens, "
            "or close other programs."
        )
    return f"Something went wrong while {doing}: {text or type(error).__name__}"


def _final_text(session: Session) -> str:
    return "".join(token.text for cycle in session.cycles for token in cycle.emitted)


def stats(session: Session) -> dict[str, Any]:
    """The run's numbers as plain JSON: what the API returns and the stats panel shows."""
    out: dict[str, Any] = {"cycles": len(session.cycles)}
    if session.cycles:
        last = session.cycles[-1]
        out.update(totals=last.to_dict()["totals"], stop_reason=last.stop_reason)
    if session.steps:
        out["plain_totals"] = session.steps[-1].to_dict()["totals"]
        ratio = render.speedup(session.cycles, session.steps)
        out["speedup"] = ratio
    return out


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
                        0, 2, value=first.temperature, step=0.05, label="Temperature (0 = greedy)"
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
            with gr.Column(scale=3):
                status = gr.HTML(
                    render.status_html("Ready. Pick an example and press Run."), elem_id="sv-status"
                )
                gr.HTML(render.legend_html(), elem_id="sv-legend")
                stream = gr.HTML(
                    render.stream_html(
                        [], placeholder="The generated text appears here, token by token."
                    ),
                    elem_id="sv-stream",
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
                "⟲ Replay the race at measured speed", interactive=False, elem_id="sv-replay"
            )
        with gr.Row():
            accept_plot = gr.Plot(charts.acceptance_by_position([]), show_label=False)
            hist_plot = gr.Plot(charts.accepted_length_histogram([]), show_label=False)
        with gr.Row():
            tokens_plot = gr.Plot(charts.tokens_vs_passes([]), show_label=False)
            time_plot = gr.Plot(charts.time_split([]), show_label=False)
        with gr.Accordion("Output text and stats", open=False):
            final_text = gr.Textbox(label="Generated text", lines=6, elem_id="sv-final-text")
            final_stats = gr.JSON(label="Stats", elem_id="sv-final-stats")

        controls = [
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
            race,
        ]
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
            final_text,
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
                        final_text: _final_text(sess),
                        final_stats: stats(sess),
                    }
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
        replay_event = replay_btn.click(
            replay, session, race_view, api_name="replay", concurrency_limit=None
        )
        stop_btn.click(
            stopped,
            session,
            status,
            cancels=[run_event, step_event, replay_event],
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
                yield _final_text(sess), stats(sess)
            if inputs.race:
                for _ in app.plain_steps(sess, inputs):
                    pass
            yield _final_text(sess), stats(sess)

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
