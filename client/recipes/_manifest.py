"""The recipe manifest: the union of both platforms' shapes, parsed strictly (pure, no I/O).

    {"name": str, "description": str?, "schema_version": 1?,
     "params": [{"name": str, "type": "string"|"int"|"bool", "default": <that type>?}]?,
     "steps": [ {"tool": str, "args": {...}?, "optional": bool?}
              | {"wait": {"seconds": N}} | {"wait": N} ],   (non-empty, bounded)
     "outputs": [{"kind": str}]?}

``parse_manifest`` checks the SHAPE and collects every problem, each naming where it is
(``steps[2].optional``) and the rule it breaks -- never a value. The catalogue-aware checks
(tools, arguments, references) are in ``_check``.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "MAX_NAME_CHARS",
    "MAX_PARAMS",
    "MAX_STEPS",
    "MAX_TOTAL_WAIT_SECONDS",
    "MAX_WAIT_SECONDS",
    "SCHEMA_VERSION",
    "Manifest",
    "Param",
    "ParamType",
    "Step",
    "ToolStep",
    "WaitStep",
    "name_key",
    "parse_manifest",
    "type_matches",
]

SCHEMA_VERSION = 1
MAX_NAME_CHARS = 128
MAX_DESCRIPTION_CHARS = 4096
MAX_PARAMS = 32
MAX_STEPS = 100
MAX_OUTPUTS = 16
MAX_WAIT_SECONDS = 300.0
MAX_TOTAL_WAIT_SECONDS = 900.0

ParamType = Literal["string", "int", "bool"]
_TYPE_ALIASES: Mapping[str, ParamType] = {
    "string": "string",
    "str": "string",
    "int": "int",
    "integer": "int",
    "bool": "bool",
    "boolean": "bool",
}
_PARAM_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
_KIND = re.compile(r"[A-Za-z0-9_.\-]{1,64}")
_TOP_KEYS = frozenset({"name", "description", "schema_version", "params", "steps", "outputs"})
_PARAM_KEYS = frozenset({"name", "type", "default", "description"})
_TOOL_STEP_KEYS = frozenset({"tool", "args", "optional"})


def name_key(name: str) -> str:
    """The identity of a recipe name: NFC, case-folded, trimmed (case-insensitive file systems
    on macOS and Windows would otherwise let two names share one file)."""
    return unicodedata.normalize("NFC", name).strip().casefold()


def type_matches(kind: ParamType, value: object) -> bool:
    """Strict: a bool is only true/false; an int is an integer and never a bool or a float."""
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, str)


@dataclass(frozen=True, slots=True)
class Param:
    name: str
    type: ParamType
    has_default: bool = False
    default: Any = None
    description: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "type": self.type}
        if self.has_default:
            out["default"] = self.default
        if self.description is not None:
            out["description"] = self.description
        return out


@dataclass(frozen=True, slots=True)
class ToolStep:
    tool: str
    args: Mapping[str, Any] = field(default_factory=dict)
    optional: bool = False

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"tool": self.tool, "args": dict(self.args)}
        if self.optional:
            out["optional"] = True
        return out


@dataclass(frozen=True, slots=True)
class WaitStep:
    seconds: float

    def to_json(self) -> dict[str, Any]:
        return {"wait": {"seconds": self.seconds}}


Step = ToolStep | WaitStep


@dataclass(frozen=True, slots=True)
class Manifest:
    name: str
    steps: tuple[Step, ...]
    description: str | None = None
    params: tuple[Param, ...] = ()
    outputs: tuple[Mapping[str, Any], ...] = ()
    schema_version: int = SCHEMA_VERSION

    @property
    def key(self) -> str:
        return name_key(self.name)

    def to_json(self) -> dict[str, Any]:
        """The normalised manifest (what is stored and exported)."""
        out: dict[str, Any] = {"name": self.name, "schema_version": self.schema_version}
        if self.description is not None:
            out["description"] = self.description
        out["params"] = [p.to_json() for p in self.params]
        out["steps"] = [s.to_json() for s in self.steps]
        out["outputs"] = [dict(o) for o in self.outputs]
        return out


class _Problems(list[str]):
    def add(self, where: str, rule: str) -> None:
        self.append(f"{where}: {rule}")


def _seconds(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    seconds = float(value)
    return seconds if math.isfinite(seconds) else None


def _parse_params(raw: object, problems: _Problems) -> tuple[Param, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        problems.add("params", "must be an array")
        return ()
    if len(raw) > MAX_PARAMS:
        problems.add("params", f"must have at most {MAX_PARAMS} items")
        return ()
    params: list[Param] = []
    seen: set[str] = set()
    for i, item in enumerate(raw):
        where = f"params[{i}]"
        if not isinstance(item, Mapping):
            problems.add(where, "must be an object")
            continue
        extra = sum(1 for k in item if k not in _PARAM_KEYS)
        if extra:
            problems.add(where, f"has {extra} unknown field(s)")
        name = item.get("name")
        if not isinstance(name, str) or not _PARAM_NAME.fullmatch(name):
            problems.add(f"{where}.name", "must be an identifier (letters, digits, _)")
            continue
        if name in seen:
            problems.add(f"{where}.name", "repeats an earlier param's name")
            continue
        seen.add(name)
        kind = _TYPE_ALIASES.get(item["type"]) if isinstance(item.get("type"), str) else None
        if kind is None:
            problems.add(f"{where}.type", "must be one of string, int, bool")
            continue
        has_default = "default" in item
        if has_default and not type_matches(kind, item["default"]):
            problems.add(f"{where}.default", f"must be of the param's type ({kind})")
            continue
        description = item.get("description")
        if description is not None and not isinstance(description, str):
            problems.add(f"{where}.description", "must be a string")
            continue
        params.append(Param(name, kind, has_default, item.get("default"), description))
    return tuple(params)


def _parse_step(i: int, raw: object, problems: _Problems) -> ToolStep | WaitStep | None:
    where = f"steps[{i}]"
    if not isinstance(raw, Mapping):
        problems.add(where, "must be an object")
        return None
    if "wait" in raw:
        if len(raw) != 1:
            problems.add(where, "a pause holds only 'wait'")
            return None
        wait = raw["wait"]
        if isinstance(wait, Mapping):
            if set(wait) != {"seconds"}:
                problems.add(f"{where}.wait", "must be {seconds: N} or a number")
                return None
            wait = wait["seconds"]
        seconds = _seconds(wait)
        if seconds is None:
            problems.add(f"{where}.wait", "must be a number of seconds")
            return None
        if not 0 <= seconds <= MAX_WAIT_SECONDS:
            problems.add(f"{where}.wait", f"must be between 0 and {MAX_WAIT_SECONDS:g} seconds")
            return None
        return WaitStep(seconds)
    extra = sum(1 for k in raw if k not in _TOOL_STEP_KEYS)
    if extra:
        problems.add(where, f"has {extra} unknown field(s); a step is a tool call or a wait")
        return None
    tool = raw.get("tool")
    if not isinstance(tool, str) or not tool:
        problems.add(f"{where}.tool", "must be a tool name")
        return None
    args = raw.get("args", {})
    if not isinstance(args, Mapping):
        problems.add(f"{where}.args", "must be an object")
        return None
    optional = raw.get("optional", False)
    if not isinstance(optional, bool):
        problems.add(f"{where}.optional", "must be true or false")
        return None
    return ToolStep(tool, dict(args), optional)


def parse_manifest(raw: object) -> tuple[Manifest | None, list[str]]:
    """The manifest in ``raw`` and the problems of its shape (none means it is usable)."""
    problems = _Problems()
    if not isinstance(raw, Mapping):
        problems.add("manifest", "must be an object")
        return None, problems
    extra = sum(1 for k in raw if k not in _TOP_KEYS)
    if extra:
        problems.add("manifest", f"has {extra} unknown field(s)")
    name = raw.get("name")
    if not isinstance(name, str) or not name.strip():
        problems.add("name", "is required and must be a non-empty string")
    elif len(name) > MAX_NAME_CHARS:
        problems.add("name", f"must be at most {MAX_NAME_CHARS} characters")
    elif any(unicodedata.category(c) == "Cc" for c in name):
        problems.add("name", "must not hold control characters")
    description = raw.get("description")
    if description is not None and not isinstance(description, str):
        problems.add("description", "must be a string")
    elif isinstance(description, str) and len(description) > MAX_DESCRIPTION_CHARS:
        problems.add("description", f"must be at most {MAX_DESCRIPTION_CHARS} characters")
    version = raw.get("schema_version", SCHEMA_VERSION)
    if isinstance(version, bool) or version != SCHEMA_VERSION:
        problems.add("schema_version", f"must be {SCHEMA_VERSION} (the only version)")
    params = _parse_params(raw.get("params"), problems)
    raw_steps = raw.get("steps")
    steps: list[ToolStep | WaitStep] = []
    if not isinstance(raw_steps, list) or not raw_steps:
        problems.add("steps", "is required and must be a non-empty array")
    elif len(raw_steps) > MAX_STEPS:
        problems.add("steps", f"must have at most {MAX_STEPS} items")
    else:
        for i, item in enumerate(raw_steps):
            step = _parse_step(i, item, problems)
            if step is not None:
                steps.append(step)
        total = sum(s.seconds for s in steps if isinstance(s, WaitStep))
        if total > MAX_TOTAL_WAIT_SECONDS:
            problems.add("steps", f"pauses add up to more than {MAX_TOTAL_WAIT_SECONDS:g} seconds")
    outputs = _parse_outputs(raw.get("outputs"), problems)
    if problems:
        return None, problems
    assert isinstance(name, str)
    return (
        Manifest(
            name=name.strip(),
            steps=tuple(steps),
            description=description if isinstance(description, str) else None,
            params=params,
            outputs=outputs,
        ),
        problems,
    )


def _parse_outputs(raw: object, problems: _Problems) -> tuple[Mapping[str, Any], ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        problems.add("outputs", "must be an array")
        return ()
    if len(raw) > MAX_OUTPUTS:
        problems.add("outputs", f"must have at most {MAX_OUTPUTS} items")
        return ()
    out: list[Mapping[str, Any]] = []
    for i, item in enumerate(raw):
        if not isinstance(item, Mapping) or set(item) != {"kind"}:
            problems.add(f"outputs[{i}]", "must be {kind: string}")
        elif not isinstance(item["kind"], str) or not _KIND.fullmatch(item["kind"]):
            problems.add(f"outputs[{i}].kind", "must be a short word (letters, digits, _.-)")
        else:
            out.append({"kind": item["kind"]})
    return tuple(out)
