"""The alert webhook: after a release, one JSON document POSTed to ``alert_webhook_url``.

Both release jobs send it: the file mode's (``collector.retention``) and the lake's
(``lmcp lake release``, through ``collector.lake.releases.send_lake_alerts``). What to send is
computed above the collector (``analysis.alerts.on_release``, handed in by the shell as an
``AlertSource``: the collector never imports analysis) from released cells only.
The POST runs off the event loop and off the database thread, with a short timeout and a few
retries; a webhook that fails is logged without its URL or the body, and never fails the job.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import duckdb

__all__ = ["AlertSource", "Webhook", "post_alerts", "send_alerts"]

#: On the database thread, after a run of the release job: the (cube, period) pairs that run
#: stored -> the document to send, or None (nothing to say, or not a newly closed period).
AlertSource = Callable[
    [duckdb.DuckDBPyConnection, Sequence[tuple[str, dt.date]]], Mapping[str, Any] | None
]

log = logging.getLogger("collector")


@dataclass(frozen=True, slots=True)
class Webhook:
    """Where alerts go and what computes them."""

    url: str
    source: AlertSource
    timeout_s: float = 5.0
    attempts: int = 3
    #: The first retry's wait in seconds (then doubled, at most 4 s).
    backoff_s: float = 0.2


class _Retryable(Exception):
    """A 5xx, 408 or 429 answer: worth another attempt."""


def post_alerts(hook: Webhook, document: Mapping[str, Any]) -> bool:
    """POST ``document``; True when the receiver took it (2xx). Never raises: a failure is
    logged as its kind only (a webhook URL is a secret, the body is the receiver's)."""
    import httpx
    from tenacity import (
        retry,
        retry_if_exception_type,
        stop_after_attempt,
        wait_exponential,
    )

    @retry(
        retry=retry_if_exception_type((httpx.TransportError, _Retryable)),
        stop=stop_after_attempt(hook.attempts),
        wait=wait_exponential(multiplier=hook.backoff_s, max=4.0),
        reraise=True,
    )
    def send(client: httpx.Client) -> int:
        response = client.post(hook.url, json=dict(document))
        if response.status_code >= 500 or response.status_code in (408, 429):
            raise _Retryable(str(response.status_code))
        return response.status_code

    try:
        with httpx.Client(timeout=hook.timeout_s, follow_redirects=False) as client:
            status = send(client)
    except _Retryable as exc:
        log.warning("alert webhook failed: HTTP %s after %d attempts", exc, hook.attempts)
        return False
    except Exception as exc:  # a webhook never breaks the release job
        log.warning("alert webhook failed: %s", type(exc).__name__)
        return False
    if not 200 <= status < 300:
        log.warning("alert webhook refused the alerts: HTTP %d", status)
        return False
    return True


def send_alerts(
    hook: Webhook, con: duckdb.DuckDBPyConnection, released: Sequence[tuple[str, dt.date]]
) -> bool | None:
    """After a release run (the lake's job; the file mode's runs in ``collector.retention``):
    the document of what that run stored (``released``: only its own commits, so a period is
    alerted at most once), computed on ``con``'s released cells and POSTed. None when there
    is nothing to send, else whether the receiver took it. Never raises: the releases are
    stored, an alert can neither undo nor fail them."""
    if not released:
        return None
    try:
        document = hook.source(con, released)
    except Exception as exc:
        log.error("alerts not computed: %s", type(exc).__name__)
        return False
    return None if document is None else post_alerts(hook, document)
