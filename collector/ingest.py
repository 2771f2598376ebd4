"""The pure part of ingestion: raw bytes in, validated signals out, or a problem.

- ``decode_body`` undoes ``Content-Encoding: gzip`` with a bounded ``zlib`` decompressobj: it never
  holds more than the cap plus one chunk, so a gzip bomb stops at the cap (413).
- ``validate_batch`` decodes the raw JSON once with the fast decoder, msgspec structs generated
  from the contract's pydantic models (``collector/_wire.py``); a body it refuses goes to
  pydantic, the contract itself, which names the errors as value-free problems: malformed JSON
  (400), too many signals (413), a missing or unsupported schema version, an empty batch, or
  field errors (422) naming the JSON pointer and the rule (``collector.guard``: its CPU is
  bounded by the body's bytes).
- Each signal may be the current version or the previous one (tagged on ``schema_version``);
  ``current_batch`` maps every v1 signal to v2 before any row is built (its attempt count to
  a bucket, its ``other`` arguments to one).
- Then the rules on validated signals (``signal_rules``): ``check_days`` refuses signals dated
  outside the accepted window, ``check_args`` signals whose argument names repeat or are not
  their tool's.

Tool and argument names are checked by the model itself (``ToolName``, ``ArgName``: the
catalogue's names and ``other``); which names go with which tool, by ``check_args``.
"""

from __future__ import annotations

import datetime as dt
import functools
import operator
import zlib
from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

import msgspec

from collector import _wire
from collector.guard import judged
from contract.catalogue import load_catalogue
from contract.days import accepts_day
from contract.limits import LATE_DAYS
from contract.schema import ArgName, ArgType, attempts_bucket, size_bucket
from service.errors import ProblemError

__all__ = [
    "SignalRule",
    "ValidBatch",
    "check_args",
    "check_content_type",
    "current_batch",
    "check_days",
    "decode_body",
    "gunzip_bounded",
    "signal_rules",
    "validate_batch",
]

_CHUNK = 64 * 1024


def check_content_type(content_type: str | None) -> None:
    """Only ``application/json`` (a ``charset=utf-8`` parameter is allowed)."""
    if content_type == "application/json":  # what every client sends: nothing to parse
        return
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
    if content_encoding is None:
        return raw
    coding = content_encoding.strip().lower()
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


class ValidBatch(NamedTuple):
    """A validated body: its signals in the current version, as the fast decoder's structs."""

    signals: tuple[_wire.FrictionSignal, ...]


_FAST = msgspec.json.Decoder(_wire.AcceptedBatch)


def validate_batch(body: bytes) -> ValidBatch:
    """The validated batch in the current version, or a ``ProblemError`` echoing nothing.

    The fast decoder (msgspec, derived from the contract) reads every body a client writes;
    a body it refuses is judged by pydantic (``collector.guard.judged``), which names the
    errors and accepts the rarer spellings. Either way the rules are the contract's.
    """
    try:
        signals: Sequence[_wire.Signal] = _FAST.decode(body).signals
    except (msgspec.MsgspecError, RecursionError) as exc:
        signals = judged(body, str(exc))
    return ValidBatch(current_batch(signals))


def current_batch(signals: Sequence[_wire.Signal]) -> tuple[_wire.FrictionSignal, ...]:
    """Every signal in the current version (a v1 signal's attempt count becomes its bucket and
    its ``other`` arguments one, as ``contract.schema.upgrade`` maps the models)."""
    if _wire.FrictionSignalV1 not in set(map(type, signals)):  # the common case, at C speed
        return tuple(signals)  # type: ignore[arg-type]  # every one is current
    return tuple(_upgraded(s) if isinstance(s, _wire.FrictionSignalV1) else s for s in signals)


def _upgraded(signal: _wire.FrictionSignalV1) -> _wire.FrictionSignal:
    fields = msgspec.structs.asdict(signal)
    bucket = attempts_bucket(fields.pop("attempt_count"))
    fields["args"] = _folded(signal.args)
    return _wire.FrictionSignal(**fields, attempts=None if bucket is None else bucket.value)


_OTHER = ArgName.other.value


def _folded(args: tuple[_wire.ArgShape, ...]) -> tuple[_wire.ArgShape, ...]:
    """v1's ``other`` entries (one per undeclared key) as v2's one, after the declared ones
    (as ``contract.schema.upgrade`` folds them, on the fast decoder's structs)."""
    undeclared = sum(1 for a in args if a.name == _OTHER)
    if not undeclared:
        return args
    kept = tuple(a for a in args if a.name != _OTHER)
    shape = {"name": _OTHER, "type": ArgType.object.value, "size": size_bucket(undeclared).value}
    return (*kept, msgspec.convert(shape, _wire.ArgShape))


_DAY = operator.attrgetter("day")

#: A rule every validated batch must pass: it returns, or raises the ``ProblemError`` that
#: answers the request. It sees the batch's signals (current version) and the collector's UTC
#: day; its other inputs are bound when the rules are built (``signal_rules``).
SignalRule = Callable[[Sequence[_wire.FrictionSignal], dt.date], None]


def signal_rules(*, retention_days: int) -> tuple[SignalRule, ...]:
    """The rules on validated signals, in order (the first refusal answers): a new rule is one
    more entry here."""
    return (
        functools.partial(check_days, retention_days=retention_days),
        functools.partial(check_args, carried=load_catalogue().signal_arg_names()),
    )


def check_days(
    signals: Sequence[_wire.FrictionSignal], today: dt.date, retention_days: int
) -> None:
    """Refuse a signal whose day's release period is closed, or dated more than a day ahead
    (422, ``day_window``).

    A signal counts in the period of its own day (``contract.days``); once that period is
    closed it is released and never redrawn, so a late signal could only pile into another
    period -- a backlog of 30 days in one release. One day ahead allows for clocks east of UTC;
    one signal dated 9999-12-31 would otherwise be kept for ever.
    """
    del retention_days  # the window ends long before retention: LATE_DAYS
    # A batch carries a handful of distinct days: each is checked once (at C speed per signal).
    if all(accepts_day(day, today) for day in set(map(_DAY, signals))):
        return
    bad = [i for i, signal in enumerate(signals) if not accepts_day(signal.day, today)]
    if bad:
        raise ProblemError(
            422,
            "day_out_of_window",
            f"A signal's day must be within the last {LATE_DAYS} days, today or tomorrow (UTC): "
            "an older day's release is closed.",
            errors=[
                {
                    "pointer": f"/signals/{i}/day",
                    "rule": "day_window",
                    "detail": "day is outside the accepted window",
                }
                for i in bad
            ],
        )


def check_args(
    signals: Sequence[_wire.FrictionSignal],
    today: dt.date,
    carried: Mapping[str, frozenset[str]],
) -> None:
    """Refuse a signal whose argument names repeat, or name an argument its tool does not
    declare (422, ``invalid_arg_names``; rules ``arg_once``, ``arg_declared``).

    ``carried``: each tool's names a signal may carry (``Catalogue.signal_arg_names``: the
    declared ones and ``other``; only ``other`` for ``other``), what a client builds
    (``client/capture.py``). A release counts each argument of a signal once in the shapes
    cube; a name repeated would count one signal several times in one cell.
    """
    del today
    for signal in signals:
        args = signal.args
        if args:  # most signals carry a few arguments; a set of them answers both rules
            names = {a.name for a in args}
            if len(names) < len(args) or not names <= carried[signal.tool_attempted]:
                break
    else:
        return
    errors = [
        {"pointer": f"/signals/{i}/args", "rule": rule, "detail": _ARG_RULES[rule]}
        for i, signal in enumerate(signals)
        if (rule := _arg_rule(signal.args, carried[signal.tool_attempted])) is not None
    ]
    raise ProblemError(
        422,
        "invalid_arg_names",
        "Each argument name of a signal must be one its tool declares, or other, at most once.",
        errors=errors,
    )


#: The rules of ``check_args`` and their fixed descriptions.
_ARG_RULES = {
    "arg_declared": "an argument name the tool does not declare",
    "arg_once": "an argument name given more than once",
}


def _arg_rule(args: tuple[_wire.ArgShape, ...], carried: frozenset[str]) -> str | None:
    """The rule the first breaking argument of ``args`` breaks, if any.

    No argument index: a v1 signal's ``other`` entries are folded before the rules run, so
    an index into its args would not be the body's."""
    seen: set[str] = set()
    for arg in args:
        if arg.name not in carried:
            return "arg_declared"
        if arg.name in seen:
            return "arg_once"
        seen.add(arg.name)
    return None
