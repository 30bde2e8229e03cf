"""Does a draft's distribution depend on how it is fed? One forward vs prefill(T − 1) + 1 token.

For the same last prompt position, one forward over the whole prompt and a forward over all but the
last token followed by the last token alone should give the same next-token law. Rounding makes
them differ a little; dynamic int8 scales activations per forward, so there they differ a lot, and
the draft's q then depends on how many tokens each draft forward carries.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from specviz.models.model_steps import new_cache, prefill

__all__ = ["FeedingDifference", "feeding_difference"]


@dataclass(frozen=True)
class FeedingDifference:
    """The two feeds' next-token laws at the prompt's last position."""

    prompt_tokens: int
    largest_logprob_difference: float  # max over the vocabulary of |log p_full − log p_stepped|
    top_token: int  # the whole-prompt forward's most likely token
    top_prob_full: float
    top_prob_stepped: float


@torch.inference_mode()
def feeding_difference(model: torch.nn.Module, prompt_ids: torch.Tensor) -> FeedingDifference:
    """Compare one forward over the prompt with prefill of all but its last token, then that one.

    Both run through the model's own forward (transformers'), as the quantized layers compute it.
    """
    if prompt_ids.dim() != 2 or prompt_ids.shape[1] < 2:
        raise ValueError("the prompt must have shape (1, T) with T >= 2")
    full = model(input_ids=prompt_ids).logits[0, -1].float().log_softmax(-1)
    cache = new_cache(model)
    prefill(model, prompt_ids, cache)  # all but the last token
    last = model(input_ids=prompt_ids[:, -1:], past_key_values=cache, use_cache=True)
    stepped = last.logits[0, -1].float().log_softmax(-1)
    top = int(full.argmax())
    return FeedingDifference(
        prompt_tokens=int(prompt_ids.shape[1]),
        largest_logprob_difference=float((full - stepped).abs().max()),
        top_token=top,
        top_prob_full=float(full[top].exp()),
        top_prob_stepped=float(stepped[top].exp()),
    )
