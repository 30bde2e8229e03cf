"""The heads' report as a plain record: how often each trained head agreed with the target on
held-out text, per task group, the numbers a view draws beside the run's own.

No torch here: the record crosses from where the pair is (on ZeroGPU, a worker process) to the
page, and views import it. ``store.read_report`` reads the JSON the training wrote;
``heads_agreement`` turns it into this record.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from specviz.models.heads.corpus import GROUPS

# What a reader runs to train a target's heads (the drafter's error and the heads panel say it).
TRAIN_COMMAND = "python -m specviz heads train"


@dataclass(frozen=True)
class GroupAgreement:
    """One task group's held-out text: per head (head 1 first), how often the target's most
    likely token was the head's first guess (top1) or among its five first (top5)."""

    group: str  # "code", "prose", "ja" (specviz.models.heads.corpus.GROUPS)
    positions: int  # held-out positions measured
    top1: tuple[float, ...]
    top5: tuple[float, ...]


@dataclass(frozen=True)
class HeadsAgreement:
    """The trained heads of a target, as measured when they were trained."""

    heads: int  # K: head k guesses the token k positions into the draft
    groups: tuple[GroupAgreement, ...]
    steps: int  # training steps taken
    training_positions: int  # positions the heads learned from


def heads_agreement(report: Mapping[str, Any]) -> HeadsAgreement:
    """The record of a report ``train_heads`` wrote (its ``agreement`` per group), the groups
    in the corpus's order (the JSON's are sorted by name)."""
    heads = int(report["heads"])
    measured: Mapping[str, Any] = report.get("agreement", {})

    def place(group: str) -> tuple[int, str]:
        return (GROUPS.index(group) if group in GROUPS else len(GROUPS), group)

    groups = tuple(
        GroupAgreement(
            group=group,
            positions=int(measured[group]["positions"]),
            top1=tuple(float(value) for value in measured[group]["top1"][:heads]),
            top5=tuple(float(value) for value in measured[group]["top5"][:heads]),
        )
        for group in sorted(measured, key=place)
    )
    return HeadsAgreement(
        heads=heads,
        groups=groups,
        steps=int(report.get("steps", 0)),
        training_positions=int(report.get("training_positions", 0)),
    )
