"""Start-up of the ``lmcp`` command and of ``lmcp mcp``: what a user or an agent waits for.

Each command runs in a fresh interpreter, paired with a bare ``python -c pass`` in the same
round (the machine is shared: a round's load weighs on both alike), and each is reported as
the median over the rounds of its wall time and of its own CPU time (user + system, from the
child's rusage), and of both above the bare interpreter's in the same round.

Targets: ``lmcp --help`` and ``lmcp signals status`` <= 0.3 s above ``python -c pass``;
``lmcp analysis … --db F`` (a small file) <= 0.5 s above it; ``lmcp mcp`` answering the MCP
SDK's real client's ``initialize`` <= 0.5 s after it was started (the CPU column: the server
process's own CPU time up to that answer, read from ``/proc``). The verdict is given on CPU
seconds (what the command costs, whatever else the machine runs) and on wall seconds.
``BENCH_STARTUP_RUNS`` sets the rounds (default 15).
"""

from __future__ import annotations

import datetime as dt
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks._timing import median, table, verdict

LMCP = str(Path(sys.executable).with_name("lmcp"))
BARE = "python -c pass"


def _run(args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds of one run of ``args`` to its exit."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(args, env=env, capture_output=True, check=True, timeout=300)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def _small_file(folder: Path) -> Path:
    """A small collector file (3,000 signals) with its closed periods released."""
    import duckdb

    from analysis import synthesize
    from collector.releases.store import release_closed_periods
    from contract.accountant import ReleasePlan

    path = folder / "small.duckdb"
    end = dt.date(2026, 3, 29)  # a Sunday: its week closes LATE_DAYS later
    synthesize(path, 3_000, end_day=end)
    with duckdb.connect(str(path)) as con:
        release_closed_periods(con, end + dt.timedelta(days=3), ReleasePlan(), retention_days=36500)
    return path


def _commands(db: Path) -> dict[str, tuple[list[str], float]]:
    """name -> (argv, target seconds above the bare interpreter)."""
    return {
        "lmcp --help": ([LMCP, "--help"], 0.3),
        "lmcp signals status": ([LMCP, "signals", "status"], 0.3),
        "lmcp signals status --json": ([LMCP, "signals", "status", "--json"], 0.3),
        "lmcp analysis top --db F": ([LMCP, "analysis", "top", "--db", str(db)], 0.5),
        "lmcp analysis trends --db F --exact": (
            [LMCP, "analysis", "trends", "--db", str(db), "--exact"],
            0.5,
        ),
    }


def _cpu_of(pid: int) -> float:
    """User + system seconds ``pid`` has used so far (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _children() -> list[int]:
    found = []
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        text = (task / "children").read_text().split()
        found += [int(pid) for pid in text]
    return found


def _mcp_round(env: dict[str, str]) -> tuple[float, float, float, float]:
    """``lmcp mcp`` under the SDK's real client: wall seconds to ``initialize``'s answer, the
    server's CPU seconds by then, and wall seconds to the tool list and to a first call."""
    import anyio
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    async def run() -> tuple[float, float, float, float]:
        params = StdioServerParameters(command=LMCP, args=["mcp"], env=env)
        start = time.perf_counter()
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            initialized = time.perf_counter() - start
            servers = _children()
            cpu = _cpu_of(servers[0]) if len(servers) == 1 else float("nan")
            await session.list_tools()
            listed = time.perf_counter() - start
            await session.call_tool("get_datetime", {})
            called = time.perf_counter() - start
        return initialized, cpu, listed, called

    return anyio.run(run)


def _rounds(
    runs: int, measure: Callable[[], dict[str, tuple[float, float]]]
) -> dict[str, list[tuple[float, float]]]:
    out: dict[str, list[tuple[float, float]]] = {}
    for _ in range(runs):
        for name, figures in measure().items():
            out.setdefault(name, []).append(figures)
    return out


def run() -> None:
    runs = int(os.environ.get("BENCH_STARTUP_RUNS", "15"))
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder) / "home"
        env = {**os.environ, "LMCP_HOME": str(home), "PATH": os.environ.get("PATH", "")}
        commands = _commands(_small_file(Path(folder)))

        def one_round() -> dict[str, tuple[float, float]]:
            bare = _run([sys.executable, "-c", "pass"], env)
            out = {BARE: bare}
            for name, (args, _) in commands.items():
                wall, cpu = _run(args, env)
                out[name] = (wall - bare[0], cpu - bare[1])
                out[name + " (abs)"] = (wall, cpu)
            return out

        figures = _rounds(runs, one_round)
        mcp = [_mcp_round(env) for _ in range(runs)]

    rows = []
    bare_wall, bare_cpu = (median([f[i] for f in figures[BARE]]) for i in (0, 1))
    rows.append((BARE, f"{bare_wall:.3f}", f"{bare_cpu:.3f}", "", "", "", ""))
    for name, (_, target) in commands.items():
        above = figures[name]
        wall, cpu = (median([f[i] for f in figures[name + " (abs)"]]) for i in (0, 1))
        d_wall, d_cpu = (median([f[i] for f in above]) for i in (0, 1))
        rows.append(
            (
                name,
                f"{wall:.3f}",
                f"{cpu:.3f}",
                f"{d_wall:+.3f}",
                f"{d_cpu:+.3f}",
                f"<= {target}",
                f"cpu {verdict(d_cpu <= target)}, wall {verdict(d_wall <= target)}",
            )
        )
    table(
        f"lmcp start-up, median of {runs} paired rounds (load average {load:.1f} at start)",
        ["command", "wall s", "cpu s", "wall above bare", "cpu above bare", "target", "verdict"],
        rows,
    )
    init_wall, init_cpu, listed, called = (median([m[i] for m in mcp]) for i in range(4))
    table(
        f"lmcp mcp under the MCP SDK's client, median of {runs} starts",
        ["step", "wall s after start", "server cpu s", "target", "verdict"],
        [
            (
                "initialize answered",
                f"{init_wall:.3f}",
                f"{init_cpu:.3f}",
                "<= 0.5",
                f"cpu {verdict(init_cpu <= 0.5)}, wall {verdict(init_wall <= 0.5)}",
            ),
            ("tools/list answered", f"{listed:.3f}", "", "", ""),
            ("first tools/call answered", f"{called:.3f}", "", "", ""),
        ],
    )


if __name__ == "__main__":
    run()
