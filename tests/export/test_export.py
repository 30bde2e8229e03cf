"""specviz.export: the trace round trip, the summary's numbers, the CSV rows, the report page and
the replay, on hand-built records (every number known) and on a real run of the tiny pair."""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import replace
from pathlib import Path

import pytest
import torch
from lookahead_records import lookahead_cycle
from tiny_models import TinyPair
from ui_events import (
    HARDWARE,
    VERSIONS,
    XSS,
    XSS_IMG,
    draft,
    make_cycle,
    plain_run,
    sample_run,
    setup_for,
    trace_of,
)

from specviz.core.engine import autoregressive_generate, speculative_generate
from specviz.core.events import Cycle, Origin, Step, Totals
from specviz.core.machine import vector_flags
from specviz.core.settings import GenerationSettings
from specviz.drafters.registry import make_drafter
from specviz.export.draft_csv import COLUMNS, draft_csv, draft_rows
from specviz.export.files import ExportPaths, write_exports
from specviz.export.report import report_html
from specviz.export.summary import llama_cpp_summary, vllm_summary
from specviz.export.trace import (
    MAX_TRACE_BYTES,
    TraceError,
    build_trace,
    model_id,
    read_trace,
    read_trace_file,
    single_race,
    trace_text,
)
from specviz.measure.race_records import engine_seconds
from specviz.models.presets import DEFAULT_DRAFTER
from specviz.views import race_html as race_views
from specviz.views import run_html as render


def no_draft_cycle(index: int, start: int, totals: Totals) -> Cycle:
    """A plain decoding step inside a speculative run: prompt lookup found nothing to copy."""
    cycle = make_cycle(index, start, [], ("x", Origin.BONUS), totals)
    return replace(cycle, draft_end="no_match")


# --- the summary under vLLM's and llama.cpp's names ------------------------------------------


def test_summary_numbers_follow_the_engines_definitions() -> None:
    cycles = sample_run()  # drafted 4, 4, 1; accepted 2, 4, 0
    summary = vllm_summary(cycles, num_spec_tokens=4)
    assert summary["num_spec_steps"] == 3
    assert summary["num_draft_tokens"] == 9
    assert summary["num_accepted_draft_tokens"] == 6
    assert summary["draft_acceptance_rate"] == pytest.approx(6 / 9)
    assert summary["mean_acceptance_length"] == pytest.approx(1 + 6 / 3)
    assert summary["acceptance_histogram"] == {"0": 1, "2": 1, "4": 1}
    assert summary["per_step_drafted"] == [4, 4, 1]
    assert summary["per_step_accepted"] == [2, 4, 0]
    assert summary["num_spec_tokens"] == 4
    assert sum(summary["acceptance_histogram"].values()) == summary["num_spec_steps"]
    assert llama_cpp_summary(cycles) == {"n_drafted": 9, "n_accept": 6}


def test_a_cycle_without_drafts_is_no_verification_step() -> None:
    cycles = sample_run()
    cycles.insert(1, no_draft_cycle(1, 3, Totals(4, 2, 4, 3, 2, 0.2, 0.05)))
    summary = vllm_summary(cycles, num_spec_tokens=4)
    assert summary["num_spec_steps"] == 3
    assert summary["per_step_drafted"] == [4, 4, 1]
    assert summary["mean_acceptance_length"] == pytest.approx(3.0)


def test_rates_are_null_when_nothing_was_drafted() -> None:
    summary = vllm_summary([no_draft_cycle(0, 0, Totals(1, 1, 0, 0, 0, 0.1, 0.0))], 4)
    assert summary["num_spec_steps"] == 0
    assert summary["draft_acceptance_rate"] is None
    assert summary["mean_acceptance_length"] is None
    assert summary["acceptance_histogram"] == {}


def test_the_trace_summary_carries_alpha_tau_and_the_speedup() -> None:
    trace = trace_of(sample_run(), plain_run())
    own = trace["summary"]["specviz"]
    assert own["alpha"] == pytest.approx(6 / 8)  # accepted / tested, not / drafted
    assert own["tau"] == pytest.approx(3.0)
    # Tokens per engine second (compute plus the run's own preparation), as the race counts.
    spec, plain = sample_run()[-1].totals, plain_run()[-1].totals
    expected = (spec.new_tokens / engine_seconds(spec)) / (plain.new_tokens / engine_seconds(plain))
    assert own["speedup"] == pytest.approx(expected)
    assert trace_of(sample_run())["summary"]["specviz"]["speedup"] is None


def test_the_models_are_named_by_id_and_source() -> None:
    models = trace_of(sample_run())["models"]
    assert models["draft"] == {"id": "draft", "source": "bundled:draft", "format": "none"}
    assert models["target"] == {"id": "target", "source": "bundled:target"}
    assert model_id("hub:Qwen/Qwen2.5-0.5B-Instruct@main") == "Qwen/Qwen2.5-0.5B-Instruct"
    assert model_id("local:/models/my@model") == "/models/my@model"


def test_vector_flags_keep_the_units_that_choose_kernels() -> None:
    flags = ["fpu", "sse2", "avx2", "avx512_bf16", "amx_tile", "fma", "ht", "asimd"]
    assert vector_flags(flags) == ["amx_tile", "asimd", "avx2", "avx512_bf16", "fma"]


# --- the trace's round trip -------------------------------------------------------------------


def test_a_trace_reads_back_into_the_same_records() -> None:
    cycles, steps = sample_run(), plain_run()
    back = read_trace(trace_text(trace_of(cycles, steps)))
    assert list(back.cycles) == cycles
    assert list(back.steps) == steps
    assert back.recorded_at == "2026-12-01T10:00:00+00:00"
    assert back.where() == "Test CPU"


def test_a_replayed_trace_renders_the_same_html(tmp_path: Path) -> None:
    cycles, steps = sample_run(), plain_run()
    path = tmp_path / "t.json"
    write_exports(trace_of(cycles, steps), ExportPaths(trace=path))
    back = read_trace_file(path)
    for lang in ("en",):
        assert render.stream_html(back.cycles, lang=lang) == render.stream_html(cycles, lang=lang)
        # A trace from one run and its plain lane replays as a race of one repeat each.
        raced = single_race(back.drafter, cycles, steps)
        assert back.race is not None
        assert race_views.race_html(back.race, lang=lang) == race_views.race_html(raced, lang=lang)
        for before, after in zip(cycles, back.cycles, strict=True):
            assert render.cycle_cards_html(after, lang=lang) == render.cycle_cards_html(before)
            assert render.counters_html(after.totals) == render.counters_html(before.totals)


def tiny_run(pair: TinyPair, temperature: float) -> tuple[list[Cycle], list[Step]]:
    settings = GenerationSettings(
        gamma=4, temperature=temperature, max_new_tokens=24, stop_on_eos=False
    )
    prompt = torch.tensor([list(b"def fib(n):")])
    cycles = list(speculative_generate(pair, prompt, settings, make_drafter(DEFAULT_DRAFTER, pair)))
    return cycles, list(autoregressive_generate(pair, prompt, settings))


@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_a_real_run_survives_the_round_trip(tiny_pair: TinyPair, temperature: float) -> None:
    cycles, steps = tiny_run(tiny_pair, temperature)
    assert any(cycle.rejection is not None for cycle in cycles)  # the run has every record kind
    back = read_trace(trace_text(trace_of(cycles, steps)).encode())
    assert list(back.cycles) == cycles and list(back.steps) == steps
    assert render.stream_html(back.cycles) == render.stream_html(cycles)


@pytest.mark.parametrize(
    ("contents", "words"),
    [
        ("not json at all", "it is not JSON"),
        ('{"cycles": []}', "is not a specviz trace (its schema is not specviz.trace)"),
        ('{"schema": "specviz.trace", "schema_version": 99}', "format version 99"),
    ],
)
def test_a_file_that_is_no_trace_gets_a_sentence(contents: str, words: str) -> None:
    with pytest.raises(TraceError) as caught:
        read_trace(contents)
    assert words in caught.value.message("en")


def test_a_version_1_trace_still_reads_its_gamma_as_draft_len() -> None:
    cycles, steps = sample_run(), plain_run()
    race = single_race("draft-model", cycles, steps)
    trace = build_trace(setup_for(), cycles, steps, race=race, hardware=HARDWARE, versions=VERSIONS)
    assert trace["schema_version"] == 2
    assert [cycle["draft_len"] for cycle in trace["cycles"]] == [4, 4, 1]
    assert not any("gamma" in cycle for cycle in trace["cycles"])
    # Version 1 wrote the same records with the count of drafted tokens named "gamma".
    old = json.loads(trace_text(trace))
    old["schema_version"] = 1
    for cycle in [*old["cycles"], *old["race"]["lanes"][1]["runs"][0]["events"]]:
        cycle["gamma"] = cycle.pop("draft_len")
    as_written = json.dumps(old)
    back = read_trace(as_written)
    assert list(back.cycles) == cycles and [cycle.draft_len for cycle in back.cycles] == [4, 4, 1]
    assert back.race is not None and back.race.lanes[1].runs[0].outcome.events == tuple(cycles)
    assert json.dumps(old) == as_written  # read from a copy: the caller's dict is as it was


def test_a_damaged_record_is_named_where_it_is_damaged() -> None:
    trace = trace_of(sample_run())
    trace["cycles"][1]["drafted"][2]["q_draft"] = "high"
    with pytest.raises(TraceError) as caught:
        read_trace(json.dumps(trace))
    message = caught.value.message("en")
    assert "damaged at cycles[1].drafted[2]" in message and "'q_draft'" in message
    del trace["cycles"][1]["drafted"][2]["q_draft"]
    with pytest.raises(TraceError) as caught:
        read_trace(json.dumps(trace))
    assert "missing field 'q_draft'" in caught.value.message("en")
    trace["cycles"] = []
    with pytest.raises(TraceError) as caught:
        read_trace(json.dumps(trace))
    assert caught.value.key == "error.trace.no_cycles"


def test_a_lookahead_window_reads_back_and_a_broken_one_is_named() -> None:
    """The window's root, next row, guesses and harvest go into the trace and come back; a
    guess past the tree's nodes or a next token without an id is refused where it is."""
    cycles = [sample_run()[0], lookahead_cycle()]
    trace = trace_of(cycles)
    window = trace["cycles"][1]["tree"]
    assert window["window_root"] == {"token_id": 100, "text": " the", "prob": 1.0}
    assert [token["token_id"] for token in window["window_next"]] == [12, 17, 18]
    assert window["window_guesses"] == [1, 3] and window["window_harvest"] is True
    assert list(read_trace(json.dumps(trace)).cycles) == cycles
    window["window_guesses"] = [1, 7]  # the tree has 7 nodes, 0 to 6
    with pytest.raises(TraceError) as caught:
        read_trace(json.dumps(trace))
    assert "cycles[1].tree.window_guesses[1]" in caught.value.message("en")
    window["window_guesses"] = [1, 3]
    del window["window_next"][2]["token_id"]
    with pytest.raises(TraceError) as caught:
        read_trace(json.dumps(trace))
    assert "cycles[1].tree.window_next[2]" in caught.value.message("en")
    # A trace written before the window's fields reads them as empty.
    for name in ("window_root", "window_next", "window_guesses", "window_harvest"):
        del window[name]
    record = read_trace(json.dumps(trace)).cycles[1].tree
    assert record is not None and record.window_rows and not record.window_next


def test_a_huge_file_is_refused_before_it_is_parsed(tmp_path: Path) -> None:
    with pytest.raises(TraceError) as caught:
        read_trace(b" " * (MAX_TRACE_BYTES + 1))
    assert "a trace may be at most 20 MB" in caught.value.message("en")
    big = tmp_path / "big.json"
    with big.open("wb") as file:
        file.truncate(MAX_TRACE_BYTES + 1)  # sparse: no 20 MB written
    with pytest.raises(TraceError):
        read_trace_file(big)


# --- the CSV --------------------------------------------------------------------------------------


def test_the_csv_has_one_row_per_drafted_token() -> None:
    cycles = sample_run()
    rows = list(csv.DictReader(io.StringIO(draft_csv(cycles))))
    assert len(rows) == sum(len(cycle.drafted) for cycle in cycles) == 9
    assert tuple(rows[0]) == COLUMNS
    first, rejected, untested = rows[0], rows[2], rows[3]
    assert (first["cycle"], first["position"], first["token_text"]) == ("1", "1", "def")
    assert float(first["accept_prob"]) == pytest.approx(min(1, 0.6 / 0.8))
    assert float(first["uniform"]) == pytest.approx(0.1)
    assert (first["verdict"], first["rule"]) == ("accepted", "min(1,p/q)")
    assert (rejected["verdict"], float(rejected["q_draft"])) == ("rejected", 0.7)
    # After the first rejection nothing was tested: no ratio decided, no u was drawn.
    assert (untested["token_text"], untested["verdict"]) == (XSS, "untested")
    assert untested["accept_prob"] == untested["uniform"] == ""
    assert rows[5]["token_text"] == "(x" and rows[6]["token_text"] == ")\n"


def test_greedy_rows_say_the_argmax_decided() -> None:
    cycle = make_cycle(
        0,
        0,
        [draft(1, 0, "a", accepted=True, u=None), draft(2, 1, "b", accepted=False, u=None)],
        (XSS_IMG, Origin.RESAMPLED),
        Totals(2, 1, 2, 2, 1, 0.1, 0.0),
        greedy=True,
    )
    rows = draft_rows([cycle])
    assert [row["rule"] for row in rows] == ["greedy_argmax", "greedy_argmax"]
    assert [row["accept_prob"] for row in rows] == ["", ""]
    assert "top choice" in str(rows[0]["decision"])


# --- the report page ------------------------------------------------------------------------------


def test_the_report_is_self_contained_and_escapes_what_it_shows() -> None:
    page = report_html(read_trace(trace_text(trace_of(sample_run(), plain_run(), prompt=XSS))))
    # Nothing to fetch: no element's src or href points at the network, plotly.js is inline.
    tags = re.findall(r"<(?:script|link|img|iframe)\b[^>]*>", page)
    assert not [tag for tag in tags if re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", tag)]
    assert "Plotly.newPlot" in page and len(page) > 1_000_000
    # The prompt and the model's tokens are text, never markup.
    assert XSS not in page and XSS_IMG not in page
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page
    assert "Test &lt;pair&gt;" in page
    spec, plain = sample_run()[-1].totals, plain_run()[-1].totals
    ratio = (spec.new_tokens / engine_seconds(spec)) / (plain.new_tokens / engine_seconds(plain))
    assert f'data-speedup="{ratio:.3f}"' in page  # the speedup over plain decoding
    assert "75%" in page and "3.00" in page  # α and τ, as the counters show them
    assert "num_accepted_draft_tokens" in page and "n_drafted" in page
    assert "What was measured, and how" in page and "Test CPU" in page


def test_a_report_without_a_plain_run_says_there_is_no_speedup() -> None:
    page = report_html(read_trace(trace_text(trace_of(sample_run()))))
    assert "no speedup to show" in page and "data-speedup" not in page


def test_write_exports_writes_only_what_is_asked(tmp_path: Path) -> None:
    written = write_exports(trace_of(sample_run()), ExportPaths(csv=tmp_path / "d.csv"))
    assert written == [tmp_path / "d.csv"] and [p.name for p in tmp_path.iterdir()] == ["d.csv"]
    all_three = write_exports(trace_of(sample_run()), ExportPaths.in_folder(tmp_path / "all"))
    assert sorted(p.suffix for p in all_three) == [".csv", ".html", ".json"]
