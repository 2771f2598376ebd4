"""``lmcp mcp`` answers the handshake before the SDK has loaded, exactly as the SDK would.

The early answers (``client/mcp_stdio.py``) are compared with what the SDK's own stdio server
answers to the same bytes, for every handshake version and for wires an attacker (or a broken
client) would send: the bridge never answers what the SDK would refuse, never answers twice,
and passes everything else through.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types
import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION

from client.mcp_identity import HANDSHAKE_VERSIONS
from client.mcp_stdio import EarlyAnswers
from contract.schema import FrictionType
from tests._processes import child_process
from tests.mcp.conftest import REPO, mcp_session, server_command

#: The SDK's own stdio server over the same runtime: what the early answers must equal.
_SDK_ONLY = (
    "import anyio\n"
    "from client.mcp_server import serve\n"
    "from client.runtime import Runtime\n"
    "from client.settings import ClientSettings\n"
    "with Runtime.from_settings(ClientSettings.from_process()) as rt:\n"
    "    anyio.run(serve, rt.host)\n"
)
#: The last request of every wire: a call (never answered early); its answer means the server
#: has read every line before it.
END = {
    "jsonrpc": "2.0",
    "id": "end",
    "method": "tools/call",
    "params": {"name": "get_datetime", "arguments": {}},
}


def _initialize(version: str, request_id: int | str = 1) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "test-client", "version": "1.0"},
        },
    }


def _handshake_wire(version: str) -> list[dict[str, Any]]:
    return [
        _initialize(version),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "ping"},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call",
         "params": {"name": "list_notes", "arguments": {}}},
    ]  # fmt: skip


def _calls(lines: list[bytes]) -> set[str]:
    """The ids of the tool calls in ``lines``: each runs in a worker and may answer late."""
    ids = set()
    for line in lines:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if isinstance(message, dict) and message.get("method") == "tools/call" and "id" in message:
            ids.add(json.dumps(message["id"]))
    return ids


def _exchange(command: list[str], home: Path, lines: list[bytes]) -> list[dict[str, Any]]:
    """Every answer to ``lines`` (then ``END``), in the order they came."""
    env = {"LMCP_HOME": str(home), "PATH": os.environ["PATH"]}
    answers = []
    # Read calls run side by side, so a call sent before END may answer after it: the wire is
    # over when END and every call are answered (closing stdin earlier cancels what runs).
    waiting = _calls(lines) | {json.dumps(END["id"])}
    # Its own process group, stopped with the block however the test ends.
    with child_process(
        command, env=env, cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE
    ) as child:
        proc = child.popen
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(b"".join(lines) + json.dumps(END).encode() + b"\n")
        proc.stdin.flush()
        while waiting:
            line = proc.stdout.readline()
            assert line, "the server stopped before answering every request"
            answer = json.loads(line)
            waiting.discard(json.dumps(answer.get("id")))
            if answer.get("id") != "end":
                answers.append(answer)
        proc.stdin.close()
        assert proc.stdout.read() == b"", "an answer came after the last one"
    return answers


def _lmcp() -> list[str]:
    command, args = server_command()
    return [command, *args]


def _both(tmp_path: Path, lines: list[bytes]) -> tuple[list[Any], list[Any]]:
    """The answers of ``lmcp mcp`` and of the SDK's own server, each in a fresh home."""
    ours = _exchange(_lmcp(), tmp_path / "ours", lines)
    theirs = _exchange([sys.executable, "-c", _SDK_ONLY], tmp_path / "sdk", lines)
    return ours, theirs


def _encoded(messages: list[dict[str, Any]]) -> list[bytes]:
    return [json.dumps(m).encode() + b"\n" for m in messages]


def _by_id(answers: list[dict[str, Any]]) -> dict[str, Any]:
    ids = [json.dumps(a.get("id")) for a in answers]
    assert len(ids) == len(set(ids)), f"an id was answered twice: {ids}"
    return dict(zip(ids, answers, strict=True))


def test_the_handshake_versions_are_the_sdks() -> None:
    assert HANDSHAKE_VERSIONS == HANDSHAKE_PROTOCOL_VERSIONS
    assert HANDSHAKE_VERSIONS[-1] == LATEST_HANDSHAKE_VERSION


@pytest.mark.slow  # two servers per version
@pytest.mark.parametrize("version", [*HANDSHAKE_PROTOCOL_VERSIONS, "2026-07-28", "1999-01-01"])
def test_the_early_answers_are_the_sdks_own(version: str, tmp_path: Path) -> None:
    ours, theirs = _both(tmp_path, _encoded(_handshake_wire(version)))
    assert _by_id(ours) == _by_id(theirs)
    assert len(ours) == 4  # initialize, tools/list, ping, tools/call: each answered once
    early = EarlyAnswers(
        version=_by_id(theirs)["1"]["result"]["serverInfo"]["version"],
        tools=lambda: _by_id(theirs)["2"]["result"]["tools"],
    )
    reply, pass_on = early.answer(_initialize(version))
    assert reply == _by_id(theirs)["1"] and pass_on


#: Wires a broken or hostile client sends: none of it may be answered early.
ADVERSARIAL = {
    "not json first": [b"{not json\n", *_encoded(_handshake_wire("2025-06-18"))],
    "a request before initialize": _encoded(
        [{"jsonrpc": "2.0", "id": 9, "method": "tools/list"}, *_handshake_wire("2025-06-18")]
    ),
    "initialize without client info": _encoded(
        [
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {"protocolVersion": "2025-06-18", "capabilities": {}},
            }
        ]
    ),  # fmt: skip
    "initialize twice": _encoded(
        [*_handshake_wire("2025-06-18"), _initialize("2025-06-18", request_id=7)]
    ),
    "a boolean id": _encoded([{**_initialize("2025-06-18"), "id": True}]),
    "a tools/list with a cursor": _encoded(
        [
            *_handshake_wire("2025-06-18")[:2],
            {"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": {"cursor": "x"}},
        ]
    ),  # fmt: skip
    "a batch": [json.dumps(_handshake_wire("2025-06-18")[:1]).encode() + b"\n"],
}


@pytest.mark.slow  # two servers per wire
@pytest.mark.parametrize("wire", sorted(ADVERSARIAL))
def test_what_the_sdk_would_refuse_is_the_sdks_to_answer(wire: str, tmp_path: Path) -> None:
    ours, theirs = _both(tmp_path, ADVERSARIAL[wire])
    canonical = [sorted(json.dumps(a, sort_keys=True) for a in side) for side in (ours, theirs)]
    assert canonical[0] == canonical[1]


_ids = st.one_of(st.integers(), st.text(max_size=8), st.booleans(), st.none(), st.floats())
_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=8,
)
_params = st.fixed_dictionaries(
    {},
    optional={
        "protocolVersion": st.sampled_from([*HANDSHAKE_PROTOCOL_VERSIONS, "", "x"]) | _json,
        "capabilities": _json,
        "clientInfo": st.fixed_dictionaries(
            {}, optional={"name": _json | st.text(max_size=8), "version": _json | st.text()}
        )
        | _json,
    },
)


@given(request_id=_ids, params=_params | _json)
def test_an_initialize_answered_early_is_one_the_sdk_accepts(request_id: Any, params: Any) -> None:
    """Whatever the early path answers, the SDK's own model of the request accepts too (the
    SDK's answer to the same request is dropped, so it must never be a refusal)."""
    early = EarlyAnswers("0.0.0", list)
    message = {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": params}
    reply, pass_on = early.answer(message)
    assert pass_on  # the SDK always sees initialize
    if reply is not None:
        mcp_types.InitializeRequest.model_validate(message, by_name=False)
        mcp_types.JSONRPCRequest.model_validate(message, by_name=False)


@given(first=_json, second=_json)
def test_nothing_but_the_three_requests_is_answered_early(first: Any, second: Any) -> None:
    early = EarlyAnswers("0.0.0", list)
    early.answer(_initialize("2025-06-18"))
    for message in (first, second):
        reply, pass_on = early.answer(message)
        if reply is not None:
            assert isinstance(message, dict) and message["method"] in {"tools/list", "ping"}
            assert not pass_on


@pytest.mark.slow  # spawns ``lmcp mcp``
def test_an_empty_list_reaches_the_client_as_a_result_not_an_error(tmp_path: Path) -> None:
    async def run() -> mcp_types.CallToolResult:
        async with mcp_session({"LMCP_HOME": str(tmp_path)}) as session:
            return await session.call_tool("list_notes", {})

    result = anyio.run(run)
    assert result.is_error is False
    payload = result.structured_content
    assert isinstance(payload, dict)
    assert payload["ok"] is True and payload["outcome"] == "empty"
    assert payload["result"]["notes"] == [] and payload["result"]["count"] == 0


@pytest.mark.slow  # spawns ``lmcp mcp``
def test_a_bad_enum_value_is_refused_with_the_values_allowed(tmp_path: Path) -> None:
    canary = "canary-friction-5521"

    async def run() -> mcp_types.CallToolResult:
        async with mcp_session({"LMCP_HOME": str(tmp_path)}) as session:
            return await session.call_tool("report_friction", {"friction_type": canary})

    result = anyio.run(run)
    assert result.is_error is True
    message = json.dumps(result.structured_content)
    assert "friction_type" in message and canary not in message
    for member in FrictionType:
        assert member.value in message
