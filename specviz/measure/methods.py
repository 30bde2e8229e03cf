"""The decoders every measurement compares, as harness methods over one prompt.

Plain decoding and specviz's speculative decoding run the engine the app runs; transformers'
assisted generation (`generate(assistant_model=draft)`) runs with the same draft, γ, confidence stop
and sampling settings, and its prompt lookup (`generate(prompt_lookup_num_tokens=γ)`) with the
same γ and longest n-gram as specviz's lookup drafter, and its early-exit self-speculation
(`generate(assistant_early_exit=k)`) with the same γ as layer skip's "exit=k". Drafters are built
here and nowhere else in measure/.
"""

from __future__ import annotations

from typing import Any

import torch

from specviz.core.device import device_of
from specviz.core.engine import (
    DraftModelPairLike,
    ModelPairLike,
    autoregressive_generate,
    speculative_generate,
)
from specviz.core.settings import GenerationSettings
from specviz.drafters.base import DrafterSpec
from specviz.drafters.draft_model import ModelDrafter
from specviz.drafters.layer_skip import LayerSkipDrafter, LayerSkipOptions
from specviz.drafters.lookup_tree import branches_of
from specviz.drafters.prompt_lookup import LookupOptions, PromptLookupDrafter
from specviz.drafters.registry import make_drafter
from specviz.measure.harness import Method, Outcome, Trial, drain
from specviz.models.presets import DEFAULT_DRAFTER

__all__ = [
    "assisted_generation",
    "early_exit_generation",
    "plain_decoding",
    "prompt_lookup_generation",
    "speculative_decoding",
    "transformers_counterpart",
]


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


def prompt_lookup_generation(
    pair: ModelPairLike,
    prompt_ids: torch.Tensor,
    settings: GenerationSettings,
    name: str,
    max_ngram: int,
) -> Method:
    """transformers' prompt lookup, generate(prompt_lookup_num_tokens=γ,
    max_matching_ngram_size=max_ngram): the counterpart of specviz's "lookup" drafter.

    transformers copies from the earliest occurrence of the longest suffix n-gram (n down to 1)
    and keeps γ fixed (adaptive rows run it at the starting γ). No deadline, no engine counters.
    """

    def run(trial: Trial) -> Outcome:
        lookup = {
            "prompt_lookup_num_tokens": trial.settings.gamma,
            "max_matching_ngram_size": max_ngram,
        }
        new_ids = _generate_new_ids(pair, prompt_ids, trial.settings, lookup)
        return Outcome(len(new_ids), token_ids=tuple(new_ids))

    return Method(name, run, settings)


def early_exit_generation(
    pair: ModelPairLike,
    prompt_ids: torch.Tensor,
    settings: GenerationSettings,
    name: str,
    exit_layers: int,
) -> Method:
    """transformers' early-exit self-speculation, generate(assistant_early_exit=k): the target's
    first k layers, final norm and output layer draft (with a KV cache of their own; the decoder
    runs layers[:config.num_hidden_layers], which the candidate generator lowers to k). The
    counterpart of layer skip's "exit=k". No deadline, no engine counters.
    """

    def run(trial: Trial) -> Outcome:
        target: Any = pair.target
        config = target.generation_config  # the assistant's: the target drafts for itself
        saved = (
            config.num_assistant_tokens,
            config.num_assistant_tokens_schedule,
            config.assistant_confidence_threshold,
        )
        _assistant_schedule(config, trial.settings)
        try:
            early_exit = {"assistant_early_exit": exit_layers}
            new_ids = _generate_new_ids(pair, prompt_ids, trial.settings, early_exit)
        finally:
            (
                config.num_assistant_tokens,
                config.num_assistant_tokens_schedule,
                config.assistant_confidence_threshold,
            ) = saved
        return Outcome(len(new_ids), token_ids=tuple(new_ids))

    return Method(name, run, settings)


def transformers_counterpart(
    drafter_spec: str,
    pair: DraftModelPairLike,
    prompt_ids: torch.Tensor,
    settings: GenerationSettings,
    name: str,
) -> Method | None:
    """transformers' own method for what drafter_spec drafts with, or None where it has none."""
    spec = DrafterSpec.parse(drafter_spec)
    if spec.kind == ModelDrafter.kind:
        return assisted_generation(pair, prompt_ids, settings, name)
    if spec.kind == PromptLookupDrafter.kind:
        if branches_of(spec) > 1:
            return None  # transformers' prompt lookup copies one occurrence, a chain
        max_ngram = LookupOptions.from_spec(spec, also=("branches",)).max_ngram
        return prompt_lookup_generation(pair, prompt_ids, settings, name, max_ngram)
    if spec.kind == LayerSkipDrafter.kind:
        # transformers exits early but skips no inner layers: only "exit=k" has a counterpart.
        exit_layers = LayerSkipOptions.from_spec(spec).exit
        if exit_layers is not None:
            return early_exit_generation(pair, prompt_ids, settings, name, exit_layers)
    return None


def assisted_new_ids(
    pair: DraftModelPairLike, prompt_ids: torch.Tensor, settings: GenerationSettings
) -> list[int]:
    """The token ids transformers' assisted generation adds after the prompt.

    γ is `num_assistant_tokens` (the "heuristic" schedule when adaptive), and the per-token draft
    stop is `assistant_confidence_threshold` (transformers' default is 0.4; None turns it off).
    transformers has no cumulative stop.
    """
    draft: Any = pair.draft
    _assistant_schedule(draft.generation_config, settings)
    return _generate_new_ids(pair, prompt_ids, settings, {"assistant_model": draft})


def _assistant_schedule(config: Any, settings: GenerationSettings) -> None:
    """An assistant's generation config set to the settings' γ, schedule and per-token stop."""
    config.num_assistant_tokens = settings.gamma
    config.num_assistant_tokens_schedule = "heuristic" if settings.adaptive_gamma else "constant"
    config.assistant_confidence_threshold = settings.draft_stop_below or None


def _generate_new_ids(
    pair: ModelPairLike,
    prompt_ids: torch.Tensor,
    settings: GenerationSettings,
    assistance: dict[str, Any],
) -> list[int]:
    """The ids target.generate(**assistance) adds after the prompt, at the settings' sampling."""
    target: Any = pair.target  # a transformers model: generate() and generation_config
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
            max_new_tokens=settings.max_new_tokens,
            eos_token_id=eos,
            pad_token_id=getattr(pair.tokenizer, "pad_token_id", None) or eos[0],
            **assistance,
            **sampling,
        )
    return [int(token) for token in output[0, ids.shape[1] :]]
