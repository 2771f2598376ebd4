"""``POST /v1/signals``: limits, decoding, strict validation, then the group-commit writer.

The body is read raw (never parsed by FastAPI): its size is checked against the declared
``Content-Length`` before reading and against the bytes actually received while reading. The
answer ``{"accepted": n, "duplicates": m}`` comes only after the rows are committed.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict
from starlette.responses import Response

from client.schema import SignalBatch
from collector.errors import ProblemError, WriteError
from collector.ingest import check_content_type, decode_body, validate_batch
from collector.settings import CollectorSettings
from collector.telemetry import Telemetry
from collector.writer import SignalSink

__all__ = ["IngestResult", "build_ingest_router", "read_limited"]


class IngestResult(BaseModel):
    """How many signals of the batch were stored now, and how many were already stored."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    accepted: int
    duplicates: int


def _too_large(limit: int) -> ProblemError:
    return ProblemError(413, "body_too_large", f"The request body exceeds {limit} bytes.")


async def read_limited(request: Request, limit: int) -> bytes:
    """The raw body, refusing (413) as soon as it exceeds ``limit`` bytes."""
    declared = request.headers.get("content-length")
    if declared is not None:
        if not declared.isdigit():
            raise ProblemError(400, "bad_content_length", "Content-Length is not a number.")
        if int(declared) > limit:
            raise _too_large(limit)
        # The server frames the body by Content-Length: it cannot be longer than declared.
        return await request.body()
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise _too_large(limit)
        chunks.append(chunk)
    return b"".join(chunks)


_REQUEST_BODY: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/SignalBatch"}}},
        "description": "A batch of 1-500 friction signals; optionally `Content-Encoding: gzip`.",
    }
}


def signal_schema_components() -> dict[str, Any]:
    """``SignalBatch`` and its parts as OpenAPI components (for ``/docs``)."""
    schema = SignalBatch.model_json_schema(ref_template="#/components/schemas/{model}")
    components: dict[str, Any] = dict(schema.pop("$defs", {}))
    components["SignalBatch"] = schema
    return components


def build_ingest_router(settings: CollectorSettings, telemetry: Telemetry) -> APIRouter:
    router = APIRouter(tags=["ingestion"])
    max_body = settings.max_body_bytes
    max_plain = settings.max_decompressed_bytes

    @router.post(
        "/v1/signals",
        response_model=IngestResult,
        openapi_extra=_REQUEST_BODY,
        summary="Submit a batch of friction signals",
        responses={
            400: {"description": "Malformed JSON or gzip"},
            413: {"description": "Body, decompressed body or batch too large"},
            415: {"description": "Not application/json, or an unsupported encoding"},
            422: {"description": "A signal breaks the schema (pointer and rule, never a value)"},
            429: {"description": "Rate limited; see Retry-After"},
            503: {"description": "Storage unavailable; retry"},
        },
    )
    async def post_signals(request: Request) -> Response:
        try:
            check_content_type(request.headers.get("content-type"))
            raw = await read_limited(request, max_body)
            body = decode_body(
                raw, request.headers.get("content-encoding"), max_decompressed=max_plain
            )
            batch = validate_batch(body)
            sink: SignalSink = request.app.state.sink
            try:
                result = await sink.submit(batch.signals)
            except WriteError:
                raise ProblemError(
                    503,
                    "storage_unavailable",
                    "The signals could not be stored; retry later.",
                    headers={"Retry-After": "1"},
                ) from None
        except ProblemError as exc:
            telemetry.rejected.add(1, {"code": exc.code})
            raise
        content = json.dumps({"accepted": result.accepted, "duplicates": result.duplicates})
        return Response(content, 200, media_type="application/json")

    return router
