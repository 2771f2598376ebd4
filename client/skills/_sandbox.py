"""The Linux sandbox a Cloud Skill script runs in: bubblewrap, an unprivileged uid, seccomp.

It holds for any caller, root included (each guarantee has a test in
``tests/skills/test_sandbox_escapes.py``; ``docs/cloud-skills.md`` lists them):
- bubblewrap itself never runs as root: a root caller drops to uid/gid 65534 (no
  supplementary groups) before starting it, so every namespace is a user namespace owned by an
  unprivileged uid, the script has no capability anywhere (``--cap-drop ALL``), runs as 65534
  inside too, ``no_new_privs`` is set, and ``RLIMIT_NPROC`` binds (the kernel exempts only a
  real uid 0, counted per user namespace);
- a seccomp filter (``client/skills/_seccomp.py``) denies mount, ptrace, keyring, namespace,
  module, BPF, io_uring and SysV-IPC/memfd calls, and every kernel object that would hold
  memory outside the sandbox's accounting (sockets, epoll, inotify, shared anonymous
  mappings, ...);
- no network, its own PID, IPC and UTS namespaces, no nested user namespace;
- the filesystem is only what the interpreters need, read-only: the Python runtime mounted at
  ``/python`` (never at its host prefix), the shared libraries it and a few shell tools link,
  a ``/dev`` of null, random and urandom only (no ``ptmx``: the host's pseudo-terminals are one
  pool; no ``zero``: a shared mapping of it is memory no process's Rss shows); no ``/proc``
  (no mount table, no process list), no ``/etc``, ``/home``, ``/usr/local``;
- every writable place is its own size-limited tmpfs: the scratch folder ``/work``, ``/tmp``,
  ``/dev/shm``; nothing of the host is writable and the scratch folder is not a host folder;
- rlimits set before the script starts (CPU, address space, file size, open files,
  processes, queued signals, no core, no locked memory, no message queues, no real-time or
  raised priority); the deadline and the TOTALS (memory, processes, descriptors, mappings,
  locks, tmpfs inodes) are enforced from outside, by the caller's watchdog
  (``client/skills/_watchdog.py``), which the script cannot see, signal or trace.
Where bubblewrap is missing or cannot build this sandbox there is none (``build_sandbox``
builds it, ``_execute.find_sandbox`` tries it): the tool refuses to
run unless the user opted in (see ``docs/cloud-skills.md``).
"""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

from client.skills._limits import MOUNT, SandboxLimits
from client.skills._seccomp import seccomp_filter

__all__ = ["MOUNT", "NOBODY", "PYTHON", "Launch", "Sandbox", "SandboxLimits", "build_sandbox"]

#: Where the Python runtime appears inside the sandbox, whatever its host prefix.
PYTHON = "/python"
#: The uid and gid the script runs as, and bubblewrap too when the caller is root.
NOBODY = 65534
#: The shell tools a shell script finds on ``PATH`` (those installed; each with its libraries).
_TOOLS = (
    "sh", "sleep", "cat", "echo", "printf", "ls", "head", "tail", "wc", "sort", "uniq", "cut",
    "tr", "sed", "grep", "env", "true", "false", "test", "date", "basename", "dirname",
    "mkdir", "rm", "cp", "mv", "touch", "tee", "expr", "seq",
)  # fmt: skip
_LDD_PATH = re.compile(r"(?:=>\s*|^\s+)(/\S+)\s+\(0x", re.MULTILINE)
#: The devices a script sees (bound from the host's ``/dev``, read-only).
_DEVICES = ("null", "random", "urandom")

# Runs first inside the sandbox: set the limits (soft == hard; the script cannot raise them),
# then BECOME the script (exec, no fork): nothing of LMCP's stays inside for it to signal.
_LAUNCHER = (
    "import os,resource as r,sys\n"
    "c,a,f,n,p,s=map(int,sys.argv[1].split(','))\n"
    "for k,v in((r.RLIMIT_CPU,c),(r.RLIMIT_AS,a),(r.RLIMIT_FSIZE,f),(r.RLIMIT_NOFILE,n),"
    "(r.RLIMIT_NPROC,p),(r.RLIMIT_SIGPENDING,s),(r.RLIMIT_CORE,0),(r.RLIMIT_MEMLOCK,0),"
    "(r.RLIMIT_MSGQUEUE,0),(r.RLIMIT_RTPRIO,0),(r.RLIMIT_NICE,0)):r.setrlimit(k,(v,v))\n"
    "os.execv(sys.argv[2],sys.argv[2:])\n"
)


@dataclass(frozen=True, slots=True)
class _Bind:
    source: str  # host path (opened by the caller: bubblewrap may not be able to reach it)
    dest: str


@dataclass(frozen=True, slots=True)
class _Link:
    target: str
    dest: str


@dataclass(slots=True)
class Launch:
    """One prepared run: the argv, the descriptors it inherits, the info pipe to watch."""

    argv: list[str]
    pass_fds: list[int]
    info: int  # read end: bubblewrap writes its child's pid here (JSON), then closes it
    user: int | None  # the uid/gid to drop to before bubblewrap (the caller is root)

    def started(self) -> None:
        """Close the parent's copies of what the child inherited (once it has started)."""
        # Taken out of this same list one by one: ``launch`` closes what is left in it at its
        # end, and a number closed twice may by then be another thread's file.
        while self.pass_fds:
            os.close(self.pass_fds.pop())


def _mirror(path: str, ops: list[_Bind | _Link], seen: set[str]) -> None:
    """Make ``path`` resolve inside the sandbox as on the host: its symlinks, then the file."""
    parts = Path(path).parts
    current = "/"
    for index, part in enumerate(parts[1:], start=1):
        current = os.path.join(current, part)
        if os.path.islink(current):
            target = os.readlink(current)
            if current not in seen:
                seen.add(current)
                ops.append(_Link(target, current))
            resolved = os.path.normpath(os.path.join(os.path.dirname(current), target))
            _mirror(os.path.join(resolved, *parts[index + 1 :]), ops, seen)
            return
    if path not in seen:
        seen.add(path)
        ops.append(_Bind(path, path))


def _libraries(binaries: Sequence[str]) -> list[str]:
    """Every shared library the binaries load (one ``ldd`` for all)."""
    ldd = shutil.which("ldd")
    if ldd is None or not binaries:
        return []
    done = subprocess.run(  # noqa: S603 - fixed tool, our own interpreter's files
        [ldd, *binaries], capture_output=True, text=True, timeout=60, check=False
    )
    return sorted(set(_LDD_PATH.findall(done.stdout)))


def _layout(python: str, prefix: str) -> tuple[_Bind | _Link, ...]:
    """The read-only mounts: the Python runtime at ``/python``, libraries, the shell tools."""
    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    stdlib = os.path.join(prefix, "lib", version)
    ops: list[_Bind | _Link] = [
        _Bind(python, f"{PYTHON}/bin/{version}"),
        _Link(version, f"{PYTHON}/bin/python3"),
        _Bind(stdlib, f"{PYTHON}/lib/{version}"),
    ]
    seen: set[str] = set()
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64"):
        if os.path.islink(top):
            seen.add(top)
            ops.append(_Link(os.readlink(top), top))
    tools = [found for name in _TOOLS if (found := shutil.which(name, path="/usr/bin:/bin"))]
    dynload = os.path.join(stdlib, "lib-dynload")
    extensions = (
        sorted(str(p) for p in Path(dynload).glob("*.so")) if os.path.isdir(dynload) else []
    )
    for library in _libraries([python, *extensions, *tools]):
        real = os.path.realpath(library)
        if os.path.dirname(real) == os.path.join(prefix, "lib"):  # libpython: with the runtime
            ops.append(_Bind(real, f"{PYTHON}/lib/{os.path.basename(library)}"))
        else:
            _mirror(library, ops, seen)
    for tool in tools:
        _mirror(tool, ops, seen)
    return tuple(ops)


@dataclass(frozen=True, slots=True)
class Sandbox:
    """A working bubblewrap and the read-only layout a script needs."""

    bwrap: str
    python: str
    python_prefix: str
    layout: tuple[_Bind | _Link, ...] = ()

    @property
    def inner_python(self) -> str:
        """The interpreter's path inside the sandbox."""
        return f"{PYTHON}/bin/python{sys.version_info[0]}.{sys.version_info[1]}"

    @contextmanager
    def launch(
        self,
        script: tuple[str, str],
        command: Sequence[str],
        env: dict[str, str],
        timeout_s: float,
        limits: SandboxLimits,
    ) -> Iterator[Launch]:
        """The bwrap run of ``command`` with ``script`` = (file name, content) in ``/work``."""
        fds: list[int] = []
        info = -1
        try:
            info, info_write = os.pipe()
            fds.append(info_write)
            argv = self._argv(script, command, env, timeout_s, limits, fds)
            launch = Launch(argv, fds, info, NOBODY if os.geteuid() == 0 else None)
            yield launch
        finally:
            for fd in [*fds, info] if info >= 0 else fds:
                with suppress(OSError):
                    os.close(fd)

    def _argv(
        self,
        script: tuple[str, str],
        command: Sequence[str],
        env: dict[str, str],
        timeout_s: float,
        limits: SandboxLimits,
        fds: list[int],
    ) -> list[str]:
        def keep(fd: int) -> str:
            fds.append(fd)
            return str(fd)

        def data(content: bytes) -> str:
            fd = os.memfd_create("lmcp-sandbox", 0)
            os.write(fd, content)
            os.lseek(fd, 0, os.SEEK_SET)
            return keep(fd)

        out = [
            self.bwrap,
            "--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc",
            "--unshare-uts", "--unshare-cgroup-try", "--disable-userns",
            "--uid", str(NOBODY), "--gid", str(NOBODY),
            "--cap-drop", "ALL", "--die-with-parent", "--new-session",
            "--hostname", "sandbox", "--info-fd", str(fds[0]),
        ]  # fmt: skip
        for op in self.layout:
            if isinstance(op, _Link):
                out += ["--symlink", op.target, op.dest]
            else:
                out += ["--ro-bind-fd", keep(os.open(op.source, os.O_PATH)), op.dest]
        # Not ``--dev``: that one brings a devpts (ptmx) and the host's /dev/zero.
        out += ["--tmpfs", "/dev"]
        for device in _DEVICES:
            out += ["--dev-bind", f"/dev/{device}", f"/dev/{device}"]
        out += ["--dir", "/dev/shm", "--remount-ro", "/dev"]
        for dest, size in limits.places():
            out += ["--perms", "1777", "--size", str(size), "--tmpfs", dest]
        name, content = script
        out += ["--perms", "0444", "--file", data(content.encode("utf-8")), f"{MOUNT}/{name}"]
        program = seccomp_filter()
        if program is not None:
            out += ["--seccomp", data(program)]
        out += ["--remount-ro", "/", "--chdir", MOUNT, "--clearenv"]
        for key, value in {**env, "LD_LIBRARY_PATH": f"{PYTHON}/lib"}.items():
            out += ["--setenv", key, value]
        numbers = (
            math.ceil(timeout_s) + 1,
            limits.memory_bytes,
            limits.file_bytes,
            limits.open_files,
            limits.processes + 1,  # bubblewrap's own init inside counts as one
            limits.queued_signals,
        )
        launcher = [self.inner_python, "-I", "-S", "-c", _LAUNCHER, ",".join(map(str, numbers))]
        return [*out, "--", *launcher, *command]


def _readable_by_nobody(path: str) -> bool:
    """Every directory above ``path`` searchable, and ``path`` readable, by "others"."""
    try:
        if not os.stat(path).st_mode & 0o004:
            return False
        parent = os.path.dirname(path)
        while parent != "/":
            if not os.stat(parent).st_mode & 0o001:
                return False
            parent = os.path.dirname(parent)
    except OSError:
        return False
    return True


def _runtime() -> tuple[str, str] | None:
    """The interpreter and prefix the sandbox runs: LMCP's own, or the system's same version.

    A root caller starts bubblewrap as uid 65534, which must reach the runtime: a Python
    installed under a private home (``/root/.pyenv``) is replaced by ``/usr/bin/pythonX.Y``.
    """
    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    own = os.path.realpath(getattr(sys, "_base_executable", sys.executable))
    candidates = [(own, os.path.realpath(sys.base_prefix)), (f"/usr/bin/{version}", "/usr")]
    for python, prefix in candidates:
        stdlib = os.path.join(prefix, "lib", version, "os.py")
        if not (os.path.isfile(python) and os.path.isfile(stdlib)):
            continue
        if os.geteuid() != 0 or (_readable_by_nobody(python) and _readable_by_nobody(stdlib)):
            return python, prefix
    return None


def build_sandbox() -> Sandbox | None:
    """A bubblewrap sandbox built for this machine, not yet tried (``_execute.find_sandbox``
    tries it); ``None`` without bubblewrap or a runtime it can reach."""
    if not sys.platform.startswith("linux"):
        return None
    bwrap = shutil.which("bwrap") or ("/usr/bin/bwrap" if Path("/usr/bin/bwrap").exists() else None)
    runtime = _runtime()
    if bwrap is None or runtime is None:
        return None
    python, prefix = runtime
    try:
        return Sandbox(bwrap, python, prefix, _layout(python, prefix))
    except (OSError, subprocess.SubprocessError):
        return None
