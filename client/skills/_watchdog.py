"""The watchdog of a sandboxed script: the deadline and the sandbox's TOTAL limits, from outside.

It runs in the calling process (LMCP), outside the sandbox's PID namespace: the script cannot
see it, signal it (``SIGSTOP``) or trace it. Every ``_POLL_S`` it finds the processes of the
sandbox's PID namespace (the one bubblewrap reports on its info pipe) in the host's ``/proc``,
counts them and adds up their anonymous and shared resident memory (what an allocation or a
shared mapping takes; file pages are the read-only runtime's and reclaimable; the writable
places are tmpfs of a fixed size). Past the deadline, ``processes`` + 1 (bubblewrap's init) or
``memory_bytes`` it kills the sandbox: bubblewrap outside first (its init inside dies with it,
and with the init every process of the namespace), then whatever of the namespace it still
sees. The kernel's own limits bind in between polls: ``RLIMIT_NPROC`` per user namespace, the
address space per process, the tmpfs sizes.
"""

from __future__ import annotations

import json
import os
import signal
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import subprocess

    from client.skills._limits import SandboxLimits

__all__ = ["Verdict", "watch"]

_POLL_S = 0.005
_STATUS_FIELDS = (b"RssAnon:", b"RssShmem:")


@dataclass(frozen=True, slots=True)
class Verdict:
    #: None: the script ended by itself; else "deadline", "memory" or "processes"
    stopped: str | None


def _namespace_of(pid: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/ns/pid")
    except OSError:
        return None


def _members(namespace: str) -> list[int]:
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit() and _namespace_of(int(entry.name)) == namespace:
            found.append(int(entry.name))
    return found


def _memory(pid: int) -> int:
    """Anonymous + shared resident bytes of one process (0 once it is gone)."""
    total = 0
    try:
        with open(f"/proc/{pid}/status", "rb") as status:
            for line in status:
                if line.startswith(_STATUS_FIELDS):
                    total += int(line.split()[1]) * 1024
    except (OSError, ValueError):
        return 0
    return total


class _Info:
    """bubblewrap's info pipe, read without blocking: the namespace once it is known."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._buffer = b""
        self.namespace: str | None = None
        self.closed = False
        os.set_blocking(fd, False)

    def poll(self) -> None:
        while not self.closed:
            try:
                chunk = os.read(self._fd, 4096)
            except BlockingIOError:
                return
            except OSError:
                chunk = b""
            if not chunk:
                self.closed = True
                try:
                    pid = int(json.loads(self._buffer)["child-pid"])
                except (ValueError, KeyError, TypeError):
                    return
                self.namespace = _namespace_of(pid)
                return
            self._buffer += chunk


def _ended(pid: int) -> bool:
    """True once ``pid`` exited, WITHOUT reaping it (its group id stays reserved for the kill)."""
    return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None


def _kill(proc: subprocess.Popen[bytes], namespace: str | None) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    for pid in _members(namespace) if namespace else ():
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def watch(
    proc: subprocess.Popen[bytes], info_fd: int, limits: SandboxLimits, timeout_s: float
) -> Verdict:
    """Wait for the sandbox started as ``proc`` to end, or end it; say why it was stopped."""
    deadline = time.monotonic() + timeout_s
    info = _Info(info_fd)
    stopped: str | None = None
    while not _ended(proc.pid):
        if time.monotonic() >= deadline:
            stopped = "deadline"
        info.poll()
        if stopped is None and info.namespace is not None:
            members = _members(info.namespace)
            if len(members) > limits.processes + 1:
                stopped = "processes"
            elif sum(_memory(pid) for pid in members) > limits.memory_bytes:
                stopped = "memory"
        if stopped is not None:
            break
        time.sleep(_POLL_S)
    # Whatever is left of the sandbox dies now (also after a normal exit).
    _kill(proc, info.namespace)
    return Verdict(stopped)
