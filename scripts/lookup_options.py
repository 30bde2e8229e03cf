"""Prompt lookup's options on the bundled pair's editing prompts: tokens per target forward.

At temperature 0 a draft is accepted exactly when it matches the target's greedy continuation, so
replaying each prompt's greedy text (generated once) gives every option's target forwards without
running the model again, free of timing noise. Lookup itself costs tens of microseconds a cycle,
so wall-clock speed follows these counts.

    OMP_NUM_THREADS=1 .venv/bin/python scripts/lookup_options.py [max_new_tokens]
"""

from __future__ import annotations

import sys
from dataclasses import replace

import torch

from specviz.core.engine import GenerationSettings, speculative_generate
from specviz.drafters.base import DrafterSpec
from specviz.drafters.prompt_lookup import LookupOptions, PromptLookupDrafter
from specviz.drafters.registry import make_drafter
from specviz.models.loader import ModelCache
from specviz.models.presets import default_preset, load_presets

OPTIONS = (
    "occurrence=earliest,min_ngram=1",
    "occurrence=latest,min_ngram=1",
    "occurrence=earliest,min_ngram=2",
    "occurrence=latest,min_ngram=2",
    "occurrence=latest,min_ngram=1,max_ngram=2",
    "occurrence=latest,min_ngram=1,max_ngram=8",
)
SCHEDULES = ((5, False), (8, False), (5, True))  # (γ, adaptive)


def target_forwards(
    options: str, gamma: int, adaptive: bool, prompt: list[int], new: list[int]
) -> int:
    """Cycles greedy lookup decoding needs to emit new after prompt."""
    drafter = PromptLookupDrafter(LookupOptions.from_spec(DrafterSpec.parse("lookup:" + options)))
    drafter.start(
        torch.tensor([prompt]),
        GenerationSettings(gamma=gamma, adaptive_gamma=adaptive),
        frozenset(),
    )
    text = prompt + new
    position, cycles = len(prompt), 0
    while position < len(text):
        proposal = drafter.propose(torch.tensor(text[:position]), len(text) - position - 1, None)  # type: ignore[arg-type]
        accepted = 0
        for token in proposal.token_ids.tolist():
            if token != text[position + accepted]:
                break
            accepted += 1
        drafter.commit(accepted, text[position + accepted])
        position += accepted + 1
        cycles += 1
    return cycles


def main() -> None:
    tokens = int(sys.argv[1]) if len(sys.argv) > 1 else 96
    preset = default_preset(load_presets())
    pair = ModelCache().load_pair(preset)
    settings = replace(preset.settings, max_new_tokens=tokens)
    runs = []
    for prompt in preset.prompts["editing"]:
        ids = pair.encode_prompt(prompt, chat=preset.chat_template)
        cycles = speculative_generate(pair, ids, settings, make_drafter("lookup", pair))
        new = [token.token_id for cycle in cycles for token in cycle.emitted]
        print(f"--- {len(new)} tokens:\n{pair.tokenizer.decode(new)}\n", flush=True)
        runs.append((ids[0].tolist(), new))
    for gamma, adaptive in SCHEDULES:
        print(f"γ={gamma}{' adaptive' if adaptive else ''}: tokens per target forward per prompt")
        for options in OPTIONS:
            taus = [len(new) / target_forwards(options, gamma, adaptive, p, new) for p, new in runs]
            print(f"  {options:44} mean {sum(taus) / len(taus):.2f}  {[round(t, 2) for t in taus]}")


if __name__ == "__main__":
    main()
