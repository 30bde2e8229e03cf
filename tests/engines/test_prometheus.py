"""Prometheus's text format read back: the counters watch differences, from the names vLLM and
SGLang expose (fixtures constructed from their sources' names, see each file's header)."""

from __future__ import annotations

from pathlib import Path

import pytest

from specviz.engines.prometheus import (
    MetricsFormatError,
    counter,
    counter_by_label,
    metric_names,
    parse_metrics,
)
from specviz.engines.servers import COUNTERS, SGLANG, VLLM

FIXTURES = Path(__file__).parent / "fixtures"


def _samples(name: str) -> list:
    return parse_metrics((FIXTURES / name).read_text(encoding="utf-8"))


def test_vllm_counters_are_summed_over_engines_and_skip_created() -> None:
    samples = _samples("vllm_metrics.txt")
    names = COUNTERS[VLLM]
    assert counter(samples, names.drafts or "") == 1800.0  # 1200 + 600, not the _created stamps
    assert counter(samples, names.drafted or "") == 5400.0
    assert counter(samples, names.accepted or "") == 3600.0
    assert counter(samples, names.generated) == 6615.0
    assert counter(samples, names.requests or "") == 45.0  # over finished_reason labels too
    per_position = counter_by_label(samples, names.accepted_at or "", "position")
    assert per_position == {"0": 1500.0, "1": 1200.0, "2": 900.0}


def test_a_counter_reads_with_or_without_its_total_suffix() -> None:
    samples = _samples("vllm_metrics.txt")
    assert counter(samples, "vllm:spec_decode_num_drafts") == counter(
        samples, "vllm:spec_decode_num_drafts_total"
    )


def test_sglang_counters_and_escaped_label_values() -> None:
    samples = _samples("sglang_metrics.txt")
    names = COUNTERS[SGLANG]
    assert counter(samples, names.drafts or "") == 2000.0
    assert counter(samples, names.generated) == 6200.0
    assert counter(samples, names.requests or "") == 100.0
    assert names.drafted is None and names.accepted_at is None  # SGLang counts neither
    verify = next(s for s in samples if s.name == "sglang:spec_verify_calls_total")
    assert verify.labels["note"] == 'a "quoted" value, a back\\slash'
    infinite = next(s for s in samples if s.labels.get("le") == "+Inf")
    assert infinite.value == 100.0


def test_an_absent_counter_is_none_not_zero() -> None:
    samples = _samples("sglang_metrics.txt")
    assert counter(samples, "vllm:spec_decode_num_drafts") is None
    assert "sglang:spec_accept_rate" in metric_names(samples)


@pytest.mark.parametrize(
    "text",
    [
        "vllm:spec_decode_num_drafts_total{engine=0} 1.0",  # an unquoted label value
        "vllm:spec_decode_num_drafts_total one",  # not a number
        "{} 1.0",  # no name
    ],
)
def test_a_malformed_line_is_refused_with_its_number(text: str) -> None:
    with pytest.raises(MetricsFormatError, match="line 2"):
        parse_metrics("# HELP x y\n" + text)


def test_a_timestamp_after_the_value_is_read_past() -> None:
    (sample,) = parse_metrics('x_total{a="b"} 3 1700000000000\n')
    assert (sample.name, sample.value, dict(sample.labels)) == ("x_total", 3.0, {"a": "b"})
