"""What a running sandbox holds, sampled from outside (the host's ``/proc``) while a test's
script runs in it: the evidence that a bound held, apart from what the script says of itself.

A test passes a fresh :func:`marker` to its script as an argument; the sampler finds the process
whose command line holds it, then every process of that PID namespace, and keeps the largest
value it saw of each count (:class:`Held`). It runs in a thread of the test, stopped and joined
when the ``with`` block ends, failed or not.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import struct
import termios
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field

from client.skills._sandbox import SandboxLimits

__all__ = ["MIB", "Held", "holding", "marker"]

MIB = 1024 * 1024
_EVERY_S = 0.002
#: Host-wide counters whose growth during a run is sampled.
_HOST = {"ptys": "/proc/sys/kernel/pty/nr", "aio_events": "/proc/sys/fs/aio-nr"}
#: Shared mappings of memory with no file of its own (``maps`` names them so).
_SHARED_ANONYMOUS = (b"/dev/zero (deleted)", b"/SYSV", b"/memfd:", b"[anon_shmem")


def marker() -> str:
    """A unique word for a script's arguments: it finds the sandbox the script runs in."""
    return f"held-{uuid.uuid4().hex}"


@dataclass
class Held:
    """The largest value of each count the sampler saw (0 for one never seen)."""

    samples: int = 0
    maxima: dict[str, int] = field(default_factory=dict)

    def note(self, name: str, value: int) -> None:
        self.maxima[name] = max(self.maxima.get(name, 0), value)

    def __getitem__(self, name: str) -> int:
        return self.maxima.get(name, 0)


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as file:
            return file.read()
    except OSError:
        return b""


def _number(path: str) -> int:
    text = _read(path).strip()
    return int(text) if text.isdigit() else 0


def _members(word: bytes) -> list[int]:
    """Every process of the PID namespace of the process whose command line holds ``word``
    (not the sampler's own: bubblewrap outside has it in its command line too)."""
    pids = [int(name) for name in os.listdir("/proc") if name.isdigit()]
    ours = os.readlink("/proc/self/ns/pid")
    namespace = None
    for pid in pids:
        if word in _read(f"/proc/{pid}/cmdline").split(b"\0"):
            with contextlib.suppress(OSError):
                namespace = os.readlink(f"/proc/{pid}/ns/pid")
            if namespace not in (None, ours):
                break
            namespace = None
    if namespace is None:
        return []
    found = []
    for pid in pids:
        with contextlib.suppress(OSError):
            if os.readlink(f"/proc/{pid}/ns/pid") == namespace:
                found.append(pid)
    return found


def _queued(pid: int, fd: str) -> int:
    """Bytes waiting in the pipe ``fd`` of ``pid`` (opened anew through ``/proc``)."""
    try:
        pipe = os.open(f"/proc/{pid}/fd/{fd}", os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return 0
    try:
        return int(struct.unpack("i", fcntl.ioctl(pipe, termios.FIONREAD, b"\0" * 4))[0])
    except OSError:
        return 0
    finally:
        os.close(pipe)


def _bubblewrap(pid: int) -> bool:
    """bubblewrap's own processes (its init, its child before it runs the script) hold what
    they were handed to build the sandbox: not the script's."""
    try:
        return os.path.basename(os.readlink(f"/proc/{pid}/exe")) == "bwrap"
    except OSError:
        return False


def _descriptors(members: list[int], held: Held) -> None:
    kinds: dict[str, int] = {}
    pipes: dict[bytes, int] = {}
    for pid in members:
        if _bubblewrap(pid):
            continue
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                link = os.readlink(f"/proc/{pid}/fd/{fd}").encode()
            except OSError:
                continue
            kind = link.split(b":")[0].decode() if b":" in link else "file"
            if kind == "anon_inode":
                kind = link.decode()
            kinds[kind] = kinds.get(kind, 0) + 1
            if kind == "pipe" and link not in pipes:
                pipes[link] = _queued(pid, fd)
    held.note("descriptors", sum(kinds.values()))
    for kind, number in kinds.items():
        held.note(kind, number)
    held.note("pipe_bytes", sum(pipes.values()))


def _status(members: list[int], held: Held) -> None:
    for pid in members:
        for line in _read(f"/proc/{pid}/status").splitlines():
            name, _, value = line.partition(b":")
            words = value.split()
            if name == b"Seccomp_filters" and words:
                held.note("seccomp_filters", int(words[0]))
            elif name == b"VmLck" and words:
                held.note("locked_bytes", int(words[0]) * 1024)
            elif name == b"SigQ" and words:
                held.note("queued_signals", int(words[0].split(b"/")[0]))
        maps = _read(f"/proc/{pid}/maps")
        held.note("mappings_of_one", maps.count(b"\n"))
        shared = [line for line in maps.splitlines() if line.endswith(_SHARED_ANONYMOUS)]
        held.note("shared_anonymous", len(shared))


def _sample(word: bytes, limits: SandboxLimits, base: dict[str, int], held: Held) -> None:
    for name, path in _HOST.items():
        held.note(name, _number(path) - base[name])
    members = _members(word)
    if not members:
        return
    held.samples += 1
    held.note("processes", len(members))
    _descriptors(members, held)
    _status(members, held)
    held.note("mappings", sum(_read(f"/proc/{pid}/maps").count(b"\n") for pid in members))
    inodes, devices = 0, set()
    for place, size in limits.places():
        with contextlib.suppress(OSError):
            stats = os.statvfs(f"/proc/{members[-1]}/root{place}")
            if stats.f_blocks * stats.f_frsize == size:
                inodes += stats.f_files - stats.f_ffree
                device = os.stat(f"/proc/{members[-1]}/root{place}").st_dev
                devices.add(f"{os.major(device):02x}:{os.minor(device):02x}:".encode())
    held.note("inodes", inodes)
    owners = {str(pid).encode() for pid in members}
    locks = [line.split() for line in _read("/proc/locks").splitlines()]
    held.note("locks", sum(1 for lock in locks if owners & set(lock[4:6])))
    # any lock on a file of the sandbox's own tmpfs places, OFD locks (which name no process)
    # included
    on_places = (w for lock in locks for w in lock[5:7] if w.rpartition(b":")[0] + b":" in devices)
    held.note("place_locks", sum(1 for _ in on_places))


@contextlib.contextmanager
def holding(word: str, limits: SandboxLimits | None = None) -> Iterator[Held]:
    """Sample the sandbox whose script has ``word`` among its arguments until the block ends."""
    held = Held()
    base = {name: _number(path) for name, path in _HOST.items()}
    done = threading.Event()

    def run() -> None:
        while not done.is_set():
            _sample(word.encode(), limits or SandboxLimits(), base, held)
            done.wait(_EVERY_S)

    sampler = threading.Thread(target=run, name="sandbox-sampler", daemon=True)
    sampler.start()
    try:
        yield held
    finally:
        done.set()
        sampler.join()
