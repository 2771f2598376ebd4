"""What every service process does the same way: its version, and no address in any log."""

from __future__ import annotations

import logging

from contract.version import package_version

__all__ = ["service_version", "silence_access_log"]


def service_version() -> str:
    """``service.version``: the package version (``contract.version``)."""
    return package_version()


def silence_access_log() -> None:
    """Turn uvicorn's access log off for good: its lines carry the client's address.

    ``access_log=False`` alone is not enough: uvicorn logs whenever the ``uvicorn.access``
    logger has handlers, and a later logging setup can give it some (through propagation).
    A disabled logger drops every record whatever its handlers.
    """
    logging.getLogger("uvicorn.access").disabled = True
