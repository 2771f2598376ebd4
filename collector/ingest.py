"""The pure part of ingestion: raw bytes in, a validated ``SignalBatch`` out, or a problem.

- ``decode_body`` undoes ``Content-Encoding: gzip`` with a bounded ``zlib`` decompressobj: it never
  holds more than the cap plus one chunk, so a gzip bomb stops at the cap (413).
- ``validate_batch`` validates the raw JSON with the shared strict model in one pass
  (``model_validate_json``: no ``json.loads`` then re-validation), and maps failures to value-free
  problems: malformed JSON (400), too many signals (413), a missing or unsupported schema
  version, an empty batch, or field errors (422) naming the JSON pointer and the rule.
- Each signal may be the current version or the previous one (``AcceptedBatch``, a union on
  ``schema_version``); ``current_batch`` maps every v1 signal to v2 before any row is built.
- The CPU one body can cost is bounded before and during validation (``collector.guard``).
- ``check_days`` refuses signals dated outside the accepted window.

Tool names are checked by the model itself: ``ToolName`` is the catalogue's names and ``other``.
"""

from __future__ import annotations

import datetime as dt
import zlib
from collections.abc import Sequence

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from collector.guard import FAIL_FAST, guard_body
from contract.schema import (
    SUPPORTED_SCHEMA_VERSIONS,
    AcceptedBatch,
    FrictionSignal,
    SignalBatch,
    upgrade,
)
from service.errors import ProblemError, describe_errors

__all__ = [
    "check_content_type",
    "current_batch",
    "check_days",
    "decode_body",
    "gunzip_bounded",
    "validate_batch",
]

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


def validate_batch(body: bytes) -> SignalBatch:
    """The validated batch in the current version, or a ``ProblemError`` echoing nothing."""
    guard_body(body)
    try:
        batch: AcceptedBatch = FAIL_FAST.validate_json(body, strict=True)
    except ValidationError as exc:
        raise _problem(exc.errors(include_url=False, include_input=False)) from None
    return current_batch(batch)


def current_batch(batch: AcceptedBatch) -> SignalBatch:
    """Every signal of an accepted batch in the current version (v1 mapped by ``upgrade``)."""
    accepted = batch.signals
    signals: tuple[FrictionSignal, ...]
    # isinstance: the fail-fast validator builds subclasses of the shared models.
    if all(isinstance(s, FrictionSignal) for s in accepted):
        signals = accepted  # type: ignore[assignment]  # all current: nothing to map
    else:
        signals = tuple(upgrade(s) for s in accepted)
    # Both shapes were validated: build the batch without validating again.
    return SignalBatch.model_construct(signals=signals)


def _untagged(errors: Sequence[ErrorDetails]) -> list[ErrorDetails]:
    """Errors located as in the signal itself: the union adds its tag after the index."""
    out: list[ErrorDetails] = []
    for err in errors:
        loc = tuple(err["loc"])
        if len(loc) > 2 and loc[0] == "signals" and isinstance(loc[2], int):
            err = {**err, "loc": loc[:2] + loc[3:]}
        out.append(err)
    return out


def _version_problem(errors: Sequence[ErrorDetails]) -> ProblemError | None:
    """A signal without ``schema_version``, or with one this collector does not accept."""
    for kind, code, rule, detail in (
        ("union_tag_not_found", "missing_schema_version", "missing", "is missing"),
        ("union_tag_invalid", "unsupported_schema_version", "supported", "is not supported"),
    ):
        bad = [e for e in errors if e["type"] == kind]
        if bad:
            return ProblemError(
                422,
                code,
                f"schema_version {detail}: this collector accepts versions "
                f"{', '.join(str(v) for v in sorted(SUPPORTED_SCHEMA_VERSIONS))}.",
                errors=[
                    {
                        "pointer": "/" + "/".join(str(p) for p in e["loc"]) + "/schema_version",
                        "rule": rule,
                        "detail": f"schema_version {detail}",
                    }
                    for e in bad
                ],
            )
    return None


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
    version = _version_problem(errors)
    if version is not None:
        return version
    described = describe_errors(_untagged(errors))
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
