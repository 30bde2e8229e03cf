"""One visitor of a running app through its API, as the load tests drive them: who they are
(seed, prompt, role), how a run went (waits, first cycle, tokens, outcome), and the server's
``/health``."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

# Prompts of different lengths and kinds, so that concurrent runs really differ.
PROMPTS = (
    "def fibonacci(n):",
    "Write a Python function that reverses a string.",
    "Explain what a hash map is in one sentence.",
    "class Stack:\n    def __init__(self):",
    "SELECT name, COUNT(*) FROM orders",
    "Translate to French: the cat sleeps on the warm chair.",
)
ROLES = ("run", "run", "run", "stop", "run", "disconnect")  # one in six stops, one in six leaves
POLL_S = 0.02


@dataclass
class Visit:
    """One visitor's run as the load test saw it."""

    index: int
    role: str  # "run", "stop" (presses Stop after the first cycle) or "disconnect"
    seed: int
    prompt: str
    outcome: str = "lost"  # completed, refused, cancelled, failed; lost: never told anything
    wait_s: float | None = None  # submitted -> the server started the run
    first_cycle_s: float | None = None  # submitted -> the first cycle's output arrived
    total_s: float | None = None
    tokens: int = 0
    text: str = ""
    error: str = ""
    alone_equal: bool | None = None  # the same run done alone gave the same text


def percentile(values: Sequence[float], fraction: float) -> float | None:
    """The ``fraction`` quantile of ``values`` by linear interpolation (None for no values)."""
    if not values:
        return None
    ordered = sorted(values)
    position = fraction * (len(ordered) - 1)
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def plan_visits(sessions: int, wave: int = 0, first_seed: int = 1000) -> list[Visit]:
    """The visitors of one wave: distinct seeds and prompts, Stop and disconnect mixed in."""
    return [
        Visit(
            index=wave * sessions + i,
            role=ROLES[i % len(ROLES)] if sessions > 1 else "run",
            seed=first_seed + wave * sessions + i,
            prompt=PROMPTS[i % len(PROMPTS)],
        )
        for i in range(sessions)
    ]


def visit_arguments(visit: Visit, max_new_tokens: int) -> dict[str, Any]:
    return {
        "prompt": visit.prompt,
        "seed": visit.seed,
        "max_new_tokens": max_new_tokens,
        "temperature": 1.0,
    }


def _text_and_tokens(output: Any) -> tuple[str, int]:
    text, stats = output
    totals = stats.get("totals") or {}
    return str(text), int(totals.get("new_tokens", 0))


def run_visit(client_for: Callable[[], Any], visit: Visit, max_new_tokens: int) -> Visit:
    """One visitor through gradio_client: run to the end, or press Stop after the first cycle."""
    start = time.perf_counter()
    try:
        client = client_for()
        job = client.submit(api_name="/generate", **visit_arguments(visit, max_new_tokens))
        cancelled = False
        while not job.done():
            code = job.status().code.name
            now = time.perf_counter() - start
            if visit.wait_s is None and code in ("PROCESSING", "ITERATING", "PROGRESS"):
                visit.wait_s = now
            if visit.first_cycle_s is None and job.outputs():
                visit.first_cycle_s = now
                visit.wait_s = visit.wait_s if visit.wait_s is not None else now
                if visit.role == "stop":
                    job.cancel()
                    cancelled = True
                    break
            if code == "QUEUE_FULL":
                visit.outcome = "refused"
                break
            time.sleep(POLL_S)
        visit.total_s = time.perf_counter() - start
        if visit.outcome == "refused":
            return visit
        if cancelled:
            visit.outcome = "cancelled"
            return visit
        visit.text, visit.tokens = _text_and_tokens(job.result())
        if visit.first_cycle_s is None:
            visit.first_cycle_s = visit.total_s
        if visit.wait_s is None:
            visit.wait_s = visit.first_cycle_s
        visit.outcome = "completed"
    except Exception as error:  # every failure is counted and named, not raised
        message = str(error) or type(error).__name__
        visit.error = message
        visit.outcome = "refused" if "queue is full" in message.lower() else "failed"
        visit.total_s = time.perf_counter() - start
    return visit


def health(url: str) -> dict[str, Any]:
    """The server's ``/health`` answer: RSS bytes, live threads, whether the engine is busy."""
    from gradio_client import Client

    try:
        answer = Client(url, verbose=False).predict(api_name="/health")
    except Exception as error:
        return {"error": str(error)}
    return dict(answer) if isinstance(answer, dict) else {"answer": answer}
