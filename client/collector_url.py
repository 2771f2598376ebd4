"""The collector's base URL: its default, where it is configured, and what makes one usable.

Kept apart from ``client.sender`` (which needs the HTTP client): ``lmcp signals status`` checks
the URL without loading one.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlsplit

__all__ = ["DEFAULT_URL", "URL_VARIABLE", "collector_url", "url_problem"]

DEFAULT_URL = "http://127.0.0.1:8765"
URL_VARIABLE = "LMCP_COLLECTOR_URL"


def collector_url(environ: Mapping[str, str]) -> str:
    """The configured base URL, or the default when ``LMCP_COLLECTOR_URL`` is unset or empty."""
    return environ.get(URL_VARIABLE) or DEFAULT_URL


def url_problem(url: str) -> str | None:
    """Why ``url`` cannot be a collector's base URL, or None when it can."""
    parts = urlsplit(url)
    if parts.scheme not in {"http", "https"}:
        return "it must start with http:// or https://"
    if not parts.hostname:
        return "it names no host"
    try:
        parts.port  # noqa: B018 - reading it validates it
    except ValueError:
        return "its port is not a number from 0 to 65535"
    if parts.path.rstrip("/"):
        return "it must be the collector's base URL, without a path (such as /v1/signals)"
    if parts.query or parts.fragment:
        return "it must not carry a query or a fragment"
    return None
