"""Generated canary cases: every kind x every encoding x every position an agent can fill.

A *position* is a place an agent puts a value: each argument of each catalogue tool (declared
type or not: a string where an integer belongs is a position too), an argument NAME, the tool
name itself, a recipe's name, description, param name, param default and step arguments, a
recipe run's params, an imported recipe document, Cloud Skill content, and every field of
``report_friction``. An *encoding* is a form an agent could give the value in (plain, upper,
lower, base64, base64url, hex, URL, JSON-escaped, reversed, split, zero-width-joined, HTML
entities). Each case gets its own marker; its ``aliases`` are the marker as planted when the
encoding does not keep it literally (reversed, split, zero-width-joined, ...), so a sink that
kept the planted text verbatim is caught as surely as one that decoded it.
"""

from __future__ import annotations

import base64
import functools
import json
import random
import urllib.parse
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

from contract.catalogue import load_catalogue
from privacy_tests.audit.canaries import MARKER_ALPHABET, Canary, CanaryKind, canary_of

__all__ = ["ENCODINGS", "NUMBER_PREFIX", "Case", "generate_cases", "place", "positions"]

#: Every generated number starts with these digits (a fixed anchor for the fast scan); 16
#: digits in all, between 2**50 and 2**53, far from any count or size the pipeline stores.
NUMBER_PREFIX = 7314
_ZWJ = "\u200d"


def _split(marker: str) -> str:
    return f"{marker[:8]}-{marker[8:]}"


def _entities(text: str) -> str:
    return "".join(f"&#{ord(ch)};" for ch in text)


def _whole(encode: Callable[[str], str]) -> Encoder:
    """Encode the whole planted text; the marker is then searched in its own forms."""
    return lambda text, marker: (encode(text), ())


def _around(encode: Callable[[str], str]) -> Encoder:
    """Rewrite the marker inside the text; the rewritten marker is searched for too."""
    return lambda text, marker: (text.replace(marker, encode(marker)), (encode(marker),))


#: (planted text, marker) -> (what the agent passes, the marker as it appears there if not
#: literally or in one of the forms ``scan.forms`` searches).
Encoder = Callable[[str, str], tuple[str, tuple[str, ...]]]
ENCODINGS: dict[str, Encoder] = {
    "plain": _whole(lambda t: t),
    "upper": lambda text, marker: (text.upper(), (marker.upper(),)),
    "lower": _whole(str.lower),
    "base64": _whole(lambda t: base64.b64encode(t.encode()).decode()),
    "base64url": _whole(lambda t: base64.urlsafe_b64encode(t.encode()).decode()),
    "hex": _whole(lambda t: t.encode().hex()),
    "url": _whole(lambda t: urllib.parse.quote(t, safe="")),
    "json": _whole(json.dumps),
    "reversed": lambda text, marker: (text[::-1], (marker[::-1],)),
    "split": _around(_split),
    "zero-width": _around(_ZWJ.join),
    "html": lambda text, marker: (_entities(text), (_entities(marker),)),
}


@dataclass(frozen=True, slots=True)
class Case:
    """One generated case: a canary, how it is encoded, and where it is planted."""

    canary: Canary
    encoding: str
    position: str
    #: What the agent passes (the encoded text, or the number itself at an integer place).
    planted: str | int


# -- positions: name -> (the planted value -> (tool, arguments)) -------------------------------

Place = Callable[[Any], tuple[str, dict[str, Any]]]
_FILL = {"string": "x", "integer": 1, "boolean": False, "array": [], "object": {}}


def _catalogue_place(tool: str, arg: str, kind: str, required: list[str]) -> Place:
    def place(value: Any) -> tuple[str, dict[str, Any]]:
        args: dict[str, Any] = {r: _FILL.get(kind, "x") for r in required if r != arg}
        args[arg] = [value] if kind == "array" else {"k": value} if kind == "object" else value
        return tool, args

    return place


def _manifest(**over: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "name": "weekly",
        "params": [{"name": "who", "type": "string", "default": "me"}],
        "steps": [{"tool": "read_note", "args": {"note_name": "${who}"}}],
    }
    doc.update(over)
    return doc


_EXTRA: dict[str, Place] = {
    "argument name": lambda v: ("read_note", {str(v): "x"}),
    "undeclared argument": lambda v: ("read_note", {"note_name": "x", "extra": v}),
    "tool name": lambda v: (str(v), {"note_name": "x"}),
    "recipe name": lambda v: ("recipe_save", {"manifest": _manifest(name=str(v))}),
    "recipe description": lambda v: ("recipe_save", {"manifest": _manifest(description=v)}),
    "recipe param name": lambda v: (
        "recipe_save",
        {"manifest": _manifest(params=[{"name": v, "type": "string"}])},
    ),
    "recipe param default": lambda v: (
        "recipe_save",
        {"manifest": _manifest(params=[{"name": "who", "type": "string", "default": v}])},
    ),
    "recipe step argument": lambda v: (
        "recipe_save",
        {"manifest": _manifest(steps=[{"tool": "read_file", "args": {"path": v}}])},
    ),
    "recipe step tool": lambda v: (
        "recipe_save",
        {"manifest": _manifest(steps=[{"tool": v, "args": {}}])},
    ),
    "recipe run param": lambda v: ("recipe_run", {"name": "weekly", "params": {"who": v}}),
    "recipe import document": lambda v: (
        "recipe_import",
        {"document": {"format": "lmcp-recipe", "manifest": _manifest(name=str(v))}},
    ),
}


def positions() -> dict[str, Place]:
    """Every position, by name (``tool.argument`` for a catalogue argument)."""
    out: dict[str, Place] = {}
    for tool in load_catalogue():
        schema = tool.input_schema
        required = list(schema.get("required", []))
        for arg, spec in schema.get("properties", {}).items():
            kind = str(spec.get("type", "string"))
            out[f"{tool.name}.{arg}"] = _catalogue_place(tool.name, arg, kind, required)
    out.update(_EXTRA)
    return out


def _integer_places(places: dict[str, Place]) -> set[str]:
    out = set()
    for tool in load_catalogue():
        for arg, spec in tool.input_schema.get("properties", {}).items():
            if spec.get("type") == "integer" and f"{tool.name}.{arg}" in places:
                out.add(f"{tool.name}.{arg}")
    return out


def _markers(rng: random.Random) -> Iterator[str]:
    seen: set[str] = set()
    while True:
        tag = "cnry" + "".join(rng.choice(MARKER_ALPHABET) for _ in range(12))
        if tag not in seen:
            seen.add(tag)
            yield tag


def _number(rng: random.Random) -> int:
    while True:
        n = NUMBER_PREFIX * 10**12 + rng.randrange(10**12)
        low = n.to_bytes(8, "little")[:7]
        if 0 not in low and len(set(low)) >= 6:  # no chance match in a binary file
            return n


def generate_cases(seed: int) -> list[Case]:
    """Every (kind, encoding, position), each with a fresh marker; shuffled by ``seed``."""
    rng = random.Random(seed)
    places = positions()
    integers = _integer_places(places)
    markers = _markers(rng)
    cases: list[Case] = []
    for kind in CanaryKind:
        for encoding in ENCODINGS:
            for position in places:
                filler = "".join(rng.choice("abc xyz é") for _ in range(8))
                base = canary_of(kind, next(markers), filler=filler, number=_number(rng))
                if kind is CanaryKind.large_number:
                    base = replace(base, marker=str(base.value), number=None)
                text, aliases = ENCODINGS[encoding](base.text, base.marker)
                planted: str | int = text
                if kind is CanaryKind.large_number and encoding == "plain" and position in integers:
                    planted = int(base.value)  # an integer where an integer belongs
                    base = replace(base, number=int(base.value))
                cases.append(Case(replace(base, aliases=aliases), encoding, position, planted))
    rng.shuffle(cases)
    return cases


@functools.cache
def _positions() -> dict[str, Place]:
    return positions()


def place(case: Case) -> tuple[str, dict[str, Any]]:
    """The call that plants ``case``: (tool, arguments)."""
    return _positions()[case.position](case.planted)
