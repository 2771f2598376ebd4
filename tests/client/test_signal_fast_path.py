"""``report_friction``'s path, made faster, is the same path: the agent's input is judged as
``json.dumps`` + ``model_validate_json`` judged it, and ``build_signal`` validates as
``FrictionSignal(...)`` does and builds the same signal."""

from __future__ import annotations

import datetime as dt
import enum
import json
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from client.friction import ReportInput, _as_json, _describe, build_signal
from client.host import FailureContext
from contract.schema import (
    MAX_ARGS,
    RING_SIZE,
    AppState,
    ArgName,
    ArgShape,
    ArgType,
    ClientInfo,
    ErrorCategory,
    ErrorClass,
    FrictionSignal,
    FrictionType,
    IntentCategory,
    Outcome,
    Platform,
    RingEntry,
    ToolName,
    attempts_bucket,
)
from tests.factories import app_states, arg_shapes, ring_entries

CLIENT = ClientInfo(version="1.2.3", platform=Platform.linux)
DAY = dt.date(2026, 12, 5)

contexts = st.none() | st.builds(
    FailureContext,
    tool=st.sampled_from(ToolName),
    error_class=st.sampled_from(ErrorClass),
    args=st.lists(arg_shapes, max_size=MAX_ARGS).map(tuple),
    ring=st.lists(ring_entries, max_size=RING_SIZE).map(tuple),
    app=app_states,
)
requests = st.builds(
    ReportInput,
    friction_type=st.sampled_from(FrictionType),
    error_category=st.none() | st.sampled_from(ErrorCategory),
    intent_category=st.none() | st.sampled_from(IntentCategory),
    tool_attempted=st.none() | st.sampled_from(ToolName).map(str),
    attempt_count=st.none() | st.integers(1, 10**6),
)


@given(
    requests,
    contexts,
    st.sampled_from(ToolName),
    st.dates(),
    st.lists(ring_entries, max_size=RING_SIZE).map(tuple),
    st.none() | app_states,
)
def test_build_signal_is_the_validated_model(
    request: ReportInput,
    context: FailureContext | None,
    tool: ToolName,
    day: dt.date,
    ring: tuple[RingEntry, ...],
    app: AppState | None,
) -> None:
    built = build_signal(request, context, tool=tool, client=CLIENT, day=day, ring=ring, app=app)
    expected = FrictionSignal(
        schema_version=2,
        signal_id=built.signal_id,
        day=day,
        friction_type=request.friction_type,
        error_category=request.error_category,
        intent_category=request.intent_category,
        tool_attempted=tool,
        attempts=attempts_bucket(request.attempt_count),
        error_class=context.error_class if context else ErrorClass.no_failure,
        args=context.args if context else (),
        ring=context.ring if context else ring,
        app=context.app if context else (app or AppState()),
        client=CLIENT,
    )
    assert type(built) is FrictionSignal
    assert built == expected
    assert built.model_fields_set == expected.model_fields_set
    assert built.signal_id.version == 4
    assert built.model_dump_json() == expected.model_dump_json()


def _context(**fields: object) -> FailureContext:
    base: dict[str, object] = {
        "tool": ToolName.read_note,
        "error_class": ErrorClass.not_found,
        "args": (),
        "ring": (),
        "app": AppState(),
    }
    base.update(fields)
    return FailureContext(**base)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "context",
    [
        _context(ring=(RingEntry(tool=ToolName.read_note, outcome=Outcome.ok),) * (RING_SIZE + 1)),
        _context(
            args=(ArgShape(name=ArgName.other, type=ArgType.null, size=None),) * (MAX_ARGS + 1)
        ),
        _context(error_class="not_found"),  # a str, not the enum: strict
        _context(ring=(("read_note", "ok"),)),  # a pair, not the model
    ],
)
def test_build_signal_refuses_what_the_contract_refuses(context: FailureContext) -> None:
    request = ReportInput(friction_type=FrictionType.other)
    with pytest.raises(ValidationError):
        build_signal(request, context, tool=ToolName.read_note, client=CLIENT, day=DAY)


def test_build_signal_refuses_a_day_with_a_time() -> None:
    request = ReportInput(friction_type=FrictionType.other)
    with pytest.raises(ValidationError):
        build_signal(
            request,
            None,
            tool=ToolName.other,
            client=CLIENT,
            day=dt.datetime(2026, 12, 5, 10, 30),
        )


def test_every_signal_has_a_fresh_random_id() -> None:
    request = ReportInput(friction_type=FrictionType.other)
    ids = {
        build_signal(request, None, tool=ToolName.other, client=CLIENT, day=DAY).signal_id
        for _ in range(50)
    }
    assert len(ids) == 50 and all(isinstance(i, uuid.UUID) and i.version == 4 for i in ids)


# ------------------------------------------------------------------ the agent's input


class _Count(enum.IntEnum):
    three = 3


_KEYS = st.sampled_from([*ReportInput.model_fields, "friction", ""]) | st.text(max_size=6)
_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(-(10**40), 10**40)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=6)
    | st.sampled_from([*FrictionType, *ErrorCategory, *IntentCategory])  # str subclasses
    | st.sampled_from([m.value for m in FrictionType] + ["read_note", "x" * 40])
    | st.just(_Count.three)
    | st.just("\ud800")  # a lone surrogate: not UTF-8
    | st.just(b"other")  # not JSON
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=4,
)
argument_dicts = st.dictionaries(
    _KEYS | st.integers(0, 3) | st.none() | st.booleans(), _VALUES, max_size=6
)


def _judged(encode: Callable[[dict[Any, Any]], str | bytes], args: dict[Any, Any]) -> object:
    """What ``_resolve`` makes of ``args`` when its JSON is written by ``encode``."""
    try:
        return ReportInput.model_validate_json(encode(dict(args)))
    except (TypeError, ValueError) as error:
        if not isinstance(error, ValidationError):
            return "arguments are not JSON"
        return _describe(error)


@given(argument_dicts)
def test_the_input_is_judged_as_json_dumps_judged_it(args: dict[Any, Any]) -> None:
    assert _judged(_as_json, args) == _judged(json.dumps, args)


@given(argument_dicts)
def test_the_input_s_json_is_json_dumps_value(args: dict[Any, Any]) -> None:
    try:
        expected = json.dumps(args)
    except (TypeError, ValueError) as error:
        with pytest.raises(type(error)):
            _as_json(args)
        return
    # the same value (NaN is not equal to itself: compared as json.dumps writes it)
    assert json.dumps(json.loads(_as_json(args))) == json.dumps(json.loads(expected))


def test_a_report_as_an_agent_sends_it_takes_the_fast_json() -> None:
    args = {
        "friction_type": "cannot_complete",
        "error_category": "not_found",
        "intent_category": "read_email",
        "tool_attempted": "read_note",
        "attempt_count": 3,
    }
    assert isinstance(_as_json(args), bytes)  # pydantic-core's, not json.dumps's str
    assert json.loads(_as_json(args)) == args
