"""The reviewed tool catalogue: every LMCP tool, its app, effect, confirmation and input schema.

The data lives in ``tools.json`` beside this module. Recipes, the MCP server, the host and the
collector all read this one file; names outside it become ``other`` in every signal.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from contract.schema import ArgName, Outcome, ToolName

if TYPE_CHECKING:
    from contract.schema import RingEntry

__all__ = ["Catalogue", "Effect", "Tool", "load_catalogue", "parse_catalogue", "raw_catalogue"]


class Effect(StrEnum):
    read = "read"
    write = "write"
    send = "send"


@dataclass(frozen=True, slots=True)
class Tool:
    """One catalogue entry."""

    name: str
    app: str
    effect: Effect
    requires_confirmation: bool
    summary: str
    input_schema: Mapping[str, Any]
    tool_name: ToolName
    #: Declared argument names mapped to their wire enum member.
    arg_names: Mapping[str, ArgName] = field(repr=False)
    #: One pre-built ring entry per outcome: recording a call allocates nothing.
    ring_entries: Mapping[Outcome, RingEntry] = field(repr=False)

    @property
    def state_changing(self) -> bool:
        return self.effect is not Effect.read


@dataclass(frozen=True, slots=True)
class Catalogue:
    version: int
    tools: Mapping[str, Tool]
    #: Ring entries for calls to names outside the catalogue.
    other_ring_entries: Mapping[Outcome, RingEntry]

    def __contains__(self, name: object) -> bool:
        return name in self.tools

    def __iter__(self) -> Iterator[Tool]:
        return iter(self.tools.values())

    def __len__(self) -> int:
        return len(self.tools)

    def get(self, name: str) -> Tool | None:
        return self.tools.get(name)

    def tool_name(self, name: str) -> ToolName:
        """The wire name for ``name``: itself when catalogued, else ``other``."""
        tool = self.tools.get(name)
        return tool.tool_name if tool is not None else ToolName.other

    def signal_arg_names(self) -> dict[str, frozenset[str]]:
        """For every wire tool name, the argument names a signal of it may carry: the tool's
        declared names and ``other`` (its undeclared arguments, folded into one entry);
        ``other`` (a name outside the catalogue, whose arguments the client cannot tell apart)
        carries only ``other``. Plain strings, as the wire spells them."""
        other = ArgName.other.value
        names = {t.tool_name.value: frozenset({*t.arg_names, other}) for t in self}
        names[ToolName.other.value] = frozenset({other})
        return names


def _ring_entries(name: ToolName) -> dict[Outcome, RingEntry]:
    # The models load here, on first use: reading the catalogue's names (a release's domain,
    # ``lmcp analysis --db``) needs only the enums.
    from contract.schema import RingEntry

    return {outcome: RingEntry(tool=name, outcome=outcome) for outcome in Outcome}


def parse_catalogue(doc: Mapping[str, Any]) -> Catalogue:
    tools: dict[str, Tool] = {}
    for entry in doc["tools"]:
        name = entry["name"]
        if name in tools:
            raise ValueError(f"duplicate tool in catalogue: {name}")
        props = entry["input_schema"].get("properties", {})
        tool_name = ToolName(name)
        tools[name] = Tool(
            name=name,
            app=entry["app"],
            effect=Effect(entry["effect"]),
            requires_confirmation=bool(entry["requires_confirmation"]),
            summary=entry["summary"],
            input_schema=entry["input_schema"],
            tool_name=tool_name,
            arg_names={arg: ArgName(arg) for arg in props},
            ring_entries=_ring_entries(tool_name),
        )
    return Catalogue(
        version=int(doc["catalogue_version"]),
        tools=tools,
        other_ring_entries=_ring_entries(ToolName.other),
    )


def raw_catalogue() -> dict[str, Any]:
    """The catalogue document as stored (a fresh copy each call)."""
    text = resources.files(__package__).joinpath("tools.json").read_text(encoding="utf-8")
    doc: dict[str, Any] = json.loads(text)
    return doc


@cache
def load_catalogue() -> Catalogue:
    """The catalogue shipped with this package (parsed once per process)."""
    return parse_catalogue(raw_catalogue())
