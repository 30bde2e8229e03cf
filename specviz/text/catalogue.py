"""Look-ups in the text catalogue: a key and a language in, a sentence out.

The catalogue holds sentences; the code computes and formats the values (numbers keep the format
written beside the computation, ``f"{alpha:.2f}"``) and passes them as named fields. Templates use
str.format's named fields only, with no format spec or conversion, so a translator never touches a
number's format. The language is an argument of every call, never a global, so each visitor of the
app can read their own.

Catalogue text is trusted; the values are not (token text and prompts come from a model or a
user). ``t_html`` therefore escapes every value unless the code marks it ``Html``.
"""

from __future__ import annotations

import html
import string
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from types import MappingProxyType

from specviz.text import en, ja

DEFAULT_LANGUAGE = "en"

# One table per language; a new language is a new module here, checked key for key against English.
TABLES: Mapping[str, Mapping[str, str]] = {"en": en.TABLE, "ja": ja.TABLE}

_FORMATTER = string.Formatter()


class TextError(LookupError):
    """A key, language or value the catalogue cannot supply: a bug in the code, not the user's."""


class Html(str):
    """Markup the code built itself (already escaped): ``t_html`` inserts it as it is."""

    __slots__ = ()


class Phrase:
    """A catalogue text used as a value of another, worded in the language the outer text is
    looked up in: ``t("error.setting.problem", lang, reason=Phrase("error.setting.blank"))``.

    An error keeps Phrases among its values so that ``UserError.message(lang)`` words every part
    in ``lang``, not only the outer sentence.
    """

    __slots__ = ("key", "values")
    key: str
    values: Mapping[str, object]

    def __init__(self, key: str, **values: object) -> None:
        _segments(key, DEFAULT_LANGUAGE, frozenset(values))  # a wrong key fails where it is made
        self.key = key
        self.values = MappingProxyType(values)

    def __str__(self) -> str:
        return self.text(DEFAULT_LANGUAGE)

    def text(self, lang: str = DEFAULT_LANGUAGE) -> str:
        """The phrase worded in ``lang`` (its Phrase values too)."""
        return t(self.key, lang, **self.values)

    def __repr__(self) -> str:
        values = "".join(f", {name}={value!r}" for name, value in self.values.items())
        return f"Phrase({self.key!r}{values})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Phrase) and (self.key, dict(self.values)) == (
            other.key,
            dict(other.values),
        )

    def __hash__(self) -> int:
        return hash((self.key, tuple(sorted(self.values.items()))))

    def __reduce__(self) -> tuple[object, ...]:
        return (_phrase, (self.key, dict(self.values)))


@dataclass(frozen=True)
class Joined:
    """Several values as one, separated by the catalogue text ``separator`` (``"; "``)."""

    separator: str
    parts: tuple[object, ...]

    def __str__(self) -> str:
        return _plain(self, DEFAULT_LANGUAGE)


def _phrase(key: str, values: dict[str, object]) -> Phrase:
    return Phrase(key, **values)


def t(key: str, lang: str = DEFAULT_LANGUAGE, **values: object) -> str:
    """The sentence ``key`` in ``lang`` with its named fields filled from ``values`` (a Phrase or
    Joined value is worded in ``lang`` too)."""
    return "".join(
        literal if field is None else _plain(values[field], lang)
        for literal, field in _segments(key, lang, frozenset(values))
    )


def t_html(key: str, lang: str = DEFAULT_LANGUAGE, **values: object) -> Html:
    """Like ``t``, for HTML: the template's text and every value escaped, except ``Html`` values."""
    parts = []
    for literal, field in _segments(key, lang, frozenset(values)):
        if field is None:
            # Trusted text: only & < > need escaping (a test keeps " out of every template).
            parts.append(html.escape(literal, quote=False))
        else:
            value = values[field]
            if isinstance(value, Html):
                parts.append(value)
            else:
                parts.append(html.escape(_plain(value, lang), quote=True))
    return Html("".join(parts))


def _plain(value: object, lang: str) -> str:
    """One value as text in ``lang``: a Phrase or Joined is looked up, anything else is str()."""
    if isinstance(value, Phrase):
        return t(value.key, lang, **value.values)
    if isinstance(value, Joined):
        return t(value.separator, lang).join(_plain(part, lang) for part in value.parts)
    return str(value)


def supported_language(requested: str | None) -> str:
    """``requested`` if the catalogue has that language, otherwise the default (English)."""
    return requested if requested is not None and requested in TABLES else DEFAULT_LANGUAGE


def placeholders(template: str) -> frozenset[str]:
    """The named fields of one template."""
    return frozenset(field for _, field in _parse(template) if field is not None)


def table_problems(table: Mapping[str, str], reference: Mapping[str, str] = en.TABLE) -> list[str]:
    """Everything that keeps ``table`` from standing in for ``reference``, one line each.

    A table must have exactly the reference's keys, each with the same named fields, and every
    template must parse (plain named fields, no format spec, no conversion).
    """
    problems = [f"missing key {key!r}" for key in reference if key not in table]
    problems += [f"unknown key {key!r}" for key in table if key not in reference]
    for key, template in table.items():
        try:
            fields = placeholders(template)
        except (TextError, ValueError) as error:
            problems.append(f"{key!r}: {error}")
            continue
        if key in reference and fields != placeholders(reference[key]):
            wanted = ", ".join(sorted(placeholders(reference[key]))) or "none"
            problems.append(
                f"{key!r} has fields {', '.join(sorted(fields)) or 'none'}, wants {wanted}"
            )
    return problems


@cache
def _parse(template: str) -> tuple[tuple[str, str | None], ...]:
    """(literal text, field name or None) pairs; rejects positional fields, specs and conversions."""
    segments: list[tuple[str, str | None]] = []
    for literal, field, spec, conversion in _FORMATTER.parse(template):
        if literal:
            segments.append((literal, None))
        if field is None:
            continue
        if not field.isidentifier() or spec or conversion:
            raise TextError(
                f"template field {{{field}{'!' + conversion if conversion else ''}"
                f"{':' + spec if spec else ''}}} must be a plain name: format values in the code"
            )
        segments.append(("", field))
    return tuple(segments)


def _segments(key: str, lang: str, given: frozenset[str]) -> tuple[tuple[str, str | None], ...]:
    """The parsed template, after checking the values match its fields exactly."""
    table = TABLES.get(lang)
    if table is None:
        raise TextError(f"no text table for language {lang!r}; have {', '.join(TABLES)}")
    template = table.get(key)
    if template is None:
        raise TextError(f"no text {key!r} in the {lang!r} table")
    segments = _parse(template)
    wanted = {field for _, field in segments if field is not None}
    if missing := wanted - given:
        raise TextError(f"text {key!r} needs a value for {', '.join(sorted(missing))}")
    if extra := given - wanted:
        raise TextError(f"text {key!r} has no field {', '.join(sorted(extra))}")
    return segments
