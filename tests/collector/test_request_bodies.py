"""Every route of the collector holds a request's body to the route's budget, and refuses more
before reading it: a declared length at once (a client that waits for ``100 Continue`` is never
asked for the body), a chunked body once its bytes pass the budget, a content coding on every
route that decodes none, and ingestion's gzip past its own cap.

Against ``lmcp collector serve`` in a child process, one raw connection per attack. ``TAKES``
and ``ROUTES`` are every route the collector serves: a route added to the app without a line
here fails ``test_the_table_is_every_route_the_collector_serves``, and is then attacked like
the others.
"""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from pathlib import Path

import pytest

from collector.ingest_routes import INGEST_PATH
from collector.settings import CollectorSettings
from lmcp.apps import collector_app
from tests._raw_http import (
    Connection,
    assert_refused,
    chunks_past,
    concrete,
    head,
    routes,
)
from tests._servers import collector_process

pytestmark = pytest.mark.slow

MIB = 1024 * 1024
LOGIN = "/dashboard/login"
#: The routes that take a body, and the most each takes: ingestion its setting's default; the
#: sign-in form a few KiB (every field at its longest fits).
TAKES = {("POST", INGEST_PATH): MIB, ("POST", LOGIN): 4 * 1024}
#: Every other route: no body at all.
NO_BODY = [
    ("GET", "/"),
    ("GET", "/dashboard"),
    ("GET", "/dashboard/export/{name}"),
    ("GET", "/dashboard/friction/{tool}/{error_class}/{friction_type}"),
    ("GET", "/dashboard/friction/{tool}/{error_class}/{friction_type}/export/{name}"),
    ("GET", "/dashboard/login"),
    ("GET", "/dashboard/{rest:path}"),  # any other dashboard path: the HTML "not found" page
    ("GET", "/dashboard/static/{name}"),
    ("GET", "/dashboard/tool"),
    ("GET", "/dashboard/tool/{tool}"),
    ("GET", "/dashboard/tool/{tool}/export/{name}"),
    ("GET", "/docs"),
    ("GET", "/docs/assets/{name}"),
    ("GET", "/docs/oauth2-redirect"),
    ("GET", "/healthz"),
    ("GET", "/openapi.json"),
    ("HEAD", "/openapi.json"),
    ("GET", "/readyz"),
    ("GET", "/v1/signals/count"),
    ("GET", "/v1/signals/export"),
    ("GET", "/v1/triage"),
    ("GET", "/v1/triage/{question}"),
    ("POST", "/dashboard/logout"),
    ("POST", "/v1/admin/backup"),
]
ROUTES = sorted([*TAKES, *NO_BODY])
#: 8 MiB of zeros in 8 KiB: past every budget, and past ingestion's 4 MiB once decoded.
BOMB = gzip.compress(bytes(8 * MIB))


def _media(template: str) -> str:
    return "application/x-www-form-urlencoded" if template == LOGIN else "application/json"


@pytest.fixture(scope="module")
def collector(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("bodies")
    settings = CollectorSettings(db_path=folder / "signals.duckdb", rate_limit_enabled=False)
    with collector_process(settings) as served:
        yield served.base_url


def test_the_table_is_every_route_the_collector_serves(tmp_path: Path) -> None:
    app = collector_app(CollectorSettings(db_path=tmp_path / "signals.duckdb"))
    assert len(ROUTES) == len(set(ROUTES))
    assert set(ROUTES) == routes(app) | {("POST", INGEST_PATH)}


@pytest.mark.parametrize(("method", "template"), ROUTES)
def test_a_declared_body_over_the_budget_is_refused_before_it_is_sent(
    collector: str, method: str, template: str
) -> None:
    budget = TAKES.get((method, template), 0)
    with Connection(collector) as conn:
        # A polite client: it sends the body only once the server asks for it.
        headers = {
            "Content-Type": _media(template),
            "Content-Length": str(budget + 1),
            "Expect": "100-continue",
        }
        assert conn.send(head(method, concrete(template), headers))
        assert_refused(conn.answer(method=method), method, 413, "body_too_large")


@pytest.mark.parametrize(("method", "template"), ROUTES)
def test_a_chunked_body_is_refused_as_soon_as_it_passes_the_budget(
    collector: str, method: str, template: str
) -> None:
    budget = TAKES.get((method, template), 0)
    with Connection(collector) as conn:
        headers = {"Content-Type": _media(template), "Transfer-Encoding": "chunked"}
        conn.send(head(method, concrete(template), headers))
        chunks_past(conn, budget)
        assert_refused(conn.answer(method=method), method, 413, "body_too_large")


@pytest.mark.parametrize(("method", "template"), ROUTES)
def test_a_content_coding_is_refused_or_decoded_within_its_cap(
    collector: str, method: str, template: str
) -> None:
    with Connection(collector) as conn:
        headers = {
            "Content-Type": _media(template),
            "Content-Encoding": "gzip",
            "Content-Length": str(len(BOMB)),
            "Expect": "100-continue",
        }
        conn.send(head(method, concrete(template), headers))
        answer = conn.answer(method=method)
        if answer is not None and answer.status == 100:
            conn.send(BOMB)
            answer = conn.answer(method=method)
        if method == "HEAD":
            assert answer is not None and answer.status == 415
        elif (method, template) == ("POST", INGEST_PATH):
            assert_refused(answer, method, 413, "decompressed_too_large")
        else:
            assert_refused(answer, method, 415, "unsupported_content_encoding")


@pytest.mark.parametrize(("method", "template"), ROUTES)
def test_a_body_within_the_budget_is_not_refused_for_its_size(
    collector: str, method: str, template: str
) -> None:
    budget = TAKES.get((method, template), 0)
    with Connection(collector) as conn:
        headers = {"Content-Type": _media(template), "Content-Length": str(budget)}
        conn.send(head(method, concrete(template), headers) + b"a" * budget)
        answer = conn.answer(method=method)
        assert answer is not None, "the server closed the connection without an answer"
        assert answer.status not in (100, 413), answer
