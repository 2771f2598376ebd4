"""Crash: SIGKILL the collector while 20 client threads send, restart it, lose nothing.

Every signal that got a 2xx before the kill is in the DuckDB file (checked while the collector
is down), and the clients' own retries (the real ``Sender``) deliver the rest after the restart,
each signal stored exactly once.
"""

from __future__ import annotations

import threading
import time

import duckdb
import pytest

from client.sender import Delivery, Sender
from collector.settings import CollectorSettings
from contract.schema import FrictionSignal
from tests._servers import collector_process, free_port
from tests.collector.conftest import make_signal

THREADS = 20
BATCHES_PER_THREAD = 12
BATCH = 5


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_sigkill_loses_no_acknowledged_signal_and_retries_deliver_the_rest(
    settings: CollectorSettings,
) -> None:
    port = free_port()
    plan: list[list[list[FrictionSignal]]] = [
        [[make_signal() for _ in range(BATCH)] for _ in range(BATCHES_PER_THREAD)]
        for _ in range(THREADS)
    ]
    acked: list[FrictionSignal] = []
    failed: list[int] = []
    lock = threading.Lock()
    started = time.monotonic()

    def client(batches: list[list[FrictionSignal]]) -> None:
        sender = Sender(f"http://127.0.0.1:{port}", max_attempts=200, budget_s=30.0, timeout_s=3.0)
        try:
            for batch in batches:
                report = sender.send(batch)
                with lock:
                    if report.status is Delivery.delivered:
                        acked.extend(batch)
                    else:
                        failed.append(len(batch))
                time.sleep(0.01)
        finally:
            sender.close()

    threads = [threading.Thread(target=client, args=(p,), daemon=True) for p in plan]
    with collector_process(settings, port=port) as first:
        for t in threads:
            t.start()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with lock:
                if len(acked) >= THREADS * BATCH * 2:
                    break
            time.sleep(0.01)
        first.kill()
    with lock:
        acknowledged_before_kill = {s.signal_id for s in acked}
    assert acknowledged_before_kill, "nothing was delivered before the kill"
    total = THREADS * BATCHES_PER_THREAD * BATCH
    assert len(acknowledged_before_kill) < total, "the kill came after everything was sent"

    # While the collector is down: every acknowledged signal is on disk (WAL replayed on open).
    con = duckdb.connect(str(settings.db_path))
    try:
        stored = {row[0] for row in con.execute("SELECT signal_id FROM signals").fetchall()}
    finally:
        con.close()
    assert acknowledged_before_kill <= stored

    with collector_process(settings, port=port):
        for t in threads:
            t.join(timeout=max(1.0, 50 - (time.monotonic() - started)))
        assert not any(t.is_alive() for t in threads)
    assert failed == []

    everything = [s.signal_id for per_thread in plan for batch in per_thread for s in batch]
    con = duckdb.connect(str(settings.db_path), read_only=True)
    try:
        rows = con.execute("SELECT signal_id, count(*) FROM signals GROUP BY ALL").fetchall()
    finally:
        con.close()
    counts = dict(rows)
    assert set(counts) == set(everything)
    assert all(n == 1 for n in counts.values())
    assert len(everything) == total
