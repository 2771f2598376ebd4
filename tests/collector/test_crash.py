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
from tests._servers import HANG_S, collector_process, free_port, wait_until
from tests.collector.conftest import make_signal

THREADS = 20
BATCHES_PER_THREAD = 12
BATCH = 5


@pytest.mark.slow
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

    def client(batches: list[list[FrictionSignal]]) -> None:
        # Retries for as long as a restart can take on a busy machine (only a hang is longer).
        url = f"http://127.0.0.1:{port}"
        sender = Sender(url, max_attempts=100_000, budget_s=HANG_S, timeout_s=3.0)
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

        def some_acknowledged() -> bool:
            with lock:
                return len(acked) >= THREADS * BATCH * 2

        # Polled often: the kill must come while most batches are still to send.
        wait_until(some_acknowledged, what="the first deliveries", max_interval=0.01)
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
            t.join(timeout=HANG_S)
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
