"""The CPU one request body may cost, bounded before and during validation.

- ``guard_body`` refuses, from byte counts alone, a body holding more structure than
  ``MAX_BATCH`` valid signals ever could, or more undeclared keys than a problem lists.
- ``FAIL_FAST`` is the accepted batch's own schema (one definition: ``AcceptedBatch``) with every
  array stopping at its first failing item, so a failed batch yields a handful of errors, never
  one per item.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pydantic_core import SchemaValidator

from contract.schema import MAX_ARGS, MAX_BATCH, RING_SIZE, AcceptedBatch
from service.errors import MAX_LISTED_ERRORS, ProblemError

__all__ = ["FAIL_FAST", "guard_body"]


def _unbuilt(cls: type[Any]) -> type[Any]:
    """A subclass of a model that pydantic-core builds from the schema it is given.

    pydantic-core reuses a complete model's own validator for a nested ``model`` schema
    (the class's ``__pydantic_validator__``), ignoring the schema it is handed; a subclass
    without one is built from it.
    """
    metaclass: Any = type(cls)
    sub: type[Any] = metaclass(
        cls.__name__, (cls,), {"__module__": cls.__module__, "__qualname__": cls.__qualname__}
    )
    for attribute in ("__pydantic_complete__", "__pydantic_validator__"):
        if attribute in sub.__dict__:
            delattr(sub, attribute)
    # Equality compares the origin class: an ingested signal equals the shared model's.
    sub.__pydantic_generic_metadata__ = {"origin": cls, "args": (), "parameters": ()}
    return sub


def _fail_fast(node: Any, classes: dict[type[Any], type[Any]]) -> Any:
    """A copy of a pydantic-core schema in which every array stops at its first failing item."""
    if isinstance(node, dict):
        out = {key: _fail_fast(value, classes) for key, value in node.items()}
        if out.get("type") in ("list", "tuple", "set", "frozenset"):
            out["fail_fast"] = True
        if out.get("type") == "model":
            cls = out["cls"]
            out["cls"] = classes[cls] if cls in classes else classes.setdefault(cls, _unbuilt(cls))
        return out
    if isinstance(node, list):
        return [_fail_fast(value, classes) for value in node]
    return node


def _property_names(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        properties = node.get("properties")
        if isinstance(properties, dict):
            yield from properties
        for value in node.values():
            yield from _property_names(value)
    elif isinstance(node, list):
        for value in node:
            yield from _property_names(value)


#: The accepted batch's schema (one definition) with fail-fast arrays at every level: 10^5
#: failing items cost one item's errors. Its signals are subclasses of the shared models.
FAIL_FAST = SchemaValidator(_fail_fast(AcceptedBatch.__pydantic_core_schema__, {}))

#: How many objects, arrays, commas and colons one valid signal holds at most (every optional
#: field present, args and ring full). Strings in a valid signal are enums, UUIDs, dates and
#: versions: none holds ``{ [ , :``, so byte counts are exact for a valid body.
_SIGNAL_OBJECTS = 3 + MAX_ARGS + RING_SIZE
_SIGNAL_ARRAYS = 2
_SIGNAL_PAIRS = 16 + 3 + 2 + 3 * MAX_ARGS + 2 * RING_SIZE
_SIGNAL_COMMAS = _SIGNAL_PAIRS + MAX_ARGS + RING_SIZE
#: Bounds for a whole batch (the envelope adds one object, one array and one key).
_MAX_COUNTS: dict[bytes, int] = {
    b"{": 1 + MAX_BATCH * _SIGNAL_OBJECTS,
    b"[": 1 + MAX_BATCH * _SIGNAL_ARRAYS,
    b",": MAX_BATCH * (_SIGNAL_COMMAS + 1),
    b":": 1 + MAX_BATCH * _SIGNAL_PAIRS,
}
#: Every key a batch's models declare, as a valid body writes it (no escapes, no space
#: before the colon: what every JSON encoder writes).
_KNOWN_KEYS = tuple(
    sorted({f'"{name}":'.encode() for name in _property_names(AcceptedBatch.model_json_schema())})
)
#: Up to this size the unknown keys are not counted: at most one per 6 bytes ("k":0,), their
#: errors cost tens of milliseconds at worst, less than counting costs a valid batch.
_COUNT_KEYS_ABOVE = 32 * 1024


def guard_body(body: bytes) -> None:
    """Refuse, from byte counts alone, a body no valid batch could be.

    Each validation error costs microseconds to build and describe; before this guard a 1 MiB
    body of empty objects was validated item by item for a minute. What passes holds at most
    the structure of ``MAX_BATCH`` full signals and at most ``MAX_LISTED_ERRORS`` keys that
    are not declared (colons in a valid body are exactly its declared keys: no valid string
    holds one), so no object can yield more errors than are listed.
    """
    for token, limit in _MAX_COUNTS.items():
        if body.count(token) > limit:
            raise ProblemError(
                413,
                "too_many_signals",
                f"A batch holds at most {MAX_BATCH} signals; this body holds more structure.",
                errors=[{"pointer": "/signals", "rule": "too_long", "detail": "too many items"}],
            )
    colons = body.count(b":")
    if len(body) > _COUNT_KEYS_ABOVE and colons > MAX_LISTED_ERRORS:
        unknown = colons - sum(body.count(key) for key in _KNOWN_KEYS)
        if unknown > MAX_LISTED_ERRORS:
            raise ProblemError(
                422,
                "invalid_signals",
                "The batch holds more fields that are not part of the schema than are listed.",
                errors=[
                    {
                        "pointer": "/signals",
                        "rule": "extra_forbidden",
                        "detail": "field is not part of the schema",
                    }
                ],
            )
