"""Start-up of the ``lmcp`` command: ``lmcp --help`` and ``lmcp signals status`` against a bare
``python -c pass``, each in a fresh interpreter (what a user's shell pays on every command).

Target (issue 18, finding 2): each command <= 0.3 s above the bare interpreter, median.
``BENCH_STARTUP_RUNS`` sets the runs per command (default 9).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time

from benchmarks._timing import median, table, verdict

TARGET_S = 0.3
COMMANDS = {
    "python -c pass": ["-c", "pass"],
    "lmcp --help": ["-m", "lmcp", "--help"],
    "lmcp signals status": ["-m", "lmcp", "signals", "status"],
}


def _seconds(args: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, *args], env=env, capture_output=True, check=True, timeout=60)
    return time.perf_counter() - start


def run() -> None:
    runs = int(os.environ.get("BENCH_STARTUP_RUNS", "9"))
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "LMCP_HOME": home}
        times = {
            name: median([_seconds(args, env) for _ in range(runs)])
            for name, args in COMMANDS.items()
        }
    bare = times["python -c pass"]
    rows = []
    for name, seconds in times.items():
        above = seconds - bare
        check = "" if name.startswith("python") else verdict(above <= TARGET_S)
        rows.append((name, f"{seconds:.3f}", f"{above:+.3f}", check))
    table(
        f"lmcp start-up, median of {runs} (target: <= {TARGET_S} s above python -c pass)",
        ["command", "seconds", "above bare", "target"],
        rows,
    )


if __name__ == "__main__":
    run()
