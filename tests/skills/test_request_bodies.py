"""Every route of the Cloud Skills service holds a request's body to the route's budget, and
refuses more before reading it: a declared length at once (a client that waits for ``100
Continue`` is never asked for the body), a chunked body once its bytes pass the budget, and a
content coding on every route (the service decodes none).

Against ``lmcp skills serve`` in a child process, one raw connection per attack, signed in
(a save reads its body only once its caller may save). ``TAKES`` and ``NO_BODY`` are every
route the service serves: a route added without a line here fails
``test_the_table_is_every_route_the_service_serves``, and is then attacked like the others.
"""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from pathlib import Path

import pytest

from cloudskills.app import create_app
from cloudskills.settings import SkillsSettings
from tests._raw_http import (
    Connection,
    assert_refused,
    chunks_past,
    concrete,
    head,
    routes,
)
from tests._servers import skills_process
from tests.skills.conftest import make_settings, token_of

pytestmark = pytest.mark.slow

MIB = 1024 * 1024
#: The one route that takes a body: a save, within the spec's limits twice JSON-escaped.
TAKES = {("POST", "/v1/skills"): 16 * MIB}
NO_BODY = [
    ("DELETE", "/v1/skills/{slug}"),
    ("GET", "/docs"),
    ("HEAD", "/docs"),
    ("GET", "/docs/oauth2-redirect"),
    ("HEAD", "/docs/oauth2-redirect"),
    ("GET", "/healthz"),
    ("GET", "/openapi.json"),
    ("HEAD", "/openapi.json"),
    ("GET", "/readyz"),
    ("GET", "/redoc"),
    ("HEAD", "/redoc"),
    ("GET", "/v1/skills"),
    ("GET", "/v1/skills/{slug}"),
    ("GET", "/v1/skills/{slug}/resources/{path:path}"),
    ("GET", "/v1/skills/{slug}/revisions"),
    ("POST", "/v1/skills/{slug}/revisions/{revision_id}/approve"),
    ("POST", "/v1/skills/{slug}/revisions/{revision_id}/publish"),
    ("POST", "/v1/skills/{slug}/revisions/{revision_id}/reject"),
]
ROUTES = sorted([*TAKES, *NO_BODY])
BOMB = gzip.compress(bytes(8 * MIB))


def _headers(**more: str) -> dict[str, str]:
    return {
        "Authorization": f"Bearer {token_of('ann')}",
        "Content-Type": "application/json",
        **more,
    }


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    settings = make_settings(tmp_path_factory.mktemp("bodies") / "skills.duckdb")
    with skills_process(settings) as served:
        yield served.base_url


def test_the_table_is_every_route_the_service_serves(tmp_path: Path) -> None:
    app = create_app(SkillsSettings(db_path=tmp_path / "skills.duckdb"))
    assert len(ROUTES) == len(set(ROUTES))
    assert set(ROUTES) == routes(app)


@pytest.mark.parametrize(("method", "template"), ROUTES)
def test_a_declared_body_over_the_budget_is_refused_before_it_is_sent(
    service: str, method: str, template: str
) -> None:
    budget = TAKES.get((method, template), 0)
    with Connection(service) as conn:
        headers = _headers(**{"Content-Length": str(budget + 1), "Expect": "100-continue"})
        assert conn.send(head(method, concrete(template), headers))
        assert_refused(conn.answer(method=method), method, 413, "body_too_large")


@pytest.mark.parametrize(("method", "template"), ROUTES)
def test_a_chunked_body_is_refused_as_soon_as_it_passes_the_budget(
    service: str, method: str, template: str
) -> None:
    budget = TAKES.get((method, template), 0)
    with Connection(service) as conn:
        conn.send(head(method, concrete(template), _headers(**{"Transfer-Encoding": "chunked"})))
        chunks_past(conn, budget, 256 * 1024)
        assert_refused(conn.answer(method=method), method, 413, "body_too_large")


@pytest.mark.parametrize(("method", "template"), ROUTES)
def test_a_content_coding_is_refused_on_every_route(
    service: str, method: str, template: str
) -> None:
    with Connection(service) as conn:
        headers = _headers(
            **{
                "Content-Encoding": "gzip",
                "Content-Length": str(len(BOMB)),
                "Expect": "100-continue",
            }
        )
        conn.send(head(method, concrete(template), headers))
        answer = conn.answer(method=method)
        if answer is not None and answer.status == 100:
            conn.send(BOMB)
            answer = conn.answer(method=method)
        assert_refused(answer, method, 415, "unsupported_content_encoding")


@pytest.mark.parametrize(("method", "template"), ROUTES)
def test_a_body_within_the_budget_is_not_refused_for_its_size(
    service: str, method: str, template: str
) -> None:
    budget = TAKES.get((method, template), 0)
    with Connection(service) as conn:
        conn.send(head(method, concrete(template), _headers(**{"Content-Length": str(budget)})))
        conn.send(b"a" * budget)
        answer = conn.answer(method=method)
        assert answer is not None, "the server closed the connection without an answer"
        assert answer.status not in (100, 413), answer
