"""What every service process does the same way: its version, and no address in any log."""

from __future__ import annotations

import logging
from importlib.metadata import PackageNotFoundError, version

__all__ = ["service_version", "silence_access_log"]


def service_version() -> str:
    """The installed distribution's version (one source: pyproject.toml)."""
    try:
        return version("lmcp-friction")
    except PackageNotFoundError:  # running from a source tree that is not installed
        return "0.0.0"


def silence_access_log() -> None:
    """Turn uvicorn's access log off for good: its lines carry the client's address.

    ``access_log=False`` alone is not enough: uvicorn logs whenever the ``uvicorn.access``
    logger has handlers, and a later logging setup can give it some (through propagation).
    A disabled logger drops every record whatever its handlers.
    """
    logging.getLogger("uvicorn.access").disabled = True
