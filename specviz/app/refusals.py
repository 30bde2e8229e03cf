"""Refusals before the queue: a Gradio validator built from the app's own input checks.

Gradio 6 runs an event's ``validator=`` when a request is pushed, before it takes a queue slot,
and answers a failed one with HTTP 422 and its message (gradio_client raises ValidationError with
it, each refusal under its parameter's name; the page shows it beside the input). A request the
app would refuse anyway (an unknown preset, a value past its cap, an over-long or empty prompt)
is refused there, so it never waits behind a room of runs to be told so. The validator runs the
handler's own checks (``RequestChecks.read_ahead``) and keeps what they made for the handler, which
checks again only a request that came without one. A ``Refusal`` says which inputs it is about,
so the refusal of γ is shown on γ.

Gradio preprocesses an event's values (a slider's range, a dropdown's choices) before the
validator runs and answers a value it refuses with a bare HTTP 400; ``leave_refusals_to_app``
lets such values through to the app's own checks, which refuse them in the catalogue's words.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import gradio as gr


class Refusal(gr.Error):
    """A gr.Error about some of a request's inputs: *fields* maps each refused parameter's name
    (as the API names it: "prompt", "gamma") to the words that say why; the message says it all."""

    def __init__(self, message: str, fields: Mapping[str, str]) -> None:
        super().__init__(message)
        self.fields = dict(fields)

    @classmethod
    def about(cls, field: str, message: str) -> Refusal:
        """A refusal of the one input *field*, in *message*'s words."""
        return cls(message, {field: message})

    def __reduce__(self) -> tuple[object, ...]:
        # Crosses the ZeroGPU worker's process boundary: rebuilt from its message and fields.
        return (Refusal, (self.message, self.fields))


def refusing(
    check: Callable[..., object], names: Sequence[str | None] | int, shown_at: str | int = 0
) -> Callable[..., tuple[Any, ...]]:
    """A validator for an event whose inputs' parameter names are *names* (in its inputs'
    order; a count: no names), from *check*, which takes the event's own arguments and raises
    gr.Error for a request the app refuses. A Refusal's words go on the inputs it names; any
    other refusal's on input *shown_at* (its name or index: where the page shows them); every
    other input is valid."""
    count = names if isinstance(names, int) else len(names)
    # Each input's name as Gradio names it in a refusal (an unnamed one: "parameter_<index>").
    named = [
        (None if isinstance(names, int) else names[at]) or f"parameter_{at}" for at in range(count)
    ]
    shown = shown_at if shown_at in named else named[shown_at if isinstance(shown_at, int) else 0]

    def validate(*args: Any, **kwargs: Any) -> tuple[Any, ...]:
        try:
            check(*args, **kwargs)
        except gr.Error as error:
            fields = error.fields if isinstance(error, Refusal) else {}
            if not any(name in fields for name in named):  # no input of this event's own
                fields = {shown: str(error.message)}
            return tuple(gr.validate(name not in fields, fields.get(name, "")) for name in named)
        except Exception:  # a malformed value: the event's own checks word it
            pass
        return tuple(gr.validate(True, "") for _ in named)

    return validate


def leave_refusals_to_app(components: Iterable[Any]) -> None:
    """Let a value Gradio's own preprocessing refuses (outside a slider's or number's range, not
    among a dropdown's choices, no number at all) reach the event's validator and handler as
    sent, where the app's checks refuse it in words naming the input, instead of Gradio's bare
    "400 Bad Request". Values it accepts are preprocessed as before."""
    for component in components:
        strict = component.preprocess

        def preprocess(payload: Any, strict: Callable[[Any], Any] = strict) -> Any:
            try:
                return strict(payload)
            except (gr.Error, TypeError, ValueError):  # the app's own checks refuse it
                return payload

        component.preprocess = preprocess
