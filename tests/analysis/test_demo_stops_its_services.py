"""SIGTERM or SIGINT to the demo stops its children (the collector and the Cloud Skills service)
and frees the database; the banner says how to stop; the collector's log says where its data
goes and whether anyone can read it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from tests._servers import HANG_S, alive, child_process, children_of, wait_until


@pytest.mark.slow  # runs the real demo
@pytest.mark.skipif(not Path("/proc/self/stat").is_file(), reason="reads /proc")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_to_the_demo_stops_its_services(tmp_path: Path, signum: int) -> None:
    out = tmp_path / "demo"
    cmd = [sys.executable, "-m", "scripts.demo", "--clients", "2", "--history", "2000",
           "--workers", "1", "--out", str(out)]  # fmt: skip
    env = {**os.environ, "COLUMNS": "200"}
    with child_process(
        cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    ) as demo:
        assert demo.popen.stdout is not None
        seen: list[str] = []
        children: list[int] = []
        # The demo's own readiness: its banner, printed once both services answer and the
        # report is written (a line at a time; '' if the demo died first).
        for line in iter(demo.popen.stdout.readline, ""):
            seen.append(line)
            if "to stop:" in line and "both services stop too" in line:
                children = children_of(demo.pid)
                break
        assert any("both services stop too" in x for x in seen), "".join(seen)
        assert len(children) == 2, children
        demo.popen.send_signal(signum)  # the demo alone, as Ctrl-C or kill would
        demo.popen.wait(timeout=HANG_S)
        # The services stop with it (the demo's clean-up) and are not left to anyone.
        wait_until(lambda: not any(alive(c) for c in children), what="the demo's services")
    duckdb.connect(str(out / "signals.duckdb")).close()  # the lock is free
    log = (out / "collector.log").read_text()
    assert "database" in log and "1 read token(s) set" in log
