"""Interpolation of ``${...}`` references in step arguments: a pure function, no I/O.

Grammar (inside ``${`` and ``}``)::

    param      := NAME                       e.g. ${count}
    step       := "steps[" N "].result" path  e.g. ${steps[0].result.accounts[0].name}
    path       := ( "." KEY | "[" I "]" )*

``$${`` is a literal ``${``. A string that is exactly one reference takes the referenced value
with its JSON type; a reference embedded in a longer string is stringified (strings as they
are, everything else as compact JSON). Substitution is one pass over the ORIGINAL string:
substituted text is never interpolated again. A reference that cannot be resolved raises
``Unresolved`` naming the reference -- never an empty string, never the values around it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

__all__ = [
    "ParamRef",
    "Ref",
    "RefSyntaxError",
    "StepRef",
    "Unresolved",
    "find_refs",
    "interpolate",
    "parse_ref",
    "stringify",
    "walk_strings",
]

PARAM_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
_TOKEN = re.compile(r"\$\$\{|\$\{([^{}]*)\}")
_EXACT = re.compile(r"\$\{([^{}]*)\}")
_STEP = re.compile(r"steps\[(0|[1-9][0-9]{0,5})\]\.result")
_SEGMENT = re.compile(r"\.([^.\[\]${}\s]+)|\[(0|[1-9][0-9]{0,8})\]")


class RefSyntaxError(ValueError):
    """A ``${...}`` that is not a valid reference (the message names the rule only)."""


@dataclass(frozen=True, slots=True)
class ParamRef:
    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class StepRef:
    step: int
    path: tuple[str | int, ...] = ()

    def __str__(self) -> str:
        tail = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in self.path)
        return f"steps[{self.step}].result{tail}"


Ref = ParamRef | StepRef


class Unresolved(LookupError):
    """A reference has no value: ``ref`` is the reference, ``reason`` a value-free rule."""

    def __init__(self, ref: Ref, reason: str, *, code: str = "unresolved_reference") -> None:
        super().__init__(f"reference ${{{ref}}} cannot be resolved: {reason}")
        self.ref = ref
        self.reason = reason
        self.code = code


def parse_ref(body: str) -> Ref:
    """The reference written as ``${body}``."""
    if PARAM_NAME.fullmatch(body):
        return ParamRef(body)
    head = _STEP.match(body)
    if head is None:
        raise RefSyntaxError("is neither ${param} nor ${steps[N].result...}")
    path: list[str | int] = []
    pos = head.end()
    while pos < len(body):
        seg = _SEGMENT.match(body, pos)
        if seg is None:
            raise RefSyntaxError("has a path that is not made of .key and [i] parts")
        path.append(seg.group(1) if seg.group(1) is not None else int(seg.group(2)))
        pos = seg.end()
    return StepRef(int(head.group(1)), tuple(path))


def find_refs(text: str) -> tuple[tuple[Ref, ...], bool]:
    """The references in ``text`` and whether ``text`` is exactly one reference."""
    if "${" not in text:
        return (), False
    return _find_refs(text)


@lru_cache(maxsize=4096)
def _find_refs(text: str) -> tuple[tuple[Ref, ...], bool]:
    refs = tuple(parse_ref(m.group(1)) for m in _TOKEN.finditer(text) if m.group(1) is not None)
    if "${" in _TOKEN.sub("", text):
        raise RefSyntaxError("has a ${ that is not closed (write $${ for a literal ${)")
    return refs, _EXACT.fullmatch(text) is not None


def walk_strings(
    value: Any, path: tuple[str | int, ...] = ()
) -> Iterator[tuple[tuple[str | int, ...], str]]:
    """Every string inside a JSON value with its path (object keys are not walked as text)."""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from walk_strings(item, (*path, key))
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from walk_strings(item, (*path, index))


def stringify(value: Any) -> str:
    """How a value reads inside a longer string: strings as is, the rest as compact JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _resolve(
    ref: Ref,
    params: Mapping[str, Any],
    results: Mapping[int, Any],
    blocked: Mapping[int, tuple[str, str]],
) -> Any:
    if isinstance(ref, ParamRef):
        if ref.name not in params:
            raise Unresolved(ref, "the param has no value")
        return params[ref.name]
    if ref.step in blocked:
        code, reason = blocked[ref.step]
        raise Unresolved(ref, reason, code=code)
    if ref.step not in results:
        raise Unresolved(ref, "that step has no result")
    current = results[ref.step]
    for part in ref.path:
        if isinstance(part, int):
            if not isinstance(current, list | tuple):
                raise Unresolved(ref, "an index is applied to something that is not a list")
            if part >= len(current):
                raise Unresolved(ref, "an index is past the end of the list")
            current = current[part]
        else:
            if not isinstance(current, Mapping):
                raise Unresolved(ref, "a key is applied to something that is not an object")
            if part not in current:
                raise Unresolved(ref, "a key is missing")
            current = current[part]
    return current


def interpolate(
    value: Any,
    params: Mapping[str, Any],
    results: Mapping[int, Any] | None = None,
    blocked: Mapping[int, tuple[str, str]] | None = None,
) -> Any:
    """``value`` with every reference replaced (a new value; the input is not changed).

    ``results`` maps a step index to its result; ``blocked`` maps a step index to the
    ``(code, reason)`` why its result cannot be used (it only returned a preview, it failed).
    """
    results = {} if results is None else results
    blocked = {} if blocked is None else blocked
    if isinstance(value, str):
        if "${" not in value:
            return value
        refs, exact = _find_refs(value)
        if exact:
            return _resolve(refs[0], params, results, blocked)
        values = iter([stringify(_resolve(ref, params, results, blocked)) for ref in refs])

        def substitute(match: re.Match[str]) -> str:
            return "${" if match.group(1) is None else next(values)

        return _TOKEN.sub(substitute, value)
    if isinstance(value, Mapping):
        return {k: interpolate(v, params, results, blocked) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [interpolate(v, params, results, blocked) for v in value]
    return value
