"""``create_app(settings)``: the collector's FastAPI application.

Nothing lives at module level: each app owns its settings, its ``Database`` (one DuckDB
connection on one worker thread, opened at start-up with migrations applied), its group-commit
writer, its storage mode (``collector.mode``: the file's retention job, or the lake's shipper
of the same file) and its telemetry providers; shutdown flushes the writer, stops the mode's
work (the lake's last ship), then checkpoints and closes the database.

Routes: ``/healthz`` (alive), ``/readyz`` (database answers, writer running, store healthy),
``POST /v1/signals`` (ingestion), ``/v1/signals/count``, ``/v1/signals/export`` and
``/v1/admin/backup`` (the steward's: the file, or in lake mode the lake), plus the routers
the caller hands in (``routers``: the shell mounts triage from ``analysis.web``; the
collector never imports a package above it). ``/docs`` shows them all
(offline, ``collector.pages``); ``/`` links the docs and the dashboard.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import APIRouter, FastAPI, Request
from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics.export import MetricReader
from opentelemetry.sdk.trace.export import SpanExporter
from starlette.types import ASGIApp, Receive, Scope, Send

from collector.backup import build_backup_router
from collector.db import signals_database
from collector.ingest_routes import INGEST_PATH, IngestEndpoint, document_ingestion
from collector.mode import storage_mode
from collector.openapi import document_errors, problem_response_doc
from collector.pages import build_pages_router
from collector.ratelimit import RateLimiter, RateLimitMiddleware
from collector.read_routes import build_read_router
from collector.settings import CollectorSettings
from collector.store import DuckDBStore
from collector.telemetry import RequestSpanMiddleware, Telemetry
from collector.webhook import AlertSource
from collector.writer import GroupCommitWriter, SignalSink
from contract.days import utc_today
from service.bodies import BodyGuard
from service.db import Database
from service.errors import CatchAllMiddleware, ProblemError, install_error_handlers
from service.health import StoreHealth, directory_probe
from service.serving import service_version, silence_access_log

__all__ = [
    "CollectorApp",
    "RouterFactory",
    "create_app",
]

#: Builds an extra router from the app's settings and database (triage, handed in by the shell).
RouterFactory = Callable[[CollectorSettings, Database], APIRouter]


class CollectorApp(FastAPI):
    """The collector's FastAPI app: ``POST /v1/signals`` skips FastAPI's own machinery.

    Ingestion is the one hot route. Its requests go straight to ``ingest`` (the endpoint
    inside the same catch-all, rate limit and request span as every other route), past
    FastAPI's and Starlette's per-request middlewares (body limit, exception handling) and
    router, which cost more per request than validating a one-signal batch
    (``docs/write-path.md``). Everything else (lifespan, the other routes, ``/docs``) is
    FastAPI's as usual.
    """

    #: The ingestion stack; None until ``create_app`` sets it (then FastAPI serves 404).
    ingest: ASGIApp | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.ingest is not None and scope["type"] == "http" and scope["path"] == INGEST_PATH:
            scope["app"] = self  # as Starlette does: the endpoint finds its sink on app.state
            await self.ingest(scope, receive, send)
            return
        await super().__call__(scope, receive, send)


def create_app(
    settings: CollectorSettings,
    *,
    routers: Sequence[RouterFactory] = (),
    sink: SignalSink | None = None,
    span_exporter: SpanExporter | None = None,
    metric_reader: MetricReader | None = None,
    tracer_provider: trace.TracerProvider | None = None,
    meter_provider: metrics.MeterProvider | None = None,
    today: Callable[[], dt.date] = utc_today,
    alerts: AlertSource | None = None,
    bodies: Mapping[tuple[str, str], int] | None = None,
) -> CollectorApp:
    """Build the collector.

    ``routers`` are mounted beside the collector's own routes (the shell passes triage).
    ``sink`` replaces the DuckDB writer (the benchmark's validate-and-discard baseline).
    ``span_exporter``/``metric_reader`` plug in-memory exporters into the app's own providers
    (with its minimal Resource); ``tracer_provider``/``meter_provider`` replace the providers.
    ``today`` is the UTC day source of ``received_day`` and retention. ``alerts`` computes the
    document sent to ``alert_webhook_url`` after a release (the shell passes analysis's).
    ``bodies``: the request-body budget of each ``(method, path)`` of ``routers`` that takes a
    body (``service.bodies.BodyGuard``); every other route but ingestion takes none.
    """
    telemetry = Telemetry.from_settings(
        settings,
        span_exporter=span_exporter,
        metric_reader=metric_reader,
        tracer_provider=tracer_provider,
        meter_provider=meter_provider,
    )
    db = signals_database(settings.db_path, threads=settings.duckdb_threads)
    db_dir = Path(settings.db_path).parent
    # The one choice of storage (``collector.mode``): what triage and the steward read, the
    # background work, and the store's health. Both modes write through the same writer.
    mode = storage_mode(settings, db, telemetry, today, alerts=alerts)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        silence_access_log()
        db.open()
        mode.open()
        writer = GroupCommitWriter(
            DuckDBStore.opener(db),
            telemetry,
            max_rows=settings.writer_max_rows,
            linger_s=settings.writer_linger_ms / 1000,
            quiet_s=settings.writer_quiet_ms / 1000,
            today=today,
            # The lake sets the same flag when its object store refuses (no file to probe).
            health=StoreHealth(None if settings.lake_uri else directory_probe(db_dir)),
        )
        writer.start()
        app.state.writer = writer
        app.state.sink = sink if sink is not None else writer
        await mode.start()
        try:
            yield
        finally:
            await writer.close()
            await mode.stop()
            db.close()
            mode.close()
            telemetry.shutdown()

    app = CollectorApp(
        title="LMCP collector",
        version=service_version(),
        summary="Anonymous friction signals in; triage for the team out.",
        lifespan=lifespan,
        # /docs is served offline by collector.pages (FastAPI's own pages load a CDN).
        docs_url=None,
        redoc_url=None,
    )
    app.state.settings = settings
    app.state.db = db
    app.state.telemetry = telemetry
    app.state.mode = mode

    @app.get("/healthz", tags=["health"], summary="Liveness")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get(
        "/readyz",
        tags=["health"],
        summary="Readiness: the database answers and the store is healthy",
        responses={503: problem_response_doc("Not ready: the database or the store is not")},
    )
    async def readyz(request: Request) -> dict[str, str]:
        writer: GroupCommitWriter | None = getattr(request.app.state, "writer", None)
        if not db.is_open or writer is None or not writer.running:
            raise ProblemError(503, "not_ready", "The collector is not ready.")
        if await asyncio.to_thread(writer.health.check) is not None:
            raise ProblemError(503, "store_unwritable", "The store cannot be written now.")
        if mode.problem() is not None:  # the lake unreachable, shipping failing
            raise ProblemError(503, "not_ready", "The store is not healthy.")
        try:
            await db.run(lambda con: con.execute("SELECT 1").fetchall())
        except Exception:
            raise ProblemError(503, "not_ready", "The database does not answer.") from None
        return {"status": "ready"}

    app.include_router(build_pages_router(app.title, openapi_url=app.openapi_url or ""))
    app.include_router(build_read_router(mode.reads))
    app.include_router(build_backup_router(settings, mode.copies))
    for build in routers:
        app.include_router(build(settings, mode.released))

    install_error_handlers(app)
    # Innermost, so the app's reaction to a body cut short never reaches the catch-all. Not
    # around ingestion, which bounds its own body (``read_body``) on the hot path.
    app.add_middleware(BodyGuard, budgets=dict(bodies or {}))
    # Around every route, innermost first: the catch-all, the rate limit, the request span.
    # Ingestion gets its own instances of the same middlewares (the same limiter: one bucket
    # per address across all routes).
    around: list[tuple[Callable[..., ASGIApp], dict[str, Any]]] = [(CatchAllMiddleware, {})]
    if settings.rate_limit_enabled:
        limiter = RateLimiter(
            settings.rate_limit_per_s,
            settings.rate_limit_burst,
            max_clients=settings.rate_limit_max_clients,
        )
        around.append((RateLimitMiddleware, {"limiter": limiter}))
    if telemetry.tracing:
        around.append((RequestSpanMiddleware, {"tracer": telemetry.tracer}))
    ingest: ASGIApp = IngestEndpoint(settings, telemetry, today)
    for middleware, options in around:
        app.add_middleware(middleware, **options)
        ingest = middleware(ingest, **options)
    app.ingest = ingest
    _document_ingestion(app)
    return app


def _document_ingestion(app: FastAPI) -> None:
    """Publish ``POST /v1/signals`` (served by ``IngestEndpoint``) in OpenAPI and ``/docs``."""
    base_openapi = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = base_openapi()
            document_ingestion(schema)
            document_errors(schema)
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
