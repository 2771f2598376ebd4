"""The outbox: bounded, durable, damage-tolerant; survives a process killed mid-write."""

from __future__ import annotations

import datetime as dt
import json
import os
import signal as os_signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

from client.outbox import Outbox
from client.paths import LmcpHome
from contract.schema import ClientInfo, ErrorClass, FrictionSignal, FrictionType, Platform, ToolName


def sig() -> FrictionSignal:
    return FrictionSignal(
        schema_version=2,
        signal_id=uuid.uuid4(),
        day=dt.date(2026, 11, 30),
        friction_type=FrictionType.other,
        tool_attempted=ToolName.list_files,
        error_class=ErrorClass.timeout,
        client=ClientInfo(version="1.0.0", platform=Platform.windows),
    )


def test_roundtrip_and_dedupe(home: LmcpHome) -> None:
    box = Outbox(home)
    a, b = sig(), sig()
    box.add([a, b])
    box.add([a])
    assert box.pending() == [a, b]
    box.remove([a.signal_id])
    assert box.pending() == [b]
    box.remove([b.signal_id])
    assert not home.outbox.exists()


def test_bounded_oldest_dropped_first(home: LmcpHome) -> None:
    box = Outbox(home, max_signals=5)
    signals = [sig() for _ in range(8)]
    result = box.add(signals[:3])
    assert result.dropped_oldest == 0
    result = box.add(signals[3:])
    assert result.queued == 5 and result.dropped_oldest == 3
    assert box.pending() == signals[3:]


def test_default_bound_is_about_a_thousand(home: LmcpHome) -> None:
    box = Outbox(home)
    box.add([sig() for _ in range(1005)])
    assert len(box) == 1000


def test_corrupt_outbox_is_set_aside_not_a_crash(home: LmcpHome) -> None:
    home.outbox.write_bytes(b'{"version": 1, "signals": [tru')
    box = Outbox(home)
    assert box.pending() == []
    assert (home.root / "outbox.corrupt.json").exists()
    box.add([sig()])
    assert len(box) == 1


def test_invalid_entries_are_dropped_on_load(home: LmcpHome) -> None:
    good = sig()
    doc = {
        "version": 1,
        "signals": [json.loads(good.model_dump_json()), {"schema_version": 1, "note": "secret"}],
    }
    home.outbox.write_text(json.dumps(doc))
    assert Outbox(home).pending() == [good]


WRITER = r"""
import datetime as dt, sys, uuid
from client.outbox import Outbox
from client.paths import LmcpHome
from contract.schema import *
box = Outbox(LmcpHome(__import__("pathlib").Path(sys.argv[1])))
while True:
    box.add([FrictionSignal(schema_version=2, signal_id=uuid.uuid4(), day=dt.date(2026, 1, 1),
        friction_type=FrictionType.other, tool_attempted=ToolName.other,
        error_class=ErrorClass.timeout, client=ClientInfo(version="1.0.0", platform=Platform.linux))
        for _ in range(50)])
    print("wrote", flush=True)
"""


def test_survives_a_process_killed_mid_write(home: LmcpHome, tmp_path: Path) -> None:
    for round_ in range(3):
        with subprocess.Popen(
            [sys.executable, "-c", WRITER, str(home.root)],
            stdout=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": os.getcwd()},
        ) as proc:
            assert proc.stdout is not None
            proc.stdout.readline()  # at least one write happened
            time.sleep(0.05 * (round_ + 1))
            proc.send_signal(os_signal.SIGKILL)
            proc.wait()
        pending = Outbox(home).pending()  # parses: the file is the old one or the new one
        assert 50 <= len(pending) <= 1000
        assert not (home.root / "outbox.corrupt.json").exists()
