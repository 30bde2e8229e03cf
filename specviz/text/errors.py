"""Errors the user caused and can fix, carried as a catalogue key and its values.

The code that detects the problem raises ``UserError("error.unknown_gpu", name=..., known=...)``;
the app and the command line turn it into a sentence in the reader's language with ``message``.
A value that is itself words (a setting's label, a reason) is a ``Phrase``, so it is worded in the
reader's language as well.
``str()`` gives the English sentence, so a handler that only knows ValueError still shows words.
"""

from __future__ import annotations

from specviz.text.catalogue import DEFAULT_LANGUAGE, t


class UserError(ValueError):
    """Bad input, said in words: a catalogue key plus the values its sentence needs."""

    def __init__(self, key: str, **values: object) -> None:
        # Format once now, so a wrong key or a missing value fails where it is raised.
        english = t(key, DEFAULT_LANGUAGE, **values)
        super().__init__(english)
        self.key = key
        self.values = values

    def message(self, lang: str = DEFAULT_LANGUAGE) -> str:
        """The sentence in ``lang`` (its Phrase values worded in ``lang`` too)."""
        return t(self.key, lang, **self.values)

    def __reduce__(self) -> tuple[object, ...]:
        # The default pickling would call UserError(english sentence): rebuild from key and values.
        return (_rebuild, (type(self), self.key, self.values))


def _rebuild(cls: type[UserError], key: str, values: dict[str, object]) -> UserError:
    error = cls.__new__(cls)
    UserError.__init__(error, key, **values)
    return error
