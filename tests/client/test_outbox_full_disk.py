"""On a disk that fills up, the outbox acknowledges only what is on disk: every add answered
"queued" survives a restart (a new ``Outbox`` on the same file), and a failed add raises.

The disk is a real 64 KiB tmpfs, mounted for the test (root only: CI runs as root)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from client.outbox import Outbox, OutboxUnwritable
from client.paths import LmcpHome
from tests.factories import make_signal

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root")


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "disk"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)], check=True)
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=True)


def test_every_queued_answer_survives_a_restart_when_the_disk_fills(small_disk: Path) -> None:
    home = LmcpHome(small_disk / "lmcp-home").ensure()
    box = Outbox(home)
    acknowledged, refused = [], 0
    for _ in range(400):  # far more than 64 KiB of signals
        signal = make_signal()
        try:
            box.add([signal])
        except OutboxUnwritable:
            refused += 1
            continue
        acknowledged.append(signal.signal_id)
    assert refused and acknowledged
    survived = {s.signal_id for s in Outbox(home).pending()}
    assert set(acknowledged) <= survived
    assert survived <= set(acknowledged)  # and nothing refused came back either


def test_a_refused_add_can_be_retried_once_there_is_room(small_disk: Path) -> None:
    home = LmcpHome(small_disk / "lmcp-home").ensure()
    box = Outbox(home)
    filler = small_disk / "filler"
    with filler.open("wb", buffering=0) as out:  # every free byte
        try:
            while True:
                out.write(b"x" * 512)
        except OSError:
            pass
    signal = make_signal()
    with pytest.raises(OutboxUnwritable):
        box.add([signal, make_signal(), make_signal()])
    filler.unlink()
    box.add([signal])
    assert [s.signal_id for s in Outbox(home).pending()] == [signal.signal_id]
