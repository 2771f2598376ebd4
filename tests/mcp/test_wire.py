"""``lmcp mcp``'s wire (``client/mcp_stdio.py``): what the SDK reads is what it would read from
its own stdin, in order, and a client that floods the wire is held there, not in memory."""

from __future__ import annotations

import io
import threading

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

import client.mcp_stdio as wire
from client.mcp_stdio import WireIn, text_lines
from tests._servers import HANG_S

#: Bytes a client may send: JSON, line ends of every kind, invalid and truncated UTF-8.
_PIECES = st.sampled_from(
    [b"{", b"}", b'"a"', b"\n", b"\r", b"\r\n", b" ", b"\xc3\xa9", b"\xe2\x82", b"\xff", b"\x00"]
)


def _sdk_lines(data: bytes) -> list[str]:
    """What the SDK's stdio server reads from ``data``: UTF-8 text, errors replaced, universal
    newlines (``stdio_server`` wraps the process's stdin this way)."""
    return list(io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="replace"))


def _wire_lines(data: bytes) -> list[bytes]:
    """The lines the reader thread takes off the wire (a binary file, split at ``\\n``)."""
    return list(io.BufferedReader(io.BytesIO(data)))


@given(st.lists(_PIECES, max_size=40).map(b"".join))
def test_the_sdk_reads_the_lines_it_would_read_from_its_own_stdin(data: bytes) -> None:
    ours = [line for raw in _wire_lines(data) for line in text_lines(raw)]
    assert ours == _sdk_lines(data)


def _feed(lines: list[bytes | None], inbox: wire._Inbox) -> threading.Thread:
    def put_all() -> None:
        for line in lines:
            inbox.put(line)

    thread = threading.Thread(target=put_all, daemon=True)
    thread.start()
    return thread


def test_lines_reach_the_event_loop_in_order_then_the_end() -> None:
    raw = [b'{"id": %d}\n' % n for n in range(500)] + [b"a\rb\r\n", None]
    inbox = wire._Inbox()

    async def read() -> list[str]:
        _feed(raw, inbox)
        return [line async for line in WireIn(inbox)]

    expected = [f'{{"id": {n}}}\n' for n in range(500)] + ["a\n", "b\n"]
    assert anyio.run(read) == expected


def test_a_client_that_floods_the_wire_is_held_at_the_wire(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The reader stops taking lines once ``_INBOX_BYTES`` wait for the SDK: however much the
    client sends, no more than that (and one line) is ever held."""
    monkeypatch.setattr(wire, "_INBOX_BYTES", 1000)
    line = b"x" * 99 + b"\n"
    inbox = wire._Inbox()
    feeder = _feed([line] * 200 + [None], inbox)
    held: list[int] = []

    async def read() -> int:
        count = 0
        stream = WireIn(inbox)
        await anyio.to_thread.run_sync(_until_full, inbox)
        async for _ in stream:
            held.append(inbox._bytes)
            count += 1
        return count

    assert anyio.run(read) == 200
    feeder.join(HANG_S)
    assert not feeder.is_alive()
    assert max(held) <= 1000 + len(line)


def _until_full(inbox: wire._Inbox) -> None:
    """Wait (bounded) until the feeder has filled the inbox: it must now be waiting."""
    from tests._servers import wait_until

    wait_until(lambda: inbox._bytes >= 1000, what="a full inbox")


def test_a_line_after_the_event_loop_ended_is_not_an_error() -> None:
    """The SDK stopped while waiting for a line (its loop is gone); the client then sends one:
    the reader thread carries on (it must not die with a traceback on stderr)."""
    inbox = wire._Inbox()

    async def wait_then_stop() -> None:
        with anyio.move_on_after(0):
            await inbox.get()
        await anyio.sleep(0)
        with anyio.move_on_after(0.01):
            await inbox.get()  # waiting when the loop ends

    anyio.run(wait_then_stop)
    inbox.put(b"{}\n")
    inbox.put(None)
    assert list(inbox._lines) == [b"{}\n", None]
