"""Buckets and shapes: pure functions, property-tested."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from client.capture import BUCKET_BOUNDS, bucket, capture_args, shape_of
from contract.catalogue import load_catalogue
from contract.schema import ArgName, ArgShape, ArgType, SizeBucket

ORDER = list(SizeBucket)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(), inner, max_size=5),
    max_leaves=20,
)


@given(st.integers(min_value=0, max_value=1 << 40), st.integers(min_value=0, max_value=1 << 40))
def test_bucket_is_monotone(a: int, b: int) -> None:
    lo, hi = sorted((a, b))
    assert ORDER.index(bucket(lo)) <= ORDER.index(bucket(hi))


@given(st.integers(min_value=0, max_value=1 << 40))
def test_bucket_is_total_and_respects_bounds(n: int) -> None:
    got = bucket(n)
    assert got in ORDER
    for bound, name in BUCKET_BOUNDS:
        if n <= bound:
            assert got is name
            break
    else:
        assert got is SizeBucket.over_1m


def test_bucket_edges() -> None:
    assert [bucket(n) for n in (0, 1, 16, 17, 256, 257, 4096, 4097, 65536, 65537)] == [
        SizeBucket.zero,
        SizeBucket.up_to_16,
        SizeBucket.up_to_16,
        SizeBucket.up_to_256,
        SizeBucket.up_to_256,
        SizeBucket.up_to_4k,
        SizeBucket.up_to_4k,
        SizeBucket.up_to_64k,
        SizeBucket.up_to_64k,
        SizeBucket.up_to_1m,
    ]
    assert bucket(1024 * 1024) is SizeBucket.up_to_1m
    assert bucket(1024 * 1024 + 1) is SizeBucket.over_1m


def test_strings_are_sized_in_utf8_bytes() -> None:
    assert shape_of("é" * 8) == (ArgType.string, SizeBucket.up_to_16)  # 16 bytes
    assert shape_of("é" * 9) == (ArgType.string, SizeBucket.up_to_256)  # 18 bytes
    assert shape_of("😀" * 5) == (ArgType.string, SizeBucket.up_to_256)  # 20 bytes


def test_scalars_have_no_size_and_containers_count_items() -> None:
    assert shape_of(None) == (ArgType.null, None)
    assert shape_of(True) == (ArgType.boolean, None)
    assert shape_of(10**30) == (ArgType.integer, None)
    assert shape_of(1.5) == (ArgType.number, None)
    assert shape_of(list(range(17))) == (ArgType.array, SizeBucket.up_to_256)
    assert shape_of({"a": "x" * 10_000}) == (ArgType.object, SizeBucket.up_to_16)


@given(st.dictionaries(st.text(min_size=1), json_values, max_size=40))
def test_shapes_never_contain_a_value(args: dict[str, object]) -> None:
    tool = load_catalogue().get("send_email")
    shapes = capture_args(tool, args)
    allowed = (
        {m.value for m in ArgName} | {m.value for m in ArgType} | {m.value for m in SizeBucket}
    )
    for shape in shapes:
        dumped = shape.model_dump(mode="json")
        assert set(dumped) == {"name", "type", "size"}
        for v in dumped.values():
            assert v is None or v in allowed
    # Undeclared keys are anonymised: a key can carry a value as well as a value can.
    declared = set(tool.arg_names) if tool else set()
    names = [s.name.value for s in shapes]
    assert all(n in declared or n == "other" for n in names)
    undeclared = [k for k in args if k not in declared]
    assert len(shapes) == len(args) - len(undeclared) + (1 if undeclared else 0)
    # Undeclared keys fold into ONE `other` entry, whatever their number, types and sizes:
    # an agent cannot spell a value out in the shapes of many undeclared keys.
    assert names.count("other") == (1 if undeclared else 0)
    if undeclared:
        assert shapes[-1] == ArgShape(
            name=ArgName.other, type=ArgType.object, size=bucket(len(undeclared))
        )
    assert json.dumps([s.model_dump(mode="json") for s in shapes])  # serialisable


def test_declared_names_kept_and_sorted() -> None:
    tool = load_catalogue().get("send_email")
    shapes = capture_args(tool, {"subject": "hi", "to": ["a@b.c"], "x-secret": 1})
    assert [(s.name.value, s.type.value, s.size) for s in shapes] == [
        ("subject", "string", SizeBucket.up_to_16),
        ("to", "array", SizeBucket.up_to_16),
        ("other", "object", SizeBucket.up_to_16),
    ]
