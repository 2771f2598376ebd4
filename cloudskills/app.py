"""``create_app(settings)``: the Cloud Skills service, its own FastAPI app and its own database.

Nothing lives at module level: each app owns its settings and its ``Database`` (one DuckDB
connection on one worker thread, opened at start-up with ``cloudskills/migrations`` applied,
checkpointed and closed at shutdown). The file is the service's alone: skills carry authors and
timestamps and never share a store with the anonymous signals.

Routes: ``/healthz`` (alive), ``/readyz`` (the database answers) and ``/v1/skills``
(``cloudskills.routes``). Every error answers RFC 9457 problem+json (``service.errors``).
Request bodies are held to their route's budget before any is read (``service.bodies``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from fastapi import FastAPI

from cloudskills.routes import BODIES, build_router
from cloudskills.settings import SkillsSettings
from cloudskills.store import skills_database
from service.bodies import BodyGuard
from service.errors import CatchAllMiddleware, ProblemError, install_error_handlers
from service.serving import service_version, silence_access_log

__all__ = ["create_app"]


def create_app(
    settings: SkillsSettings, *, clock: Callable[[], dt.datetime] | None = None
) -> FastAPI:
    """Build the skills service for ``settings`` (the database opens when the app starts).

    ``clock`` (naive UTC) replaces the wall clock for events and proposal expiry (tests).
    """
    db = skills_database(settings.db_path)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        silence_access_log()
        db.open()
        try:
            yield
        finally:
            db.close()

    app = FastAPI(
        title="LMCP Cloud Skills",
        version=service_version(),
        summary="Versioned, reviewed, shareable procedures for signed-in principals.",
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.state.db = db

    @app.get("/healthz", tags=["health"], summary="Liveness")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/readyz", tags=["health"], summary="Readiness: the database answers")
    async def readyz() -> dict[str, str]:
        if not db.is_open:
            raise ProblemError(503, "not_ready", "The skills service is not ready.")
        try:
            await db.run(lambda con: con.execute("SELECT 1").fetchall())
        except Exception:
            raise ProblemError(503, "not_ready", "The database does not answer.") from None
        return {"status": "ready"}

    retention = dt.timedelta(days=settings.proposal_retention_days)
    if clock is None:
        app.include_router(build_router(settings.principals, db, proposal_retention=retention))
    else:
        app.include_router(
            build_router(settings.principals, db, clock=clock, proposal_retention=retention)
        )
    install_error_handlers(app)
    # Innermost, so the app's reaction to a body cut short never reaches the catch-all.
    app.add_middleware(BodyGuard, budgets=BODIES)
    app.add_middleware(CatchAllMiddleware)
    return app
