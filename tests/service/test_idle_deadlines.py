"""A connection has a deadline in every state between requests, whatever bytes arrive: the
guarded protocol closes it at the idle, head or body deadline, and never leaves it open.

Each test leaves a connection in one state of a keep-alive connection and then sends nothing
more (or only bytes that start no request), and the server must close it: after an answer
(then a CRLF, or a trickle of CRLFs, which an HTTP parser skips between requests); after an
error answered before the request's body arrived, once the body has; after pipelined answers;
in the middle of a pipelined request's head; after a ``100 Continue`` that no body follows.
Against ``lmcp collector serve`` in a child process with short deadlines. A server that held
the connection would fail the test at the hang limit only (``HANG_S``): no wall-clock bound.
"""

from __future__ import annotations

import select
import time
from collections.abc import Iterator

import pytest

from collector.settings import CollectorSettings
from tests._raw_http import Connection, head
from tests._servers import HANG_S, collector_process

pytestmark = pytest.mark.slow

HEALTHZ = head("GET", "/healthz")


@pytest.fixture(scope="module")
def collector(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    settings = CollectorSettings(
        db_path=tmp_path_factory.mktemp("idle") / "signals.duckdb",
        rate_limit_enabled=False,
        keep_alive_timeout_s=0.5,
        header_timeout_s=0.5,
        body_timeout_s=0.5,
    )
    with collector_process(settings) as served:
        yield served.base_url


def _answered(conn: Connection, status: int = 200) -> None:
    answer = conn.answer()
    assert answer is not None and answer.status == status, answer


def test_an_answered_connection_sent_one_crlf_is_closed(collector: str) -> None:
    with Connection(collector) as conn:
        conn.send(HEALTHZ)
        _answered(conn)
        conn.send(b"\r\n")
        assert conn.closed_by_server()


def test_an_answered_connection_sent_a_trickle_of_crlfs_is_closed(collector: str) -> None:
    with Connection(collector) as conn:
        conn.send(HEALTHZ)
        _answered(conn)
        # A CRLF whenever the server has said nothing for a while, until it closes: only the
        # hang limit stops a server that never does.
        hang = time.monotonic() + HANG_S
        while time.monotonic() < hang and conn.send(b"\r\n"):
            readable, _, _ = select.select([conn.sock], [], [], 0.05)
            if readable:
                break
        assert conn.closed_by_server()


def test_a_connection_answered_before_its_body_is_closed_once_the_body_is_in(
    collector: str,
) -> None:
    with Connection(collector) as conn:
        # Refused for its type before its body is read; the body then arrives, all of it.
        headers = {"Content-Type": "text/plain", "Content-Length": "10"}
        conn.send(head("POST", "/v1/signals", headers))
        _answered(conn, 415)
        conn.send(b"0123456789")
        assert conn.closed_by_server()


def test_a_connection_after_pipelined_answers_and_a_crlf_is_closed(collector: str) -> None:
    with Connection(collector) as conn:
        conn.send(HEALTHZ * 3)
        for _ in range(3):
            _answered(conn)
        conn.send(b"\r\n")
        assert conn.closed_by_server()


def test_a_pipelined_request_whose_head_stops_halfway_is_closed(collector: str) -> None:
    with Connection(collector) as conn:
        conn.send(HEALTHZ + b"\r\n" + HEALTHZ[:20])
        _answered(conn)
        assert conn.closed_by_server()


def test_a_connection_told_to_continue_that_sends_no_body_is_closed(collector: str) -> None:
    with Connection(collector) as conn:
        headers = {
            "Content-Type": "application/x-www-form-urlencoded",
            "Content-Length": "10",
            "Expect": "100-continue",
        }
        conn.send(head("POST", "/dashboard/login", headers))
        _answered(conn, 100)
        assert conn.closed_by_server()
