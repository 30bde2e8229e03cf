"""A Medusa run's session holds its heads' training report, read where the pair is, so the cards
draw it beside the run's own agreement; a run of another drafter holds none."""

from __future__ import annotations

from pathlib import Path

import pytest
from hosted_fixtures import TinyCache
from medusa_models import file_heads

from specviz.app.gpu_work import Runs
from specviz.app.limits import LOCAL
from specviz.app.session import App, Session, Started
from specviz.models.heads.block import MedusaHeads
from specviz.models.heads.report import heads_agreement
from specviz.models.presets import default_preset, load_presets
from specviz.views.run_html import cycle_cards_html

PRESETS = load_presets()
PRESET = default_preset(PRESETS).id


def test_a_medusa_run_keeps_its_heads_report_for_the_cards(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SPECVIZ_CACHE", str(tmp_path))
    cache = TinyCache()
    target = cache.pair.target
    report = file_heads(target, MedusaHeads(3, target.config.hidden_size))
    app = App(PRESETS, cache, limits=LOCAL)  # type: ignore[arg-type]
    sess = Session()
    medusa = app.checks.inputs(PRESET, "def f(x):", {}, chat=False, drafter="medusa")
    records = list(Runs(app, remote=False).play(sess, medusa, take=3))
    started = records[0]
    assert isinstance(started, Started) and started.heads == heads_agreement(report)
    assert sess.heads == started.heads and len(sess.cycles) == 3
    cards = cycle_cards_html(sess.cycles[-1], run=sess.cycles, heads=sess.heads)
    assert 'class="sv-heads"' in cards and 'data-measure="code" data-top1="0.5000"' in cards
    # Another drafter's run forgets the report, and its cards have no heads panel.
    plain = app.checks.inputs(PRESET, "def f(x):", {}, chat=False, drafter="draft-model")
    list(Runs(app, remote=False).play(sess, plain, take=1))
    assert sess.heads is None
    assert "sv-heads" not in cycle_cards_html(sess.cycles[-1], run=sess.cycles, heads=sess.heads)
