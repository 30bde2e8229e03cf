"""make_drafter(spec, pair): the one place a drafter is built, from a kind name and its options.

Adding a drafter is a new module in specviz/drafters and one entry in DRAFTERS.
"""

from __future__ import annotations

from collections.abc import Callable

from specviz.core.engine import ModelPairLike
from specviz.core.proposal import Drafter
from specviz.drafters.base import DrafterSpec
from specviz.drafters.draft_model import ModelDrafter
from specviz.text import UserError

# Builds a drafter for a pair from a spec of its kind (and refuses options it does not take).
DrafterFactory = Callable[[DrafterSpec, ModelPairLike], Drafter]

# Every drafter kind by name: the name a spec, a preset and Cycle.drafter use.
DRAFTERS: dict[str, DrafterFactory] = {
    ModelDrafter.kind: ModelDrafter.from_spec,
}


def make_drafter(spec: str | DrafterSpec, pair: ModelPairLike) -> Drafter:
    """A fresh drafter of spec's kind for pair; UserError naming the known kinds if unknown."""
    parsed = DrafterSpec.parse(spec) if isinstance(spec, str) else spec
    factory = DRAFTERS.get(parsed.kind)
    if factory is None:
        known = ", ".join(sorted(DRAFTERS))
        raise UserError("error.drafter.unknown", kind=repr(parsed.kind), known=known)
    return factory(parsed, pair)
