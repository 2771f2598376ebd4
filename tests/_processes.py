"""Every child process a test starts: in its own process group, stopped with it, however the test
ends (the servers of ``tests/_servers.py`` start theirs here too).

- ``child_process(cmd)``: a child that runs beside the test (a worker, the demo); the block's end
  stops its whole group (SIGTERM, then SIGKILL after ``GRACE_S``).
- ``run_child(cmd)``: a child that runs to its end (a CLI, a script), its output captured; only
  a hang (``HANG_S``) stops it first, and then the whole group goes.
- ``holding_duckdb(path)``: another process holding a DuckDB file open, as a running collector
  holds its database.
- ``wait_until(ready)``: readiness, not deadlines: polled for as long as the process is alive.
- ``children_of(pid)``, ``alive(pid)``: what is still running, read from ``/proc``.

``tests/_leaks.py`` (an autouse fixture) fails a test that leaves any child running anyway.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "GRACE_S",
    "HANG_S",
    "REPO",
    "Child",
    "alive",
    "child_process",
    "children_of",
    "holding_duckdb",
    "run_child",
    "stop_group",
    "wait_until",
]

REPO = Path(__file__).resolve().parent.parent
#: Only a hang takes this long: a collector child starts in about a second on a quiet machine
#: and within a minute at a load average of 20 on two cores.
HANG_S = 240.0
#: How long a graceful stop (SIGTERM: flush, close the database) may take before SIGKILL.
GRACE_S = 30.0


def wait_until(
    ready: Callable[[], bool],
    *,
    what: str,
    alive: Callable[[], bool] = lambda: True,
    hang_s: float = HANG_S,
    max_interval: float = 0.5,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> int:
    """Poll ``ready`` until it is true; return how many polls it took.

    Raises ``RuntimeError`` as soon as ``alive()`` is false (the process died: waiting longer
    cannot help) and ``TimeoutError`` only after ``hang_s``. The interval grows from 10 ms to
    ``max_interval``, so a slow start costs few polls and a fast one is seen at once."""
    deadline = clock() + hang_s
    interval = min(0.01, max_interval)
    polls = 0
    while True:
        polls += 1
        if ready():
            return polls
        if not alive():
            raise RuntimeError(f"{what} exited before it was ready")
        if clock() >= deadline:
            raise TimeoutError(f"{what} hung: not ready after {hang_s:.0f} s")
        sleep(interval)
        interval = min(interval * 1.5, max_interval)


def stop_group(popen: subprocess.Popen[Any], grace_s: float = GRACE_S) -> int | None:
    """Stop ``popen``'s process group: SIGTERM, then SIGKILL after ``grace_s``; the exit code.

    The child leads its own group (``child_process`` starts it so), so whatever it started
    goes with it, even when the child itself is gone."""
    for signum, wait_s in ((signal.SIGTERM, grace_s), (signal.SIGKILL, GRACE_S)):
        try:
            os.killpg(popen.pid, signum)
        except ProcessLookupError:  # the whole group is gone
            break
        try:
            popen.wait(timeout=wait_s)
        except subprocess.TimeoutExpired:
            continue
        # The leader is gone; any member it left still gets the signal once more.
        try:
            os.killpg(popen.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        break
    return popen.poll()


@dataclass
class Child:
    """A child process started by ``child_process``: its own group, stopped with it."""

    popen: subprocess.Popen[Any]
    log_path: Path | None = None

    @property
    def pid(self) -> int:
        return self.popen.pid

    def kill(self) -> None:
        """SIGKILL to the group: no shutdown, no flush, no checkpoint."""
        try:
            os.killpg(self.popen.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.popen.wait(timeout=GRACE_S)

    def stop(self, grace_s: float = GRACE_S) -> int | None:
        return stop_group(self.popen, grace_s)

    def log(self) -> str:
        assert self.log_path is not None, "started without a log file"
        return self.log_path.read_text(encoding="utf-8", errors="replace")


def _as_from_a_terminal(then: Callable[[], object] | None) -> Callable[[], None]:
    """In the child, before it runs: SIGINT back to its default. A suite started as a
    background job (``make test &``, a CI runner) inherits SIGINT ignored, and Python then
    never raises KeyboardInterrupt: the child would not stop on Ctrl-C as a user's does."""

    def setup() -> None:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        if then is not None:
            then()

    return setup


@contextmanager
def child_process(
    cmd: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path = REPO,
    log_path: Path | None = None,
    grace_s: float = GRACE_S,
    repo_on_path: bool = True,
    **popen_kwargs: Any,
) -> Iterator[Child]:
    """``cmd`` in a child process leading its own process group; stopped (the whole group)
    when the block ends, however it ends. ``log_path``: stdout and stderr go there; else
    ``popen_kwargs`` may route them (``stdout=subprocess.PIPE``, ``text=True``).
    ``repo_on_path``: the repository first on the child's ``PYTHONPATH`` (off: as given)."""
    full_env = dict(os.environ if env is None else env)
    if repo_on_path:
        paths = [str(REPO), *filter(None, [full_env.get("PYTHONPATH")])]
        full_env["PYTHONPATH"] = os.pathsep.join(paths)
    popen_kwargs["preexec_fn"] = _as_from_a_terminal(popen_kwargs.get("preexec_fn"))
    if log_path is not None:
        with log_path.open("ab") as log_file:
            popen = subprocess.Popen(
                list(cmd), cwd=cwd, env=full_env, stdout=log_file, stderr=subprocess.STDOUT,
                start_new_session=True, **popen_kwargs,
            )  # fmt: skip
    else:
        popen = subprocess.Popen(
            list(cmd), cwd=cwd, env=full_env, start_new_session=True, **popen_kwargs
        )
    try:
        yield Child(popen, log_path)
    finally:
        stop_group(popen, grace_s)
        for stream in (popen.stdin, popen.stdout, popen.stderr):
            if stream is not None:
                stream.close()


def run_child(
    cmd: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path = REPO,
    input: str | None = None,
    check: bool = False,
    hang_s: float = HANG_S,
    repo_on_path: bool = True,
) -> subprocess.CompletedProcess[str]:
    """``cmd`` run to its end in its own process group, stdout and stderr captured as text (as
    ``subprocess.run(..., capture_output=True, text=True)`` returns them). Only a hang reaches
    ``hang_s``: then the whole group is stopped and ``TimeoutError`` raised."""
    with child_process(
        cmd, env=env, cwd=cwd, repo_on_path=repo_on_path, text=True,
        stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    ) as child:  # fmt: skip
        try:
            out, err = child.popen.communicate(input, timeout=hang_s)
        except subprocess.TimeoutExpired:
            raise TimeoutError(f"{cmd[0]} hung: not done after {hang_s:.0f} s") from None
    done = subprocess.CompletedProcess(list(cmd), child.popen.returncode, out, err)
    if check:
        done.check_returncode()
    return done


def alive(pid: int) -> bool:
    """Whether ``pid`` is running (a zombie, killed but not yet reaped, is not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        return "\nState:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except OSError:  # gone meanwhile, or no /proc
        return not Path("/proc/self").exists()


_HOLD = (
    "import duckdb, sys; c = duckdb.connect(sys.argv[1]); print('ready', flush=True); "
    "sys.stdin.read()"
)


@contextmanager
def holding_duckdb(path: Path) -> Iterator[Child]:
    """A child process holding ``path`` open (DuckDB's lock), from its ``ready`` line (its
    own readiness signal) to the end of the block."""
    cmd = [sys.executable, "-c", _HOLD, str(path)]
    with child_process(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) as child:
        assert child.popen.stdout is not None
        line = child.popen.stdout.readline()  # blocks until ready, or '' if it died
        assert line.strip() == "ready", f"the holder of {path} exited ({child.popen.wait()})"
        yield child


def children_of(pid: int) -> list[int]:
    """The live processes whose parent is ``pid`` (read from ``/proc``: Linux)."""
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            stat = Path(f"/proc/{name}/stat").read_bytes()
        except OSError:  # gone meanwhile
            continue
        fields = stat[stat.rindex(b")") + 2 :].split()
        if int(fields[1]) == pid and fields[0] != b"Z":
            out.append(int(name))
    return sorted(out)
