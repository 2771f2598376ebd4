"""The pure part of ingestion: raw bytes in, a validated ``SignalBatch`` out, or a problem.

- ``decode_body`` undoes ``Content-Encoding: gzip`` with a bounded ``zlib`` decompressobj: it never
  holds more than the cap plus one chunk, so a gzip bomb stops at the cap (413).
- ``validate_batch`` validates the raw JSON with the shared strict model in one pass (no
  ``json.loads`` then re-validation), and maps failures to value-free problems: malformed JSON
  (400), too many signals (413), a missing or unsupported schema version, an empty batch, or
  field errors (422) naming the JSON pointer and the rule.

The CPU one body can cost is bounded before and during validation (``guard_body``,
``_FAIL_FAST``): a body holding more structure than ``MAX_BATCH`` valid signals ever could, or
more unknown keys than are reported, is refused from byte counts alone; every array stops at its
first failing item, so a failed batch yields a handful of errors, never one per item.

Tool names are checked by the model itself: ``ToolName`` is the catalogue's names and ``other``.
"""

from __future__ import annotations

import datetime as dt
import zlib
from collections.abc import Iterator, Sequence
from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails, SchemaValidator

from collector.errors import MAX_LISTED_ERRORS, ProblemError, describe_errors
from contract.schema import MAX_ARGS, MAX_BATCH, RING_SIZE, SUPPORTED_SCHEMA_VERSIONS, SignalBatch

__all__ = ["check_content_type", "check_days", "decode_body", "guard_body", "validate_batch"]

_CHUNK = 64 * 1024


def check_content_type(content_type: str | None) -> None:
    """Only ``application/json`` (a ``charset=utf-8`` parameter is allowed)."""
    if content_type is None:
        raise ProblemError(415, "unsupported_media_type", "Content-Type must be application/json.")
    media, _, params = content_type.partition(";")
    if media.strip().lower() != "application/json":
        raise ProblemError(415, "unsupported_media_type", "Content-Type must be application/json.")
    for param in params.split(";"):
        key, _, value = param.partition("=")
        if key.strip().lower() == "charset" and value.strip().strip('"').lower() != "utf-8":
            raise ProblemError(415, "unsupported_charset", "The only charset accepted is utf-8.")


def decode_body(raw: bytes, content_encoding: str | None, *, max_decompressed: int) -> bytes:
    """The body after its content coding (identity or gzip), at most ``max_decompressed`` bytes."""
    coding = (content_encoding or "identity").strip().lower()
    if coding == "identity":
        return raw
    if coding not in ("gzip", "x-gzip"):
        raise ProblemError(
            415, "unsupported_content_encoding", "Content-Encoding must be gzip or absent."
        )
    return gunzip_bounded(raw, max_decompressed)


def gunzip_bounded(raw: bytes, limit: int) -> bytes:
    """Decompress one gzip member, refusing (413) as soon as the output would exceed ``limit``."""
    inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    out = bytearray()
    data = raw
    try:
        while data:
            # Never ask for more than one byte past the cap: the bomb cannot inflate further.
            room = limit - len(out) + 1
            out += inflater.decompress(data, min(room, _CHUNK))
            if len(out) > limit:
                raise _too_large(limit)
            data = inflater.unconsumed_tail
            if inflater.eof:
                break
        while not inflater.eof and len(out) <= limit:
            piece = inflater.decompress(b"", min(limit - len(out) + 1, _CHUNK))
            if not piece:
                break
            out += piece
        if len(out) > limit:
            raise _too_large(limit)
    except zlib.error as exc:
        raise ProblemError(400, "malformed_gzip", "The gzip body cannot be decoded.") from exc
    if not inflater.eof or inflater.unused_data:
        raise ProblemError(
            400, "malformed_gzip", "The gzip body is truncated or has trailing data."
        )
    return bytes(out)


def _too_large(limit: int) -> ProblemError:
    return ProblemError(
        413, "decompressed_too_large", f"The decompressed body exceeds {limit} bytes."
    )


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


#: The shared model's schema (one definition) with fail-fast arrays at every level: 10^5
#: failing items cost one item's errors. Its signals are subclasses of the shared models.
_FAIL_FAST = SchemaValidator(_fail_fast(SignalBatch.__pydantic_core_schema__, {}))

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
    sorted({f'"{name}":'.encode() for name in _property_names(SignalBatch.model_json_schema())})
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


def validate_batch(body: bytes) -> SignalBatch:
    """The validated batch, or a ``ProblemError`` that echoes nothing submitted."""
    guard_body(body)
    try:
        batch: SignalBatch = _FAIL_FAST.validate_json(body, strict=True)
    except ValidationError as exc:
        raise _problem(exc.errors(include_url=False, include_input=False)) from None
    # The model pins the version(s) it knows; this keeps the promise explicit and checked.
    for index, signal in enumerate(batch.signals):
        if signal.schema_version not in SUPPORTED_SCHEMA_VERSIONS:
            raise ProblemError(
                422,
                "unsupported_schema_version",
                "schema_version is not one this collector accepts.",
                errors=[{"pointer": f"/signals/{index}/schema_version", "rule": "supported"}],
            )
    return batch


def _problem(errors: Sequence[ErrorDetails]) -> ProblemError:
    if any(e["type"] in ("json_invalid", "json_type") for e in errors):
        return ProblemError(400, "malformed_json", "The body is not valid JSON.")
    kinds = {e["type"] for e in errors if tuple(e["loc"]) == ("signals",)}
    if "too_long" in kinds:
        return ProblemError(
            413, "too_many_signals", "A batch holds at most 500 signals.",
            errors=describe_errors([e for e in errors if tuple(e["loc"]) == ("signals",)]),
        )  # fmt: skip
    if "too_short" in kinds:
        # pydantic also reports "too short" when an item of the batch failed: only a batch
        # with no other error is really empty.
        others = [e for e in errors if tuple(e["loc"]) != ("signals",)]
        if not others:
            return ProblemError(
                422, "empty_batch", "A batch holds at least one signal.",
                errors=describe_errors(errors),
            )  # fmt: skip
        errors = others
    described = describe_errors(errors)
    versions = [e for e in errors if e["loc"][-1:] == ("schema_version",)]
    if versions and all(e["type"] == "missing" for e in versions):
        return ProblemError(
            422, "missing_schema_version", "schema_version is missing.", errors=described
        )
    if versions:
        return ProblemError(
            422,
            "unsupported_schema_version",
            "schema_version is not one this collector accepts.",
            errors=described,
        )
    return ProblemError(
        422, "invalid_signals", "The batch does not match the signal schema.", errors=described
    )


def check_days(batch: SignalBatch, today: dt.date, retention_days: int) -> None:
    """Refuse a signal dated outside ``[today - retention_days, today + 1]`` (422, ``day_window``).

    One signal dated 9999-12-31 would otherwise sit in the table for ever and be the last day
    of every default period; one day ahead allows for clocks east of UTC.
    """
    first = today - dt.timedelta(days=retention_days)
    last = today + dt.timedelta(days=1)
    bad = [i for i, signal in enumerate(batch.signals) if not first <= signal.day <= last]
    if bad:
        raise ProblemError(
            422,
            "day_out_of_window",
            f"A signal's day must be within the last {retention_days} days or tomorrow (UTC).",
            errors=[
                {
                    "pointer": f"/signals/{i}/day",
                    "rule": "day_window",
                    "detail": "day is outside the accepted window",
                }
                for i in bad
            ],
        )
