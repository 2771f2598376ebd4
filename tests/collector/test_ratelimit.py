"""Token buckets per address, in memory; 429 with Retry-After through a real server."""

from __future__ import annotations

import httpx
from hypothesis import given
from hypothesis import strategies as st

from collector.ratelimit import RateLimiter
from collector.settings import CollectorSettings
from tests._servers import HANG_S, running_collector
from tests.collector.conftest import assert_problem, batch_body, make_signal


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@given(st.integers(1, 50), st.floats(0.5, 100.0))
def test_burst_then_refusal_then_refill(burst: int, rate: float) -> None:
    clock = FakeClock()
    limiter = RateLimiter(rate, burst, clock=clock)
    assert all(limiter.check("a") == 0.0 for _ in range(burst))
    wait = limiter.check("a")
    assert 0.0 < wait <= 1.0 / rate + 1e-9
    assert limiter.check("b") == 0.0  # another address has its own bucket
    clock.now += wait
    assert limiter.check("a") == 0.0


@given(st.lists(st.sampled_from("abcdefgh"), max_size=200), st.integers(1, 5))
def test_bucket_count_is_bounded(keys: list[str], max_clients: int) -> None:
    limiter = RateLimiter(10.0, 5, max_clients=max_clients, clock=FakeClock())
    for key in keys:
        limiter.check(key)
        assert len(limiter) <= max_clients


def test_429_with_retry_after_on_a_real_server(settings: CollectorSettings) -> None:
    limited = settings.model_copy(
        update={"rate_limit_enabled": True, "rate_limit_burst": 3, "rate_limit_per_s": 0.5}
    )
    body = batch_body([make_signal()])
    headers = {"content-type": "application/json"}
    with (
        running_collector(limited) as url,
        httpx.Client(base_url=url, trust_env=False, timeout=HANG_S) as http,
    ):
        statuses = [
            http.post("/v1/signals", content=body, headers=headers).status_code for _ in range(3)
        ]
        assert statuses == [200, 200, 200]
        refused = http.post("/v1/signals", content=body, headers=headers)
        assert_problem(refused, 429, "rate_limited")
        assert refused.headers["retry-after"] in {"1", "2"}
        assert http.get("/healthz").status_code == 200  # health checks are never limited
