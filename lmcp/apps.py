"""The services as the shell composes and runs them.

- ``collector_app``: the collector with triage (``analysis.web``) mounted beside it; the
  collector never imports analysis, the shell hands the router in.
- Cloud Skills is its own app (``cloudskills.app.create_app``): nothing is mounted on it.
- ``uvicorn_config``: the uvicorn options of every service, keeping addresses out of logs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from analysis.web import build_router as triage_router
from collector.app import CollectorApp, RouterFactory, create_app
from collector.settings import CollectorSettings

__all__ = ["Bind", "collector_app", "uvicorn_config"]


def collector_app(
    settings: CollectorSettings, *, routers: Sequence[RouterFactory] = (), **kwargs: Any
) -> CollectorApp:
    """``create_app`` with the triage API and dashboard mounted (then ``routers``, if any)."""
    return create_app(settings, routers=(triage_router, *routers), **kwargs)


class Bind(Protocol):
    """Where a service listens (``CollectorSettings``, ``SkillsSettings``)."""

    @property
    def host(self) -> str: ...

    @property
    def port(self) -> int: ...


def uvicorn_config(settings: Bind, **extra: Any) -> dict[str, Any]:
    """uvicorn options that keep the sender's address and user agent out of every log."""
    return {
        "host": settings.host,
        "port": settings.port,
        "access_log": False,
        "server_header": False,
        "proxy_headers": False,
        "timeout_graceful_shutdown": 10,
        **extra,
    }
