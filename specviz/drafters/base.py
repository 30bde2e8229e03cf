"""How a drafter is named: DrafterSpec, a registered kind plus its options.

What a drafter is (the Proposal it hands the verifier, the Drafter protocol) is the engine's
contract and lives in specviz.core.proposal.
"""

from __future__ import annotations

from dataclasses import dataclass

from specviz.text import Phrase, UserError


@dataclass(frozen=True)
class DrafterSpec:
    """Which drafter to build and how: a kind the registry knows plus its options.

    Written as a string "kind" or "kind:name=value,name=value" (presets, the CLI); str() gives
    the same string back.
    """

    kind: str
    options: tuple[tuple[str, str], ...] = ()  # (name, value) pairs, sorted by name

    @classmethod
    def parse(cls, text: str) -> DrafterSpec:
        """A spec from "kind" or "kind:name=value,...", with a plain error for a malformed one."""
        kind, _, rest = text.strip().partition(":")
        kind = kind.strip()
        if not kind:
            raise UserError("error.drafter.no_kind", text=repr(text))
        options: dict[str, str] = {}
        for item in filter(None, (part.strip() for part in rest.split(","))):
            name, equals, value = item.partition("=")
            name = name.strip()
            if not equals or not name:
                raise UserError("error.drafter.option_form", item=repr(item), text=repr(text))
            if name in options:
                raise UserError("error.drafter.option_twice", name=repr(name), text=repr(text))
            options[name] = value.strip()
        return cls(kind, tuple(sorted(options.items())))

    def __str__(self) -> str:
        if not self.options:
            return self.kind
        return self.kind + ":" + ",".join(f"{name}={value}" for name, value in self.options)

    def option(self, name: str, default: str) -> str:
        """The value of option name, or default when the spec does not set it."""
        return dict(self.options).get(name, default)

    def check_options(self, *known: str) -> None:
        """Raise UserError naming any option this kind of drafter does not take."""
        unknown = [name for name, _ in self.options if name not in known]
        if unknown:
            takes = ", ".join(known) if known else Phrase("error.drafter.no_options")
            raise UserError(
                "error.drafter.unknown_option",
                kind=repr(self.kind),
                unknown=", ".join(unknown),
                takes=takes,
            )
