"""``lmcp mcp``'s own cost per ``tools/call``, over a bare MCP server, through the SDK's client.

Four servers run at once, each a process spoken to over stdio by the ``mcp`` SDK's real
``ClientSession``: the bare low-level server of ``benchmarks/_bare_mcp.py`` (the same tool list,
the tool's own work inline, LMCP's answer) on the SDK's stdio and on ``lmcp mcp``'s, ``lmcp
mcp`` as installed (no settings file: signals off) and ``lmcp mcp`` with signals on (a failure's
shapes are also kept for ``lmcp signals preview``). Each round times ``BENCH_MCP_CALLS`` calls
of a failing tool (``read_note`` of a missing note) and of a succeeding one (``get_datetime``) on
every server, in a rotating order, so a round's load weighs on all of them alike.

Reported, per kind of call: the median over rounds of each server's median wall time per call,
of its CPU time per call (the server process's threads, from ``/proc/<pid>/task/*/schedstat``:
robust when the machine is shared), and of LMCP's difference to the bare server in the same
round; and, for the host alone, its CPU above the bare server on the same stdio. Target: a
failing call costs at most 0.3 ms more than on the bare server (CPU and wall).
``BENCH_MCP_ROUNDS`` sets the rounds (default 15), ``BENCH_MCP_CALLS`` the calls (default 60).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

from benchmarks._timing import median, table, verdict

LMCP = str(Path(sys.executable).with_name("lmcp"))
REPO = Path(__file__).resolve().parents[1]
#: The target: LMCP's own cost on a failing call, above the bare server's (ms).
FAILING_TARGET_MS = 0.3
#: The two kinds of call timed: (label, tool, arguments, whether it must fail).
CALLS: tuple[tuple[str, str, dict[str, Any], bool], ...] = (
    ("failing call (read_note, no such note)", "read_note", {"note_name": "No such note"}, True),
    ("succeeding call (get_datetime)", "get_datetime", {}, False),
)


def _cpu_ns(pid: int) -> int:
    """Nanoseconds on a CPU so far, summed over ``pid``'s threads (Linux schedstat)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (OSError, ValueError):
            continue  # a thread that ended between the listing and the read
    return total


def _children() -> set[int]:
    found: set[int] = set()
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        found.update(int(pid) for pid in (task / "children").read_text().split())
    return found


def _servers(folder: Path) -> dict[str, tuple[str, list[str], dict[str, str]]]:
    """name -> (command, args, environment) of each server measured."""
    base = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(REPO)}
    homes = {name: folder / name for name in ("off", "on")}
    for home in homes.values():
        home.mkdir()
    (homes["on"] / "settings.json").write_text(json.dumps({"anonymous_signals": "on"}))
    collector = {"LMCP_COLLECTOR_URL": "http://127.0.0.1:9"}  # never reached: nothing reports
    return {
        "bare": (
            sys.executable,
            ["-m", "benchmarks._bare_mcp"],
            {**base, "BARE_NOTES": str(folder / "bare-notes")},
        ),
        _BARE_LMCP_STDIO: (
            sys.executable,
            ["-m", "benchmarks._bare_mcp"],
            {**base, "BARE_NOTES": str(folder / "bare-notes"), "BARE_STDIO": "lmcp"},
        ),
        "lmcp mcp, signals off": (
            LMCP,
            ["mcp"],
            {**base, "LMCP_HOME": str(homes["off"]), **collector},
        ),
        "lmcp mcp, signals on": (
            LMCP,
            ["mcp"],
            {**base, "LMCP_HOME": str(homes["on"]), **collector},
        ),
    }


_BARE_LMCP_STDIO = "bare, lmcp's stdio"
_NAMES = ("bare", _BARE_LMCP_STDIO, "lmcp mcp, signals off", "lmcp mcp, signals on")
Figures = dict[tuple[str, str], list[tuple[float, float]]]  # (server, call) -> per round (ms, ms)


async def _measure(folder: Path, rounds: int, calls: int) -> Figures:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    figures: Figures = {}
    async with AsyncExitStack() as stack:
        sessions: dict[str, tuple[ClientSession, int]] = {}
        for name, (command, args, env) in _servers(folder).items():
            before = _children()
            params = StdioServerParameters(command=command, args=args, env=env, cwd=str(REPO))
            read, write = await stack.enter_async_context(stdio_client(params))
            session = await stack.enter_async_context(ClientSession(read, write))
            await session.initialize()
            (pid,) = _children() - before
            sessions[name] = (session, pid)
        for session, _ in sessions.values():  # warm: the runtime, the tools, the threads
            for _, tool, arguments, fails in CALLS:
                for _ in range(20):
                    result = await session.call_tool(tool, arguments)
                    if bool(result.is_error) is not fails:
                        raise RuntimeError(f"{tool} did not answer as measured")
        order = list(sessions)
        for r in range(rounds):
            for name in order[r % len(order) :] + order[: r % len(order)]:
                session, pid = sessions[name]
                for label, tool, arguments, _ in CALLS:
                    times = []
                    cpu = _cpu_ns(pid)
                    for _ in range(calls):
                        start = time.perf_counter()
                        await session.call_tool(tool, arguments)
                        times.append(time.perf_counter() - start)
                    cpu_ms = (_cpu_ns(pid) - cpu) / calls / 1e6
                    figures.setdefault((name, label), []).append((median(times) * 1e3, cpu_ms))
    return figures


def _paired(figures: Figures, name: str, base: str, label: str, i: int) -> float:
    """Median over rounds of ``name``'s figure ``i`` minus ``base``'s in the same round."""
    pairs = zip(figures[(name, label)], figures[(base, label)], strict=True)
    return median([ours[i] - theirs[i] for ours, theirs in pairs])


def run() -> None:
    import anyio

    rounds = int(os.environ.get("BENCH_MCP_ROUNDS", "15"))
    calls = int(os.environ.get("BENCH_MCP_CALLS", "60"))
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as folder:
        figures = anyio.run(_measure, Path(folder), rounds, calls)

    def med(name: str, label: str, i: int) -> float:
        return median([f[i] for f in figures[(name, label)]])

    def ok(d: float) -> str:
        return verdict(d <= FAILING_TARGET_MS)

    rows = []
    for label, _, _, fails in CALLS:
        for name in _NAMES:
            own = (f"{med(name, label, 0):.3f}", f"{med(name, label, 1):.3f}")
            if name == "bare":
                rows.append((label, name, *own, "", "", "", "", ""))
                continue
            d_wall, d_cpu = (_paired(figures, name, "bare", label, i) for i in (0, 1))
            host = (
                ""
                if name == _BARE_LMCP_STDIO
                else _paired(figures, name, _BARE_LMCP_STDIO, label, 1)
            )
            judged = fails and name != _BARE_LMCP_STDIO
            rows.append(
                (
                    "",
                    name,
                    *own,
                    f"{d_wall:+.3f}",
                    f"{d_cpu:+.3f}",
                    f"{host:+.3f}" if isinstance(host, float) else "",
                    f"<= {FAILING_TARGET_MS}" if judged else "",
                    f"cpu {ok(d_cpu)}, wall {ok(d_wall)}" if judged else "",
                )
            )
    table(
        f"tools/call through the MCP SDK's client over stdio, ms per call, median of {rounds} "
        f"paired rounds of {calls} calls (load average {load:.1f} at start)",
        (
            "call",
            "server",
            "wall",
            "server cpu",
            "wall above bare",
            "cpu above bare",
            "cpu above bare on lmcp's stdio",
            "target",
            "verdict",
        ),
        rows,
    )


if __name__ == "__main__":
    run()
