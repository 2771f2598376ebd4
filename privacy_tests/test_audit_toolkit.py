"""The audit's own instruments can fail: the scanner finds a marker in every encoding it claims,
at every offset, and stays quiet on unrelated bytes; canaries carry their marker; the socket guard
sees and refuses real connections; the log capture sees non-propagating loggers without switching
on output the product never produces."""

from __future__ import annotations

import base64
import binascii
import json
import logging
import socket
import struct
import urllib.parse

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from privacy_tests.audit.canaries import Canary, CanaryKind, canaries, canary
from privacy_tests.audit.logs import LogCapture, capture_logs
from privacy_tests.audit.scan import ScanStats, assert_no_leaks, find_leaks
from privacy_tests.audit.sockets import SocketGuard

_BYTES = st.binary(max_size=40)


def _encodings(value: str) -> dict[str, bytes]:
    raw = value.encode("utf-8")
    return {
        "raw": raw,
        "base64": base64.b64encode(raw),
        "base64url": base64.urlsafe_b64encode(raw),
        "hex": binascii.hexlify(raw),
        "HEX": binascii.hexlify(raw).upper(),
        "url": urllib.parse.quote(value).encode(),
        "url-plus": urllib.parse.quote_plus(value).encode(),
        "json": json.dumps(value).encode(),
        "json-ascii": json.dumps(value, ensure_ascii=True).encode(),
        "utf-16": value.encode("utf-16-le"),
    }


@given(case=canary(), prefix=st.text(max_size=7), suffix=st.text(max_size=7), before=_BYTES)
def test_the_scanner_finds_a_canary_in_every_encoding_at_any_offset(
    case: Canary, prefix: str, suffix: str, before: bytes
) -> None:
    value = prefix + case.text + suffix
    for name, encoded in _encodings(value).items():
        leaks = find_leaks({"sink": before + encoded + b"tail"}, [case])
        assert leaks, f"the scanner missed a {name}-encoded {case.kind}"
        assert leaks[0].sink == "sink" and leaks[0].kind == case.kind.value


@given(number=st.integers(min_value=10**14, max_value=2**62), before=_BYTES)
def test_the_scanner_finds_numbers_stored_in_binary(number: int, before: bytes) -> None:
    case = Canary(CanaryKind.large_number, number, str(number), number=number)
    for blob in (
        struct.pack("<q", number),
        struct.pack(">q", number),
        struct.pack("<d", float(number)),
    ):
        assert find_leaks({"db": before + blob}, [case])


@given(planted=canaries(), noise=st.binary(min_size=0, max_size=4096))
def test_the_scanner_is_quiet_on_unrelated_bytes(
    planted: dict[CanaryKind, Canary], noise: bytes
) -> None:
    assert find_leaks({"noise": noise}, planted.values()) == []


@given(planted=canaries())
def test_canaries_carry_distinct_markers_in_their_values(
    planted: dict[CanaryKind, Canary],
) -> None:
    assert set(planted) == set(CanaryKind)
    assert len({c.marker for c in planted.values()}) == len(planted)
    for case in planted.values():
        assert case.marker in case.text


def test_one_failure_line_names_the_sink_and_the_kind_never_the_value() -> None:
    case = Canary(CanaryKind.email, "cnryabcdefghijkm.smith@example.com", "cnryabcdefghijkm")
    stats = ScanStats(set())
    with pytest.raises(AssertionError) as info:
        assert_no_leaks(
            {"dashboard HTML": b"<td>cnryabcdefghijkm</td>", "clean": b"ok"}, [case], stats
        )
    message = str(info.value)
    assert "'email address' leaked into sink 'dashboard HTML'" in message
    assert "cnryabcdefghijkm" not in message and "clean" not in message
    assert stats.sinks == {"dashboard HTML", "clean"} and stats.checks == 2


# -- the socket guard --------------------------------------------------------------------------


def test_the_socket_guard_sees_and_refuses_a_real_connection() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        url = f"http://127.0.0.1:{server.getsockname()[1]}/"
        with SocketGuard(block=True) as guard, httpx.Client(trust_env=False) as http:
            with pytest.raises(httpx.ConnectError):
                http.get(url)
        assert guard.count >= 1
        assert any("127.0.0.1" in address for _, _, address in guard.attempts)
    # restored: a connection works again outside the guard
    with socket.create_server(("127.0.0.1", 0)) as server:
        with socket.create_connection(server.getsockname(), timeout=2):
            pass


def test_the_socket_guard_counts_lookups_and_ignores_local_pairs() -> None:
    with SocketGuard(block=False) as guard:
        socket.getaddrinfo("localhost", 80)
        left, right = socket.socketpair()
        left.close()
        right.close()
    assert [op for op, _, _ in guard.attempts] == ["getaddrinfo"]


# -- the log capture ---------------------------------------------------------------------------


def test_the_log_capture_sees_non_propagating_loggers_that_write() -> None:
    writer = logging.getLogger("audit-selftest.writer")
    writer.propagate = False
    writer.addHandler(logging.NullHandler())
    silent = logging.getLogger("audit-selftest.silent")
    silent.propagate = False  # no handler: writes nothing, and must stay so
    try:
        with capture_logs() as logs:
            writer.debug("writer %s", "cnrywriter000000")
            logging.getLogger("audit-selftest.child").error("boom", exc_info=ValueError("cnryexc"))
            assert not silent.hasHandlers()
        data = logs.data()
        assert b"cnrywriter000000" in data and b"cnryexc" in data
    finally:
        writer.handlers.clear()
        writer.propagate = silent.propagate = True


def test_muting_drops_only_this_threads_records_of_the_named_loggers() -> None:
    logs = LogCapture()
    with capture_logs(logs), logs.muting_this_thread("audit-selftest.client"):
        logging.getLogger("audit-selftest.client").warning("own request cnrymuted0000000")
        logging.getLogger("audit-selftest.server").warning("server cnryheard0000000")
    assert b"cnrymuted" not in logs.data() and b"cnryheard" in logs.data()
