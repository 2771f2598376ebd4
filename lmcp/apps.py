"""The services as the shell composes them: the collector with triage mounted beside it."""

from __future__ import annotations

from typing import Any

from analysis.web import build_router as triage_router
from cloudskills.routes import build_router as skills_router
from collector.app import CollectorApp, create_app
from collector.settings import CollectorSettings

__all__ = ["collector_app"]


def collector_app(settings: CollectorSettings, **kwargs: Any) -> CollectorApp:
    """``create_app`` with the triage API and dashboard (and, for now, Cloud Skills) mounted."""
    return create_app(settings, routers=(skills_router, triage_router), **kwargs)
