"""A drafter is one module plus one registry entry: a kind defined here, and nowhere in specviz/,
appears in every list, view, lab, config and export once registered, and in none before.

"always-e" proposes the byte "e" at every position with q = 1 (a rule, as prompt lookup's copies
are): the tiny byte models' vocabulary is bytes, so "e" is one token.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
from hosted_fixtures import TinyCache
from rule_drafters import RuleDrafter

from specviz.app.configs_panel import current_snippets
from specviz.app.gpu_work import Runs
from specviz.app.session import App, Session
from specviz.cli.main import main
from specviz.core.events import Cycle
from specviz.drafters.base import DrafterSpec
from specviz.drafters.registry import (
    DRAFTERS,
    DrafterEntry,
    Drafts,
    default_drafters,
    register_drafter,
    unregister_drafter,
)
from specviz.export.trace import build_trace, read_trace, trace_text
from specviz.labs.advisor.advice import AdvicePlan, candidates
from specviz.labs.inspector import inspector_html, inspector_lines
from specviz.models.presets import default_preset, load_presets
from specviz.views.fable import narrate, story_text
from specviz.views.run_html import stream_html

KIND = "always-e"
E = ord("e")  # the byte "e": one token on the tiny byte models
PACKAGE = Path(__file__).resolve().parents[2] / "specviz"
PRESETS = load_presets()
PRESET = default_preset(PRESETS)


class AlwaysE:
    """The test drafter's class: no options, a rule drafter that always proposes "e"."""

    @classmethod
    def check_spec(cls, spec: DrafterSpec) -> None:
        spec.check_options()

    @classmethod
    def from_spec(cls, spec: DrafterSpec, pair: object) -> RuleDrafter:
        return RuleDrafter(lambda text: E, KIND)


@pytest.fixture
def always_e() -> Iterator[str]:
    """The kind registered through the registry's public function for one test, then removed."""
    register_drafter(
        DrafterEntry(
            KIND, lambda: AlwaysE, Drafts.BY_RULE, uses_draft_model=False, copies_from_text=False
        )
    )
    yield KIND
    unregister_drafter(KIND)


def session_run(app: App, kind: str) -> tuple[Session, list[Cycle]]:
    """A greedy run of *kind* through the app's session on the tiny pair, to its end."""
    settings = {"max_new_tokens": 24, "temperature": 0.0}
    inputs = app.checks.inputs(PRESET.id, "the tree", settings, chat=False, drafter=kind)
    sess = Session()
    for _ in Runs(app, remote=False).play(sess, inputs):  # as the Run button plays it
        pass
    return sess, sess.cycles


def test_no_line_of_specviz_names_it() -> None:
    # The seam's point: everything below comes from the registry entry, not from the package.
    naming = [
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if KIND in path.read_text(encoding="utf-8")
    ]
    assert naming == []
    assert KIND not in DRAFTERS  # registered by the fixture only


def test_the_cli_offers_it_once_registered(
    capsys: pytest.CaptureFixture[str],
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "400")  # argparse wraps help at the terminal's width

    def helps() -> tuple[str, str]:
        outs = []
        for command in ("generate", "advise"):
            with pytest.raises(SystemExit):
                main([command, "--help"])
            outs.append(capsys.readouterr().out)
        return outs[0], outs[1]

    generate, advise = helps()
    assert KIND not in generate and KIND not in advise
    request.getfixturevalue("always_e")
    generate, advise = helps()
    drafters = f"draft-model, lookup, hybrid, layerskip, tree, lookahead, medusa, {KIND}"
    assert f"the drafter: {drafters}" in " ".join(generate.split())
    assert f"(default: draft-model,lookup,hybrid,layerskip,{KIND})" in " ".join(advise.split())


def _component(demo: object, elem_id: str) -> object:
    found = [block for block in demo.blocks.values() if getattr(block, "elem_id", None) == elem_id]  # type: ignore[attr-defined]
    assert len(found) == 1, elem_id
    return found[0]


def test_the_apps_dropdowns_offer_it(always_e: str) -> None:
    from specviz.app.builder import build_demo

    demo = build_demo(PRESETS, TinyCache())  # type: ignore[arg-type]
    dropdown = _component(demo, "sv-drafter")
    # No drafter.always_e in the text tables: the kind is its own label.
    assert (KIND, KIND) in dropdown.choices  # type: ignore[attr-defined]
    race = _component(demo, "sv-race-drafters")
    assert (KIND, KIND) in race.choices  # type: ignore[attr-defined]
    advisor = _component(demo, "sv-advisor-drafters")
    assert KIND in advisor.value  # type: ignore[attr-defined]  # in the default list


def test_the_dropdowns_choices_lack_it_unregistered() -> None:
    # The negative control: the dropdowns' choices (drafter_choices) come from the registry.
    from specviz.app.run_controls import drafter_choices

    assert KIND not in [value for _, value in drafter_choices(PRESET, "en")]
    assert KIND not in default_drafters()


def test_it_runs_as_a_race_lane(always_e: str) -> None:
    app = App(PRESETS, TinyCache())  # type: ignore[arg-type]
    settings = {"max_new_tokens": 12, "temperature": 0.0}
    inputs = app.checks.inputs(
        PRESET.id, "the tree", settings, chat=False, race=True, race_drafters=[KIND], race_repeats=1
    )
    assert inputs.race_drafters == (KIND,)
    updates = list(app.race(inputs))
    result = updates[-1].result
    assert result.complete
    assert [lane.name for lane in result.drafters] == [KIND]
    shown = result.lane(KIND).shown  # type: ignore[union-attr]
    assert shown is not None
    events = [event for event in shown.outcome.events if isinstance(event, Cycle)]
    assert events and all(cycle.drafter == KIND for cycle in events)


def test_the_inspector_and_the_fable_word_its_q_of_one(always_e: str) -> None:
    _, cycles = session_run(App(PRESETS, TinyCache()), KIND)  # type: ignore[arg-type]
    cycle = next(c for c in cycles if c.drafted)
    assert all(token.token_id == E and token.q_draft == 1.0 for token in cycle.drafted)
    said = f"Drafted by {KIND}: chosen by rule, so q(x) = 1 and min(1, p/q) is p itself."
    assert f"  {said}" in inspector_lines(cycle)
    assert said in inspector_html(cycle)
    story = narrate(cycle)
    assert story.lines[0].key == "fable.draft.rule"  # not the draft model's guess
    assert "by a fixed rule, sure of each one (q = 1)" in story_text(story)[0]


def test_the_draft_model_is_worded_as_a_model_with_its_q() -> None:
    # The negative control of the test above: another capability, other words.
    _, cycles = session_run(App(PRESETS, TinyCache()), "draft-model")  # type: ignore[arg-type]
    cycle = next(c for c in cycles if c.drafted)
    assert narrate(cycle).lines[0].key == "fable.draft.guess"
    assert "chosen by rule" not in "\n".join(inspector_lines(cycle))


def test_the_production_configs_say_it_has_no_serving_engine_equivalent(always_e: str) -> None:
    snippets = current_snippets(PRESETS, {"preset": PRESET.id, "drafter": KIND})
    assert snippets is not None and len(snippets) == 4
    for snippet in snippets:
        assert snippet.code == ""  # not the draft model's config in its place
        notes = [note.text("en") for note in snippet.notes]
        assert f"has no serving-engine equivalent of the {KIND} drafter" in notes[0]
    model = current_snippets(PRESETS, {"preset": PRESET.id, "drafter": "draft-model"})
    assert model is not None and all(snippet.code for snippet in model)


def test_a_trace_names_it_and_reads_back(always_e: str) -> None:
    sess, cycles = session_run(App(PRESETS, TinyCache()), KIND)  # type: ignore[arg-type]
    assert sess.setup is not None and sess.setup.drafter == KIND
    trace = read_trace(trace_text(build_trace(sess.setup, cycles)))
    assert trace.drafter == KIND
    assert trace.cycles and all(cycle.drafter == KIND for cycle in trace.cycles)
    page = stream_html(list(trace.cycles))
    assert f'data-drafter="{KIND}" data-drafts="rule"' in page  # its marks name it


def test_the_advisor_counts_it_among_its_candidates(always_e: str, tiny_pair: object) -> None:
    assert KIND in default_drafters()
    prompt = [torch.tensor([list(b"the tree")])]
    plan = AdvicePlan(
        pairs={"none": tiny_pair},  # type: ignore[dict-item]
        prompt_ids=prompt,
        settings=PRESET.settings,
        drafters=default_drafters(),
        gammas=(2,),
        adaptive=False,
        warm_up=False,
    )
    mine = [candidate for candidate in candidates(plan) if candidate.drafter == KIND]
    assert [(c.gamma, c.draft_format) for c in mine] == [(2, "")]  # no draft model, no format
