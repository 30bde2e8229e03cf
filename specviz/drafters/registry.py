"""make_drafter(spec, pair): the one place a drafter is built, from a kind name and its options.

Adding a drafter is a new module in specviz/drafters (a class with the DrafterKind members) and
one entry in DRAFTERS.
"""

from __future__ import annotations

from typing import Protocol

from specviz.core.engine import ModelPairLike
from specviz.core.proposal import Drafter
from specviz.drafters.base import DrafterSpec
from specviz.drafters.draft_model import ModelDrafter
from specviz.drafters.hybrid import HybridDrafter
from specviz.drafters.layer_skip import LayerSkipDrafter
from specviz.drafters.prompt_lookup import PromptLookupDrafter
from specviz.text import UserError


class DrafterKind(Protocol):
    """What the registry needs of a drafter class: its name, its capabilities, its factory."""

    @property
    def kind(self) -> str:
        """The name a spec, a preset and Cycle.drafter use."""
        ...

    @property
    def samples_in_exactness_lab(self) -> bool:
        """Whether the exactness lab's sampled arm can draft as this drafter does (it draws
        from the pair's draft model)."""
        ...

    @property
    def uses_draft_model(self) -> bool:
        """Whether it drafts with the pair's draft model (whose weights it then adds to memory)."""
        ...

    @property
    def copies_from_text(self) -> bool:
        """Whether it copies from the committed text, the prompt included (the live tab then
        shows the prompt as tokens, where the copies come from)."""
        ...

    @property
    def compared_at_every_format(self) -> bool:
        """Whether the advisor measures it at every draft format loaded, not only the preset's
        (true for the drafter whose speed is the draft model's alone)."""
        ...

    def check_spec(self, spec: DrafterSpec) -> None:
        """UserError for an option the spec sets wrongly, checked without a model."""
        ...

    def from_spec(self, spec: DrafterSpec, pair: ModelPairLike) -> Drafter:
        """A fresh drafter for pair (refusing options it does not take)."""
        ...


# Every drafter kind by name, in the order the app's dropdown lists them.
DRAFTERS: dict[str, DrafterKind] = {
    ModelDrafter.kind: ModelDrafter,
    PromptLookupDrafter.kind: PromptLookupDrafter,
    HybridDrafter.kind: HybridDrafter,
    LayerSkipDrafter.kind: LayerSkipDrafter,
}


def drafter_kind(spec: str | DrafterSpec) -> DrafterKind:
    """The registered class of spec's kind; UserError naming the known kinds if unknown."""
    parsed = DrafterSpec.parse(spec) if isinstance(spec, str) else spec
    registered = DRAFTERS.get(parsed.kind)
    if registered is None:
        known = ", ".join(sorted(DRAFTERS))
        raise UserError("error.drafter.unknown", kind=repr(parsed.kind), known=known)
    return registered


def check_drafter_spec(spec: str | DrafterSpec) -> DrafterSpec:
    """spec parsed, its kind known and its options valid; UserError otherwise."""
    parsed = DrafterSpec.parse(spec) if isinstance(spec, str) else spec
    drafter_kind(parsed).check_spec(parsed)
    return parsed


def make_drafter(spec: str | DrafterSpec, pair: ModelPairLike) -> Drafter:
    """A fresh drafter of spec's kind for pair; UserError naming the known kinds if unknown."""
    parsed = DrafterSpec.parse(spec) if isinstance(spec, str) else spec
    return drafter_kind(parsed).from_spec(parsed, pair)
