"""The collector benchmark's load: bodies the collector accepts, whose ids are never sent twice.

A repeated id would send the collector down its duplicate path, and a refused body its
refusal path: either would measure the wrong thing.
"""

from __future__ import annotations

import uuid

import pytest

from benchmarks.bench_collector import _Bodies, _signal_template
from collector.ingest import signal_rules, validate_batch
from contract.days import utc_today
from contract.schema import SignalBatch


@pytest.mark.parametrize("size", [1, 2, 100, 500])
def test_bodies_validate_and_never_repeat_an_id(size: int) -> None:
    pre, post = _signal_template()
    connections = [_Bodies(pre, post, size, number) for number in (0, 1, 4095)]
    seen: set[uuid.UUID] = set()
    sent = 0
    rules = signal_rules(retention_days=90)
    for _ in range(3):
        for bodies in connections:
            body = bodies.next()
            batch = SignalBatch.model_validate_json(body, strict=True)
            assert len(batch.signals) == size
            for rule in rules:  # every rule the collector's endpoint applies passes
                rule(validate_batch(body).signals, utc_today())
            seen.update(s.signal_id for s in batch.signals)
            sent += size
    assert len(seen) == sent
    assert {sid.version for sid in seen} == {4}
