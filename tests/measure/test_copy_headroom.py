"""The copy-headroom replays: exact pass counts on small texts, and bounds that really bound."""

import random

import pytest
import torch

from specviz.core.sampling import Sampler
from specviz.core.settings import GenerationSettings
from specviz.drafters.prompt_lookup import LookupOptions, PromptLookupDrafter
from specviz.measure.copy_headroom import replay_copies


def test_an_answer_copied_whole_takes_one_pass():
    prompt = [5, 1, 2, 3, 4, 6, 9, 5]
    answer = [1, 2, 3, 4]  # follows the earlier 5: three copied, the target's own fourth
    assert replay_copies(prompt, answer, gamma=16, suffix_only=True) == 1
    assert replay_copies(prompt, answer, gamma=16, suffix_only=False) == 1


def test_gamma_caps_each_copy():
    prompt = [5, 1, 2, 3, 4, 6, 9, 5]
    answer = [1, 2, 3, 4]
    # γ = 1: each pass copies one token and adds the target's own, so 2 passes for 4 tokens.
    assert replay_copies(prompt, answer, gamma=1, suffix_only=False) == 2


def test_suffix_copies_need_the_last_token_to_have_occurred_before():
    prompt = [7, 1, 2, 3]
    answer = [1, 2, 3]
    # Nothing follows an earlier 3: a plain step emits 1; then 1 occurred before, followed by 2,
    # and one more copy fits the budget (the last token is the target's own): 2 passes.
    assert replay_copies(prompt, answer, gamma=16, suffix_only=True) == 2
    # Copying from anywhere takes [1, 2] at once: 1 pass.
    assert replay_copies(prompt, answer, gamma=16, suffix_only=False) == 1


def _lookup_passes(prompt: list[int], answer: list[int], gamma: int) -> int:
    """Passes of the real lookup drafter on a known answer (greedy verification by agreement)."""
    drafter = PromptLookupDrafter(LookupOptions())
    drafter.start(torch.tensor(prompt), GenerationSettings(gamma=gamma), frozenset())
    sampler = Sampler(0.0, 0, 1.0, torch.Generator())
    passes = emitted = 0
    while emitted < len(answer):
        context = torch.tensor(prompt + answer[:emitted])
        proposal = drafter.propose(context, len(answer) - emitted - 1, sampler).token_ids.tolist()
        accepted = 0
        while accepted < len(proposal) and proposal[accepted] == answer[emitted + accepted]:
            accepted += 1
        drafter.commit(accepted, answer[emitted + accepted])
        passes += 1
        emitted += accepted + 1
    return passes


@pytest.mark.parametrize("seed", range(20))
def test_the_bounds_bound_the_real_lookup(seed):
    rng = random.Random(seed)
    prompt = [rng.randrange(6) for _ in range(40)]
    # An answer that mostly copies spans of the prompt, with edits between them.
    answer: list[int] = []
    while len(answer) < 30:
        start = rng.randrange(len(prompt) - 5)
        answer += [*prompt[start : start + rng.randrange(1, 6)], rng.randrange(6)]
    gamma = rng.choice([3, 7, 16])
    lookup = _lookup_passes(prompt, answer, gamma)
    best_occurrence = replay_copies(prompt, answer, gamma, suffix_only=True)
    any_position = replay_copies(prompt, answer, gamma, suffix_only=False)
    assert any_position <= best_occurrence <= lookup <= len(answer)
