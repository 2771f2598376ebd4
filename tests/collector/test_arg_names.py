"""The collector's argument-name rule (``collector.ingest.check_args``): a signal's ``args``
name each argument at most once, and only arguments its ``tool_attempted`` declares, or
``other``. It accepts every signal a client builds (today's, and a v1 client's once upgraded)
and refuses any other, by the signal's index and the rule, never echoing a value; through a
real collector, a refused body stores nothing."""

from __future__ import annotations

import json
from typing import Any

import httpx
import msgspec
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from client.capture import capture_args, shape_of
from client.consent import ConsentGate
from client.errors import ToolFailure
from client.friction import FrictionReporter
from client.host import ToolHost
from client.paths import LmcpHome
from client.sender import Sender, encode_batch
from collector import _wire
from collector.ingest import signal_rules, validate_batch
from collector.settings import CollectorSettings
from contract.catalogue import Tool, load_catalogue
from contract.schema import (
    MAX_ARGS,
    ArgName,
    ArgShape,
    ErrorClass,
    FrictionSignal,
    ToolName,
)
from service.errors import ProblemError
from tests._servers import running_collector
from tests.collector.conftest import (
    TODAY,
    assert_problem,
    auth,
    batch_body,
    read_rows,
    signal_json,
)
from tests.factories import arg_shapes, carried_args, carried_names, signals

CATALOGUE = load_catalogue()
RULES = signal_rules(retention_days=90)
JSON = {"content-type": "application/json"}


def judged(body: bytes) -> tuple[Any, ...]:
    """The collector's signals for ``body`` after every signal rule, or its problem raised."""
    batch = validate_batch(body).signals
    for rule in RULES:
        rule(batch, TODAY)
    return batch


# ------------------------------------------------------------------ what clients build

#: A tool name an agent may call: the catalogue's, or any other text (``other`` on the wire).
names_called = st.sampled_from(sorted(t.name for t in CATALOGUE)) | st.text(max_size=12)
_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=6,
)
#: An agent's arguments: declared names of any tool (its own or not) and any other keys.
call_args = st.dictionaries(
    st.sampled_from(sorted({n for t in CATALOGUE for n in t.arg_names})) | st.text(max_size=8),
    _json_values,
    max_size=8,
)


def _fail(args: Any) -> Any:
    raise ToolFailure(ErrorClass.not_found, "not found")


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> LmcpHome:
    return LmcpHome(tmp_path_factory.mktemp("home")).ensure()


@given(
    calls=st.lists(st.tuples(names_called, call_args), min_size=1, max_size=4),
    pick=st.integers(0, 4),
)
def test_every_signal_a_client_builds_passes_the_rules(
    home: LmcpHome, calls: list[tuple[str, dict[str, Any]]], pick: int
) -> None:
    """Calls through the client's host (every tool failing, or refused for its arguments or
    its name), then ``report_friction`` naming one of them, or none (the last failure): the
    signal the reporter builds, in the bytes the sender writes, passes every rule."""
    host = ToolHost({t.name: _fail for t in CATALOGUE})
    reporter = FrictionReporter(home, host, ConsentGate(home), Sender("http://127.0.0.1:9"))
    for name, args in calls:
        host.dispatch(name, args)
    report: dict[str, Any] = {"friction_type": "cannot_complete"}
    if pick < len(calls):
        report["tool_attempted"] = calls[pick][0]
    signal, _ = reporter.prepare(report)
    assert judged(encode_batch([signal]))[0].args == _structs(signal.args)


def _structs(args: tuple[ArgShape, ...]) -> tuple[_wire.ArgShape, ...]:
    """``args`` as the fast decoder's structs (what the collector stores)."""
    return tuple(msgspec.convert(a.model_dump(mode="json"), _wire.ArgShape) for a in args)


def _v1_capture(tool: Tool | None, args: dict[str, Any]) -> tuple[ArgShape, ...]:
    """What a v1 client's capture built (``client/capture.py`` before signal v2): one shape
    per key, an undeclared key as ``other`` with its own type and size, declared ones first."""
    declared = tool.arg_names if tool is not None else {}
    shapes = []
    for key, value in args.items():
        arg_type, size = shape_of(value)
        shapes.append(ArgShape(name=declared.get(key, ArgName.other), type=arg_type, size=size))
    shapes.sort(key=lambda s: (s.name is ArgName.other, s.name.value, s.type.value, str(s.size)))
    return tuple(shapes[:MAX_ARGS])


@given(name=names_called, args=call_args, count=st.none() | st.integers(1, 100))
def test_a_v1_clients_signal_passes_as_the_v2_client_would_build_it(
    name: str, args: dict[str, Any], count: int | None
) -> None:
    """A v1 client sent one ``other`` shape per undeclared key: upgraded, they are the one
    ``other`` shape today's client builds from the same call, and the signal passes."""
    tool = CATALOGUE.get(name)
    doc = signal_json(tool_attempted=CATALOGUE.tool_name(name), args=())
    del doc["attempts"]
    v1_args = [a.model_dump(mode="json") for a in _v1_capture(tool, args)]
    doc.update(schema_version=1, attempt_count=count, args=v1_args)
    (signal,) = judged(batch_body([doc]))
    assert signal.args == _structs(capture_args(tool, args))


@given(batch=st.lists(signals, min_size=1, max_size=5))
def test_the_factories_signals_pass(batch: list[FrictionSignal]) -> None:
    """``tests/factories.signals``: any signal the collector accepts (its day aside)."""
    today = [s.model_copy(update={"day": TODAY}) for s in batch]
    assert len(judged(batch_body(today))) == len(batch)


# ------------------------------------------------------------------ what they never build


@st.composite
def forged(draw: st.DrawFn, repeat: str | None = None) -> tuple[dict[str, Any], str, str]:
    """A signal's wire JSON whose args break one rule, and the rule: a name repeated (any name
    its tool may carry, ``other`` too, 2 to 8 times in all, at any positions) or a name the tool
    does not declare (at any position), among args it may carry; any tool. And the name.
    ``repeat``: that name, repeated."""
    tool = draw(st.sampled_from(ToolName))
    args = list(draw(carried_args(tool, max_size=6)))
    carried = carried_names(tool)
    undeclared = sorted(set(ArgName) - carried)
    if repeat is not None or draw(st.booleans()) or not undeclared:
        rule, name = "arg_once", repeat or draw(st.sampled_from(sorted(carried)))
        times = draw(st.integers(2, 8)) - sum(a.name == name for a in args)
    else:
        rule, name, times = "arg_declared", draw(st.sampled_from(undeclared)), 1
    for _ in range(times):
        shape = draw(arg_shapes).model_copy(update={"name": ArgName(name)})
        args.insert(draw(st.integers(0, len(args))), shape)
    doc = signal_json(tool_attempted=tool, args=())
    doc["args"] = [a.model_dump(mode="json") for a in args]
    return doc, rule, name


@given(bad=forged(), before=st.integers(0, 3), after=st.integers(0, 3), v1=st.booleans())
def test_a_repeated_or_undeclared_name_is_refused_by_index_and_rule(
    bad: tuple[dict[str, Any], str, str], before: int, after: int, v1: bool
) -> None:
    doc, rule, name = bad
    if v1:  # v1 sent one ``other`` per undeclared key: repeated, they are folded (below)
        assume(not (rule == "arg_once" and name == "other"))
        del doc["attempts"]
        doc.update(schema_version=1, attempt_count=3)
    honest = [signal_json() for _ in range(before + after)]
    body = batch_body([*honest[:before], doc, *honest[before:]])
    with pytest.raises(ProblemError) as info:
        judged(body)
    problem = info.value
    assert (problem.status, problem.code) == (422, "invalid_arg_names")
    assert problem.errors == [
        {"pointer": f"/signals/{before}/args", "rule": rule, "detail": DETAIL[rule]}
    ]


@given(bad=forged(repeat="other"))
def test_a_v1_signals_repeated_other_is_folded_not_refused(
    bad: tuple[dict[str, Any], str, str],
) -> None:
    doc, _, _ = bad
    del doc["attempts"]
    doc.update(schema_version=1, attempt_count=3)
    (signal,) = judged(batch_body([doc]))
    declared = [a for a in doc["args"] if a["name"] != "other"]
    assert [msgspec.to_builtins(a) for a in signal.args] == [
        *declared,
        {"name": "other", "type": "object", "size": "1-16"},
    ]


DETAIL = {
    "arg_declared": "an argument name the tool does not declare",
    "arg_once": "an argument name given more than once",
}


def test_a_name_outside_the_catalogue_carries_only_other() -> None:
    """A call to a tool outside the catalogue is ``other``; the client knows none of its
    arguments' names, so its signal carries at most one ``other`` shape."""
    assert carried_names(ToolName.other) == {"other"}
    doc = signal_json(tool_attempted="other", args=())
    doc["args"] = [{"name": "path", "type": "string", "size": "1-16"}]
    with pytest.raises(ProblemError) as info:
        judged(batch_body([doc]))
    assert info.value.errors and info.value.errors[0]["rule"] == "arg_declared"


# ------------------------------------------------------------------ through a real collector


def _reviewed(version: int = 2) -> dict[str, Any]:
    """The reviewed signal: ``note_name`` four times and ``path``, which read_note lacks."""
    doc = signal_json(args=())
    doc["args"] = [{"name": "note_name", "type": "string", "size": "1-16"}] * 4 + [
        {"name": "path", "type": "string", "size": "1-16"}
    ]
    if version == 1:
        del doc["attempts"]
        doc.update(schema_version=1, attempt_count=4)
    return doc


def test_the_collector_refuses_the_body_and_stores_nothing(refusing_http: httpx.Client) -> None:
    http = refusing_http
    for body in (batch_body([signal_json(), _reviewed()]), batch_body([_reviewed(version=1)])):
        response = http.post("/v1/signals", content=body, headers=JSON)
        problem = assert_problem(response, 422, "invalid_arg_names")
        (error,) = problem["errors"]
        assert error["rule"] == "arg_once" and error["detail"] == DETAIL["arg_once"]
        assert error["pointer"] == f"/signals/{len(json.loads(body)['signals']) - 1}/args"
        assert "note_name" not in response.text and "path" not in response.text
    assert http.get("/v1/signals/count", headers=auth()).json() == {"count": 0}


def test_a_v1_signal_with_many_undeclared_keys_is_stored_folded(
    settings: CollectorSettings,
) -> None:
    """Three undeclared keys of a v1 client: stored as the one ``other`` shape of v2."""
    doc = signal_json()
    del doc["attempts"]
    others = [{"name": "other", "type": t, "size": None} for t in ("integer", "null", "boolean")]
    doc.update(schema_version=1, args=[*others, *doc["args"]])
    with running_collector(settings) as url:
        response = httpx.post(url + "/v1/signals", content=batch_body([doc]), headers=JSON)
        assert response.json() == {"accepted": 1, "duplicates": 0}, response.text
    (row,) = read_rows(settings.db_path)
    assert row["args"] == [
        {"name": "note_name", "type": "string", "size": "1-16"},
        {"name": "other", "type": "object", "size": "1-16"},
    ]
