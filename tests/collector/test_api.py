"""The HTTP surface on a real uvicorn server: the bad-input table, the error shape everywhere."""

from __future__ import annotations

import gzip
import json
import uuid
import zlib
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from fastapi import APIRouter

from collector.settings import CollectorSettings
from lmcp.apps import collector_app as create_app
from tests._processes import HANG_S
from tests.collector.conftest import (
    assert_problem,
    auth,
    batch_body,
    make_signal,
    signal_json,
)
from tests.factories import BARE

JSON = {"content-type": "application/json"}


def _with(**changes: Any) -> bytes:
    item = signal_json(make_signal())
    item.update(changes)
    return batch_body([item])


def _bomb() -> bytes:
    deflater = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    zeros = b" " * (1024 * 1024)
    head = deflater.compress(b'{"signals":[')
    return head + b"".join(deflater.compress(zeros) for _ in range(64)) + deflater.flush()


def _v1(**changes: Any) -> bytes:
    """A version-1 body (the previous version: a raw ``attempt_count``), with ``changes``."""
    item = signal_json(make_signal())
    del item["attempts"]
    item.update({"schema_version": 1, "attempt_count": 2})
    item.update(changes)
    return batch_body([item])


def _without(key: str) -> bytes:
    item = signal_json(make_signal())
    del item[key]
    return batch_body([item])


def _many(n: int) -> bytes:
    """``n`` small signals (about 340 bytes each: 10,000 fit in 4 MiB, not in 1 MiB)."""
    one = signal_json(
        **BARE,
        friction_type="other",
        tool_attempted="other",
        client={"version": "1.2.3", "platform": "linux"},
    )
    items = [dict(one, signal_id=str(uuid.uuid4())) for _ in range(n)]
    return json.dumps({"signals": items}, separators=(",", ":")).encode()


# (id, body, headers, status, code)
BAD_INPUT: list[tuple[str, Callable[[], bytes], dict[str, str], int, str]] = [
    ("malformed-json", lambda: b'{"signals": [', JSON, 400, "malformed_json"),
    ("not-json-at-all", lambda: b"\xff\xfe<xml/>", JSON, 400, "malformed_json"),
    (
        "wrong-content-type",
        lambda: batch_body([make_signal()]),
        {"content-type": "text/plain"},
        415,
        "unsupported_media_type",
    ),
    ("no-content-type", lambda: batch_body([make_signal()]), {}, 415, "unsupported_media_type"),
    (
        "form-content-type",
        lambda: b"signals=1",
        {"content-type": "application/x-www-form-urlencoded"},
        415,
        "unsupported_media_type",
    ),
    (
        "unknown-encoding",
        lambda: batch_body([make_signal()]),
        {**JSON, "content-encoding": "br"},
        415,
        "unsupported_content_encoding",
    ),
    (
        "body-over-1mib",
        lambda: b'{"signals":[' + b" " * (1024 * 1024) + b"]}",
        JSON,
        413,
        "body_too_large",
    ),
    ("gzip-bomb", _bomb, {**JSON, "content-encoding": "gzip"}, 413, "decompressed_too_large"),
    (
        "broken-gzip",
        lambda: b"\x1f\x8b\x08\x00garbage",
        {**JSON, "content-encoding": "gzip"},
        400,
        "malformed_gzip",
    ),
    ("10000-signals", lambda: _many(10_000), JSON, 413, "body_too_large"),
    (
        "10000-signals-gzipped",
        lambda: gzip.compress(_many(10_000)),
        {**JSON, "content-encoding": "gzip"},
        413,
        "too_many_signals",
    ),
    ("501-signals", lambda: _many(501), JSON, 413, "too_many_signals"),
    ("extra-field-with-value", lambda: _with(note="my secret note"), JSON, 422, "invalid_signals"),
    ("unknown-enum", lambda: _with(friction_type="furious"), JSON, 422, "invalid_signals"),
    ("unknown-tool", lambda: _with(tool_attempted="rm_rf_home"), JSON, 422, "invalid_signals"),
    (
        "unknown-ring-tool",
        lambda: _with(ring=[{"tool": "mystery", "outcome": "ok"}]),
        JSON,
        422,
        "invalid_signals",
    ),
    (
        "future-schema-version",
        lambda: _with(schema_version=3),
        JSON,
        422,
        "unsupported_schema_version",
    ),
    (
        "schema-version-as-string",
        lambda: _with(schema_version="2"),
        JSON,
        422,
        "unsupported_schema_version",
    ),
    (
        "missing-schema-version",
        lambda: _without("schema_version"),
        JSON,
        422,
        "missing_schema_version",
    ),
    ("raw-count-in-v2", lambda: _with(attempt_count=3), JSON, 422, "invalid_signals"),
    ("bucket-in-v1", lambda: _v1(attempts="3-5"), JSON, 422, "invalid_signals"),
    ("unknown-bucket", lambda: _with(attempts="11"), JSON, 422, "invalid_signals"),
    ("negative-attempt-count-v1", lambda: _v1(attempt_count=-1), JSON, 422, "invalid_signals"),
    ("huge-attempt-count-v1", lambda: _v1(attempt_count=10**30), JSON, 422, "invalid_signals"),
    ("uuid-v1-id", lambda: _with(signal_id=str(uuid.uuid1())), JSON, 422, "invalid_signals"),
    ("datetime-not-day", lambda: _with(day="2026-11-30T12:34:56Z"), JSON, 422, "invalid_signals"),
    (
        "version-with-build",
        lambda: _with(client={"version": "1.2.3+host", "platform": "linux"}),
        JSON,
        422,
        "invalid_signals",
    ),
    ("empty-batch", lambda: b'{"signals": []}', JSON, 422, "empty_batch"),
    ("no-signals-key", lambda: b"{}", JSON, 422, "invalid_signals"),
    ("top-level-array", lambda: b"[]", JSON, 422, "invalid_signals"),
]


@pytest.mark.parametrize(
    ("body", "headers", "status", "code"),
    [pytest.param(*row[1:], id=row[0]) for row in BAD_INPUT],
)
def test_bad_input(
    refusing_http: httpx.Client,
    body: Callable[[], bytes],
    headers: dict[str, str],
    status: int,
    code: str,
) -> None:
    http = refusing_http  # shared by every bad input: none may store anything
    response = http.post("/v1/signals", content=body(), headers=headers)
    problem = assert_problem(response, status, code)
    for entry in problem.get("errors", []):
        assert set(entry) == {"pointer", "rule", "detail"}
    assert http.get("/v1/signals/count", headers=auth()).json() == {"count": 0}


def test_422_names_pointer_and_rule(http: httpx.Client) -> None:
    """The pointer is the signal's own (the version union adds nothing to it)."""
    problem = assert_problem(
        http.post("/v1/signals", content=_v1(attempt_count=101), headers=JSON), 422
    )
    assert problem["errors"] == [
        {
            "pointer": "/signals/0/attempt_count",
            "rule": "less_than_equal",
            "detail": "number is too large",
        }
    ]


def test_duplicates_within_and_across_batches(http: httpx.Client) -> None:
    a, b = make_signal(), make_signal()
    first = http.post("/v1/signals", content=batch_body([a, a, b]), headers=JSON)
    assert first.json() == {"accepted": 2, "duplicates": 1}
    again = http.post("/v1/signals", content=batch_body([b, a, make_signal()]), headers=JSON)
    assert again.json() == {"accepted": 1, "duplicates": 2}
    assert http.get("/v1/signals/count", headers=auth()).json() == {"count": 3}


def test_gzip_and_charset_accepted(http: httpx.Client) -> None:
    body = gzip.compress(batch_body([make_signal(), make_signal()]))
    headers = {"content-type": "application/json; charset=utf-8", "content-encoding": "gzip"}
    response = http.post("/v1/signals", content=body, headers=headers)
    assert response.status_code == 200
    assert response.json() == {"accepted": 2, "duplicates": 0}
    assert "set-cookie" not in response.headers


def test_health_and_readiness(http: httpx.Client) -> None:
    assert http.get("/healthz").json() == {"status": "ok"}
    assert http.get("/readyz").json() == {"status": "ready"}


def test_read_api_tokens(http: httpx.Client) -> None:
    for path in ("/v1/signals/count", "/v1/signals/export"):
        missing = assert_problem(http.get(path), 401, "unauthorized")
        assert missing["detail"]
        assert http.get(path).headers["www-authenticate"] == "Bearer"
        assert_problem(
            http.get(path, headers={"Authorization": "Bearer wrong-token"}), 403, "steward_only"
        )
        assert_problem(http.get(path, headers={"Authorization": "Basic dXNlcjpwYXNz"}), 401)
        assert http.get(path, headers=auth()).status_code == 200


def test_several_read_tokens(settings: CollectorSettings) -> None:
    from pydantic import SecretStr

    from service.auth import token_matches

    many = [SecretStr("t-one"), SecretStr("t-two")]
    assert token_matches(many, "t-one") and token_matches(many, "t-two")
    assert not token_matches(many, "t-three") and not token_matches(many, "")
    assert not token_matches([], "t-one")


def test_openapi_lists_every_route(http: httpx.Client) -> None:
    paths = http.get("/openapi.json").json()["paths"]
    for path in ("/v1/signals", "/v1/signals/count", "/v1/signals/export", "/healthz", "/readyz"):
        assert path in paths
    assert http.get("/docs").status_code == 200
    body_schema = paths["/v1/signals"]["post"]["requestBody"]["content"]["application/json"]
    assert body_schema["schema"] == {"$ref": "#/components/schemas/SignalBatch"}


def _routes(settings: CollectorSettings) -> list[tuple[str, str]]:
    """Every (method, path) the app documents, optional routers included."""
    paths = create_app(settings).openapi()["paths"]
    return [(method.upper(), path) for path, ops in paths.items() for method in ops]


def _fill(path: str) -> str:
    return path.replace("{", "x").replace("}", "")


def test_error_shape_on_every_route(http: httpx.Client, settings: CollectorSettings) -> None:
    """Every route, including the optional routers, answers its errors as problem+json."""
    routes = _routes(settings)
    assert len(routes) >= 5
    seen = 0
    for method, path in routes:
        url = _fill(path)
        if path in ("/docs", "/redoc", "/openapi.json", "/docs/oauth2-redirect"):
            continue
        # A method the route does not have -> 405, the same shape.
        other = "PATCH" if method != "PATCH" else "PUT"
        if (other, path) not in routes:
            assert_problem(http.request(other, url), 405, "method_not_allowed")
        # The route itself with a bad or unauthenticated request.
        response = http.request(
            method, url, content=b"{not json", headers={"content-type": "application/json",
                                                          "Authorization": "Bearer wrong"}
        )  # fmt: skip
        if response.status_code >= 400:
            assert_problem(response, response.status_code)
            seen += 1
    assert seen >= 3
    assert_problem(http.get("/no/such/route"), 404, "not_found")


def test_unhandled_exception_is_a_generic_500(
    settings: CollectorSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests._servers import running_collector

    app_settings = settings

    class Boom(Exception):
        pass

    def boom_router(_settings: CollectorSettings, _db: Any) -> APIRouter:
        router = APIRouter()

        @router.get("/boom")
        async def boom() -> None:
            raise Boom("secret-value-in-message")

        return router

    with (
        running_collector(app_settings, routers=[boom_router]) as url,
        httpx.Client(base_url=url, timeout=HANG_S) as client,
    ):
        response = client.get("/boom")
    body = assert_problem(response, 500, "internal_error")
    assert "secret-value" not in response.text
    assert body["detail"] == "An internal error occurred."


class _BrokenSink:
    """A sink with a bug: its exception message carries what it was given."""

    async def submit(self, signals: Any, body: bytes | None = None) -> Any:
        raise RuntimeError(f"bug while storing {body!r}")


def test_unhandled_exception_in_ingestion_is_a_generic_500(settings: CollectorSettings) -> None:
    """Ingestion skips FastAPI's machinery, not the catch-all: a bug is a value-free 500."""
    from tests._servers import running_collector

    signal = make_signal()
    with (
        running_collector(settings, sink=_BrokenSink()) as url,
        httpx.Client(base_url=url, timeout=HANG_S) as client,
    ):
        response = client.post("/v1/signals", content=batch_body([signal]), headers=JSON)
        assert client.get("/healthz").status_code == 200  # the server lives on
    body = assert_problem(response, 500, "internal_error")
    assert str(signal.signal_id) not in response.text
    assert body["detail"] == "An internal error occurred."


def test_reads_and_writes_interleave(http: httpx.Client) -> None:
    """A read between writes leaves the shared connection usable (DuckDB 2 pending results)."""
    for n in range(1, 4):
        assert http.get("/v1/signals/count", headers=auth()).status_code == 200
        response = http.post("/v1/signals", content=batch_body([make_signal()]), headers=JSON)
        assert response.json() == {"accepted": 1, "duplicates": 0}
        assert http.get("/v1/signals/count", headers=auth()).json() == {"count": n}
    assert http.get("/v1/signals/export", headers=auth()).status_code == 200
    assert (
        http.post("/v1/signals", content=batch_body([make_signal()]), headers=JSON).status_code
        == 200
    )
