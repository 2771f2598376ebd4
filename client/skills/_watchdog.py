"""The watchdog of a sandboxed script: the deadline and the sandbox's TOTAL limits, from outside.

It runs in the calling process (LMCP), outside the sandbox's PID namespace: the script cannot
see it, signal it (``SIGSTOP``) or trace it. Every ``_POLL_S`` it finds the processes of the
sandbox's PID namespace (the one bubblewrap reports on its info pipe) in the host's ``/proc``
and takes their census (``client/skills/_census.py``): processes, resident memory and page
tables, open descriptors, memory mappings, POSIX locks, and the inodes of the writable tmpfs
places. Past the deadline or any limit of ``SandboxLimits`` it kills the sandbox: bubblewrap
outside first (its init inside dies with it, and with the init every process of the
namespace), then whatever of the namespace it still sees. What it may not read stops the run
too (``unaccounted``). The kernel's own limits bind in between polls: ``RLIMIT_NPROC`` per
user namespace, the address space and descriptors per process, the tmpfs sizes.
"""

from __future__ import annotations

import json
import os
import signal
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from client.skills._census import Unaccounted, count, excused, mappings, reading_as

if TYPE_CHECKING:
    import subprocess

    from client.skills._limits import SandboxLimits

__all__ = ["Verdict", "watch"]

_POLL_S = 0.005
#: The processes whose mappings are counted anew at each poll, in turn (reading ``maps`` costs
#: the most); a process new since is counted at once.
_MAPPINGS_PER_POLL = 4


@dataclass(frozen=True, slots=True)
class Verdict:
    #: None: the script ended by itself; else "deadline", "unaccounted" or the name of the
    #: limit it passed: "processes", "memory", "descriptors", "mappings", "locks", "inodes"
    stopped: str | None


def _namespace_of(pid: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/ns/pid")
    except OSError:
        return None


def _members(namespace: str, init: int | None = None) -> list[int]:
    """The processes of the namespace (bubblewrap's ``init`` among them while it lives)."""
    found = [] if init is None or not os.path.exists(f"/proc/{init}") else [init]
    for entry in os.scandir("/proc"):
        if entry.name.isdigit() and int(entry.name) != init:
            if _namespace_of(int(entry.name)) == namespace:
                found.append(int(entry.name))
    return found


class _Info:
    """bubblewrap's info pipe, read without blocking: the sandbox's init and PID namespace."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._buffer = b""
        self.child: int | None = None
        self.namespace: str | None = None
        self.closed = False
        os.set_blocking(fd, False)

    def poll(self) -> None:
        """Read what is there; raise :class:`Unaccounted` if the namespace may not be read."""
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
                    self.child = int(json.loads(self._buffer)["child-pid"])
                except (ValueError, KeyError, TypeError):
                    return
            else:
                self._buffer += chunk
        if self.child is not None and self.namespace is None:
            self.namespace = self._namespace()

    def _namespace(self) -> str | None:
        """The PID namespace of bubblewrap's init, read from it or, when it keeps its entries
        root's (its credentials changed since it last ran a program), from a child of it;
        ``None`` while bubblewrap is still setting up."""
        assert self.child is not None
        children = _read_bytes(f"/proc/{self.child}/task/{self.child}/children").split()
        for pid in [self.child, *map(int, children)]:
            try:
                return os.readlink(f"/proc/{pid}/ns/pid")
            except PermissionError as error:
                if not excused(pid) and pid != self.child:
                    raise Unaccounted("the sandbox's PID namespace") from error
            except OSError:
                pass  # gone
        return None


def _read_bytes(path: str) -> bytes:
    try:
        with open(path, "rb") as file:
            return file.read()
    except OSError:
        return b""


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
    proc: subprocess.Popen[bytes],
    info_fd: int,
    limits: SandboxLimits,
    timeout_s: float,
    user: int | None = None,
) -> Verdict:
    """Wait for the sandbox started as ``proc`` to end, or end it; say why it was stopped.

    ``user``: the uid the sandbox runs as when it is not the caller's (a root caller's).
    """
    deadline = time.monotonic() + timeout_s
    info = _Info(info_fd)
    places = limits.places()
    mapped: dict[int, int] = {}
    stopped: str | None = None
    polls = 0
    while not _ended(proc.pid):
        if time.monotonic() >= deadline:
            stopped = "deadline"
        try:
            # Only /proc is read as the sandbox's user: nothing here may import or open more.
            with reading_as(user):
                info.poll()
                if stopped is None and info.namespace is not None and info.child is not None:
                    members = _members(info.namespace, info.child)
                    script = [pid for pid in members if pid != info.child]
                    mapped = {pid: mapped[pid] for pid in script if pid in mapped}
                    for turn in range(min(_MAPPINGS_PER_POLL, len(script))):
                        pid = script[(polls * _MAPPINGS_PER_POLL + turn) % len(script)]
                        mapped[pid] = mappings(pid)
                    stopped = count(members, info.child, places, mapped).over(limits)
        except Unaccounted:
            stopped = "unaccounted"
        if stopped is not None:
            break
        polls += 1
        time.sleep(_POLL_S)
    # Whatever is left of the sandbox dies now (also after a normal exit).
    with reading_as(user):
        _kill(proc, info.namespace)
    return Verdict(stopped)
