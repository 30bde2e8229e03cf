"""The "Watch a server" tab: send prompts to a running llama-server, vLLM or SGLang and chart
what it reports about speculation (specviz.engines.watch), request by request.

Thin wiring: URL boxes, the prompts (the first preset's task groups, or one typed here), the
request's size, a Watch button; the chart and table fill in as each request finishes. A hosted
app lays out the explanation only, with no event at all: a visitor must not make a Space send
requests to addresses of their choosing.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import gradio as gr

from specviz.app.lab_tabs import chart, lab_tab, run_button, status_box, status_line
from specviz.app.limits import Limits
from specviz.app.run_controls import PRIVATE, task_choices
from specviz.engines.watch import DEFAULT_TOKENS, WatchPlan, iter_watch, task_prompts
from specviz.models.presets import TASKS, Preset
from specviz.text import UserError, t
from specviz.views.watch_view import watch_chart, watch_table_html

WATCH_GROUP = "watch"  # its own queue: a watch holds no model, only a worker waiting on HTTP
DEFAULT_URL = "http://127.0.0.1:8080"  # llama-server's default address
PROMPTS_PER_TASK = 5  # the most example prompts of a group the tab sends


def watch_updates(
    preset: Preset,
    lang: str,
    url: str,
    baseline_url: str,
    tasks: list[str],
    per_task: float,
    prompt: str,
    max_tokens: float,
    temperature: float,
    chat: bool,
) -> Iterator[tuple[str, Any, str]]:
    """The tab's outputs (status line, chart, table) as the watch goes; a UserError becomes a
    gr.Error in the page's language."""
    try:
        own = (prompt or "").strip()
        if own:
            prompts = [("prompt", own)]
        else:
            count = min(max(int(per_task or 1), 1), PROMPTS_PER_TASK)
            prompts = task_prompts(preset.example_prompts(lang), list(tasks or []), count)
        plan = WatchPlan(
            url=url,
            prompts=prompts,
            max_tokens=int(max_tokens or DEFAULT_TOKENS),
            temperature=float(temperature or 0.0),
            chat=bool(chat),
            baseline_url=(baseline_url or "").strip() or None,
        )
        for update in iter_watch(plan):
            kind = "done" if update.finished else "info"
            yield (
                status_line(update.message.text(lang), kind),
                watch_chart(update, lang=lang),
                watch_table_html(update, lang=lang),
            )
    except UserError as error:
        raise gr.Error(error.message(lang)) from None


def watch_tab(preset: Preset, lang: str, limits: Limits) -> Any:
    """Lay the tab out in the current Tabs context and wire its button (no event when hosted);
    returns the Watch event, or None."""
    with lab_tab(t("app.tab.watch", lang), t("watch.intro", lang), "watch"):
        if limits.hosted:
            gr.Markdown(t("watch.hosted_off", lang), elem_id="sv-watch-off")
            return None
        with gr.Row():
            url = gr.Textbox(
                value=DEFAULT_URL, label=t("watch.url", lang), info=t("watch.url.info", lang)
            )
            baseline_url = gr.Textbox(
                label=t("watch.baseline_url", lang), info=t("watch.baseline_url.info", lang)
            )
        with gr.Row():
            tasks = [task for task in TASKS if preset.prompts.get(task)]
            chosen = gr.CheckboxGroup(
                task_choices(tasks, lang),
                value=["code"] if "code" in tasks else tasks[:1],
                label=t("watch.tasks", lang),
                elem_id="sv-watch-tasks",
            )
            per_task = gr.Slider(
                1, PROMPTS_PER_TASK, value=1, step=1, label=t("watch.per_task", lang)
            )
        prompt = gr.Textbox(
            label=t("watch.prompt", lang), info=t("watch.prompt.info", lang), lines=2
        )
        with gr.Row():
            max_tokens = gr.Slider(
                8, 512, value=DEFAULT_TOKENS, step=8, label=t("watch.max_tokens", lang)
            )
            temperature = gr.Slider(
                0.0, 1.5, value=0.0, step=0.1, label=t("watch.temperature", lang)
            )
            chat_box = gr.Checkbox(value=True, label=t("watch.chat", lang))
            button = run_button(t("watch.run", lang), "sv-watch-run")
        status = status_box(t("app.status.not_run", lang), "sv-watch-status")
        plot = chart(watch_chart(None, lang=lang), "sv-watch-plot")
        table = gr.HTML("", elem_id="sv-watch-table")

    def watch_server(*values: Any) -> Iterator[tuple[str, Any, str]]:
        yield from watch_updates(preset, lang, *values)

    inputs = [url, baseline_url, chosen, per_task, prompt, max_tokens, temperature, chat_box]
    return button.click(
        watch_server,
        inputs,
        [status, plot, table],
        concurrency_id=WATCH_GROUP,
        concurrency_limit=1,
        show_progress_on=status,
        **PRIVATE,
    )
