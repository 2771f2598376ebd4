"""The lean peer of ``bench_collector``: what a user who wrote the obvious fast collector gets.

A raw ASGI app (no framework, no middleware, no telemetry), msgspec strict decoding with the
collector's own rules (the generated structs, ``collector/_wire.py``: unknown fields forbidden
at every level, enums, UUID4, dates, bounded arrays, the version pattern; then the day
window, and argument names each once and declared by their tool), and a group-commit writer
thread that takes whatever is pending, shapes it into Arrow
columns and inserts it in one statement into the collector's own ``signals`` table, created by
the collector's migrations. Each id is stored once per day (a set of the day's ids: the
cheapest exact way in one process). Refusals answer a bare 422, without pointers.

Benchmark code only: never imported by the product.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import threading
from collections import deque
from typing import Any

import duckdb
import msgspec

from collector import _wire
from collector.db import migrate
from collector.ingest import current_batch
from collector.rows import ROWS, rows_from_models
from contract.catalogue import load_catalogue
from contract.days import accepts_day

__all__ = ["args_declared", "fresh_signals", "in_window", "peer_app"]

_INSERT = "INSERT INTO signals BY NAME SELECT *, $1 AS received_day FROM incoming"


def in_window(signals: tuple[Any, ...], today: dt.date) -> bool:
    """Whether every signal's day is in the accepted window (each signal checked)."""
    return all(accepts_day(s.day, today) for s in signals)


def args_declared(signals: tuple[Any, ...], carried: dict[str, frozenset[str]]) -> bool:
    """Whether every signal's argument names are distinct and among those its tool may carry
    (``carried``: ``Catalogue.signal_arg_names``), each signal checked."""
    for s in signals:
        names = {a.name for a in s.args}
        if len(names) != len(s.args) or not names <= carried[s.tool_attempted]:
            return False
    return True


def fresh_signals(batches: list[tuple[Any, ...]], seen: set[bytes]) -> tuple[list[Any], list[int]]:
    """The signals whose id is not in ``seen`` (added to it as they come), and each batch's
    count of them: each id stored once."""
    fresh = []
    answers = []
    for signals in batches:
        accepted = 0
        for s in signals:
            key = s.signal_id.bytes
            if key not in seen:
                seen.add(key)
                fresh.append(s)
                accepted += 1
        answers.append(accepted)
    return fresh, answers


class _Incoming:
    def __init__(self) -> None:
        self.table = ROWS.empty_table()

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
        return self.table.__arrow_c_stream__(requested_schema)


class _Writer:
    def __init__(self, path: str) -> None:
        self._con = duckdb.connect(path, config={"threads": 1})
        migrate(self._con)
        self._incoming = _Incoming()
        self._con.register("incoming", self._incoming)
        self._pending: deque[tuple[tuple[Any, ...], asyncio.Future[int]]] = deque()
        self._wake = threading.Event()
        self._seen: set[bytes] = set()
        self._day = dt.datetime.now(dt.UTC).date()
        self._loop: asyncio.AbstractEventLoop | None = None
        threading.Thread(target=self._run, daemon=True).start()

    def submit(self, signals: tuple[Any, ...]) -> asyncio.Future[int]:
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
        future: asyncio.Future[int] = self._loop.create_future()
        self._pending.append((signals, future))
        self._wake.set()
        return future

    def _run(self) -> None:
        while True:
            self._wake.wait()
            self._wake.clear()
            while self._pending:
                taken = []
                while self._pending:
                    taken.append(self._pending.popleft())
                fresh, answers = fresh_signals([signals for signals, _ in taken], self._seen)
                self._incoming.table = rows_from_models(fresh)
                self._con.execute(_INSERT, [self._day])
                self._incoming.table = ROWS.empty_table()
                loop = self._loop
                assert loop is not None

                def settle(taken: list[Any] = taken, answers: list[int] = answers) -> None:
                    for (_, future), accepted in zip(taken, answers, strict=True):
                        if not future.done():
                            future.set_result(accepted)

                loop.call_soon_threadsafe(settle)


def peer_app(db_path: str) -> Any:
    decoder = msgspec.json.Decoder(_wire.AcceptedBatch)
    carried = load_catalogue().signal_arg_names()
    writer: _Writer | None = None

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        nonlocal writer
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    writer = _Writer(db_path)
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["path"] == "/healthz":
            await _answer(send, 200, b'{"status":"ok"}')
            return
        chunks = []
        while True:
            message = await receive()
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        body = b"".join(chunks)
        try:
            signals = current_batch(decoder.decode(body).signals)
        except msgspec.MsgspecError:
            await _answer(send, 422, b'{"code":"invalid"}')
            return
        if not in_window(signals, dt.datetime.now(dt.UTC).date()):
            await _answer(send, 422, b'{"code":"day_out_of_window"}')
            return
        if not args_declared(signals, carried):
            await _answer(send, 422, b'{"code":"invalid_arg_names"}')
            return
        assert writer is not None
        accepted = await writer.submit(signals)
        payload = b'{"accepted": %d, "duplicates": %d}' % (accepted, len(signals) - accepted)
        await _answer(send, 200, payload)

    return app


async def _answer(send: Any, status: int, payload: bytes) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})
