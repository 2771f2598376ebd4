"""The collector's own error; the others are shared by every service (``service.errors``)."""

from __future__ import annotations

from service.errors import ServiceError

__all__ = ["WriteError"]


class WriteError(ServiceError):
    """A flush failed; every request in it answers 503 and its client retries."""
