"""The OpenAPI document's error responses: every status a route can answer, as problem+json.

FastAPI documents a route's 200 and its parameter 422 (as its own ``HTTPValidationError``
JSON); the collector answers every error as RFC 9457 ``application/problem+json`` and from
layers FastAPI does not see (the rate limit, the catch-all, the token check). ``document_errors``
completes every operation of the document so that a client, or a contract test, finds each
status it can meet and the one shape it comes in.
"""

from __future__ import annotations

from typing import Any

from service.errors import PROBLEM_MEDIA_TYPE

__all__ = ["PROBLEM_SCHEMA", "document_errors", "problem_response_doc"]

PROBLEM_SCHEMA: dict[str, Any] = {
    "title": "Problem",
    "description": "RFC 9457 problem details; `code` is stable. Never echoes a submitted value.",
    "type": "object",
    "required": ["type", "title", "status", "detail", "code"],
    "properties": {
        "type": {"type": "string"},
        "title": {"type": "string"},
        "status": {"type": "integer"},
        "detail": {"type": "string"},
        "code": {"type": "string"},
        "errors": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "pointer": {"type": "string"},
                    "rule": {"type": "string"},
                    "detail": {"type": "string"},
                },
            },
        },
        "error_count": {"type": "integer"},
    },
}

#: Routes open to anyone (no token): the health checks and ingestion.
_OPEN_TAGS = frozenset({"health", "ingestion"})


def problem_response_doc(description: str) -> dict[str, Any]:
    """One documented problem+json response."""
    return {
        "description": description,
        "content": {PROBLEM_MEDIA_TYPE: {"schema": {"$ref": "#/components/schemas/Problem"}}},
    }


def document_errors(schema: dict[str, Any]) -> None:
    """Declare, on every operation, the error statuses it can answer and their shape.

    - every operation: 429 (the rate limit is per address, on every route) and 500;
    - behind a token (every route but the health checks and ingestion): 401 and 403;
    - a path parameter: 404; parameters or a body: 422 (FastAPI's own 422 becomes ours);
    - a request body: 413 and 415.
    """
    schema.setdefault("components", {}).setdefault("schemas", {}).setdefault(
        "Problem", PROBLEM_SCHEMA
    )
    for path, item in schema.get("paths", {}).items():
        for method, operation in item.items():
            if method not in ("get", "post", "put", "patch", "delete"):
                continue
            responses: dict[str, Any] = operation.setdefault("responses", {})
            wanted = {"429": "Rate limited; see Retry-After", "500": "Internal error"}
            if not _OPEN_TAGS & set(operation.get("tags", ())):
                wanted["401"] = "No bearer token"
                wanted["403"] = "A token not valid here, or not allowed this action"
            if "{" in path:
                wanted["404"] = "No such resource"
            if operation.get("parameters") or "requestBody" in operation:
                wanted["422"] = "Invalid parameters or body (pointer and rule, never a value)"
            if "requestBody" in operation:
                wanted["413"] = "Body too large"
                wanted["415"] = "Unsupported media type"
            for status, description in wanted.items():
                existing = responses.get(status)
                if existing is None or "HTTPValidationError" in str(existing):
                    responses[status] = problem_response_doc(description)
                else:
                    content = existing.setdefault("content", {})
                    content.setdefault(
                        PROBLEM_MEDIA_TYPE, {"schema": {"$ref": "#/components/schemas/Problem"}}
                    )
    schemas = schema["components"]["schemas"]
    for unused in ("HTTPValidationError", "ValidationError"):
        if unused in schemas and unused not in str(schema.get("paths", {})):
            del schemas[unused]
