"""The drafter registry: every drafter kind by name, with what the rest of specviz may know of it.

Adding a drafter is one module in specviz/drafters (a class with ``check_spec`` and
``from_spec``) and one ``DrafterEntry`` in ``DRAFTERS``: its label (``drafter.<kind>`` in each
text table), the default lists, the serving engines' equivalent, the fable's and inspector's
wording, the advisor's candidates, the exactness lab's sampled arm and the race's lanes all read
the entry's capabilities, never the kind's name. ``make_drafter(spec, pair)`` builds one.

This module loads no torch (views ask it how a cycle's drafter drafts): an entry imports its
class only when a drafter is first checked or built.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Protocol

from specviz.drafters.base import DrafterSpec
from specviz.drafters.tree_growth import COMPARED_BUDGETS
from specviz.text import TABLES, Phrase, UserError, t
from specviz.text.progress import Progress

if TYPE_CHECKING:
    from specviz.core.engine import ModelPairLike
    from specviz.core.proposal import Drafter, TreeDrafter
    from specviz.models.heads.report import HeadsAgreement


class DrafterKind(Protocol):
    """What the registry needs of a drafter class: a check of its spec and a factory."""

    def check_spec(self, spec: DrafterSpec) -> None:
        """UserError for an option the spec sets wrongly, checked without a model."""
        ...

    def from_spec(self, spec: DrafterSpec, pair: ModelPairLike) -> Drafter | TreeDrafter:
        """A fresh drafter for pair (refusing options it does not take)."""
        ...


class Drafts(Enum):
    """Where a drafter's tokens and their q come from: the fable and the inspector word this."""

    WITH_DRAFT_MODEL = "draft_model"  # a second, smaller model guesses; q is its probability
    WITH_TARGET_LAYERS = "target_layers"  # the target's own first layers guess; q is theirs
    # Heads on the target's last hidden state guess several tokens ahead; q is theirs
    WITH_TARGET_HEADS = "target_heads"
    BY_RULE = "rule"  # tokens chosen by a rule (a copy of earlier text, ...): q = 1 each
    # The target's own first choices at future positions, refilled each pass until phrases
    # settle (lookahead decoding's Jacobi window and its n-gram pool): chosen, q = 1 each.
    BY_TARGET_WINDOW = "target_window"
    BY_PART = "by_part"  # its parts take turns; each cycle is recorded under its part's kind

    @property
    def chooses(self) -> bool:
        """Its tokens are chosen, not drawn: q = 1 each, so the chance of keeping one is p."""
        return self in (Drafts.BY_RULE, Drafts.BY_TARGET_WINDOW)


class ServingMethod(Enum):
    """A speculative method the serving engines offer (specviz.production writes its flags)."""

    DRAFT_MODEL = "draft_model"  # a separate draft model: every engine
    NGRAM = "ngram"  # n-gram prompt lookup with the spec's lookup options: every engine
    EARLY_EXIT = "early_exit"  # the target's first exit=N layers: transformers alone
    # A draft model's tree, grown as EAGLE-2 grows one (top-k per depth, the best nodes kept):
    # SGLang alone, whose STANDALONE drafting takes EAGLE's tree options.
    DRAFT_TREE = "draft_tree"
    # Medusa heads on the target's last hidden state, from the checkpoint `heads export` writes:
    # vLLM alone (method "medusa"), which proposes each head's first choice as one chain.
    MEDUSA_HEADS = "medusa_heads"


@dataclass(frozen=True)
class ServingEquivalent:
    """One way a serving engine can run a drafter like this one."""

    method: ServingMethod
    exact: bool = True  # False: the nearest the engines have, and the config's notes say so


@dataclass(frozen=True)
class DrafterEntry:
    """One drafter kind and its capabilities: everything outside its module may ask of it."""

    kind: str  # the name a spec, a preset and Cycle.drafter use
    load: Callable[[], DrafterKind]  # its class, imported on first use
    drafts: Drafts
    uses_draft_model: bool  # drafts with the pair's draft model (the advisor counts its weights)
    copies_from_text: bool  # copies from the text: the live tab shows the prompt as tokens
    # The advisor measures it at every draft format loaded, not only the preset's (true for the
    # drafter whose speed is the draft model's alone).
    compared_at_every_format: bool = False
    # The exactness lab's sampled arm (which draws from the pair's draft model) is its drafting.
    samples_in_exactness_lab: bool = False
    in_default_lists: bool = True  # raced by the advisor unless the user names the drafters
    # What a serving engine runs in its place, tried in order; () when no engine has one.
    serving: tuple[ServingEquivalent, ...] = ()
    # Specs of this kind the app's dropdown lists under the kind itself, with their label keys
    # (a fixed tree shape for teaching).
    listed_specs: tuple[tuple[str, str], ...] = ()
    # Options the advisor measures the bare kind at in place of γ, for a drafter whose length
    # is not γ (a tree's node budgets); () for one that drafts γ tokens.
    advisor_sizes: tuple[str, ...] = ()

    @property
    def label_key(self) -> str:
        """Its label's catalogue key: drafter.<kind>, a - written _ ("drafter.draft_model")."""
        return "drafter." + self.kind.replace("-", "_")


def _model_drafter() -> DrafterKind:
    from specviz.drafters.draft_model import ModelDrafter

    return ModelDrafter


def _prompt_lookup() -> DrafterKind:
    from specviz.drafters.lookup_tree import LookupKind

    return LookupKind


def _hybrid() -> DrafterKind:
    from specviz.drafters.hybrid import HybridDrafter

    return HybridDrafter


def _layer_skip() -> DrafterKind:
    from specviz.drafters.layer_skip import LayerSkipDrafter

    return LayerSkipDrafter


def _medusa() -> DrafterKind:
    from specviz.drafters.medusa import MedusaDrafter

    return MedusaDrafter


def _draft_tree() -> DrafterKind:
    from specviz.drafters.draft_tree import DraftTreeDrafter

    return DraftTreeDrafter


def _lookahead() -> DrafterKind:
    from specviz.drafters.lookahead import LookaheadDrafter

    return LookaheadDrafter


_BUILT_IN = (
    DrafterEntry(
        "draft-model",
        _model_drafter,
        Drafts.WITH_DRAFT_MODEL,
        uses_draft_model=True,
        copies_from_text=False,
        compared_at_every_format=True,  # the advisor's rows per draft format are this drafter's
        samples_in_exactness_lab=True,  # the lab's sampled arm draws from this very model
        serving=(ServingEquivalent(ServingMethod.DRAFT_MODEL),),
    ),
    DrafterEntry(
        "lookup",
        _prompt_lookup,
        Drafts.BY_RULE,
        uses_draft_model=False,
        copies_from_text=True,
        serving=(ServingEquivalent(ServingMethod.NGRAM),),
        listed_specs=(("lookup:branches=3", "drafter.lookup.branches"),),
    ),
    DrafterEntry(
        "hybrid",
        _hybrid,
        Drafts.BY_PART,  # its cycles say "lookup" or "draft-model"
        uses_draft_model=True,
        copies_from_text=True,
        # No engine switches between the two per cycle: its draft model stands in.
        serving=(ServingEquivalent(ServingMethod.DRAFT_MODEL, exact=False),),
    ),
    DrafterEntry(
        "layerskip",
        _layer_skip,
        Drafts.WITH_TARGET_LAYERS,
        uses_draft_model=False,  # drafts with the target itself: no extra weights
        copies_from_text=False,
        serving=(
            ServingEquivalent(ServingMethod.EARLY_EXIT),  # transformers, with exit=N
            ServingEquivalent(ServingMethod.DRAFT_MODEL, exact=False),
        ),
    ),
    DrafterEntry(
        "tree",
        _draft_tree,
        Drafts.WITH_DRAFT_MODEL,
        uses_draft_model=True,
        copies_from_text=False,
        # Raced when named: a tree costs the target more per pass on a CPU than a chain does.
        in_default_lists=False,
        # SGLang grows the same tree from a separate draft model; the other engines verify
        # chains from one (vLLM's speculative_token_tree serves EAGLE heads), so a chain of the
        # same draft model stands in.
        serving=(
            ServingEquivalent(ServingMethod.DRAFT_TREE),
            ServingEquivalent(ServingMethod.DRAFT_MODEL, exact=False),
        ),
        listed_specs=(
            ("tree:shape=2x2x1", "drafter.tree.shape"),
            ("tree:rule=recursive,shape=2x2x1", "drafter.tree.shape_recursive"),
        ),
        advisor_sizes=tuple(f"nodes={n}" for n in COMPARED_BUDGETS),
    ),
    DrafterEntry(
        "lookahead",
        _lookahead,
        Drafts.BY_TARGET_WINDOW,
        uses_draft_model=False,  # the target drafts for itself in its verification forward
        copies_from_text=False,
        # Raced when named: its window and guesses cost the target more tokens per pass.
        in_default_lists=False,
        serving=(),  # no serving engine runs lookahead decoding's window and pool
    ),
    DrafterEntry(
        "medusa",
        _medusa,
        Drafts.WITH_TARGET_HEADS,
        uses_draft_model=False,  # heads on the target itself: a few MB of weights
        copies_from_text=False,
        # Raced when named: its heads are trained on this machine first (heads train).
        in_default_lists=False,
        # vLLM serves the same heads (method "medusa") from the folder `heads export` writes,
        # drafting each head's first choice as a chain where specviz verifies a tree of them.
        serving=(ServingEquivalent(ServingMethod.MEDUSA_HEADS),),
    ),
)

# Every drafter kind by name, in the order the app's dropdown lists them.
DRAFTERS: dict[str, DrafterEntry] = {entry.kind: entry for entry in _BUILT_IN}


def register_drafter(entry: DrafterEntry) -> None:
    """Add a drafter kind (ValueError if its name is taken): every list, view and config
    derives from the entry from then on."""
    if entry.kind in DRAFTERS:
        raise ValueError(f"a drafter kind {entry.kind!r} is registered already")
    DRAFTERS[entry.kind] = entry


def unregister_drafter(kind: str) -> None:
    """Remove a drafter kind registered with register_drafter."""
    del DRAFTERS[kind]


def find_drafter(kind: str) -> DrafterEntry | None:
    """The entry of a kind a record names (Cycle.drafter), None if not registered here."""
    return DRAFTERS.get(kind)


def drafter_entry(spec: str | DrafterSpec) -> DrafterEntry:
    """The entry of spec's kind; UserError naming the known kinds if unknown."""
    parsed = DrafterSpec.parse(spec) if isinstance(spec, str) else spec
    registered = DRAFTERS.get(parsed.kind)
    if registered is None:
        known = ", ".join(sorted(DRAFTERS))
        raise UserError("error.drafter.unknown", kind=repr(parsed.kind), known=known)
    return registered


def default_drafters() -> tuple[str, ...]:
    """The kinds the advisor compares unless the user names others, in registry order."""
    return tuple(kind for kind, entry in DRAFTERS.items() if entry.in_default_lists)


def drafter_label(kind: str, lang: str) -> str:
    """The kind's label in *lang* (its entry's label key), the kind itself where the table or
    the registry has none."""
    entry = DRAFTERS.get(kind)
    if entry is None or entry.label_key not in TABLES.get(lang, {}):
        return kind
    return t(entry.label_key, lang)


def drafter_words(kind: str) -> Phrase | str:
    """The kind's label for a message worded later in its reader's language: a Phrase where
    every text table has it, the kind itself otherwise (a label is optional)."""
    entry = DRAFTERS.get(kind)
    if entry is None or not all(entry.label_key in table for table in TABLES.values()):
        return kind
    return Phrase(entry.label_key)


def check_drafter_spec(spec: str | DrafterSpec) -> DrafterSpec:
    """spec parsed, its kind known and its options valid; UserError otherwise."""
    parsed = DrafterSpec.parse(spec) if isinstance(spec, str) else spec
    drafter_entry(parsed).load().check_spec(parsed)
    return parsed


def prepare_drafter(spec: str | DrafterSpec, pair: ModelPairLike, progress: Progress) -> None:
    """Make ready, once per pair, what a drafter of spec's kind needs before make_drafter builds
    one (Medusa's heads, trained on first use), reporting through *progress*; nothing for the
    kinds that need nothing."""
    parsed = DrafterSpec.parse(spec) if isinstance(spec, str) else spec
    prepare = getattr(drafter_entry(parsed).load(), "prepare", None)
    if prepare is not None:
        prepare(parsed, pair, progress)


def tokens_a_pass(spec: str | DrafterSpec, gamma: int) -> int:
    """The most tokens one verifying forward of spec's drafter reads: the committed text's
    newest token and every guess of the cycle (γ + 1 for a chain; a tree kind says its own
    largest tree through its class's ``most_guesses(spec)``)."""
    parsed = DrafterSpec.parse(spec) if isinstance(spec, str) else spec
    most_guesses = getattr(drafter_entry(parsed).load(), "most_guesses", None)
    return 1 + (gamma if most_guesses is None else int(most_guesses(parsed)))


def trained_agreement(spec: str | DrafterSpec, pair: ModelPairLike) -> HeadsAgreement | None:
    """How the trained heads a drafter of spec's kind guesses with agreed with the target on
    held-out text (Medusa's report), for the views to draw beside the run's own agreement; None
    for a kind that guesses with no trained heads, or whose heads are not trained yet."""
    parsed = DrafterSpec.parse(spec) if isinstance(spec, str) else spec
    measured = getattr(drafter_entry(parsed).load(), "trained_agreement", None)
    if measured is None:
        return None
    agreement: HeadsAgreement | None = measured(parsed, pair)
    return agreement


def drawn_tree_rule(spec: str | DrafterSpec) -> str | None:
    """How the trees a drafter of *spec* draws at T > 0 are tested ("traversal", "recursive"),
    read from its spec without a model; None for a drafter that draws no trees."""
    parsed = DrafterSpec.parse(spec) if isinstance(spec, str) else spec
    entry = find_drafter(parsed.kind)
    rule_of_spec = getattr(entry.load(), "drawn_tree_rule", None) if entry else None
    return None if rule_of_spec is None else rule_of_spec(parsed)


def make_drafter(spec: str | DrafterSpec, pair: ModelPairLike) -> Drafter | TreeDrafter:
    """A fresh drafter of spec's kind for pair; UserError naming the known kinds if unknown."""
    parsed = DrafterSpec.parse(spec) if isinstance(spec, str) else spec
    return drafter_entry(parsed).load().from_spec(parsed, pair)
