"""specviz.text: every key the code uses exists, every table matches English, values are escaped.

A fake second language ("xx", English wrapped in ⟦ ⟧) stands in for the Japanese table a later
issue adds: it shows that a table missing a key or a field is caught, and that every view takes
its words from the language it is given, per call, while token text stays escaped.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from ui_events import REJECTION, XSS, XSS_IMG, plain_run, sample_run

from specviz.text import (
    TABLES,
    Html,
    TextError,
    UserError,
    placeholders,
    supported_language,
    t,
    t_html,
    table_problems,
)
from specviz.text.en import TABLE as ENGLISH

PACKAGE = Path(__file__).resolve().parent.parent / "specviz"
LOOKUPS = {"t", "t_html", "UserError"}
# A catalogue key: dotted lower-case words whose first word names a section of the English table.
SECTIONS = {key.split(".")[0] for key in ENGLISH}
KEY_SHAPE = re.compile(r"^[a-z_]+(\.[a-z0-9_]+)+$")


def _sources() -> Iterator[tuple[Path, ast.Module]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.parent.name != "text":
            yield path, ast.parse(path.read_text(encoding="utf-8"))


def _lookups() -> Iterator[tuple[str, ast.Call]]:
    """Every call of t, t_html or UserError in the package, with where it is."""
    for path, tree in _sources():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) in LOOKUPS:
                yield f"{path.relative_to(PACKAGE)}:{node.lineno}", node


def _key_literals() -> Iterator[tuple[str, str]]:
    """Every string constant in the package shaped like a catalogue key."""
    for path, tree in _sources():
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and KEY_SHAPE.match(node.value)
                and node.value.split(".")[0] in SECTIONS
            ):
                yield f"{path.relative_to(PACKAGE)}:{node.lineno}", node.value


# --- the code and the catalogue agree ----------------------------------------------------------


def test_the_scan_sees_the_lookups() -> None:
    # Guards the tests below against passing because the scan found nothing.
    assert sum(1 for _ in _lookups()) > 200
    assert sum(1 for _ in _key_literals()) > 300


def test_every_key_written_in_the_code_is_in_the_english_table() -> None:
    missing = [f"{where}: {key}" for where, key in _key_literals() if key not in ENGLISH]
    assert missing == []


def test_keys_are_never_built_from_pieces() -> None:
    # A key assembled at run time (f"origin.{kind}") would escape the scan; name each key whole.
    built = [
        where
        for where, call in _lookups()
        if call.args and isinstance(call.args[0], ast.JoinedStr | ast.BinOp)
    ]
    assert built == []


def test_constant_keys_with_their_values_format() -> None:
    # A call that names its key and values outright must supply exactly the template's fields.
    for where, call in _lookups():
        if not (call.args and isinstance(call.args[0], ast.Constant)):
            continue
        if any(keyword.arg is None for keyword in call.keywords):  # **values
            continue
        given = {keyword.arg for keyword in call.keywords if keyword.arg != "lang"}
        assert given == placeholders(ENGLISH[call.args[0].value]), where


def test_every_english_text_is_used_somewhere() -> None:
    used = {key for _, key in _key_literals()}
    assert sorted(set(ENGLISH) - used) == []


# --- tables -------------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", sorted(TABLES))
def test_every_table_has_every_english_key_with_the_same_fields(lang: str) -> None:
    assert table_problems(TABLES[lang]) == []


def test_templates_hold_plain_named_fields_and_no_straight_double_quote() -> None:
    # No format spec: numbers are formatted in the code. No ": catalogue text may sit in an
    # attribute, where t_html leaves it unescaped except for & < >.
    for lang, table in TABLES.items():
        for key, template in table.items():
            placeholders(template)  # raises on a spec, a conversion or a positional field
            assert '"' not in template, (lang, key)


def _pseudo() -> dict[str, str]:
    """English wrapped in ⟦ ⟧: a complete second table whose text is easy to spot."""
    return {key: f"⟦{template}⟧" for key, template in ENGLISH.items()}


def test_a_second_table_missing_a_key_or_a_field_is_caught() -> None:
    assert table_problems(_pseudo()) == []
    missing_key = _pseudo()
    del missing_key["race.method"]
    assert table_problems(missing_key) == ["missing key 'race.method'"]
    missing_field = _pseudo() | {"counter.alpha.note": "{accepted} of the tested drafts"}
    (problem,) = table_problems(missing_field)
    assert problem == "'counter.alpha.note' has fields accepted, wants accepted, tested"
    renamed = _pseudo() | {"race.speedup": "{speedup}× faster"}
    assert table_problems(renamed) == ["'race.speedup' has fields speedup, wants ratio"]
    extra = _pseudo() | {"race.new": "x"}
    assert table_problems(extra) == ["unknown key 'race.new'"]
    spec = _pseudo() | {"race.speedup": "{ratio:.2f}× faster"}
    (problem,) = table_problems(spec)
    assert "must be a plain name" in problem


@pytest.fixture
def pseudo_language(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setitem(TABLES, "xx", _pseudo())  # type: ignore[index]
    return "xx"


# --- look-ups -----------------------------------------------------------------------------------


def test_values_fill_named_fields() -> None:
    assert t("race.speedup", ratio="2.25") == "2.25× faster"
    assert t("race.speedup", "en", ratio="2.25") == "2.25× faster"


def test_a_missing_or_unexpected_value_raises() -> None:
    with pytest.raises(TextError, match="needs a value for ratio"):
        t("race.speedup")
    with pytest.raises(TextError, match="no field speed"):
        t("race.speedup", ratio="2", speed="3")
    with pytest.raises(TextError, match="needs a value"):
        t_html("caption.rejection", where="x", rejected="y", q="0.1")


def test_an_unknown_key_or_language_raises() -> None:
    with pytest.raises(TextError, match=r"no text 'race\.nope'"):
        t("race.nope")
    with pytest.raises(TextError, match="no text table for language 'fr'"):
        t("race.method", "fr")
    assert supported_language("fr") == "en" and supported_language(None) == "en"


def test_the_language_is_chosen_per_call(pseudo_language: str) -> None:
    assert supported_language(pseudo_language) == pseudo_language
    assert t("race.speedup", pseudo_language, ratio="2") == "⟦2× faster⟧"
    assert t("race.speedup", ratio="2") == "2× faster"  # English, in the same process


def test_html_escapes_values_but_not_markup_the_code_built() -> None:
    page = t_html("caption.where_cycle", cycle=XSS, position=1)
    assert "<script" not in page and "&lt;script&gt;alert(&quot;x&quot;)" in page
    assert t_html("cards.new_tokens", n=Html("<b>3</b>")) == "<b>3</b> new tokens"
    # Catalogue text reads as text: its < becomes &lt;.
    assert t_html("card.rule.sampled", u="0.93", accept="0.29") == "accept if u 0.93 &lt; 0.29"
    assert isinstance(t_html("legend.hint"), Html)


# --- errors the user can fix --------------------------------------------------------------------


def test_a_user_error_carries_its_key_and_words_itself_per_language(pseudo_language: str) -> None:
    error = UserError("error.unknown_gpu", name="'nope'", known="A, B")
    assert isinstance(error, ValueError)  # handlers that only know ValueError still show words
    assert str(error) == "unknown GPU 'nope'; known: A, B"
    assert (error.key, error.values) == ("error.unknown_gpu", {"name": "'nope'", "known": "A, B"})
    assert error.message(pseudo_language) == "⟦unknown GPU 'nope'; known: A, B⟧"


def test_a_user_error_with_a_wrong_key_or_values_fails_where_it_is_raised() -> None:
    with pytest.raises(TextError):
        UserError("error.nope")
    with pytest.raises(TextError):
        UserError("error.unknown_gpu", name="x")


def test_the_cli_prints_a_user_error_as_a_sentence(capsys: pytest.CaptureFixture[str]) -> None:
    from specviz.cli.main import main

    assert main(["project", "--gpu", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: unknown GPU 'nope'; known: ") and "Traceback" not in err


def test_the_cli_words_errors_in_the_language_asked_for(
    pseudo_language: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from specviz.cli.main import main

    assert main(["--lang", pseudo_language, "project", "--gpu", "nope"]) == 2
    assert capsys.readouterr().err.startswith("⟦error: ⟦unknown GPU 'nope'")


# --- every view speaks the language it is given, and still escapes token text -----------------


def _views(lang: str) -> dict[str, str]:
    """Each view's output in ``lang``, as one string per view (figures as JSON)."""
    from specviz.labs import inspector
    from specviz.labs.tasks import charts as task_charts
    from specviz.views import run_charts as charts
    from specviz.views import run_html as render

    cycles, steps = sample_run(), plain_run(9, per_token_s=0.1)
    return {
        "stream": render.stream_html(cycles, lang=lang),
        "plain": render.plain_stream_html(steps, lang=lang),
        "legend": render.legend_html(include_target=True, lang=lang),
        "cards": render.cycle_cards_html(cycles[0], lang=lang),
        "caption": render.rejection_caption(REJECTION, 1, lang=lang),
        "counters": render.counters_html(cycles[-1].totals, gamma_now=2, lang=lang),
        "race": render.race_html(cycles, steps, lang=lang),
        "acceptance": charts.acceptance_by_position(cycles, lang=lang).to_json(),
        "rejection": charts.rejection_chart(REJECTION, lang=lang).to_json(),
        "time": charts.time_split(cycles, lang=lang).to_json(),
        "inspector": inspector.inspector_html(cycles[0], 3, lang=lang),
        "inspector_figure": inspector.inspector_figure(cycles[0], lang=lang).to_json(),
        "inspector_lines": "\n".join(inspector.inspector_lines(cycles[0], lang)),
        "tasks": task_charts.task_chart(None, lang=lang).to_json(),
    }


def test_every_view_takes_its_words_from_the_language_given(pseudo_language: str) -> None:
    english, pseudo = _views("en"), _views(pseudo_language)
    for name in english:
        assert "⟦" not in english[name], name
        assert "⟦" in pseudo[name], name
    assert "⟦accepted draft⟧" in pseudo["legend"]


def test_token_text_is_escaped_in_every_language(pseudo_language: str) -> None:
    for lang in ("en", pseudo_language):
        views = _views(lang)
        for name in ("stream", "cards", "caption", "inspector"):
            assert "<script" not in views[name] and "<img" not in views[name], (lang, name)
        assert "&lt;img src=x onerror=alert(1)&gt;" in views["caption"]
        assert XSS_IMG not in views["rejection"]
