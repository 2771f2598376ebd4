"""Finding 9: SIGTERM or SIGINT to the demo stops its children (the collector and the Cloud
Skills service) and frees the database; the banner says how to stop; the collector says at
start-up where its data goes, where the dashboard is and whether anyone can read it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest
from pydantic import SecretStr

from collector.settings import CollectorSettings
from lmcp.collector_cli import startup_lines

REPO = Path(__file__).resolve().parents[2]


def test_startup_lines_without_a_read_token_say_everyone_is_refused(tmp_path: Path) -> None:
    lines = "\n".join(startup_lines(CollectorSettings(db_path=tmp_path / "s.duckdb", port=9876)))
    assert str(tmp_path / "s.duckdb") in lines
    assert "http://127.0.0.1:9876/dashboard" in lines
    assert "no read token" in lines and "refuse everyone" in lines


def test_startup_lines_count_tokens_and_never_print_one(tmp_path: Path) -> None:
    secret = "tok-" + "z" * 30
    settings = CollectorSettings(db_path=tmp_path / "s.duckdb", read_tokens=[SecretStr(secret)])
    lines = "\n".join(startup_lines(settings))
    assert "1 read token(s) set" in lines and secret not in lines


def _children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    return status.exists() and "State:\tZ" not in status.read_text()


@pytest.mark.slow  # runs the real demo
@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads /proc")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_to_the_demo_stops_its_services(tmp_path: Path, signum: int) -> None:
    out = tmp_path / "demo"
    demo = subprocess.Popen(
        [sys.executable, "-m", "scripts.demo", "--clients", "2", "--history", "2000",
         "--workers", "1", "--out", str(out)],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env={**os.environ, "COLUMNS": "200"},
    )  # fmt: skip
    assert demo.stdout is not None
    seen: list[str] = []
    children: list[int] = []
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            line = demo.stdout.readline()
            if not line:
                break
            seen.append(line)
            if "to stop:" in line and "SIGTERM" in line:
                children = _children(demo.pid)
                if "both services stop too" in line:
                    break
        assert any("both services stop too" in x for x in seen), "".join(seen)
        assert len(children) == 2, children
        demo.send_signal(signum)
        demo.wait(timeout=60)
        deadline = time.monotonic() + 30
        while any(_alive(c) for c in children) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(_alive(c) for c in children)
        duckdb.connect(str(out / "signals.duckdb")).close()  # the lock is free
        log = (out / "collector.log").read_text()
        assert "database" in log and "1 read token(s) set" in log
    finally:
        if demo.poll() is None:
            demo.kill()
            demo.wait(timeout=10)
        demo.stdout.close()
