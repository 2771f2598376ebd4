"""What a sandbox holds, read from outside in the host's ``/proc``: the watchdog's counts.

Each count is of something the kernel keeps for the sandbox's processes that no rlimit bounds
in total: resident memory and page tables, open descriptors (each pipe among them buffers
kernel pages), memory mappings (each a kernel object, mapped pages or not), POSIX record locks
(any number per file), and the inodes of the writable tmpfs places (``--size`` bounds their
data pages only; files, links and extended attributes take inodes and slab).

The reads need what ptrace's "read" mode needs: the uid that owns the sandbox's user namespace,
or ``CAP_SYS_PTRACE``. A root caller starts the sandbox as ``NOBODY``, so it reads as that uid
(for the reading thread only, :func:`reading_as`): a container that withholds
``CAP_SYS_PTRACE`` from root must not blind the watchdog. A process whose entries cannot be
read raises :class:`Unaccounted`: the watchdog stops the run rather than guess.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache

from client.skills._limits import SandboxLimits

__all__ = ["Census", "Unaccounted", "count", "excused", "mappings", "reading_as"]

_STATUS_FIELDS = (b"RssAnon:", b"RssShmem:", b"VmPTE:")


class Unaccounted(Exception):
    """A process of the sandbox, or its tmpfs, that the watchdog may not read."""


@dataclass(frozen=True, slots=True)
class Census:
    """The sandbox's totals at one poll (bubblewrap's init included)."""

    processes: int = 0
    memory_bytes: int = 0
    descriptors: int = 0
    mappings: int = 0
    locks: int = 0
    inodes: int = 0

    def over(self, limits: SandboxLimits) -> str | None:
        """The first total past its limit, by the name ``stopped_by`` reports, or ``None``."""
        checks = (
            ("processes", self.processes, limits.processes + 1),  # + bubblewrap's init
            ("memory", self.memory_bytes, limits.memory_bytes),
            ("descriptors", self.descriptors, limits.descriptors),
            ("mappings", self.mappings, limits.mappings),
            ("locks", self.locks, limits.locks),
            ("inodes", self.inodes, limits.inodes),
        )
        return next((name for name, value, limit in checks if value > limit), None)


def excused(pid: int) -> bool:
    """True when ``pid`` may deny its entries and hold nothing that matters: it is exiting (its
    memory map is gone; its ``/proc`` entries turn root's), or it is bubblewrap before the
    seccomp filter (setting up, its credentials still changing), not yet the script."""
    try:
        with open(f"/proc/{pid}/status", "rb") as file:  # readable by anyone, always
            status = file.read()
    except OSError:
        return True  # gone
    return b"\nVmSize:" not in status or b"\nSeccomp:\t0\n" in status


def _read(pid: int, name: str) -> bytes | None:
    """``/proc/<pid>/<name>``; ``None`` once its process is gone; :class:`Unaccounted` if it
    may not be read and the process is not excused."""
    try:
        with open(f"/proc/{pid}/{name}", "rb") as file:
            return file.read()
    except PermissionError as error:
        if excused(pid):
            return None
        raise Unaccounted(name) from error
    except OSError:
        return None


def _memory(pid: int) -> int:
    """Anonymous + shared resident bytes and page tables of one process (0 once it is gone)."""
    total = 0
    for line in (_read(pid, "status") or b"").splitlines():
        if line.startswith(_STATUS_FIELDS):
            total += int(line.split()[1]) * 1024
    return total


def _descriptors(pid: int) -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except PermissionError as error:
        if excused(pid):
            return 0
        raise Unaccounted("fd") from error
    except OSError:
        return 0


def mappings(pid: int) -> int:
    """The memory mappings (VMAs) of one process: the lines of its ``maps``."""
    return (_read(pid, "maps") or b"").count(b"\n")


def _locks(pids: Iterable[int]) -> int:
    """The POSIX and flock locks (held or waiting) whose owner is one of ``pids``.

    ``/proc/locks`` names each lock's process as seen from the reader's PID namespace: the
    sandbox's processes by their host pids. (OFD locks name none; the sandbox may not take them.)
    """
    owners = {str(pid).encode() for pid in pids}
    held = 0
    try:
        with open("/proc/locks", "rb") as file:
            table = file.read()
    except OSError:
        table = b""
    for line in table.splitlines():
        fields = line.split()
        if fields[1:2] == [b"->"]:
            del fields[1]
        if len(fields) > 4 and fields[4] in owners:
            held += 1
    return held


def _inodes(members: list[int], places: Iterable[tuple[str, int]]) -> int:
    """Inodes used in the writable tmpfs places, seen through the root of a member (the first
    one that may be read). A place not (yet) of its size is not (yet) the sandbox's:
    bubblewrap is still building the root."""
    for pid in members:
        try:
            seen = [(os.statvfs(f"/proc/{pid}/root{place}"), size) for place, size in places]
        except PermissionError as error:
            if excused(pid):
                continue
            raise Unaccounted("root") from error
        except OSError:
            continue  # gone
        return sum(s.f_files - s.f_ffree for s, size in seen if s.f_blocks * s.f_frsize == size)
    return 0


def count(
    members: list[int],
    init: int,
    places: Iterable[tuple[str, int]],
    mapped: Mapping[int, int],
) -> Census:
    """The sandbox's totals now. ``init`` is bubblewrap's init, a member: its descriptors and
    mappings (what it was handed to build the sandbox, its own code) are fixed and not the
    script's, and it may keep entries only root can read. ``mapped`` holds each member's last
    counted mappings (a member missing there is counted now)."""
    script = [pid for pid in members if pid != init]
    return Census(
        processes=len(members),
        memory_bytes=sum(_memory(pid) for pid in members),
        descriptors=sum(_descriptors(pid) for pid in script),
        mappings=sum(mapped[pid] if pid in mapped else mappings(pid) for pid in script),
        locks=_locks(members),
        inodes=_inodes([*script, init], places),
    )


#: setresuid, setresgid: called raw, they change the calling thread's credentials only (the C
#: library's wrappers change every thread's).
_SETRESID = {"x86_64": (117, 119), "aarch64": (147, 149)}


@cache
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _set_ids(uid: int, gid: int) -> None:
    setresuid, setresgid = _SETRESID[os.uname().machine]
    libc, keep = _libc(), ctypes.c_long(-1)
    first, then = (
        ((setresgid, gid), (setresuid, uid)) if uid else ((setresuid, uid), (setresgid, gid))
    )
    for call, value in (first, then):
        if libc.syscall(ctypes.c_long(call), keep, ctypes.c_long(value), keep) != 0:
            raise OSError(ctypes.get_errno(), "the watchdog could not change its ids")


@contextmanager
def reading_as(uid: int | None) -> Iterator[None]:
    """Read ``/proc`` as ``uid`` (the effective uid and gid of this thread only, the saved ones
    unchanged, so they come back); ``None``: as the caller. As the owner of the sandbox's user
    namespace, a root caller needs no ``CAP_SYS_PTRACE`` to read its processes."""
    if uid is None or os.uname().machine not in _SETRESID:
        yield
        return
    before = (os.geteuid(), os.getegid())
    _set_ids(uid, uid)
    try:
        yield
    finally:
        _set_ids(*before)
