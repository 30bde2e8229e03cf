"""The advisor's setup, written once for the app's tab and ``python -m specviz advise``: the preset's
pair at each draft format compared, and the plan that measures them on the prompts.

Each front end checks its own choices (the tab's controls, the CLI's flags) and loads pairs its own
way (the app through its model cache under the engine lock, the CLI printing its progress); both
hand ``format_pairs`` a function that loads one preset.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from specviz.core.settings import GenerationSettings
from specviz.labs.advisor.advice import AdvicePlan, EngineLane
from specviz.measure.llama_cpp import LlamaLanes, llama_command, plain_command
from specviz.measure.race_records import LLAMA_PLAIN_LANE

if TYPE_CHECKING:
    from specviz.models.loader import ModelPair
    from specviz.models.presets import Preset


def drafts_at(draft_format: str, pair: ModelPair) -> str:
    """The draft format *pair*, loaded at *draft_format*, drafts at: "auto" is the one its step
    costs chose at load (unchanged where none were measured)."""
    if draft_format == "auto" and pair.cost_report is not None:
        return pair.cost_report.draft_format
    return draft_format


def format_pairs(
    preset: Preset,
    formats: Sequence[str],
    load: Callable[[Preset], ModelPair],
    loaded: Mapping[str, ModelPair] | None = None,
) -> dict[str, ModelPair]:
    """The preset's pair at each of *formats*, in their order (the first drafts for every
    drafter that uses no draft model: ``AdvicePlan.pairs``), keyed by the format each drafts at
    (``drafts_at``). A format in *loaded* takes the pair given there; any other is loaded by
    *load* from the preset at that draft format."""
    pairs: dict[str, ModelPair] = {}
    for draft_format in formats:
        pair = (loaded or {}).get(draft_format)
        if pair is None:
            pair = load(replace(preset, draft_quantization=draft_format))
        pairs[drafts_at(draft_format, pair)] = pair
    return pairs


def advice_plan(
    pairs: Mapping[str, ModelPair], prompts: Sequence[str], *, chat: bool, **plan: Any
) -> AdvicePlan:
    """The plan measuring the *pairs* on the *prompts* (as text, read by the first pair: they
    share their tokenizer, its chat template applied when *chat*); *plan* holds the rest of
    ``AdvicePlan``'s fields (settings, drafters, γ values, budget...)."""
    if not pairs:
        raise ValueError("the advisor needs at least one loaded pair")
    first = next(iter(pairs.values()))
    prompt_ids = [first.encode_prompt(prompt, chat=chat) for prompt in prompts]
    return AdvicePlan(pairs=pairs, prompt_ids=prompt_ids, **plan)


def llama_engine_lanes(
    lanes: LlamaLanes, preset: Preset, settings: GenerationSettings, gammas: Sequence[int]
) -> list[EngineLane]:
    """llama.cpp's lanes for the advisor: its plain decoding, and its speculative decoding by the
    configs tab's draft-model command at each γ (servers started here, kept by *lanes*)."""
    engine = [EngineLane(LLAMA_PLAIN_LANE, lanes.server(plain_command(preset)), 0)]
    for gamma in gammas:
        command = llama_command(preset, "draft-model", replace(settings, gamma=gamma))
        if command is not None:
            server = lanes.server(command)
            engine.append(EngineLane(f"llama.cpp γ={gamma}", server, gamma, LLAMA_PLAIN_LANE))
    return engine
