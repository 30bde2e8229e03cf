"""How many tokens per target pass copying could give at best, counted on the target's own answer.

Prompt lookup proposes what followed an earlier occurrence of the text's suffix; its yield is
bounded by how much of the answer repeats earlier text. This measurement runs the lookup drafter
greedily (so the answer is the target's greedy answer, the same as plain decoding) and replays
that answer with two copiers that know it in advance:

- best occurrence: each cycle copies from any earlier occurrence of the last token (every
  suffix match lookup could use, at any n-gram length), as much as agrees with the answer, the
  copies chosen over the whole answer for the fewest passes. No suffix-matching lookup, whatever
  its n-gram rule or choice of occurrence, needs fewer passes.
- any position: copy from wherever in the text the answer's next tokens occur, suffix or not:
  what any drafter that only copies earlier text could get.

Each counts tokens per target pass (τ) under the engine's rules (at most γ drafts, at most the
remaining budget minus one, a plain step where there is nothing to copy). τ is counted, not
timed, so it holds on any machine; a copy costs no draft forward, so the speedup of a copying
drafter is about τ over the cost of one verification pass (v(γ + 1) target steps, which the
load-time cost report measures).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import torch

from specviz.core.engine import ModelPairLike, speculative_generate
from specviz.core.settings import GenerationSettings
from specviz.drafters.registry import make_drafter

__all__ = ["CopyHeadroom", "copy_headroom", "replay_copies"]


@dataclass(frozen=True)
class CopyHeadroom:
    """One task group's answers, pooled: tokens per target pass of lookup and of the bounds."""

    task: str
    prompts: int
    new_tokens: int
    lookup_passes: int  # target passes of the real lookup run
    best_occurrence_passes: int  # passes of the best-occurrence replay
    any_position_passes: int  # passes of the any-position replay

    @property
    def lookup_tau(self) -> float:
        return self.new_tokens / max(self.lookup_passes, 1)

    @property
    def best_occurrence_tau(self) -> float:
        return self.new_tokens / max(self.best_occurrence_passes, 1)

    @property
    def any_position_tau(self) -> float:
        return self.new_tokens / max(self.any_position_passes, 1)


def _agreement(text: Sequence[int], start: int, answer: Sequence[int], at: int, limit: int) -> int:
    """How many tokens from text[start:] equal answer[at:], at most limit."""
    count = 0
    while (
        count < limit
        and start + count < len(text)
        and at + count < len(answer)
        and text[start + count] == answer[at + count]
    ):
        count += 1
    return count


def replay_copies(
    prompt: Sequence[int], answer: Sequence[int], gamma: int, suffix_only: bool
) -> int:
    """The fewest target passes that emit *answer* when a cycle may copy any agreeing span.

    suffix_only: copy only from just after an earlier occurrence of the text's last token (what
    a suffix-matching lookup could choose); else from any position of the text. Each pass emits
    the accepted copy plus the target's own next token, as in the engine; the copy is at most γ
    tokens and leaves room in the budget for that token. A pass at position i may stop its copy
    anywhere up to the longest agreeing span, so the count is the fewest jumps over those
    ranges (a shortest path, not the greedy longest copy, which can land where less follows).
    """
    reach = [_longest_copy(prompt, answer, at, gamma, suffix_only) for at in range(len(answer))]
    fewest = [0] * (len(answer) + 1)  # fewest[i]: passes from position i to the end
    for at in range(len(answer) - 1, -1, -1):
        fewest[at] = 1 + min(fewest[at + 1 : at + reach[at] + 2])
    return fewest[0]


def _longest_copy(
    prompt: Sequence[int], answer: Sequence[int], at: int, gamma: int, suffix_only: bool
) -> int:
    """The longest span of answer[at:] one pass at position *at* could copy from the text."""
    text = list(prompt) + list(answer[:at])
    limit = min(gamma, len(answer) - at - 1)
    best = 0
    if limit > 0:
        last = text[-1]
        for start in range(1, len(text)):
            if suffix_only and text[start - 1] != last:
                continue
            best = max(best, _agreement(text, start, answer, at, limit))
            if best == limit:
                break
    return best


def copy_headroom(
    pair: ModelPairLike,
    prompts: Sequence[tuple[str, torch.Tensor]],
    settings: GenerationSettings,
    lookup_spec: str = "lookup",
) -> list[CopyHeadroom]:
    """Per task group (in the order first met): the lookup run's τ and the two bounds' τ.

    settings: γ and the answer's length; the run is greedy whatever settings.temperature says
    (the bounds replay one fixed answer).
    """
    greedy = replace(settings, temperature=0.0, adaptive_gamma=False, cost_gamma=False)
    rows: dict[str, CopyHeadroom] = {}
    for task, prompt_ids in prompts:
        cycles = list(
            speculative_generate(pair, prompt_ids, greedy, make_drafter(lookup_spec, pair))
        )
        answer = [token.token_id for cycle in cycles for token in cycle.emitted]
        prompt = prompt_ids[0].tolist()
        row = rows.get(task, CopyHeadroom(task, 0, 0, 0, 0, 0))
        rows[task] = CopyHeadroom(
            task,
            row.prompts + 1,
            row.new_tokens + len(answer),
            row.lookup_passes + len(cycles),
            row.best_occurrence_passes + replay_copies(prompt, answer, greedy.gamma, True),
            row.any_position_passes + replay_copies(prompt, answer, greedy.gamma, False),
        )
    return list(rows.values())
