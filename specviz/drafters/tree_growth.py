"""How a draft tree grows, as a spec asks for it: its options, their ranges and their checks.

Kept apart from the drafter that runs the draft model (specviz.drafters.draft_tree): the
production configs, the tree lab and the app's controls read a tree's size from here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from specviz.core.settings import GAMMA_MAX
from specviz.drafters.base import DrafterSpec
from specviz.text import UserError

MAX_NODES = 64  # a tree's nodes: the target scores them all in one forward
MAX_WIDTH = 8  # children per node
# The node budgets a tree is compared at against the chain: the tree lab's runs, the advisor's rows
COMPARED_BUDGETS = (8, 16, 32)


@dataclass(frozen=True)
class TreeGrowth:
    """How a tree grows: a fixed shape (widths per depth) or EAGLE-2's dynamic budget."""

    widths: tuple[int, ...] = ()  # a fixed shape; () for the dynamic tree
    nodes: int = 16
    # The depths a dynamic tree grows at least: it follows a likely line deeper
    # (specviz.drafters.draft_tree.LINE_FLOOR)
    depth: int = 6
    topk: int = 4

    @property
    def max_depth(self) -> int:
        return len(self.widths) if self.widths else self.depth

    @property
    def width(self) -> int:
        """The most children a node gets."""
        return max(self.widths) if self.widths else self.topk

    @property
    def size(self) -> int:
        """The most nodes a tree of this growth holds."""
        widths = self.widths
        return sum(math.prod(widths[: d + 1]) for d in range(len(widths))) if widths else self.nodes

    def __str__(self) -> str:
        if self.widths:
            return "shape=" + "x".join(map(str, self.widths))
        return f"nodes={self.nodes},depth={self.depth},topk={self.topk}"


def budgets_of(text: str) -> tuple[int, ...]:
    """ "8,16,32" -> (8, 16, 32): node budgets to compare trees at (the tree lab's, from its
    command's --nodes or the app's field), each a size the tree drafter takes; a UserError
    that shows an example otherwise."""
    parts = [part.strip() for part in (text or "").split(",") if part.strip()]
    if not parts or not all(part.isdigit() and 1 <= int(part) <= MAX_NODES for part in parts):
        example = ",".join(map(str, COMPARED_BUDGETS))
        raise UserError("error.tree_budgets", most=str(MAX_NODES), example=example, got=repr(text))
    return tuple(sorted({int(part) for part in parts}))


def whole_option(spec: DrafterSpec, name: str, default: int, low: int, high: int) -> int:
    """The spec's option *name* as a whole number in low..high (default when unset), or a
    UserError naming the range."""
    text = spec.option(name, str(default))
    if not text.isdigit() or not low <= int(text) <= high:
        raise UserError(
            "error.drafter.tree_option", name=name, got=repr(text), low=str(low), high=str(high)
        )
    return int(text)


# How a tree drawn at a temperature above 0 is verified (TreeProposal.rule): from the leaves up
# (specviz.core.tree_traversal), the default as it keeps at least as much, or siblings in turn
# from the root (recursive rejection sampling, specviz.core.tree), the easier one to follow.
DRAWN_TREE_RULES = ("traversal", "recursive")


def rule_of(spec: DrafterSpec) -> str:
    """The spec's ``rule`` option (DRAWN_TREE_RULES), or a UserError naming the choices."""
    rule = spec.option("rule", DRAWN_TREE_RULES[0]).lower()
    if rule not in DRAWN_TREE_RULES:
        raise UserError("error.drafter.tree_rule", got=repr(rule))
    return rule


def growth_of(spec: DrafterSpec) -> TreeGrowth:
    """The growth a spec asks for; UserError for an option out of its range."""
    spec.check_options("nodes", "depth", "topk", "shape", "rule")
    shape = spec.option("shape", "")
    if shape:
        if any(name in dict(spec.options) for name in ("nodes", "depth", "topk")):
            raise UserError("error.drafter.tree_shape_alone", spec=repr(str(spec)))
        parts = shape.lower().split("x")
        if not all(part.isdigit() and 1 <= int(part) <= MAX_WIDTH for part in parts):
            raise UserError("error.drafter.tree_shape", got=repr(shape), most=str(MAX_WIDTH))
        growth = TreeGrowth(widths=tuple(int(part) for part in parts))
        if len(growth.widths) > GAMMA_MAX or growth.size > MAX_NODES:
            raise UserError(
                "error.drafter.tree_too_big",
                got=repr(shape),
                size=str(growth.size),
                most=str(MAX_NODES),
            )
        return growth
    return TreeGrowth(
        nodes=whole_option(spec, "nodes", 16, 1, MAX_NODES),
        depth=whole_option(spec, "depth", 6, 1, GAMMA_MAX),
        topk=whole_option(spec, "topk", 4, 1, MAX_WIDTH),
    )
