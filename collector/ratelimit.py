"""Rate limiting per client address, in memory only: a token bucket per address.

The address is a dictionary key in this process and nothing more: never stored, logged, traced
or counted anywhere else. At most ``max_clients`` buckets are kept (the least recently seen are
forgotten first), so memory stays bounded whatever the number of senders.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from starlette.types import ASGIApp, Receive, Scope, Send

from service.errors import problem_response

__all__ = ["RateLimitMiddleware", "RateLimiter", "TokenBucket"]

_EPSILON = 1e-9


@dataclass(slots=True)
class TokenBucket:
    """``capacity`` tokens, refilled at ``rate`` per second; one request costs one token."""

    rate: float
    capacity: float
    tokens: float
    updated: float

    def take(self, now: float) -> float:
        """Take a token: 0.0 when granted, else the seconds until one is available."""
        elapsed = max(0.0, now - self.updated)
        self.tokens = min(self.capacity, self.tokens + elapsed * self.rate)
        self.updated = max(self.updated, now)
        if self.tokens >= 1.0 - _EPSILON:  # floating-point refill may land a hair short
            self.tokens = max(0.0, self.tokens - 1.0)
            return 0.0
        return (1.0 - self.tokens) / self.rate


class RateLimiter:
    """Buckets by key (a client address), bounded in number."""

    def __init__(
        self,
        rate: float,
        burst: int,
        *,
        max_clients: int = 100_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.rate = rate
        self.burst = float(burst)
        self.max_clients = max_clients
        self._clock = clock
        self._buckets: OrderedDict[str, TokenBucket] = OrderedDict()

    def __len__(self) -> int:
        return len(self._buckets)

    def check(self, key: str) -> float:
        """0.0 when the request may pass, else the seconds to wait."""
        now = self._clock()
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = TokenBucket(self.rate, self.burst, self.burst, now)
            self._buckets[key] = bucket
            if len(self._buckets) > self.max_clients:
                self._buckets.popitem(last=False)
        else:
            self._buckets.move_to_end(key)
        return bucket.take(now)


class RateLimitMiddleware:
    """429 with ``Retry-After`` (whole seconds, at least 1) once an address' bucket is empty."""

    EXEMPT = frozenset({"/healthz", "/readyz"})

    def __init__(self, app: ASGIApp, limiter: RateLimiter) -> None:
        self.app = app
        self.limiter = limiter

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope.get("path") not in self.EXEMPT:
            client = scope.get("client")
            key = client[0] if client else ""
            wait = self.limiter.check(key)
            if wait > 0.0:
                retry_after = str(max(1, math.ceil(wait)))
                response = problem_response(
                    429,
                    "rate_limited",
                    "Too many requests from this sender; retry later.",
                    headers={"Retry-After": retry_after},
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)
