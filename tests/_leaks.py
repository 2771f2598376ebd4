"""No test leaves a child process running (the root ``conftest.py`` applies it to every test).

Every ``subprocess.Popen`` created in the test process is recorded (``record_children``,
installed once per session: the MCP SDK's stdio client and asyncio's subprocesses are Popens
too). After each test, a child the test started that is still running is stopped with its
process group and the test fails, naming the command: a server left behind holds ports and
files and fails some later, unrelated test (one ran for 18 minutes that way).

Children of a module- or session-scoped fixture are not the test's: they were started before
the test's own fixtures were set up, so they are older than its mark.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["command_of", "leaked_children", "record_children", "stop_leaked"]

_STARTED: list[subprocess.Popen[Any]] = []
_installed: list[object] = []


def record_children() -> None:
    """Record every Popen from now on (idempotent)."""
    if _installed:
        return
    original = subprocess.Popen.__init__

    def recording_init(self: subprocess.Popen[Any], *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        _STARTED.append(self)

    subprocess.Popen.__init__ = recording_init  # type: ignore[method-assign]
    _installed.append(original)


@contextmanager
def leaked_children() -> Iterator[list[subprocess.Popen[Any]]]:
    """Yields a list filled, when the block ends, with the children started inside it that
    are still running (already stopped, with their groups, by then)."""
    mark = len(_STARTED)
    leaked: list[subprocess.Popen[Any]] = []
    try:
        yield leaked
    finally:
        mine = _STARTED[mark:]
        del _STARTED[mark:]
        for popen in mine:
            if popen.poll() is None:
                stop_leaked(popen)
                leaked.append(popen)


def command_of(popen: subprocess.Popen[Any]) -> str:
    """The command line a Popen was started with, as one string."""
    args = popen.args
    if isinstance(args, str | bytes | os.PathLike):
        return str(args)
    return " ".join(str(a) for a in args)


def stop_leaked(popen: subprocess.Popen[Any]) -> None:
    """SIGKILL ``popen`` (its whole group when it leads one) and reap it."""
    try:
        if os.getpgid(popen.pid) == popen.pid:
            os.killpg(popen.pid, signal.SIGKILL)
        else:
            popen.kill()
    except ProcessLookupError:
        pass
    try:
        popen.wait(timeout=30)
    except subprocess.TimeoutExpired:  # unkillable (D state): nothing more to do here
        pass
