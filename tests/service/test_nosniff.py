"""``X-Content-Type-Options: nosniff`` on every answer of both services, exactly once: JSON,
problems, HTML pages, static assets, the ingestion fast path and the connection's own 400/431."""

from __future__ import annotations

import socket
from pathlib import Path

import httpx
import pytest

from cloudskills.settings import SkillsSettings
from collector.settings import CollectorSettings
from tests._servers import running_collector, running_skills

pytestmark = pytest.mark.slow


def _raw(url: str, payload: bytes) -> bytes:
    host, port = url.removeprefix("http://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(payload)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def _check(url: str, requests: list[tuple[str, str, bytes | None]]) -> None:
    with httpx.Client(base_url=url, trust_env=False, timeout=10) as client:
        for method, path, body in requests:
            answer = client.request(method, path, content=body)
            assert answer.headers.get_list("x-content-type-options") == ["nosniff"], (
                method,
                path,
                answer.status_code,
            )
    for payload in (
        b"GARBAGE\x00 / HTTP/9\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 64 * 1024 + b"\r\n\r\n",
    ):
        head = _raw(url, payload).split(b"\r\n\r\n", 1)[0].lower()
        assert head.count(b"x-content-type-options: nosniff") == 1, head


def test_every_collector_answer_says_nosniff(tmp_path: Path) -> None:
    settings = CollectorSettings(db_path=tmp_path / "c.duckdb", rate_limit_enabled=False)
    with running_collector(settings) as url:
        _check(
            url,
            [
                ("GET", "/healthz", None),
                ("GET", "/openapi.json", None),
                ("GET", "/docs", None),
                ("GET", "/", None),
                ("GET", "/dashboard/static/dashboard.css", None),
                ("GET", "/dashboard", None),
                ("GET", "/no/such/page", None),
                ("POST", "/v1/signals", b"{}"),
                ("POST", "/v1/signals", b"not json"),
                ("GET", "/v1/signals/export", None),
            ],
        )


def test_every_skills_answer_says_nosniff(tmp_path: Path) -> None:
    with running_skills(SkillsSettings(db_path=tmp_path / "s.duckdb")) as url:
        _check(
            url,
            [
                ("GET", "/healthz", None),
                ("GET", "/openapi.json", None),
                ("GET", "/v1/skills", None),
                ("GET", "/no/such/page", None),
            ],
        )
