"""The fast decoder and pydantic accept and refuse the same bodies, with the same answers.

``validate_batch`` decodes with msgspec structs generated from the contract
(``collector/_wire.py``) and hands what they refuse to pydantic (``collector.guard``). The
reference here is the contract alone: pydantic validating the whole body (``FailFast``) and
its errors answered as problems. On generated valid bodies (every legal spelling, v1 and v2)
and invalid ones (one mutation each, anywhere in the body) both must accept the same signals
or refuse with the same status, code and errors -- whether the refused body is small (judged
whole) or large (judged item by item).
"""

from __future__ import annotations

import copy
import json
import uuid
from collections.abc import Iterator
from typing import Any
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from collector import _wire, guard
from collector.ingest import validate_batch
from collector.rows import rows_from_models
from contract.schema import MAX_BATCH, AcceptedBatch, upgrade
from scripts.gen_wire import render_wire
from service.errors import ProblemError
from tests.collector._spellings import bodies
from tests.factories import signal_json, signals

Outcome = tuple[str, Any]


def reference(body: bytes) -> Outcome:
    """The contract's own verdict: pydantic on the whole body."""
    try:
        batch = AcceptedBatch.__pydantic_validator__.validate_json(body, strict=True)
    except ValidationError as exc:
        problem = guard.problem_of(exc.errors(include_url=False, include_input=False))
        return "refused", (problem.status, problem.code, problem.errors)
    return "accepted", rows_from_models([upgrade(s) for s in batch.signals]).to_pylist()


def collector(body: bytes) -> Outcome:
    try:
        signals = validate_batch(body).signals
    except ProblemError as problem:
        return "refused", (problem.status, problem.code, problem.errors)
    return "accepted", rows_from_models(signals).to_pylist()


#: Refused bodies judged whole (as small ones are) or item by item (as large ones are).
JUDGED_AS = pytest.mark.parametrize("whole_below", [guard.WHOLE_BELOW, 0], ids=["whole", "items"])


def collector_judging(body: bytes, whole_below: int) -> Outcome:
    with mock.patch.object(guard, "WHOLE_BELOW", whole_below):
        return collector(body)


# ------------------------------------------------------------------ generated bodies

#: Wrong values, each of a JSON kind pydantic or msgspec might read otherwise.
_WRONG: st.SearchStrategy[Any] = st.sampled_from(
    [None, True, 0, 1, 2.0, -1, 10**30, "", "x", "other ", "OTHER", [], {}, [{}], {"a": 1}]
)


def _v1(signal: dict[str, Any], draw: st.DrawFn) -> dict[str, Any]:
    out = {k: v for k, v in signal.items() if k != "attempts"}
    out["schema_version"] = 1
    count = draw(st.none() | st.integers(1, 100))
    if count is not None:
        out["attempt_count"] = count
    return out


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, (*prefix, index))


def _mutated(doc: dict[str, Any], draw: st.DrawFn) -> Any:
    """``doc`` with one thing wrong, somewhere."""
    doc = copy.deepcopy(doc)
    path = draw(st.sampled_from(list(_paths(doc))))
    if not path:
        return draw(st.sampled_from([[doc], "signals", 0, None]))  # not an object at all
    parent: Any = doc
    for part in path[:-1]:
        parent = parent[part]
    last = path[-1]
    how = draw(
        st.sampled_from(["wrong", "delete", "extra", "uuid", "day", "version", "long", "dup"])
    )
    if how == "delete" and isinstance(parent, dict):
        del parent[last]
    elif how == "extra" and isinstance(parent, dict):
        parent[draw(st.sampled_from(["extra", "day2", 'sig"nals', "day"]))] = 0
    elif how == "uuid" and last == "signal_id":
        sid = uuid.UUID(parent[last])
        parent[last] = draw(
            st.sampled_from(
                [
                    str(uuid.uuid1()),
                    str(sid)[:14] + "5" + str(sid)[15:],  # version 5
                    str(sid)[:19] + "c" + str(sid)[20:],  # another variant
                    "urn:uuid:" + str(sid),
                    str(sid)[:-1],
                ]
            )
        )
    elif how == "day" and last == "day":
        parent[last] = draw(st.sampled_from(["2026-02-30", "2026-11-30T00:00:00", "20261130"]))
    elif how == "version" and last == "version":
        parent[last] = draw(st.sampled_from(["1.2.3\n", "01.2.3", "1.2", "1.2.3.4", "1000.0.0"]))
    elif how == "long" and isinstance(parent.get(last) if isinstance(parent, dict) else None, list):
        items = parent[last] or [{"tool": "other", "outcome": "ok"}]
        parent[last] = (items * 40)[: draw(st.integers(11, 40))]  # over ring's or args' limit
    elif how == "dup" and isinstance(parent, list):
        parent.append(parent[last])
    else:
        parent[last] = draw(_WRONG)
    return doc


@st.composite
def valid_or_invalid(draw: st.DrawFn) -> bytes:
    batch = draw(st.lists(signals, min_size=1, max_size=5))
    items = [signal_json(s) for s in batch]
    items = [_v1(item, draw) if draw(st.booleans()) else item for item in items]
    doc: Any = {"signals": items}
    if draw(st.booleans()):
        doc = _mutated(doc, draw)
    return json.dumps(doc, indent=draw(st.sampled_from([None, 1]))).encode()


# ------------------------------------------------------------------ the properties


@JUDGED_AS
@given(body=valid_or_invalid())
def test_the_collector_answers_as_the_contract(whole_below: int, body: bytes) -> None:
    assert collector_judging(body, whole_below) == reference(body)


@JUDGED_AS
@given(spelled=bodies())
def test_every_legal_spelling_is_accepted_as_the_contract_reads_it(
    whole_below: int, spelled: tuple[bytes, list[Any]]
) -> None:
    body, _ = spelled
    got = collector_judging(body, whole_below)
    assert got == reference(body)
    assert got[0] == "accepted"


@given(st.lists(signals, min_size=1, max_size=8))
def test_a_client_body_never_needs_pydantic(batch: list[Any]) -> None:
    """What the client writes (pydantic's own JSON) is read by the fast decoder alone."""
    body = json.dumps({"signals": [signal_json(s) for s in batch]}).encode()
    decoded = _wire_decoder().decode(body)
    assert [s.signal_id for s in decoded.signals] == [s.signal_id for s in batch]


def _wire_decoder() -> Any:
    import msgspec

    return msgspec.json.Decoder(_wire.AcceptedBatch)


@JUDGED_AS
def test_too_many_signals_is_413_whichever_path(whole_below: int) -> None:
    body = json.dumps({"signals": [signal_json() for _ in range(MAX_BATCH + 1)]}).encode()
    got = collector_judging(body, whole_below)
    assert got == reference(body)
    assert got[1][:2] == (413, "too_many_signals")


def test_the_generated_decoder_is_current() -> None:
    """``make generate`` wrote ``collector/_wire.py`` from today's contract."""
    assert render_wire() == _wire.__loader__.get_source(_wire.__name__)  # type: ignore[union-attr]
