"""make_drafter(spec, pair): the one place a drafter is built, from a kind name and its options.

Adding a drafter is a new module in specviz/drafters, one entry in DRAFTERS and one in
OPTION_CHECKS.
"""

from __future__ import annotations

from collections.abc import Callable

from specviz.core.engine import ModelPairLike
from specviz.core.proposal import Drafter
from specviz.drafters.base import DrafterSpec
from specviz.drafters.draft_model import ModelDrafter
from specviz.drafters.hybrid import HybridDrafter
from specviz.drafters.prompt_lookup import LookupOptions, PromptLookupDrafter
from specviz.text import UserError

# Builds a drafter for a pair from a spec of its kind (and refuses options it does not take).
DrafterFactory = Callable[[DrafterSpec, ModelPairLike], Drafter]

# Every drafter kind by name: the name a spec, a preset and Cycle.drafter use.
DRAFTERS: dict[str, DrafterFactory] = {
    ModelDrafter.kind: ModelDrafter.from_spec,
    PromptLookupDrafter.kind: PromptLookupDrafter.from_spec,
    HybridDrafter.kind: HybridDrafter.from_spec,
}

# Each kind's check of a spec's options without a pair, so a command refuses a bad option before
# loading models; a UserError. The factories run the same checks.
OPTION_CHECKS: dict[str, Callable[[DrafterSpec], object]] = {
    ModelDrafter.kind: lambda spec: spec.check_options(),
    PromptLookupDrafter.kind: LookupOptions.from_spec,
    HybridDrafter.kind: LookupOptions.from_spec,  # the hybrid takes the lookup's options
}


def check_drafter_spec(spec: str | DrafterSpec) -> DrafterSpec:
    """spec parsed, its kind known and its options valid; UserError otherwise."""
    parsed = DrafterSpec.parse(spec) if isinstance(spec, str) else spec
    _factory(parsed)
    check = OPTION_CHECKS.get(parsed.kind)
    if check is not None:
        check(parsed)
    return parsed


def make_drafter(spec: str | DrafterSpec, pair: ModelPairLike) -> Drafter:
    """A fresh drafter of spec's kind for pair; UserError naming the known kinds if unknown."""
    parsed = DrafterSpec.parse(spec) if isinstance(spec, str) else spec
    return _factory(parsed)(parsed, pair)


def _factory(spec: DrafterSpec) -> DrafterFactory:
    factory = DRAFTERS.get(spec.kind)
    if factory is None:
        known = ", ".join(sorted(DRAFTERS))
        raise UserError("error.drafter.unknown", kind=repr(spec.kind), known=known)
    return factory
