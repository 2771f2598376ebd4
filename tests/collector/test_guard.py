"""A refused body costs what its bytes cost: pydantic never reads more than one signal of it.

The attack class: a body at the size limit whose refusal makes the validator do work that
grows with its keys, items or errors -- keys that contain a declared key's text
(``"123\\"day":0``, the escaped quote that fooled the old byte-count guard), escaped key
spellings, unknown or repeated keys, empty objects, bare items, in any container. For each, the
test records what pydantic is handed (``collector.guard`` is the only caller of the
contract's validator on the ingest path) and asserts on sizes, never on time: every piece is
at most one small body or one signal's bytes, and the answer is a refusal. The CPU figures are
the benchmark's (``benchmarks/bench_collector.py``, ``hostile``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collector import guard
from collector.ingest import validate_batch
from contract.schema import MAX_BATCH, AcceptedBatch
from service.errors import ProblemError
from tests.factories import signal_json
from tests.hypothesis_profiles import at_most

SIZE = 256 * 1024


class _Recording:
    """The contract's validator, recording the size of every body it is handed."""

    def __init__(self) -> None:
        self.sizes: list[int] = []

    def validate_json(self, data: bytes, **options: Any) -> Any:
        self.sizes.append(len(data))
        return AcceptedBatch.__pydantic_validator__.validate_json(data, **options)


@contextmanager
def recording() -> Iterator[_Recording]:
    judge = _Recording()
    with mock.patch.object(guard, "_JUDGE", judge):
        yield judge


def _repeated(head: bytes, item: bytes, tail: bytes, size: int = SIZE) -> bytes:
    return head + b",".join([item] * ((size - len(head) - len(tail)) // (len(item) + 1))) + tail


#: Key texts an attacker would try: a declared key behind an escaped quote, escaped spellings
#: of declared keys, declared keys themselves (repeated), unknown ones.
_KEYS = st.sampled_from(
    [
        rb"123\"day",
        rb"123456789\"day",  # fewer colons than 500 full signals hold
        rb"1\"signals",
        rb"x\"name",
        rb"\u0064ay",
        rb"sig\u006eals",
        b"day",
        b"signals",
        b"args",
        b"k",
        b"\\\\",
    ]
)
_VALUES = st.sampled_from([b"0", b'""', b"null", b"{}", b"[]", b'"2026-11-30"'])
#: Where the repeated part sits: (head, tail).
_PLACES = st.sampled_from(
    [
        (b"{", b"}"),
        (b'{"signals":[{', b"}]}"),
        (b'{"signals":[{"schema_version":2,', b"}]}"),
        (b'{"signals":[{"args":[{', b"}]}]}"),
        (b'{"signals":[{"app":{', b"}}]}"),
    ]
)
_ITEMS = st.sampled_from([b"{}", b"0", b"[]", b'""', b"[{}]", b'{"k":0}'])
_LISTS = st.sampled_from(
    [
        (b'{"signals":[', b"]}"),
        (b'{"signals":[{}', b"]}"),
        (b'{"signals":[{"args":[', b"]}]}"),
        (b'{"signals":[{"ring":[', b"]}]}"),
    ]
)


@st.composite
def hostile_bodies(draw: st.DrawFn) -> bytes:
    if draw(st.booleans()):
        head, tail = draw(_PLACES)
        pair = b'"' + draw(_KEYS) + b'":' + draw(_VALUES)
        return _repeated(head, pair, tail)
    head, tail = draw(_LISTS)
    return _repeated(head, draw(_ITEMS), tail)


def _refused_reading_little(body: bytes) -> ProblemError:
    with recording() as judge, pytest.raises(ProblemError) as refused:
        validate_batch(body)
    largest = max(judge.sizes, default=0)
    assert largest <= max(guard.WHOLE_BELOW, guard.ITEM_MOST_BYTES + 16), judge.sizes
    assert len(judge.sizes) <= 1  # the first refused item answers
    return refused.value


@pytest.mark.parametrize("key", [rb"123\"day", rb"123456789\"day"])
def test_the_escaped_quote_body_is_refused_unread(key: bytes) -> None:
    body = _repeated(b'{"signals":[{', b'"' + key + b'":0', b"}]}", 1 << 20)
    problem = _refused_reading_little(body)
    assert problem.status in (413, 422)


# Each example builds and refuses a 256 KiB body: a fifth of the ci budget.
@settings(max_examples=at_most(20))
@given(body=hostile_bodies())
def test_no_hostile_body_is_handed_to_pydantic_whole(body: bytes) -> None:
    _refused_reading_little(body)


def test_a_large_valid_batch_is_never_handed_to_pydantic() -> None:
    signal = signal_json()
    signal["args"] = [{"name": "path", "type": "string", "size": "1-16"}] * 32
    signal["ring"] = [{"tool": "read_file", "outcome": "ok"}] * 10
    body = json.dumps({"signals": [dict(signal, signal_id=_fresh()) for _ in range(500)]}, indent=2)
    with recording() as judge:
        assert len(validate_batch(body.encode()).signals) == 500
    assert judge.sizes == []


def test_a_late_wrong_signal_is_judged_alone_and_named() -> None:
    signals = [signal_json() for _ in range(300)]
    signals[-1]["friction_type"] = "nope"
    body = json.dumps({"signals": signals}).encode()
    assert len(body) > guard.WHOLE_BELOW
    with recording() as judge, pytest.raises(ProblemError) as refused:
        validate_batch(body)
    assert len(judge.sizes) == 1 and judge.sizes[0] < 4096
    assert refused.value.errors == [
        {
            "pointer": "/signals/299/friction_type",
            "rule": "enum",
            "detail": "not one of the allowed values",
        }
    ]


def _fresh() -> str:
    import uuid

    return str(uuid.uuid4())


def _bound(token: bytes) -> int:
    return 1 + MAX_BATCH * guard._SIGNAL_MOST[token]


@pytest.mark.parametrize(
    ("body", "fits"),
    [
        (b":" * _bound(b":") + b"x" * 1000, True),
        (b":" * (_bound(b":") + 1), False),
        (b"{" * _bound(b"{") + b"\\" * 1000, True),
        (b"{" * (_bound(b"{") + 1), False),
        (b"{:" * 9 + b"," * 18, True),  # commas up to colons plus objects
        (b"{:" * 9 + b"," * 19, False),
        (b"," * 3, False),
        (b'"x":1,' * 1000, True),
    ],
    ids=[
        "colons at",
        "colons over",
        "objects at",
        "objects over",
        "commas at",
        "commas over",
        "bare commas",
        "plain",
    ],
)
def test_the_structure_count_is_the_count_of_each_byte(body: bytes, fits: bool) -> None:
    """The guard counts ``: { ,`` in one pass over the body: each bound holds exactly."""
    assert guard._fits_a_batch(body) is fits


def _naively_fits(body: bytes) -> bool:
    """The structure bounds, each byte counted over the whole body."""
    colons, objects, commas = (body.count(token) for token in (b":", b"{", b","))
    return (
        colons <= _bound(b":")
        and objects <= _bound(b"{")
        and commas <= _bound(b",")
        and commas <= colons + objects
    )


@settings(max_examples=at_most(60))
@given(
    parts=st.lists(
        st.tuples(st.sampled_from([b":", b"{", b",", b"x", b'"', b" "]), st.integers(0, 100_000)),
        max_size=6,
    )
)
def test_the_structure_count_is_the_naive_count(parts: list[tuple[bytes, int]]) -> None:
    """However the counted bytes mix, the guard's verdict is that of counting each byte."""
    body = b"".join(token * n for token, n in parts)
    assert guard._fits_a_batch(body) is _naively_fits(body)


class _Counted(bytes):
    """What the guard counts in, recording each count it makes."""

    made: list[bytes] = []

    def count(self, token: Any, *args: Any) -> int:
        _Counted.made.append(bytes(token))
        return super().count(token, *args)


class _Body(bytes):
    """A body whose translation records the counts made in it."""

    def translate(self, table: Any, /, delete: Any = b"") -> bytes:
        return _Counted(super().translate(table, delete))


@pytest.mark.parametrize("item", [b"{}", b"0", b'"k":0', b'{"k":0}'])
def test_a_body_dense_in_structure_is_refused_uncounted(item: bytes) -> None:
    """More ``: { ,`` than all three bounds together: refused by their sum, no byte counted
    (a body of empty objects cost the old guard three counts over ~700 KB)."""
    body = _Body(_repeated(b'{"signals":[{"args":[', item, b"]}]}", 1 << 20))
    _Counted.made.clear()
    assert guard._fits_a_batch(body) is False
    assert _Counted.made == []
