"""The user-facing text: one keyed table per language, and the look-ups that fill them in.

``t(key, lang, **values)`` gives plain text, ``t_html`` escaped HTML; ``UserError(key, **values)``
is a problem with the user's input that each front end words in its reader's language.
"""

from specviz.text.catalogue import (
    DEFAULT_LANGUAGE,
    TABLES,
    Html,
    Joined,
    Phrase,
    TextError,
    placeholders,
    supported_language,
    t,
    t_html,
    table_problems,
)
from specviz.text.errors import UserError

__all__ = [
    "DEFAULT_LANGUAGE",
    "TABLES",
    "Html",
    "Joined",
    "Phrase",
    "TextError",
    "UserError",
    "placeholders",
    "supported_language",
    "t",
    "t_html",
    "table_problems",
]
