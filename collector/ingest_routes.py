"""``POST /v1/signals``: limits, decoding, strict validation, then the group-commit writer.

Ingestion is the collector's one hot route, so it is a plain ASGI endpoint
(``IngestEndpoint``), dispatched by ``collector.app.CollectorApp`` before FastAPI's router and
request machinery: those cost more per request than validating a one-signal batch
(``docs/write-path.md``). Everything else a route gets still applies to
it: the middlewares around it (rate limit, request span, catch-all), the one problem+json
error shape, and its operation in ``/openapi.json`` (``document_ingestion``).

The body is read raw (never parsed to Python objects first): its size is checked against the
declared ``Content-Length`` before reading and against the bytes actually received while
reading. The answer ``{"accepted": n, "duplicates": m}`` comes only after the rows are committed.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict
from starlette.types import Receive, Scope, Send

from collector import _wire
from collector.errors import WriteError
from collector.flush import WriteResult
from collector.ingest import check_content_type, decode_body, signal_rules, validate_batch
from collector.openapi import PROBLEM_SCHEMA, problem_response_doc
from collector.settings import CollectorSettings
from collector.telemetry import Telemetry
from collector.writer import SignalSink
from contract.schema import SignalBatch
from service.errors import ProblemError, problem_response

__all__ = [
    "INGEST_PATH",
    "IngestEndpoint",
    "IngestResult",
    "document_ingestion",
    "read_body",
]

INGEST_PATH = "/v1/signals"
#: A body over this size (or gzip-encoded, or of unknown length) is large.
LARGE_BODY_BYTES = 64 * 1024
#: Large bodies decoded and validated at once (each one is CPU on the event loop). A waiting
#: one resumes in a later turn of the loop, so its other work (health checks, small batches)
#: waits behind one large body's CPU per turn, not behind every large body that arrived.
#: Reading is not limited: a slow sender holds no slot.
LARGE_AT_ONCE = 1


def _is_large(content_length: str | None, content_encoding: str | None) -> bool:
    if content_encoding is not None or content_length is None or not content_length.isdigit():
        return True
    return int(content_length) > LARGE_BODY_BYTES


class IngestResult(BaseModel):
    """How many signals of the batch were stored now, and how many were already stored."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    accepted: int
    duplicates: int


class _Disconnected(Exception):
    """The client went away before its body arrived: there is nobody to answer."""


def _too_large(limit: int) -> ProblemError:
    return ProblemError(413, "body_too_large", f"The request body exceeds {limit} bytes.")


async def read_body(receive: Receive, declared: str | None, limit: int) -> bytes:
    """The raw body, refusing (413) as soon as it exceeds ``limit`` bytes.

    ``declared`` is the ``Content-Length`` header, if any: a length over the limit is refused
    before a byte is read. The server frames the body by it, and a chunked body is counted as
    it arrives.
    """
    if declared is not None:
        if not declared.isdigit():
            raise ProblemError(400, "bad_content_length", "Content-Length is not a number.")
        if int(declared) > limit:
            raise _too_large(limit)
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise _Disconnected
        chunk: bytes = message.get("body", b"")
        if chunk:
            size += len(chunk)
            if size > limit:
                raise _too_large(limit)
            chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def _headers(scope: Scope) -> tuple[str | None, str | None, str | None]:
    """``Content-Type``, ``Content-Length`` and ``Content-Encoding`` (the last one of each)."""
    content_type = content_length = content_encoding = None
    for name, value in scope["headers"]:
        if name == b"content-type":
            content_type = value.decode("latin-1")
        elif name == b"content-length":
            content_length = value.decode("latin-1")
        elif name == b"content-encoding":
            content_encoding = value.decode("latin-1")
    return content_type, content_length, content_encoding


class IngestEndpoint:
    """``POST /v1/signals`` as an ASGI app; any other method is a 405 problem.

    The sink is the app's (``scope["app"].state.sink``): the group-commit writer, or a
    benchmark's discarding sink.
    """

    #: Read as a route by the request-span middleware (``http.route``).
    path = INGEST_PATH

    def __init__(
        self,
        settings: CollectorSettings,
        telemetry: Telemetry,
        today: Callable[[], dt.date],
    ) -> None:
        self._max_body = settings.max_body_bytes
        self._max_plain = settings.max_decompressed_bytes
        self._rules = signal_rules(retention_days=settings.retention_days)
        self._telemetry = telemetry
        self._today = today
        # Created on first use, inside the serving event loop.
        self._large: asyncio.Semaphore | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        scope["route"] = self
        try:
            result = await self._ingest(scope, receive)
        except _Disconnected:
            return
        except ProblemError as exc:
            self._telemetry.rejected.add(1, {"code": exc.code})
            response = problem_response(
                exc.status, exc.code, exc.detail, errors=exc.errors, headers=exc.headers
            )
            await response(scope, receive, send)
            return
        # The bytes json.dumps writes for this object, without its per-call machinery.
        payload = b'{"accepted": %d, "duplicates": %d}' % (result.accepted, result.duplicates)
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(payload)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": payload})

    def _decode(
        self, raw: bytes, content_encoding: str | None
    ) -> tuple[bytes, tuple[_wire.FrictionSignal, ...]]:
        body = decode_body(raw, content_encoding, max_decompressed=self._max_plain)
        return body, validate_batch(body).signals

    async def _ingest(self, scope: Scope, receive: Receive) -> WriteResult:
        if scope["method"] != "POST":
            raise ProblemError(
                405, "method_not_allowed", "Method Not Allowed", headers={"Allow": "POST"}
            )
        content_type, content_length, content_encoding = _headers(scope)
        check_content_type(content_type)
        raw = await read_body(receive, content_length, self._max_body)
        if _is_large(content_length, content_encoding):
            if self._large is None:
                self._large = asyncio.Semaphore(LARGE_AT_ONCE)
            async with self._large:
                await asyncio.sleep(0)  # resume in a turn of its own
                body, signals = self._decode(raw, content_encoding)
        else:
            body, signals = self._decode(raw, content_encoding)
        today = self._today()
        for rule in self._rules:
            rule(signals, today)
        sink: SignalSink = scope["app"].state.sink
        submitted = sink.submit(signals, body)
        del signals  # this frame waits for the commit: the writer holds what it needs
        try:
            return await submitted
        except WriteError:
            raise ProblemError(
                503,
                "storage_unavailable",
                "The signals could not be stored; retry later.",
                headers={"Retry-After": "1"},
            ) from None


def document_ingestion(schema: dict[str, Any]) -> None:
    """Add ``POST /v1/signals`` and the signal schema to an OpenAPI document (for ``/docs``)."""
    batch = SignalBatch.model_json_schema(ref_template="#/components/schemas/{model}")
    components: dict[str, Any] = dict(batch.pop("$defs", {}))
    components["SignalBatch"] = batch
    components["IngestResult"] = IngestResult.model_json_schema()
    components.setdefault("Problem", PROBLEM_SCHEMA)
    schema.setdefault("components", {}).setdefault("schemas", {}).update(components)
    schema.setdefault("paths", {})[INGEST_PATH] = {
        "post": {
            "tags": ["ingestion"],
            "summary": "Submit a batch of friction signals",
            "operationId": "post_signals",
            "requestBody": {
                "required": True,
                "content": {
                    "application/json": {"schema": {"$ref": "#/components/schemas/SignalBatch"}}
                },
                "description": "A batch of 1-500 friction signals; optionally "
                "`Content-Encoding: gzip`.",
            },
            "responses": {
                "200": {
                    "description": "Stored (committed): how many now, how many already were",
                    "content": {
                        "application/json": {
                            "schema": {"$ref": "#/components/schemas/IngestResult"}
                        }
                    },
                },
                "400": problem_response_doc("Malformed JSON or gzip"),
                "413": problem_response_doc("Body, decompressed body or batch too large"),
                "415": problem_response_doc("Not application/json, or an unsupported encoding"),
                "431": problem_response_doc("Request head too large (any route)"),
                "422": problem_response_doc(
                    "A signal breaks the schema, its day is outside the accepted window, or "
                    "its argument names repeat or are not its tool's (pointer and rule, never "
                    "a value)"
                ),
                "429": problem_response_doc("Rate limited; see Retry-After"),
                "503": problem_response_doc("Storage unavailable; retry"),
            },
        }
    }
