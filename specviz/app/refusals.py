"""Refusals before the queue: a Gradio validator built from the app's own input checks.

Gradio 6 runs an event's ``validator=`` when a request is pushed, before it takes a queue slot,
and answers a failed one with HTTP 422 and its message (gradio_client raises ValidationError with
it; the page shows it beside the input). A request the app would refuse anyway (an unknown
preset, a value past its cap, an over-long or empty prompt) is refused there, so it never waits
behind a room of runs to be told so. The handlers keep the same checks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gradio as gr


def refusing(
    check: Callable[..., object], inputs: int, shown_at: int = 0
) -> Callable[..., tuple[Any, ...]]:
    """A validator for an event with *inputs* inputs from *check*, which takes the event's own
    arguments and raises gr.Error for a request the app refuses: the refusal's words on input
    *shown_at* (where the page shows them), every input valid otherwise."""

    def validate(*args: Any, **kwargs: Any) -> tuple[Any, ...]:
        try:
            check(*args, **kwargs)
        except gr.Error as error:
            message = str(error.message)
            return tuple(gr.validate(at != shown_at, message) for at in range(inputs))
        except Exception:  # a malformed value: the event's own checks word it
            pass
        return tuple(gr.validate(True, "") for _ in range(inputs))

    return validate
