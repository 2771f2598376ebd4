"""``/readyz`` tells the truth about the store: it fails while the disk under the DuckDB file
is full (a real 16 MiB tmpfs, root only: CI runs as root) and comes back once there is room,
without a restart and without traffic; the health flag's own rules."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from collector.settings import CollectorSettings
from service.health import StoreHealth, directory_probe
from tests._servers import HANG_S, running_collector, wait_until
from tests.factories import batch_body, make_signal


def _fill(folder: Path) -> Path:
    filler = folder / "filler"
    with filler.open("wb", buffering=0) as out:
        try:
            while True:
                out.write(b"x" * 65536)
        except OSError:
            pass
    return filler


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    mount = tmp_path / "disk"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(mount)], check=True)
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=True)


@pytest.mark.slow
def test_readyz_fails_while_the_store_cannot_be_written_and_recovers(small_disk: Path) -> None:
    settings = CollectorSettings(db_path=small_disk / "s.duckdb", rate_limit_enabled=False)
    with running_collector(settings) as url, httpx.Client(base_url=url, timeout=HANG_S) as client:
        assert client.get("/readyz").status_code == 200
        filler = _fill(small_disk)
        posted = client.post(
            "/v1/signals",
            content=batch_body([make_signal() for _ in range(200)]),
            headers={"content-type": "application/json"},
        )
        assert posted.status_code == 503, posted.text
        ready = client.get("/readyz")
        assert ready.status_code == 503 and ready.json()["code"] == "store_unwritable"
        filler.unlink()
        # Readiness comes back by the store's own probe, without traffic: waited for, not timed.
        wait_until(lambda: client.get("/readyz").status_code == 200, what="readiness, disk freed")


def test_a_failed_write_is_noted_until_a_write_succeeds() -> None:
    health = StoreHealth()
    assert health.check() is None
    health.failed("the last flush failed")
    assert health.check() == "the last flush failed"
    health.succeeded()
    assert health.check() is None


def test_the_probe_notices_a_full_disk_between_writes_and_clears_when_it_has_room(
    tmp_path: Path,
) -> None:
    full = [True]

    def probe() -> None:
        if full[0]:
            raise OSError(28, "No space left on device")

    health = StoreHealth(probe, probe_every_s=0.0)
    assert health.check() == "the store cannot be written"
    full[0] = False
    assert health.check() is None
    directory_probe(tmp_path)()  # a real write and fsync, and nothing left behind
    assert list(tmp_path.iterdir()) == []
