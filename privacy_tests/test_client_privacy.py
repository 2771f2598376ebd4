"""Client privacy: the schema admits no free value, the contract loads no network code, and
canary values planted in tool arguments never reach the wire, the outbox, the local log, or any
log record."""

from __future__ import annotations

import base64
import datetime as dt
import enum
import json
import logging
import subprocess
import sys
import types
import typing
import urllib.parse
import uuid
from pathlib import Path
from typing import Any

import annotated_types
import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from client.runtime import Runtime
from client.schema import FrictionSignal, SignalBatch

# -- (a) schema audit --------------------------------------------------------------------


def _leaf_problems(where: str, annotation: Any, metadata: list[Any]) -> list[str]:
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        base, *extra = typing.get_args(annotation)
        flat: list[Any] = []
        for item in extra:  # a pydantic FieldInfo carries its constraints in .metadata
            flat += [item, *getattr(item, "metadata", [])]
        return _leaf_problems(where, base, metadata + flat)
    if origin in (typing.Union, types.UnionType):
        problems = []
        for arg in typing.get_args(annotation):
            if arg is not type(None):
                problems += _leaf_problems(where, arg, metadata)
        return problems
    if origin is tuple:
        args = typing.get_args(annotation)
        bounded = any(isinstance(m, annotated_types.MaxLen) for m in metadata)
        problems = [] if bounded else [f"{where}: unbounded sequence"]
        return problems + _leaf_problems(f"{where}[]", args[0], [])
    if origin is typing.Literal:
        return []
    if isinstance(annotation, type):
        if issubclass(annotation, BaseModel):
            return audit_model(annotation, where)
        if issubclass(annotation, enum.Enum) or annotation in (bool, dt.date, uuid.UUID):
            return []
        if annotation is int:
            has_lo = any(isinstance(m, annotated_types.Ge | annotated_types.Gt) for m in metadata)
            has_hi = any(isinstance(m, annotated_types.Le | annotated_types.Lt) for m in metadata)
            return [] if has_lo and has_hi else [f"{where}: unbounded int"]
        if annotation is str:
            patterned = any(getattr(m, "pattern", None) for m in metadata)
            bounded = any(isinstance(m, annotated_types.MaxLen) for m in metadata)
            return [] if patterned and bounded else [f"{where}: free str"]
        if annotation is dt.datetime:
            return [f"{where}: time finer than a day"]
    return [f"{where}: {annotation!r} is not an allowed field type"]


def audit_model(model: type[BaseModel], prefix: str = "") -> list[str]:
    problems = []
    if model.model_config.get("extra") != "forbid":
        problems.append(f"{prefix or model.__name__}: extra fields allowed")
    if not model.model_config.get("frozen"):
        problems.append(f"{prefix or model.__name__}: not frozen")
    for name, field in model.model_fields.items():
        where = f"{prefix}.{name}" if prefix else name
        problems += _leaf_problems(where, field.annotation, list(field.metadata))
    return problems


def test_schema_audit_admits_no_free_value() -> None:
    assert audit_model(FrictionSignal) == []
    assert audit_model(SignalBatch) == []


def test_schema_audit_catches_free_fields() -> None:
    """The audit itself can fail: a model with a free text field is flagged."""

    class Leaky(BaseModel):
        model_config = {"extra": "forbid", "frozen": True}
        note: str
        count: int
        blob: dict[str, Any]
        when: dt.datetime

    problems = audit_model(Leaky)
    assert any("note: free str" in p for p in problems)
    assert any("count: unbounded int" in p for p in problems)
    assert any("blob" in p for p in problems)
    assert any("when: time finer" in p for p in problems)


# -- (b) the contract loads no network code ------------------------------------------------


def test_importing_the_contract_loads_neither_httpx_nor_tenacity() -> None:
    code = (
        "import sys, client.schema; "
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'httpx', 'tenacity', 'httpcore', 'jsonschema', 'duckdb', 'fastapi', 'socket'}); "
        "print(','.join(bad))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=Path.cwd()
    )
    loaded = set(filter(None, out.stdout.strip().split(",")))
    assert not loaded & {"httpx", "tenacity", "httpcore", "jsonschema", "duckdb", "fastapi"}


# -- (c) canaries ------------------------------------------------------------------------

TOKEN = st.text(alphabet="abcdefghijkmnpqrstuvwxyz23456789", min_size=12, max_size=12).map(
    lambda s: "cnry" + s
)


@st.composite
def canary(draw: st.DrawFn) -> tuple[str, Any, str]:
    """(kind, value to plant, marker to search for)."""
    tok = draw(TOKEN)
    kind = draw(
        st.sampled_from(
            ["email", "home_path", "win_path", "token", "long_text", "unicode", "number", "account"]
        )
    )
    if kind == "email":
        return kind, f"{tok}@example.com", tok
    if kind == "home_path":
        return kind, f"/Users/{tok}/Documents/taxes 2026.pdf", tok
    if kind == "win_path":
        return kind, f"C:\\Users\\{tok}\\AppData\\notes.txt", tok
    if kind == "token":
        return kind, f"Bearer ghp_{tok}{'Q' * 24}", tok
    if kind == "long_text":
        filler = draw(st.text(min_size=0, max_size=40))
        return kind, f"{filler} {tok} " * 300, tok
    if kind == "unicode":
        return kind, f"日本語のメモ {tok} — ünïcødé ✓", tok
    if kind == "account":
        return kind, f"{tok}.smith@corp.example", tok
    number = draw(st.integers(min_value=10**14, max_value=10**17))
    return kind, number, str(number)


def encodings(marker: str) -> list[bytes]:
    raw = marker.encode()
    return [
        raw,
        base64.b64encode(raw),
        base64.urlsafe_b64encode(raw),
        raw.hex().encode(),
        urllib.parse.quote(marker).encode(),
        json.dumps(marker).encode(),
    ]


class Capture(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))
        if record.exc_info:
            self.lines.append(logging.Formatter().formatException(record.exc_info))


FAILING_CALLS = [
    ("read_note", lambda v: {"note_name": v}),  # no such note
    ("read_file", lambda v: {"path": v}),  # no such file / escapes the root
    ("send_email", lambda v: {"to": [v], "subject": v, "body": v, "bcc": v}),  # undeclared arg
    ("list_notes", lambda v: {"limit": v}),  # wrong type
    ("nonexistent_tool", lambda v: {"arg": v, str(v): v}),  # unknown tool, value in a key
]


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(case=canary(), call=st.sampled_from(FAILING_CALLS), reachable=st.booleans())
def test_canaries_never_leave_capture(
    tmp_path_factory: pytest.TempPathFactory,
    case: tuple[str, Any, str],
    call: tuple[str, Any],
    reachable: bool,
) -> None:
    kind, value, marker = case
    home = tmp_path_factory.mktemp("home")
    wire: list[bytes] = []

    def transport(request: httpx.Request) -> httpx.Response:
        wire.append(request.content)
        if not reachable:
            raise httpx.ConnectError("down")
        return httpx.Response(200, json={"accepted": 1, "duplicates": 0})

    capture = Capture()
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(capture)
    root.setLevel(logging.DEBUG)
    try:
        rt = Runtime.from_env(
            {"LMCP_HOME": str(home), "LMCP_ANONYMOUS_SIGNALS": "1"},
            transport=httpx.MockTransport(transport),
        )
        rt.sender._sleep = lambda s: None  # noqa: SLF001
        tool, make_args = call
        result = rt.host.dispatch(tool, make_args(value))
        assert not result.ok
        reply = rt.host.dispatch(
            "report_friction", {"friction_type": "cannot_complete", "tool_attempted": tool}
        )
        rt.close()
    finally:
        root.removeHandler(capture)
        root.setLevel(old_level)
    assert reply.ok and (reply.result.get("sent") or reply.result.get("queued"))
    assert wire, "the report was never attempted"
    sinks: dict[str, bytes] = {
        "wire": b"\n".join(wire),
        "logs": "\n".join(capture.lines).encode(),
        "tool result": json.dumps(result.to_dict(), default=str).encode(),
    }
    for path in (rt.home.outbox, rt.home.sent_log, rt.home.last_failure):
        sinks[path.name] = path.read_bytes() if path.exists() else b""
    if not reachable:
        assert sinks["outbox.json"], "an undeliverable signal must be queued"
    for sink, data in sinks.items():
        for form in encodings(marker):
            assert form not in data, f"canary of kind {kind!r} leaked into {sink}"
