"""Prometheus's text format (what /metrics serves) as plain samples, and sums over them.

Only what watching a server needs: ``name{label="value",...} number [timestamp]`` lines, comments
and blank lines skipped. A counter is exposed as ``<name>_total`` (prometheus_client adds the
suffix, and a ``<name>_created`` sample that is not a count); ``counter`` reads either spelling.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

_NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
_SAMPLE = re.compile(rf"^(?P<name>{_NAME})(?:\{{(?P<labels>.*)\}})?\s+(?P<value>\S+)(?:\s+\S+)?$")
_LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*,?')
_ESCAPES = {"\\\\": "\\", '\\"': '"', "\\n": "\n"}


@dataclass(frozen=True)
class Sample:
    """One line of the exposition: a metric's name, its labels and its value."""

    name: str
    value: float
    labels: Mapping[str, str] = field(default_factory=dict)


class MetricsFormatError(ValueError):
    """A line that is not Prometheus's text format (the caller words it for the reader)."""


def parse_metrics(text: str) -> list[Sample]:
    """Every sample of a /metrics text, in order; raises MetricsFormatError on a malformed line."""
    samples = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        match = _SAMPLE.match(line)
        if match is None:
            raise MetricsFormatError(f"line {number}: {line[:80]!r}")
        try:
            value = float(
                match["value"]
            )  # float() reads +Inf, -Inf and NaN as Prometheus writes them
        except ValueError:
            raise MetricsFormatError(f"line {number}: value {match['value']!r}") from None
        samples.append(Sample(match["name"], value, _labels(match["labels"] or "", number)))
    return samples


def _labels(text: str, number: int) -> dict[str, str]:
    labels: dict[str, str] = {}
    position = 0
    while position < len(text):
        match = _LABEL.match(text, position)
        if match is None or match.end() == position:
            raise MetricsFormatError(f"line {number}: labels {text[:80]!r}")
        value = re.sub(r"\\.", lambda escape: _ESCAPES.get(escape[0], escape[0]), match[2])
        labels[match[1]] = value
        position = match.end()
    return labels


def counter(samples: Iterable[Sample], name: str) -> float | None:
    """The counter *name* summed over all its label sets (engines, models, ranks); None when the
    server does not expose it. *name* without ``_total``: both spellings are read."""
    values = [
        s.value for s in samples if s.name in (name, f"{name}_total") and math.isfinite(s.value)
    ]
    return sum(values) if values else None


def counter_by_label(samples: Iterable[Sample], name: str, label: str) -> dict[str, float]:
    """The counter *name* summed per value of *label* (e.g. per draft ``position``)."""
    sums: dict[str, float] = {}
    for sample in samples:
        if sample.name in (name, f"{name}_total") and label in sample.labels:
            key = sample.labels[label]
            sums[key] = sums.get(key, 0.0) + sample.value
    return sums


def metric_names(samples: Iterable[Sample]) -> set[str]:
    """The distinct metric names among *samples*."""
    return {sample.name for sample in samples}
