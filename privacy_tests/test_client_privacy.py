"""Client privacy: the schema admits no free value, the contract loads no network code, and
canary values planted in tool arguments never reach the wire, the outbox, the local log, or any
log record."""

from __future__ import annotations

import datetime as dt
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from client.runtime import Runtime
from contract.schema import FrictionSignal, SignalBatch
from privacy_tests.audit.canaries import Canary, canary
from privacy_tests.audit.logs import capture_logs
from privacy_tests.audit.scan import assert_no_leaks
from privacy_tests.audit.schema import audit_model
from privacy_tests.audit.workload import FakeCollector, client_files
from tests._servers import run_child
from tests.hypothesis_profiles import at_most

# -- (a) schema audit --------------------------------------------------------------------


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


@pytest.mark.slow
def test_importing_the_contract_loads_neither_httpx_nor_tenacity() -> None:
    code = (
        "import sys, contract.schema; "
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'httpx', 'tenacity', 'httpcore', 'jsonschema', 'duckdb', 'fastapi', 'socket'}); "
        "print(','.join(bad))"
    )
    out = run_child([sys.executable, "-c", code], check=True, cwd=Path.cwd())
    loaded = set(filter(None, out.stdout.strip().split(",")))
    assert not loaded & {"httpx", "tenacity", "httpcore", "jsonschema", "duckdb", "fastapi"}


# -- (c) canaries ------------------------------------------------------------------------

FAILING_CALLS = [
    ("read_note", lambda v: {"note_name": v}),  # no such note
    ("read_file", lambda v: {"path": v}),  # no such file / escapes the root
    ("send_email", lambda v: {"to": [v], "subject": v, "body": v, "bcc": v}),  # undeclared arg
    ("list_notes", lambda v: {"limit": v}),  # wrong type
    ("nonexistent_tool", lambda v: {"arg": v, str(v): v}),  # unknown tool, value in a key
]


@settings(
    max_examples=at_most(40),  # each example drives a whole runtime and its outbox files
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(case=canary(), call=st.sampled_from(FAILING_CALLS), reachable=st.booleans())
def test_canaries_never_leave_capture(
    tmp_path_factory: pytest.TempPathFactory,
    case: Canary,
    call: tuple[str, Any],
    reachable: bool,
) -> None:
    value = case.value
    home = tmp_path_factory.mktemp("home")
    (home / "settings.json").write_text('{"anonymous_signals": "on"}')  # the user chose on
    collector = FakeCollector(reachable=reachable)
    with capture_logs() as capture:
        rt = Runtime.from_env(
            {"LMCP_HOME": str(home)},
            transport=collector,
        )
        rt.sender._sleep = lambda s: None  # noqa: SLF001
        tool, make_args = call
        result = rt.host.dispatch(tool, make_args(value))
        assert not result.ok
        reply = rt.host.dispatch(
            "report_friction", {"friction_type": "cannot_complete", "tool_attempted": tool}
        )
        rt.close()
    assert reply.ok and (reply.result.get("sent") or reply.result.get("queued"))
    assert collector.bodies, "the report was never attempted"
    sinks: dict[str, bytes] = {
        "wire": collector.wire,
        "logs": capture.data(),
        "tool result": json.dumps(result.to_dict(), default=str).encode(),
        **client_files(rt),
    }
    if not reachable:
        assert sinks["outbox.json"], "an undeliverable signal must be queued"
    assert_no_leaks(sinks, [case])
