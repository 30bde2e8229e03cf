"""The guided first cycle's words, for the page's script (``assets/guide.js``) to show.

The guide walks one real cycle on the page: its callouts point at the stream, the cards, a card's
bar and the resampled or bonus card, and every number they quote is read from those elements when
the callout opens. So the catalogue's sentences travel to the page as templates: a hidden element
whose data attributes hold each callout's title and body with their fields left as ``{name}``,
which the script fills with text from the page (as text, never as markup). Pure: tested by
rendering to a string.
"""

from __future__ import annotations

from specviz.text import DEFAULT_LANGUAGE, TABLES, placeholders, t
from specviz.views.token_text import esc

# Where the page remembers that the guide was closed (localStorage): set, it does not open by
# itself again. The screenshots command and the browser tests set it before a page loads, so the
# guide covers nothing they look at unless they ask for it.
SEEN_KEY = "specviz.guide.seen"

# The callouts, each (name, title key, body key), in the order they show. A name with a suffix is
# a variant the script picks by what the cycle on the page holds: a tree of guesses, a path tested
# from the leaves up, no die at temperature 0, no rejection, no bonus after a rejection or at the
# end of the run.
CALLOUTS = (
    ("intro", "tour.intro.title", "tour.intro.body"),
    ("draft", "tour.draft.title", "tour.draft.body"),
    ("draft.tree", "tour.draft.tree.title", "tour.draft.tree.body"),
    ("verify", "tour.verify.title", "tour.verify.body"),
    ("verify.tree", "tour.verify.title", "tour.verify.tree.body"),
    ("die", "tour.die.title", "tour.die.body"),
    ("die.path", "tour.die.path.title", "tour.die.path.body"),
    ("die.greedy", "tour.die.greedy.title", "tour.die.greedy.body"),
    ("reject", "tour.reject.title", "tour.reject.body"),
    ("reject.tree", "tour.reject.tree.title", "tour.reject.tree.body"),
    ("reject.none", "tour.reject.none.title", "tour.reject.none.body"),
    ("bonus", "tour.bonus.title", "tour.bonus.body"),
    ("bonus.none", "tour.bonus.none.title", "tour.bonus.none.body"),
    ("bonus.end", "tour.bonus.none.title", "tour.bonus.end.body"),
)

# The words around the callouts: the dialog's name, its buttons, the step counter, the line shown
# while the first cycle runs and the closing hint under the last callout.
WORDS = (
    ("label", "tour.label"),
    ("counter", "tour.counter"),
    ("next", "tour.next"),
    ("back", "tour.back"),
    ("done", "tour.done"),
    ("close", "tour.close"),
    ("step-for-me", "tour.step_for_me"),
    ("waiting", "tour.waiting"),
    ("end", "tour.end"),
)


def template(key: str, lang: str = DEFAULT_LANGUAGE) -> str:
    """The catalogue text *key* in *lang* with each field left as ``{name}`` for the script."""
    fields = placeholders(TABLES[lang][key])
    return t(key, lang, **{name: "{" + name + "}" for name in fields})


def guide_text_html(*, lang: str = DEFAULT_LANGUAGE) -> str:
    """The hidden element the guide's script reads its words from, in *lang*."""
    words = "".join(f' data-{name}="{esc(template(key, lang))}"' for name, key in WORDS)
    callouts = "".join(
        f'<div data-callout="{name}" data-title="{esc(template(title, lang))}" '
        f'data-body="{esc(template(body, lang))}"></div>'
        for name, title, body in CALLOUTS
    )
    return (
        f'<div class="sv-guide-text" lang="{esc(lang)}" data-seen-key="{esc(SEEN_KEY)}" hidden'
        f"{words}>{callouts}</div>"
    )
