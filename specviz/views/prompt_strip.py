"""The prompt as the target reads it (chat template applied), one token per span: where a copying
drafter's copies come from (prompt lookup, the hybrid).

Each span's ``data-seq`` counts back from the prompt's end (-1 is its last token). A copy in the
stream carries its source the same way (``data-from-seq``, and the cycle's whole copied span in
``data-from-span``; the generated text counts 0, 1, ... from its first token), so the stream's
script in the live tab lights the source here as it lights a source in the stream. Token text is
escaped, and control tokens and characters split over byte tokens read as in the stream
(``token_text``).
"""

from __future__ import annotations

import functools

from specviz.core.events import EmittedToken, Origin
from specviz.text import DEFAULT_LANGUAGE, t, t_html
from specviz.views.token_text import (
    esc,
    joined_characters,
    shown,
    text_tip,
    tip_name,
    token_classes,
)


@functools.lru_cache(maxsize=8)  # redrawn with every cycle; the same prompt each time
def prompt_strip_html(prompt: tuple[tuple[str, str], ...], *, lang: str = DEFAULT_LANGUAGE) -> str:
    """The prompt as the target reads it, one span per (text, control token name), for a drafter
    that copies from it; "" for no prompt. Each span's data-seq counts back from the prompt's end
    (-1 is its last token), the value a copy from the prompt carries in data-from-seq, so the
    stream's script lights the source here as it does in the stream."""
    if not prompt:
        return ""
    count = len(prompt)
    # joined_characters reads a token's text, special name and seq_index, nothing else.
    joined = joined_characters(
        EmittedToken(index - count, -1, text, Origin.TARGET, 1.0, special)
        for index, (text, special) in enumerate(prompt)
    )
    spans = []
    for index, (text, special) in enumerate(prompt):
        seq, part = index - count, joined.get(index - count)
        head = t("tip.prompt_token", lang, token=tip_name(text, special), index=index + 1, n=count)
        # A title, not the stream's CSS tooltip: the strip scrolls, and would clip that one.
        tip = "\n".join([head, *text_tip(text, special, part, lang)])
        spans.append(
            f'<span class="sv-tok sv-prompt-tok{token_classes(text, special, part)}" '
            f'data-seq="{seq}" title="{esc(tip)}">{shown(text, special, lang)}</span>'
        )
    title = t_html("stream.prompt.title", lang, n=count)
    return (
        f'<details class="sv-prompt-strip" open data-tokens="{count}"><summary>{title}</summary>'
        f'<div class="sv-prompt-toks">{"".join(spans)}</div></details>'
    )
