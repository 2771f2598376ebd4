"""The pure ingestion core: content type, bounded gzip decoding, strict validation."""

from __future__ import annotations

import datetime as dt
import gzip
import json
import zlib

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from collector.ingest import (
    check_content_type,
    check_days,
    decode_body,
    gunzip_bounded,
    validate_batch,
)
from contract.limits import LATE_DAYS
from contract.schema import MAX_BATCH
from service.errors import ProblemError
from tests.collector.conftest import TODAY, batch_body, make_signal, signal_json

LIMIT = 4 * 1024 * 1024


@pytest.mark.parametrize(
    "content_type",
    ["application/json", "application/json; charset=utf-8", 'Application/JSON;charset="UTF-8"'],
)
def test_json_content_types_pass(content_type: str) -> None:
    check_content_type(content_type)


@pytest.mark.parametrize(
    ("content_type", "code"),
    [
        (None, "unsupported_media_type"),
        ("text/plain", "unsupported_media_type"),
        ("application/x-www-form-urlencoded", "unsupported_media_type"),
        ("application/json; charset=latin-1", "unsupported_charset"),
    ],
)
def test_other_content_types_refused(content_type: str | None, code: str) -> None:
    with pytest.raises(ProblemError) as info:
        check_content_type(content_type)
    assert (info.value.status, info.value.code) == (415, code)


@given(st.binary(max_size=20_000))
def test_gzip_round_trip(data: bytes) -> None:
    assert decode_body(gzip.compress(data), "gzip", max_decompressed=LIMIT) == data
    assert decode_body(data, None, max_decompressed=LIMIT) == data


@given(st.integers(1, 5000), st.integers(0, 3))
def test_gzip_cap_is_exact(limit: int, extra: int) -> None:
    data = b"a" * (limit + extra)
    if extra == 0:
        assert gunzip_bounded(gzip.compress(data), limit) == data
    else:
        with pytest.raises(ProblemError) as info:
            gunzip_bounded(gzip.compress(data), limit)
        assert info.value.code == "decompressed_too_large"


def test_gzip_bomb_stops_at_the_cap() -> None:
    # 256 MiB of zeros compress to ~256 KiB; decoding must stop right after 4 MiB.
    deflater = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    chunk = b"\0" * (1024 * 1024)
    bomb = b"".join(deflater.compress(chunk) for _ in range(256)) + deflater.flush()
    assert len(bomb) < 300 * 1024
    with pytest.raises(ProblemError) as info:
        decode_body(bomb, "gzip", max_decompressed=LIMIT)
    assert (info.value.status, info.value.code) == (413, "decompressed_too_large")


@pytest.mark.parametrize(
    "raw",
    [b"not gzip at all", gzip.compress(b"{}")[:-6], gzip.compress(b"{}") + b"trailing"],
    ids=["garbage", "truncated", "trailing-data"],
)
def test_malformed_gzip(raw: bytes) -> None:
    with pytest.raises(ProblemError) as info:
        decode_body(raw, "gzip", max_decompressed=LIMIT)
    assert (info.value.status, info.value.code) == (400, "malformed_gzip")


def test_unknown_content_encoding() -> None:
    with pytest.raises(ProblemError) as info:
        decode_body(b"x", "br", max_decompressed=LIMIT)
    assert (info.value.status, info.value.code) == (415, "unsupported_content_encoding")


def test_valid_batch_round_trips() -> None:
    sigs = [make_signal() for _ in range(3)]
    got = validate_batch(batch_body(sigs)).signals
    assert [json.loads(msgspec.json.encode(s)) for s in got] == [
        s.model_dump(mode="json") for s in sigs
    ]


def _code(body: bytes) -> tuple[int, str, list[dict[str, str]]]:
    with pytest.raises(ProblemError) as info:
        validate_batch(body)
    return info.value.status, info.value.code, info.value.errors or []


def test_item_errors_are_not_reported_as_empty_batch() -> None:
    bad = signal_json(make_signal())
    bad["friction_type"] = "nope"
    status, code, errors = _code(batch_body([bad]))
    assert (status, code) == (422, "invalid_signals")
    assert [e["pointer"] for e in errors] == ["/signals/0/friction_type"]


def test_too_many_signals_is_413() -> None:
    one = signal_json(make_signal())
    status, code, _ = _code(json.dumps({"signals": [one] * (MAX_BATCH + 1)}).encode())
    assert (status, code) == (413, "too_many_signals")


def test_extra_field_name_is_not_echoed() -> None:
    bad = signal_json(make_signal())
    bad["canary_field_name"] = "canary-value"
    status, code, errors = _code(batch_body([bad]))
    assert (status, code) == (422, "invalid_signals")
    assert "canary" not in json.dumps(errors)
    assert errors[0]["pointer"] == "/signals/0/*"


@given(st.lists(st.integers(-LATE_DAYS - 3, 3), min_size=1, max_size=40))
def test_check_days_refuses_exactly_the_signals_outside_the_window(offsets: list[int]) -> None:
    """Whatever the mix of days: the refusal names every signal outside the window, by its
    pointer, and only those; a batch with none passes."""
    today = TODAY
    batch = validate_batch(
        batch_body([make_signal(day=today + dt.timedelta(days=n)) for n in offsets])
    ).signals
    outside = [i for i, n in enumerate(offsets) if not -LATE_DAYS <= n <= 1]
    if not outside:
        check_days(batch, today, 30)
        return
    with pytest.raises(ProblemError) as refused:
        check_days(batch, today, 30)
    assert refused.value.code == "day_out_of_window"
    assert [e["pointer"] for e in refused.value.errors or []] == [
        f"/signals/{i}/day" for i in outside
    ]
