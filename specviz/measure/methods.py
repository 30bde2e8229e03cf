"""The decoders every measurement compares, as harness methods over one prompt.

Plain decoding and specviz's speculative decoding run the engine the app runs; transformers'
assisted generation (`generate(assistant_model=draft)`) runs with the same draft, γ, confidence stop
and sampling settings. The draft model's drafter is built here and nowhere else in measure/.
"""

from __future__ import annotations

from typing import Any

import torch

from specviz.core.engine import DraftModelPairLike, autoregressive_generate, speculative_generate
from specviz.core.model_steps import device_of
from specviz.core.settings import GenerationSettings
from specviz.drafters.registry import make_drafter
from specviz.measure.harness import Method, Outcome, Trial, drain
from specviz.models.presets import DEFAULT_DRAFTER

__all__ = ["assisted_generation", "plain_decoding", "speculative_decoding"]


def plain_decoding(
    pair: DraftModelPairLike, prompt_ids: torch.Tensor, settings: GenerationSettings, name: str
) -> Method:
    """The target alone, one token per forward: the baseline every speedup divides by."""

    def run(trial: Trial) -> Outcome | None:
        return drain(autoregressive_generate(pair, prompt_ids, trial.settings), trial)

    return Method(name, run, settings)


def speculative_decoding(
    pair: DraftModelPairLike,
    prompt_ids: torch.Tensor,
    settings: GenerationSettings,
    name: str,
    drafter_spec: str = DEFAULT_DRAFTER,
) -> Method:
    """specviz's engine with the drafter the spec names (a fresh drafter per run)."""

    def run(trial: Trial) -> Outcome | None:
        drafter = make_drafter(drafter_spec, pair)
        return drain(speculative_generate(pair, prompt_ids, trial.settings, drafter), trial)

    return Method(name, run, settings)


def assisted_generation(
    pair: DraftModelPairLike, prompt_ids: torch.Tensor, settings: GenerationSettings, name: str
) -> Method:
    """transformers' speculative decoding, generate(assistant_model=draft), at the same settings.

    It cannot stop at a deadline; its Outcome has no engine counters.
    """

    def run(trial: Trial) -> Outcome:
        new_ids = assisted_new_ids(pair, prompt_ids, trial.settings)
        return Outcome(len(new_ids), token_ids=tuple(new_ids))

    return Method(name, run, settings)


def assisted_new_ids(
    pair: DraftModelPairLike, prompt_ids: torch.Tensor, settings: GenerationSettings
) -> list[int]:
    """The token ids transformers' assisted generation adds after the prompt.

    γ is `num_assistant_tokens` (the "heuristic" schedule when adaptive), and the per-token draft
    stop is `assistant_confidence_threshold` (transformers' default is 0.4; None turns it off).
    transformers has no cumulative stop.
    """
    target: Any = pair.target  # a transformers model: generate() and generation_config
    draft: Any = pair.draft
    draft_config = draft.generation_config
    draft_config.num_assistant_tokens = settings.gamma
    draft_config.num_assistant_tokens_schedule = (
        "heuristic" if settings.adaptive_gamma else "constant"
    )
    draft_config.assistant_confidence_threshold = settings.draft_stop_below or None
    sampling: dict[str, Any] = {"do_sample": False}
    if settings.temperature > 0:
        sampling = {
            "do_sample": True,
            "temperature": settings.temperature,
            "top_k": settings.top_k or None,
            "top_p": settings.top_p,
        }
    torch.manual_seed(settings.seed)
    ids = prompt_ids.to(device_of(pair.target))
    eos = sorted(pair.eos_token_ids)
    with torch.inference_mode():
        output = target.generate(
            ids,
            attention_mask=torch.ones_like(ids),
            assistant_model=draft,
            max_new_tokens=settings.max_new_tokens,
            eos_token_id=eos,
            pad_token_id=getattr(pair.tokenizer, "pad_token_id", None) or eos[0],
            **sampling,
        )
    return [int(token) for token in output[0, ids.shape[1] :]]
