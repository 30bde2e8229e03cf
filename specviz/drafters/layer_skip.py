"""Layer skip: the target drafts for itself with some of its decoder layers left out.

Self-speculation (Draft & Verify, Zhang et al. 2023; LayerSkip, Elhoushi et al. 2024; SWIFT,
Xia et al. 2024): no draft model and no extra weights. A draft step runs the target's embedding,
the decoder layers it keeps, the final norm and the output layer; a skipped layer passes its
input on unchanged. The early-exit variant keeps the first k layers only ("exit=k").

Cache: a draft step reads the target's verified KV cache for the committed context and writes
its own keys and values past the cache length (LeanCache.scratch()), in the kept layers only.
The verification forward then writes every layer's true entries at those positions, so after
each cycle the target's cache is the one plain decoding holds. The first cycle drafts nothing:
the target's first forward reads the prompt (Cycle.draft_end "prefill").

q is the skipped model's distribution, a real one, so the verifier's rule applies unchanged and
the output law is the target's (Leviathan et al., Theorem 1).

Calibration ("calibrate=yes", SWIFT's idea, on the prompt): score the target's last
CALIBRATION_WINDOW prompt positions with every layer, then with each candidate skip set, on a
copy of the cache; keep the candidate with the most expected tokens per unit time,
τ(α, γ) / (γ·t_draft + t_target), with α the measured agreement and t the measured forward times.

The default skip set, measured on the bundled pair (Qwen2.5-Coder 1.5B, 28 layers, bfloat16,
greedy): α, the share of positions where the draft's argmax is the target's, along the target's
own 48-token greedy continuation of the preset's first code and story prompts. That is the
acceptance rate greedy speculative decoding sees. Layers are 0-based; "kept" runs per draft step.

    skipped          kept   α code   α story
    6-13              20    0.89     0.57
    8-15 (default)    20    0.83     0.74
    10-17             20    0.79     0.62
    3-10              20    0.83     0.51
    4-15              16    0.77     0.40
    6-17              16    0.74     0.51
    8-19              16    0.64     0.49
    12-23             16    0.40     -
    odd 3-25          16    0.53     0.19
    4-23               8    0.19     -
    exit=24           24    0.77     0.64
    exit=20           20    0.36     -
    exit=14           14    0.04     -

Early and middle layers can go; the last ones cannot (the target was not trained to exit
early, unlike LayerSkip's models). By weight count a draft step keeping 20 of 28 layers costs about
0.76 of a target step (the output layer always runs), so the break-even α at γ = 2 is about 0.83:
expect layer skip near plain decoding's speed on this pair, not above it.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from specviz.core.device import device_of, sync
from specviz.core.engine import ModelPairLike, TargetRunner
from specviz.core.proposal import Proposal
from specviz.core.sampling import Sampler
from specviz.core.settings import GenerationSettings
from specviz.drafters.base import DrafterSpec
from specviz.drafters.policy import DraftPolicy, draft_autoregressively
from specviz.models.lean_forward import LeanCache, LeanDecoder
from specviz.models.runner import ModelRunner, choose_forward
from specviz.text import UserError

# Why a layer-skip draft is empty on the first cycle: the target has not read the prompt yet.
WAITS_FOR_PREFILL = "prefill"

# The default skip set and the calibration's candidates, as [start, end) fractions of the layer
# count, so they fit any depth; written in 28ths, the bundled target's depth (see the docstring).
DEFAULT_SKIP = (8 / 28, 16 / 28)  # layers 8-15 of 28
CALIBRATION_CANDIDATES = (
    DEFAULT_SKIP,
    (6 / 28, 14 / 28),  # 6-13: the best on code, behind 8-15 on the story
    (10 / 28, 18 / 28),  # 10-17
    (6 / 28, 18 / 28),  # 6-17: four more layers skipped, for text they agree on
)
# Prompt positions the calibration scores: enough to tell the candidates apart, few enough that
# the forwards (one full, one per candidate) take a second or two on a CPU.
CALIBRATION_WINDOW = 24

YES, NO = ("yes", "true", "1"), ("no", "false", "0")


@dataclass(frozen=True)
class LayerSkipOptions:
    """The options of a layer-skip spec: "layerskip:skip=8-19", "layerskip:exit=14",
    "layerskip:calibrate=yes". Layers are 0-based; ranges join with "+" ("skip=4-7+20+22-23"),
    since commas separate a spec's options; "skip=none" keeps every layer (the target drafting
    exactly as it verifies, every draft accepted)."""

    skip: tuple[int, ...] | None = None  # the layers left out; None: exit, calibration or default
    exit: int | None = None  # keep only the first `exit` layers (early exit)
    calibrate: bool = False  # choose the skip set on the prompt among CALIBRATION_CANDIDATES

    @classmethod
    def from_spec(cls, spec: DrafterSpec) -> LayerSkipOptions:
        """The options spec sets, checked without a model: a UserError for a bad name or value."""
        spec.check_options("skip", "exit", "calibrate")
        named = dict(spec.options)
        if len(named) > 1:
            raise UserError("error.layerskip.one_choice", kind=repr(spec.kind))
        calibrate = named.get("calibrate", "no").lower()
        if calibrate not in YES + NO:
            raise UserError("error.layerskip.calibrate", kind=repr(spec.kind), got=repr(calibrate))
        exit_at = None
        if "exit" in named:
            exit_at = _layer_number(spec, named["exit"])
            if exit_at < 1:
                raise UserError("error.layerskip.exit", kind=repr(spec.kind), got=repr(exit_at))
        skip = _layer_set(spec, named["skip"]) if "skip" in named else None
        return cls(skip=skip, exit=exit_at, calibrate=calibrate in YES)

    def kept_layers(self, layer_count: int) -> tuple[int, ...]:
        """The layers a draft step runs, in order, for a model of layer_count decoder layers."""
        if self.exit is not None:
            return tuple(range(self.exit))
        skip = self.skip if self.skip is not None else fraction_skip(DEFAULT_SKIP, layer_count)
        return layers_kept(skip, layer_count)

    def check_depth(self, kind: str, layer_count: int) -> None:
        """UserError when a layer named lies past the model's layer_count layers."""
        deepest = max(self.skip or (), default=-1) + 1
        if self.exit is not None:
            deepest = self.exit + 1  # an exit after every layer would be the target itself
        if deepest > layer_count:
            raise UserError(
                "error.layerskip.depth", kind=repr(kind), layers=layer_count, last=layer_count - 1
            )


def _layer_number(spec: DrafterSpec, text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise UserError("error.layerskip.layers", kind=repr(spec.kind), got=repr(text)) from None


def _layer_set(spec: DrafterSpec, text: str) -> tuple[int, ...]:
    """ "4-7+20" -> (4, 5, 6, 7, 20); "none" -> ()."""
    if text.lower() == "none":
        return ()
    layers: set[int] = set()
    for part in text.split("+"):
        first, dash, last = part.partition("-")
        low = _layer_number(spec, first)
        high = _layer_number(spec, last) if dash else low
        if not 0 <= low <= high:
            raise UserError("error.layerskip.layers", kind=repr(spec.kind), got=repr(text))
        layers.update(range(low, high + 1))
    return tuple(sorted(layers))


def fraction_skip(fractions: tuple[float, float], layer_count: int) -> tuple[int, ...]:
    """The layers in [start, end) fractions of the depth, at least one, never the first or last."""
    start = min(max(1, round(fractions[0] * layer_count)), layer_count - 1)
    end = min(max(start + 1, round(fractions[1] * layer_count)), layer_count - 1)
    return tuple(range(start, max(start, end)))


def layers_kept(skip: Sequence[int], layer_count: int) -> tuple[int, ...]:
    """The layers of a layer_count-deep model that skip leaves, in order."""
    return tuple(index for index in range(layer_count) if index not in skip)


def layers_option(kept: Sequence[int], layer_count: int) -> str:
    """The spec option that keeps these layers: "exit=k" for a prefix, else "skip=a-b+c"."""
    if kept and list(kept) == list(range(len(kept))) and len(kept) < layer_count:
        return f"exit={len(kept)}"
    skipped = [index for index in range(layer_count) if index not in kept]
    runs: list[list[int]] = []
    for index in skipped:
        if runs and runs[-1][-1] == index - 1:
            runs[-1].append(index)
        else:
            runs.append([index])
    parts = [str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}" for run in runs]
    return "skip=" + ("+".join(parts) or "none")


def tokens_per_cycle(alpha: float, gamma: int) -> float:
    """τ = (1 − α^(γ+1)) / (1 − α): expected tokens a cycle emits (Leviathan et al., eq. 1)."""
    return float(gamma + 1) if alpha >= 1.0 else (1.0 - alpha ** (gamma + 1)) / (1.0 - alpha)


def agreement(p_target: torch.Tensor, q_draft: torch.Tensor, sampler: Sampler) -> float:
    """α, the mean chance a draft is accepted, from the rows (W, V) of both distributions:
    argmax agreement when greedy, Σ_x min(p(x), q(x)) when sampling (Leviathan et al., §3.1)."""
    if sampler.greedy:
        return float((p_target.argmax(-1) == q_draft.argmax(-1)).float().mean())
    return float(torch.minimum(p_target, q_draft).sum(-1).mean())


class LayerSkipDrafter:
    """Drafts with the target's own layers minus a skip set, reading the target's KV cache."""

    kind = "layerskip"

    def __init__(self, options: LayerSkipOptions, layer_count: int) -> None:
        self.options = options
        self.layer_count = layer_count
        self.kept = options.kept_layers(layer_count)  # the calibration may choose others
        self.policy = DraftPolicy(GenerationSettings())
        self._target: ModelRunner | None = None
        self._calibrated = not options.calibrate
        self._proposed = 0

    @classmethod
    def check_spec(cls, spec: DrafterSpec) -> None:
        """The spec's options checked without a model (a command refuses them before loading)."""
        LayerSkipOptions.from_spec(spec)

    @classmethod
    def from_spec(cls, spec: DrafterSpec, pair: ModelPairLike) -> LayerSkipDrafter:
        """The registry's factory: refuses a target the lean step does not compute."""
        options = LayerSkipOptions.from_spec(spec)
        choice = choose_forward(pair.target)
        if choice.fallback_reason is not None:
            raise UserError("error.layerskip.lean", kind=repr(cls.kind), why=choice.fallback_reason)
        layer_count = len(getattr(pair.target, "model").layers)  # noqa: B009 (loosely typed)
        options.check_depth(cls.kind, layer_count)
        return cls(options, layer_count)

    @property
    def cache_len(self) -> int:
        return 0  # the drafted positions' entries are the target's, overwritten by verification

    @property
    def layers(self) -> str:
        """The kept layers as a spec option ("skip=14-20", "exit=14"): Cycle.drafter_detail."""
        return layers_option(self.kept, self.layer_count)

    def use_target(self, target: TargetRunner) -> None:
        """Draft with this run's target runner, whose lean step and cache it reads."""
        if not isinstance(target, ModelRunner) or target.lean_step is None:
            raise UserError("error.layerskip.lean", kind=repr(self.kind), why=target_reason(target))
        self._target = target

    def start(
        self, prompt_ids: torch.Tensor, settings: GenerationSettings, stop_ids: frozenset[int]
    ) -> float:
        self.policy = DraftPolicy(settings, stop_ids)
        self._calibrated = not self.options.calibrate
        self._proposed = 0
        return 0.0

    @torch.inference_mode()
    def propose(self, context: torch.Tensor, max_tokens: int, sampler: Sampler) -> Proposal:
        began = time.perf_counter()
        decoder, cache = self._lean_step()
        count = self.policy.begin(max_tokens)
        if cache.length == 0:
            count = 0  # the target has not read the prompt: this cycle is a plain step
        if count > 0 and not self._calibrated:
            self.kept = self._calibrate(decoder, cache, context, sampler)
            self._calibrated = True
        # The drafts' keys and values go past the verified length, where verification rewrites them.
        scratch = cache.scratch()
        device = device_of(decoder.model)

        def next_logits(feed: torch.Tensor) -> torch.Tensor:
            out = decoder(input_ids=feed, past_key_values=scratch, layers=self.kept)
            return out.logits[0, -1]  # (V,)

        feed = context[cache.length :].view(1, -1).to(device)  # the pending token(s)
        token_ids, q_draft = draft_autoregressively(next_logits, feed, count, sampler, self.policy)
        self._proposed = token_ids.shape[0]
        sync(device)
        return Proposal(
            token_ids,
            q_draft,
            forwards=self._proposed,
            seconds=time.perf_counter() - began,
            drafter=self.kind,
            ended_by=WAITS_FOR_PREFILL if cache.length == 0 else self.policy.ended_by,
            doubt_scale=self.policy.doubt_scale,
            gamma=self.policy.gamma,
            detail=self.layers,
        )

    def commit(self, accepted_len: int, next_token: int) -> None:
        # Nothing to crop: the engine's rollback of the target is all the bookkeeping.
        self.policy.commit(accepted_len, self._proposed)
        self._proposed = 0

    def _lean_step(self) -> tuple[LeanDecoder, LeanCache]:
        lean = None if self._target is None else self._target.lean_step
        if lean is None:
            raise RuntimeError("layer skip drafts only inside speculative_generate (use_target)")
        return lean

    def _calibrate(
        self, decoder: LeanDecoder, cache: LeanCache, context: torch.Tensor, sampler: Sampler
    ) -> tuple[int, ...]:
        """The candidate kept layers with the most expected tokens per unit time on the prompt."""
        window = min(CALIBRATION_WINDOW, cache.length - 1)
        if window < 2:
            return self.kept
        depth = self.layer_count
        candidates = [layers_kept(fraction_skip(f, depth), depth) for f in CALIBRATION_CANDIDATES]
        start = cache.length - window
        # A copy of the cache before the window: re-scoring the window must not touch the
        # verified entries (a forward over several positions may round differently).
        prefix = cache.prefix_copy(start)
        feed = context[start : cache.length].view(1, -1).to(device_of(decoder.model))

        def timed(layers: Sequence[int] | None) -> tuple[torch.Tensor, float]:
            began = time.perf_counter()
            out = decoder(
                input_ids=feed,
                past_key_values=prefix.scratch(),
                logits_to_keep=window,
                layers=layers,
            )
            probs = sampler.probs(out.logits[0])
            sync(probs.device)
            return probs, time.perf_counter() - began

        p_target, target_s = timed(None)
        gamma = self.policy.gamma
        best, best_rate = self.kept, 0.0
        for kept in candidates:
            q_draft, draft_s = timed(kept)
            rate = tokens_per_cycle(agreement(p_target, q_draft, sampler), gamma) / (
                gamma * draft_s + target_s
            )
            if rate > best_rate:
                best, best_rate = kept, rate
        return best


def target_reason(target: TargetRunner) -> object:
    """Why a target runner offers no lean step (its fallback reason where it has one)."""
    reason = getattr(target, "fallback_reason", None)
    return reason if reason is not None else type(target).__name__
