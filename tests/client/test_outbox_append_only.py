"""The outbox appends in O(1): the file is appended to, never rewritten; a torn last line (a
crash in the middle of an append) is ignored and the next append follows it."""

from __future__ import annotations

from pathlib import Path

from client.outbox import Outbox
from client.paths import LmcpHome
from tests.factories import make_signal


def test_outbox_append_is_o1_it_never_rewrites_the_file(tmp_path: Path) -> None:
    home = LmcpHome(tmp_path / "home").ensure()
    box = Outbox(home)
    box.add([make_signal() for _ in range(500)])
    inode, size = home.outbox.stat().st_ino, home.outbox.stat().st_size
    added = make_signal()
    box.add([added])
    after = home.outbox.stat()
    # Same file (no atomic replace), grown by exactly one record.
    assert after.st_ino == inode
    assert after.st_size == size + len(added.model_dump_json()) + 1


def test_outbox_ignores_a_torn_last_line_and_appends_after_it(tmp_path: Path) -> None:
    home = LmcpHome(tmp_path / "home").ensure()
    first, second = make_signal(), make_signal()
    Outbox(home).add([first])
    with home.outbox.open("ab") as handle:  # a crash in the middle of the next append
        handle.write(second.model_dump_json().encode()[:40])
    box = Outbox(home)
    assert box.pending() == [first]
    third = make_signal()
    box.add([third])
    assert Outbox(home).pending() == [first, third]
    assert not (home.root / "outbox.corrupt.json").exists()
