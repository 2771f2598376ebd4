"""``signal_json`` writes ``model_dump_json``'s bytes for every valid signal (the sender's body
is built from it), and leaves anything outside the vocabularies to pydantic."""

from __future__ import annotations

import datetime as dt
import warnings
from typing import Any
from unittest.mock import patch

import pytest
from hypothesis import given
from hypothesis import strategies as st

from client.sender import encode_batch
from contract.schema import (
    MAX_ARGS,
    ArgName,
    ArgShape,
    ArgType,
    ClientInfo,
    FrictionSignal,
    Outcome,
    Platform,
    RingEntry,
    ToolName,
    signal_json,
)
from tests.factories import arg_shapes, make_signal, signals

#: Any valid signal, wider than ``signals``: any day a date holds, up to ``MAX_ARGS`` args.
wide_signals = st.builds(
    lambda s, day, args: s.model_copy(update={"day": day, "args": args}),
    signals,
    st.dates(),
    st.lists(arg_shapes, max_size=MAX_ARGS).map(tuple),
)


@given(wide_signals)
def test_the_same_json_as_pydantic_for_any_valid_signal(signal: FrictionSignal) -> None:
    # the copy is still a valid signal: what the property is about
    assert FrictionSignal.model_validate(signal.model_dump()) == signal
    assert signal_json(signal) == signal.model_dump_json()


@given(wide_signals)
def test_a_valid_signal_is_written_from_the_tables_alone(signal: FrictionSignal) -> None:
    """No valid signal falls back to pydantic: every vocabulary the models hold is in the
    tables (a vocabulary they missed would still give the right bytes, only slowly)."""

    def refuse(*_args: Any, **_kwargs: Any) -> str:
        raise AssertionError("signal_json fell back to model_dump_json")

    with patch.object(FrictionSignal, "model_dump_json", refuse):
        assert signal_json(signal)


@given(st.lists(signals, max_size=6))
def test_the_batch_body_is_pydantic_s_json_of_each_signal(batch: list[FrictionSignal]) -> None:
    expected = b'{"signals":[' + b",".join(s.model_dump_json().encode() for s in batch) + b"]}"
    assert encode_batch(batch) == expected


def _unvalidated(**fields: Any) -> FrictionSignal:
    return make_signal().model_copy(update=fields)


@given(
    st.sampled_from(["friction_type", "tool_attempted", "error_class", "attempts"]),
    st.text(max_size=8) | st.integers(),
)
def test_a_value_outside_the_vocabularies_is_pydantic_s_to_write(field: str, value: Any) -> None:
    signal = _unvalidated(**{field: value})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pydantic warns of the unexpected value
        assert signal_json(signal) == signal.model_dump_json()


def _entry(**fields: Any) -> RingEntry:
    return RingEntry.model_construct(**fields)


def _shape(**fields: Any) -> ArgShape:
    return ArgShape.model_construct(**fields)


@pytest.mark.parametrize(
    "fields",
    [
        {"ring": (_entry(tool='"', outcome=Outcome.ok),)},
        {"ring": (_entry(tool=ToolName.read_note, outcome=3),)},
        {"args": (_shape(name=ArgName.other, type="\\", size=None),)},
        {"args": (_shape(name=ArgName.other, type=ArgType.null, size=[]),)},
    ],
)
def test_a_ring_entry_or_arg_outside_the_vocabularies_is_pydantic_s(fields: Any) -> None:
    signal = _unvalidated(**fields)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert signal_json(signal) == signal.model_dump_json()
        assert signal_json(signal) == signal.model_dump_json()  # nothing of it was kept


@given(st.text(st.characters(exclude_categories=["Cs"]), max_size=20))
def test_any_version_string_is_written_as_pydantic_writes_it(version: str) -> None:
    client = ClientInfo.model_construct(version=version, platform=Platform.linux)
    signal = _unvalidated(client=client)
    assert signal_json(signal) == signal.model_dump_json()


def test_a_date_of_any_year_is_written_as_pydantic_writes_it() -> None:
    for day in (dt.date.min, dt.date(999, 1, 2), dt.date.max):
        signal = _unvalidated(day=day)
        assert signal_json(signal) == signal.model_dump_json()
