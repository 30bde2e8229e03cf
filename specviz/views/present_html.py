"""Records -> HTML for presentation mode: the settings on one line and the glossary.

Pure functions, tested by rendering to a string. The words come from the text catalogue in the
language each function is given; the prompt is the visitor's text and is escaped like token text.
"""

from __future__ import annotations

from specviz.text import DEFAULT_LANGUAGE, t_html

# The glossary's entries in reading order, each a (term, explanation) pair of catalogue keys; the
# two draft stops close the list, after the maths they cut short.
GLOSSARY = (
    ("glossary.gamma.term", "glossary.gamma"),
    ("glossary.alpha.term", "glossary.alpha"),
    ("glossary.tau.term", "glossary.tau"),
    ("glossary.draft.term", "glossary.draft"),
    ("glossary.target.term", "glossary.target"),
    ("glossary.residual.term", "glossary.residual"),
    ("glossary.bonus.term", "glossary.bonus"),
    ("glossary.tv.term", "glossary.tv"),
    ("glossary.chi2.term", "glossary.chi2"),
    ("glossary.confidence_stop.term", "glossary.confidence_stop"),
    ("glossary.cumulative_stop.term", "glossary.cumulative_stop"),
)

PROMPT_CHARS = 48  # the one-line summary shows the prompt's start, cut at a word if it can


def glossary_html(*, lang: str = DEFAULT_LANGUAGE) -> str:
    """Every term a run or a lab shows, each with one or two sentences (a definition list)."""
    entries = "".join(
        f'<dt data-term="{text.split(".")[1]}">{t_html(term, lang)}</dt><dd>{t_html(text, lang)}</dd>'
        for term, text in GLOSSARY
    )
    title = t_html("app.glossary.title", lang)
    return f'<h3 class="sv-glossary-title">{title}</h3><dl class="sv-glossary">{entries}</dl>'


def short_prompt(prompt: str, chars: int = PROMPT_CHARS) -> str:
    """The prompt on one line: whitespace runs become one space, cut after *chars* with "…"."""
    flat = " ".join(prompt.split())
    if len(flat) <= chars:
        return flat
    cut = flat[:chars].rsplit(" ", 1)[0] if " " in flat[:chars] else flat[:chars]
    return cut + "…"


def settings_line_html(
    preset: str,
    prompt: str,
    gamma: object,
    temperature: object,
    tokens: object,
    *,
    lang: str = DEFAULT_LANGUAGE,
) -> str:
    """The run's settings collapsed to one line (pair, γ, temperature, tokens, the prompt's start),
    shown in presentation mode in place of the controls column."""
    line = t_html(
        "app.present.summary",
        lang,
        preset=preset,
        gamma=gamma,
        temperature=temperature,
        tokens=tokens,
        prompt=short_prompt(prompt),
    )
    return f'<div class="sv-present-summary">{line}</div>'
