"""The services as the shell composes and runs them.

- ``collector_app``: the collector with triage (``analysis.web``) mounted beside it; the
  collector never imports analysis, the shell hands the router in.
- Cloud Skills is its own app (``cloudskills.app.create_app``): nothing is mounted on it.
- ``uvicorn_config``: the uvicorn options of every service, keeping addresses out of logs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from analysis.web import BODIES as TRIAGE_BODIES
from analysis.web import build_router as triage_router
from collector.app import CollectorApp, RouterFactory, create_app
from collector.settings import CollectorSettings
from service.http import ServingLimits, guarded_protocol

__all__ = [
    "GRACEFUL_SHUTDOWN_S",
    "Bind",
    "check_address_free",
    "collector_app",
    "collector_limits",
    "uvicorn_config",
]


def collector_app(
    settings: CollectorSettings, *, routers: Sequence[RouterFactory] = (), **kwargs: Any
) -> CollectorApp:
    """``create_app`` with the triage API and dashboard mounted (then ``routers``, if any), the
    request bodies they take (``bodies``, beside triage's), and the alerts of each release for
    ``alert_webhook_url``."""
    from analysis.alerts import on_release

    kwargs.setdefault("alerts", on_release)
    bodies = {**TRIAGE_BODIES, **kwargs.pop("bodies", {})}
    return create_app(settings, routers=(triage_router, *routers), bodies=bodies, **kwargs)


class Bind(Protocol):
    """Where a service listens (``CollectorSettings``, ``SkillsSettings``)."""

    @property
    def host(self) -> str: ...

    @property
    def port(self) -> int: ...


#: A shutdown waits this long for requests in flight (a flush takes well under a second;
#: a client still sending its body is cut by the body timeout anyway).
GRACEFUL_SHUTDOWN_S = 3


def collector_limits(settings: CollectorSettings) -> ServingLimits:
    """The collector's connection limits, from its settings."""
    return ServingLimits(
        max_header_bytes=settings.max_header_bytes,
        header_timeout_s=settings.header_timeout_s,
        body_timeout_s=settings.body_timeout_s,
        max_connections=settings.max_connections,
        max_connections_per_address=settings.max_connections_per_address,
        response_timeout_s=settings.response_timeout_s,
        write_timeout_s=settings.write_timeout_s,
        max_buffered_bytes=settings.max_buffered_bytes,
    )


def uvicorn_config(
    settings: Bind,
    limits: ServingLimits | None = None,
    *,
    keep_alive_s: float = 5.0,
    **extra: Any,
) -> dict[str, Any]:
    """uvicorn options that keep the sender's address and user agent out of every log, and
    the connection limits (``service.http``: head size, timeouts, connection caps; a
    ``CollectorSettings`` brings its own, anything else gets the defaults)."""
    if limits is None and isinstance(settings, CollectorSettings):
        limits = collector_limits(settings)
        keep_alive_s = settings.keep_alive_timeout_s
    return {
        "host": settings.host,
        "port": settings.port,
        "access_log": False,
        "server_header": False,
        "proxy_headers": False,
        "http": guarded_protocol(limits or ServingLimits()),
        "timeout_keep_alive": keep_alive_s,
        "timeout_graceful_shutdown": GRACEFUL_SHUTDOWN_S,
        # On every answer, JSON, problems and uvicorn's own included: never sniffed as HTML.
        "headers": [("X-Content-Type-Options", "nosniff")],
        **extra,
    }


def check_address_free(settings: Bind) -> None:
    """Fail before uvicorn starts when the address is taken: ``OSError(EADDRINUSE)`` naming
    ``host:port``, which the shell prints as one line (uvicorn would log its own error, with
    the start-up lines before it, then exit). Bound as uvicorn binds, with SO_REUSEADDR, so a
    socket of a server that just stopped (TIME_WAIT) is no reason to refuse."""
    import errno
    import socket

    where = f"{settings.host}:{settings.port}"
    try:
        addresses = socket.getaddrinfo(settings.host, settings.port, type=socket.SOCK_STREAM)
    except OSError:
        return  # a name that does not resolve: uvicorn says so itself
    for family, kind, proto, _, address in addresses:  # uvicorn binds each of them
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(address)
            except OSError as exc:
                if exc.errno == errno.EADDRINUSE:
                    raise OSError(errno.EADDRINUSE, "address already in use", where) from None
