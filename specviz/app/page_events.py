"""What a page's script sends the server with ``trigger('click', {...})`` (a gr.HTML's
``js_on_load``), read back from the handler's gr.EventData.

The page is the visitor's: whatever it sends is checked here before a handler uses it, so a
click that sent no number, or something other than a whole number, moves and opens nothing.
"""

from __future__ import annotations

import gradio as gr


def sent_number(event: gr.EventData, name: str) -> int | None:
    """The whole number *name* the page sent with *event*, None where it sent none (or sent
    something else: a string, a bool, NaN)."""
    try:
        value = getattr(event, name)  # gr.EventData exposes the data trigger() sent as attributes
    except (AttributeError, TypeError):  # TypeError: the event carried no data at all
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return int(value) if float(value).is_integer() else None
