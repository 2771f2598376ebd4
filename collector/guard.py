"""pydantic's verdict on a body the fast decoder refused, for a bounded CPU cost.

A body msgspec refuses (``collector/_wire.py``) is judged by the pydantic contract itself,
which names the errors (pointer and rule) and accepts the spellings msgspec does not read
(braces around an id, ``2.0`` for a version). pydantic's cost grows with what it is handed --
every node it parses, every valid item before a failing one, every error it builds -- so it is
never handed more than a bounded piece of a large body:

- a body of at most ``WHOLE_BELOW`` bytes is validated whole (its size bounds everything);
- a larger one is cut by msgspec into its items, undecoded (``Envelope``); each item is tried
  with msgspec, and only an item msgspec refuses is handed to pydantic, alone, once its bytes
  show no more structure than one signal can hold and it is at most ``ITEM_MOST_BYTES`` long
  (``_fits_one_signal``). The first item that
  pydantic refuses is the answer, as ``FailFast`` makes it for the whole batch;
- a large body whose envelope is wrong is refused with msgspec's first envelope error.

The answer is the one pydantic gives for the whole body (``tests/collector/test_fast_decoder.py``
proves it on generated bodies), except for two kinds of body that no valid client writes: a
refused item with more structure than a signal holds, and a large body with several envelope
errors (it names the first). Colons, commas and brackets are counted, never keys: a key's text
can be spelled with escapes, its structure cannot.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import msgspec
from pydantic import ValidationError
from pydantic_core import ErrorDetails

from collector import _wire
from contract.schema import (
    MAX_ARGS,
    MAX_BATCH,
    RING_SIZE,
    SUPPORTED_SCHEMA_VERSIONS,
    AcceptedBatch,
)
from service.errors import ProblemError, describe_errors

__all__ = ["ITEM_MOST_BYTES", "WHOLE_BELOW", "judged", "problem_of"]

#: A refused body up to this size is validated whole by pydantic: at most ~2,700 keys of
#: 6 bytes, a few milliseconds of errors at worst.
WHOLE_BELOW = 8 * 1024

#: pydantic's validator of the accepted batch: the contract's own (``FailFast`` on every array:
#: a failed batch yields the first failing item's errors, never one per item).
_JUDGE = AcceptedBatch.__pydantic_validator__
_ENVELOPE = msgspec.json.Decoder(_wire.Envelope)
_ITEM = msgspec.json.Decoder(_wire.Signal)

#: The most of each byte one valid signal holds (every optional field present, args and ring
#: full). A valid signal's strings are enums, an id, a date and a version: only an id spelled
#: with braces or ``urn:uuid:`` adds one ``{`` or two ``:``.
_SIGNAL_MOST: dict[bytes, int] = {
    b"{": 4 + MAX_ARGS + RING_SIZE,
    b"[": 2,
    b":": 2 + 16 + 3 + 2 + 3 * MAX_ARGS + 2 * RING_SIZE,
    b",": 16 + 3 + 2 + 3 * MAX_ARGS + 2 * RING_SIZE + MAX_ARGS + RING_SIZE,
}
#: The most an item refused by msgspec may hold to be handed to pydantic: four times a full
#: signal's structure (a wrong signal is often larger than a valid one: an array too long)
#: costs pydantic well under a millisecond; more is refused by its bytes alone.
_ITEM_MOST = {token: 4 * most + 64 for token, most in _SIGNAL_MOST.items()}
#: ... and at most this many bytes: a full signal is ~3 KB compact; a refused item larger
#: than this (whitespace, escapes, long strings) is refused by its size, unread by pydantic.
ITEM_MOST_BYTES = 64 * 1024
#: What a JSON value of each kind msgspec names looks like, for a refusal of the envelope: the
#: answer names the kind, never the value, so any value of the kind gives the same answer.
_STAND_INS: dict[str, bytes] = {
    "array": b"[]",
    "str": b'""',
    "int": b"0",
    "float": b"0.5",
    "bool": b"true",
    "null": b"null",
}


def judged(body: bytes, refusal: str = "") -> list[_wire.Signal]:
    """pydantic's verdict on a body the fast decoder refused (``refusal``: msgspec's message):
    the signals it accepts (as the fast decoder's structs, in order), or its ``ProblemError``."""
    if len(body) <= WHOLE_BELOW:
        return _accepted(body, 0)
    if not _fits_a_batch(body):
        raise problem_of([_error("too_long", ("signals",))])
    try:
        items = _ENVELOPE.decode(body).signals
    except msgspec.ValidationError as exc:  # (a DecodeError: caught first)
        raise _envelope_problem(str(exc)) from None
    except (msgspec.DecodeError, RecursionError):  # pydantic's parser nests even less deep
        raise problem_of([_error("json_invalid", ())]) from None
    if not items:
        raise problem_of([_error("too_short", ("signals",))])
    # The items before the one msgspec refused first were read in full: pydantic accepts them.
    # As FailFast does, a wrong item among the first MAX_BATCH answers before their number.
    first = _failed_item(refusal)
    signals: list[_wire.Signal] = []
    for index in range(first, min(len(items), MAX_BATCH)):
        raw = bytes(items[index])
        if index != first:  # msgspec refused the first already
            try:
                signals.append(_ITEM.decode(raw))
                continue
            except msgspec.MsgspecError:
                pass
        if len(raw) > ITEM_MOST_BYTES or not _fits_one_signal(raw):
            raise _too_much_structure(index) from None
        signals += _accepted(b'{"signals":[' + raw + b"]}", index)
    if len(items) > MAX_BATCH:
        raise problem_of([_error("too_long", ("signals",))])
    return [_ITEM.decode(raw) for raw in items[:first]] + signals


def _failed_item(refusal: str) -> int:
    """The index of the item msgspec's message names (``... - at `$.signals[17]...```), or 0."""
    found = _AT_ITEM.search(refusal)
    return int(found.group(1)) if found else 0


_AT_ITEM = re.compile(r" - at `\$\.signals\[(\d+)\]")


def _fits_a_batch(body: bytes) -> bool:
    """Whether the body's bytes hold no more objects and pairs than ``MAX_BATCH`` full signals,
    and no more items: every item of a valid body's arrays is an object and no valid string
    holds ``, : {``, so its commas are at most its colons plus its objects (this bounds what
    msgspec allocates to cut the body into items)."""
    # One pass keeps only the three bytes counted; what is left is their sum, so a body with
    # more of them than all three bounds together is refused without a count (every body dense
    # in empty objects, bare items or keys); otherwise two counts, and the commas are the rest.
    structure = body.translate(None, _NOT_COUNTED)
    if len(structure) > _MOST_COUNTED:
        return False
    colons = structure.count(b":")
    if colons > _MOST_IN_A_BATCH[b":"]:
        return False
    objects = structure.count(b"{")
    if objects > _MOST_IN_A_BATCH[b"{"]:
        return False
    commas = len(structure) - colons - objects
    return commas <= _MOST_IN_A_BATCH[b","] and commas <= colons + objects


_NOT_COUNTED = bytes(b for b in range(256) if b not in b":{,")
#: The most of each counted byte ``MAX_BATCH`` full signals hold (and the envelope's one).
_MOST_IN_A_BATCH = {token: 1 + MAX_BATCH * most for token, most in _SIGNAL_MOST.items()}
_MOST_COUNTED = sum(_MOST_IN_A_BATCH[token] for token in (b":", b"{", b","))


def _accepted(body: bytes, index: int) -> list[_wire.Signal]:
    """The signals pydantic accepts in ``body`` (its errors located from item ``index`` on),
    as structs: re-encoded canonically, which the fast decoder reads as pydantic did."""
    try:
        batch: AcceptedBatch = _JUDGE.validate_json(body, strict=True)
    except ValidationError as exc:
        errors = exc.errors(include_url=False, include_input=False)
        if index:
            errors = [_shifted(e, index) for e in errors]
        raise problem_of(errors) from None
    return [_ITEM.decode(signal.model_dump_json()) for signal in batch.signals]


def _error(kind: str, loc: tuple[str, ...]) -> ErrorDetails:
    return {"type": kind, "loc": loc, "msg": "", "input": None}


def _shifted(error: ErrorDetails, index: int) -> ErrorDetails:
    loc = tuple(error["loc"])
    if len(loc) > 1 and loc[0] == "signals" and isinstance(loc[1], int):
        return {**error, "loc": ("signals", loc[1] + index, *loc[2:])}
    return error


def _fits_one_signal(raw: bytes) -> bool:
    return all(raw.count(token) <= most for token, most in _ITEM_MOST.items())


def _too_much_structure(index: int) -> ProblemError:
    return ProblemError(
        422,
        "invalid_signals",
        "A signal holds more fields or items than any signal can.",
        errors=[{"pointer": f"/signals/{index}", "rule": "too_long", "detail": "too many items"}],
    )


def _envelope_problem(message: str) -> ProblemError:
    """The problem of msgspec's first envelope error (``message``), as pydantic names it."""
    if message.startswith("Expected `object`, got `"):
        kind = message.split("`")[3]
        stand_in = _STAND_INS.get(kind, b"[]")
        _accepted(stand_in, 0)  # raises: a value of that kind is not a batch
    if message.startswith("Object missing required field"):
        return problem_of([_error("missing", ("signals",))])
    if message.startswith("Object contains unknown field"):
        return problem_of([_error("extra_forbidden", ("*",))])
    return problem_of([_error("tuple_type", ("signals",))])


# ---------------------------------------------------------------- pydantic's errors, answered


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


def problem_of(errors: Sequence[ErrorDetails]) -> ProblemError:
    """The value-free problem of pydantic's errors for a body (400, 413 or 422)."""
    if any(e["type"] in ("json_invalid", "json_type") for e in errors):
        return ProblemError(400, "malformed_json", "The body is not valid JSON.")
    kinds = {e["type"] for e in errors if tuple(e["loc"]) == ("signals",)}
    if "too_long" in kinds:
        return ProblemError(
            413, "too_many_signals", "A batch holds at most 500 signals.",
            errors=describe_errors([e for e in errors if tuple(e["loc"]) == ("signals",)]),
        )  # fmt: skip
    if "too_short" in kinds:
        # pydantic also reports "too short" when the first item of the batch failed: only a
        # batch with no other error is really empty.
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
