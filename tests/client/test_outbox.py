"""The outbox: bounded, durable, damage-tolerant; survives a process killed mid-write."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from client.outbox import MAX_SIGNALS, Outbox
from client.paths import LmcpHome
from tests._servers import child_process
from tests.factories import make_signal


def test_roundtrip_and_dedupe(home: LmcpHome) -> None:
    box = Outbox(home)
    a, b = make_signal(), make_signal()
    box.add([a, b])
    box.add([a])
    assert box.pending() == [a, b]
    box.remove([a.signal_id])
    assert box.pending() == [b]
    box.remove([b.signal_id])
    assert not home.outbox.exists()


def test_bounded_oldest_dropped_first(home: LmcpHome) -> None:
    box = Outbox(home, max_signals=5)
    signals = [make_signal() for _ in range(8)]
    result = box.add(signals[:3])
    assert result.dropped_oldest == 0
    result = box.add(signals[3:])
    assert result.queued == 5 and result.dropped_oldest == 3
    assert box.pending() == signals[3:]


def test_default_bound_is_about_a_thousand(home: LmcpHome) -> None:
    box = Outbox(home)
    box.add([make_signal() for _ in range(1005)])
    assert len(box) == 1000


def test_corrupt_outbox_is_set_aside_not_a_crash(home: LmcpHome) -> None:
    home.outbox.write_bytes(b'{"version": 1, "signals": [tru')
    box = Outbox(home)
    assert box.pending() == []
    assert (home.root / "outbox.corrupt.json").exists()
    box.add([make_signal()])
    assert len(box) == 1


def test_invalid_entries_are_dropped_on_load(home: LmcpHome) -> None:
    good = make_signal()
    doc = {
        "version": 1,
        "signals": [json.loads(good.model_dump_json()), {"schema_version": 1, "note": "secret"}],
    }
    home.outbox.write_text(json.dumps(doc))
    assert Outbox(home).pending() == [good]


WRITER = r"""
import sys
from pathlib import Path
from client.outbox import Outbox
from client.paths import LmcpHome
from tests.factories import make_signal
box = Outbox(LmcpHome(Path(sys.argv[1])))
while True:
    box.add([make_signal() for _ in range(50)])
    print("wrote", flush=True)
"""


@pytest.mark.slow
def test_survives_a_process_killed_mid_write(home: LmcpHome, tmp_path: Path) -> None:
    for round_ in range(3):
        cmd = [sys.executable, "-c", WRITER, str(home.root)]
        with child_process(cmd, stdout=subprocess.PIPE) as writer:
            assert writer.popen.stdout is not None
            writer.popen.stdout.readline()  # at least one write happened
            time.sleep(0.05 * (round_ + 1))  # somewhere in a later write
            writer.kill()
        pending = Outbox(home).pending()  # parses: the file is the old one or the new one
        assert 50 <= len(pending) <= MAX_SIGNALS
        assert not (home.root / "outbox.corrupt.json").exists()
