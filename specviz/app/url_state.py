"""Shareable state: the page's setup as a URL query, and the query read back, checked.

A link carries the pair (its preset id), the drafter (its spec), the prompt (an example's id,
``task.N``, when it is one of the pair's examples, else its text), the settings in
``SHARED_SETTINGS``, the open tab and the presentation, fable and animation modes::

    ?pair=qwen2.5-coder-bundled&drafter=lookup%3Amax_ngram%3D3&example=code.1&gamma=3
    &temperature=0.7&seed=11&max_new_tokens=64&tab=inspector&present=1

Reading one applies the checks the app applies to its controls (the settings schema and the
app's caps, the drafter registry, the prompt's checks): a value that fails is dropped with one
line in the page's language, so a hand-edited link never breaks the page. The prompt is only ever
a textbox's value, never HTML.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from urllib.parse import quote, urlencode

from specviz.app.limits import Limits
from specviz.app.refusals import Refusal
from specviz.app.request_checks import RequestChecks
from specviz.core.settings import SettingError, SettingValue, settings_schema
from specviz.drafters.registry import check_drafter_spec
from specviz.models.presets import Preset, default_preset
from specviz.text import DEFAULT_LANGUAGE, UserError, t

# The settings a link carries, in the order it writes them; the others keep the pair's values.
SHARED_SETTINGS = ("gamma", "temperature", "seed", "max_new_tokens")
SWITCHES = ("present", "fable", "animate")  # the page's modes a link turns on with "=1"
SHOWN_CHARS = 40  # a value quoted in a message is cut to this many characters
INTEGER = re.compile(r"[+-]?[0-9]{1,30}")  # a seed is at most 20 digits
DECIMAL = re.compile(r"[+-]?([0-9]{1,30}\.?[0-9]{0,30}|\.[0-9]{1,30})([eE][+-]?[0-9]{1,3})?")


@dataclass(frozen=True)
class SharedSetup:
    """What a link restores; None (or off) leaves the page's own value."""

    pair: str | None = None  # a preset id
    drafter: str | None = None  # a drafter spec, as str(DrafterSpec) writes it
    example: str | None = None  # "task.N": the pair's N-th example of task (1-based)
    prompt: str | None = None  # the prompt's text, when it is no example
    settings: Mapping[str, SettingValue] = field(default_factory=dict)  # SHARED_SETTINGS by name
    tab: str | None = None  # the open tab's id ("live", "inspector", ...)
    present: bool = False
    fable: bool = False
    animate: bool = False


def to_query(setup: SharedSetup) -> str:
    """The query string (without "?") that restores *setup*; spaces as %20, so any client reads
    it the same way."""
    pairs: list[tuple[str, str]] = []
    for name, value in (
        ("pair", setup.pair),
        ("drafter", setup.drafter),
        ("example", setup.example),
        ("prompt", setup.prompt),
    ):
        if value is not None:
            pairs.append((name, value))
    for name in SHARED_SETTINGS:
        if name in setup.settings:
            pairs.append((name, written(setup.settings[name])))
    if setup.tab is not None:
        pairs.append(("tab", setup.tab))
    switches = (("present", setup.present), ("fable", setup.fable), ("animate", setup.animate))
    pairs += [(name, "1") for name, on in switches if on]
    return urlencode(pairs, quote_via=quote, safe="")


def written(value: SettingValue) -> str:
    """A setting as a link writes it: an integer in full, a float to 10 significant digits (a
    slider's 0.7000000000000001 is 0.7)."""
    return format(value, ".10g") if isinstance(value, float) else str(value)


def from_query(
    params: Mapping[str, str],
    presets: Mapping[str, Preset],
    limits: Limits,
    *,
    lang: str = DEFAULT_LANGUAGE,
    tabs: Collection[str] = (),
) -> tuple[SharedSetup, list[str]]:
    """The setup a page's query asks for, each value checked as the app checks its controls'
    (*presets*: those the app offers; *tabs*: the page's tab ids), and one line in *lang* for
    each value dropped. Names a link never writes (``lang``, Gradio's own) are ignored."""
    problems: list[str] = []
    pair = params.get("pair")
    preset = default_preset(presets)
    if pair is not None:
        if pair in presets:
            preset = presets[pair]
        else:
            problems.append(t("app.link.pair", lang, name=quoted(pair)))
            pair = None
    drafter = params.get("drafter")
    if drafter is not None:
        try:
            drafter = str(check_drafter_spec(drafter))
        except UserError as error:
            problems.append(t("app.link.drafter", lang, problem=error.message(lang)))
            drafter = None
    # Text given outright wins over an example's id.
    prompt = params.get("prompt")
    example = params.get("example") if prompt is None else None
    if prompt is not None:
        try:
            RequestChecks(presets, lang, limits).check_prompt(prompt)
        except Refusal as refusal:
            problems.append(t("app.link.prompt", lang, problem=refusal.message))
            prompt = None
    if example is not None and example_text(preset, example, lang) is None:
        problems.append(t("app.link.example", lang, name=quoted(example)))
        example = None
    settings = checked_settings(params, limits, lang, problems)
    tab = params.get("tab")
    if tab is not None and tab not in tabs:
        problems.append(t("app.link.tab", lang, name=quoted(tab)))
        tab = None
    switches = {}
    for name in SWITCHES:
        value = params.get(name)
        if value is not None and value not in ("0", "1"):
            problems.append(t("app.link.switch", lang, name=name, got=quoted(value)))
        switches[name] = value == "1"
    setup = SharedSetup(pair, drafter, example, prompt, settings, tab, **switches)
    return setup, problems


def checked_settings(
    params: Mapping[str, str], limits: Limits, lang: str, problems: list[str]
) -> dict[str, SettingValue]:
    """The SHARED_SETTINGS in *params*, each checked against the app's cap and then the schema;
    a line on *problems* for each one dropped."""
    schema = {item.name: item for item in settings_schema()}
    settings: dict[str, SettingValue] = {}
    for name in SHARED_SETTINGS:
        text = params.get(name)
        if text is None:
            continue
        item = schema[name]
        pattern = INTEGER if item.type is int else DECIMAL
        # Text that is no number reaches the schema's check as text, which words it as such.
        value: object = text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS] + "…"
        if pattern.fullmatch(text.strip()):
            value = int(text) if item.type is int else float(text)
        try:
            limits.check_settings({name: value})  # the cap first, as a request's check does
            settings[name] = item.check(value)
        except SettingError as error:
            problems.append(t("app.link.setting", lang, problem=error.message(lang)))
    return settings


def example_text(preset: Preset, example: str, lang: str) -> str | None:
    """The prompt of the example *example* ("task.N", 1-based) on a page in *lang*; None when
    the pair has no such example."""
    task, _, number = example.rpartition(".")
    prompts = preset.example_prompts(lang).get(task, ())
    if not number.isdigit() or not 1 <= int(number) <= len(prompts):
        return None
    return prompts[int(number) - 1]


def example_id(preset: Preset, prompt: str, lang: str) -> str | None:
    """The id ("task.N") of *prompt* among the pair's examples on a page in *lang*, or None."""
    for task, prompts in preset.example_prompts(lang).items():
        if prompt in prompts:
            return f"{task}.{prompts.index(prompt) + 1}"
    return None


def shared_prompt(setup: SharedSetup, preset: Preset, lang: str) -> str | None:
    """The prompt text *setup* restores on a page in *lang* (its example's, or its own), or
    None to keep the page's."""
    if setup.example is not None:
        return example_text(preset, setup.example, lang)
    return setup.prompt


def quoted(text: str) -> str:
    """A value from the URL as a message quotes it: repr, cut to SHOWN_CHARS characters."""
    return repr(text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS] + "…")
