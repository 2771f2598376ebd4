"""The Linux sandbox a Cloud Skill script runs in: bubblewrap, namespaces and rlimits.

Guarantees (each has a test in ``tests/hardening_client/test_sandbox.py``):
- no network: a new, empty network namespace (``--unshare-net``);
- the filesystem is read-only and minimal: ``/usr`` (and the ``/bin``/``/lib`` links), the
  Python installation, a fresh ``/proc`` and ``/dev``; the ONLY writable place is the run's
  scratch folder, mounted at ``/work``. Nothing of ``/etc``, ``/home``, ``/root`` or ``/tmp``;
- its own PID namespace (``--unshare-pid``, ``--die-with-parent``): killing the sandbox at the
  deadline kills every process it started, ``setsid()`` or not; the host's processes (and their
  ``/proc/<pid>/environ``) are invisible;
- an empty environment (``--clearenv``) plus the scrubbed variables;
- rlimits set by a launcher inside the sandbox before the script starts: CPU seconds, address
  space, file size, open files, processes, no core dumps; the launcher also counts the
  namespace's processes and kills them all past the limit (RLIMIT_NPROC does not bind root).
Where bubblewrap is missing (macOS, Windows, a Linux without it) there is no sandbox: the tool
refuses to run unless the user opted in (see ``docs/cloud-skills.md``).
"""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

__all__ = ["MOUNT", "Sandbox", "SandboxLimits", "find_sandbox"]

#: Where the scratch folder appears inside the sandbox.
MOUNT = "/work"

# Runs first inside the sandbox: set the limits (soft == hard, inherited by every process and
# never raised again), start the script, and watch the namespace's process count: RLIMIT_NPROC
# is not enforced for root, so the watchdog kills the whole tree past the limit.
_LAUNCHER = (
    "import os,resource as r,sys,time\n"
    "c,a,f,n,p,m=map(int,sys.argv[1].split(','))\n"
    "for k,v in((r.RLIMIT_CPU,c),(r.RLIMIT_AS,a),(r.RLIMIT_FSIZE,f),(r.RLIMIT_NOFILE,n),"
    "(r.RLIMIT_NPROC,p),(r.RLIMIT_CORE,0)):r.setrlimit(k,(v,v))\n"
    "k=os.fork()\n"
    "if k==0:os.execv(sys.argv[2],sys.argv[2:])\n"
    "while True:\n"
    " d,s=os.waitpid(k,os.WNOHANG)\n"
    " if d:break\n"
    " if sum(e.isdigit() for e in os.listdir('/proc'))>m+2:\n"
    "  os.write(2,b'sandbox: process limit reached\\n');os.kill(-1,9);d,s=os.waitpid(k,0);break\n"
    " time.sleep(0.01)\n"
    "e=os.waitstatus_to_exitcode(s)\n"
    "os._exit(e if e>=0 else 128-e)\n"
)


@dataclass(frozen=True, slots=True)
class SandboxLimits:
    memory_bytes: int = 256 * 1024 * 1024
    file_bytes: int = 16 * 1024 * 1024
    open_files: int = 64
    processes: int = 32


def _user_processes() -> int:
    """Processes of this user now: RLIMIT_NPROC counts them all, not only the sandbox's."""
    uid = os.getuid()
    count = 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                count += entry.stat().st_uid == uid
            except OSError:
                pass
    return count


@dataclass(frozen=True, slots=True)
class Sandbox:
    """A working bubblewrap and the read-only paths a script needs."""

    bwrap: str
    python: str
    python_prefix: str

    def argv(
        self,
        scratch: Path,
        command: Sequence[str],
        env: dict[str, str],
        timeout_s: float,
        limits: SandboxLimits,
    ) -> list[str]:
        """The bwrap command running ``command`` (paths inside the sandbox) in ``scratch``."""
        out = [
            self.bwrap,
            "--unshare-all",  # user, pid, net, ipc, uts, cgroup namespaces
            "--die-with-parent",
            "--new-session",
            "--hostname",
            "sandbox",
            "--ro-bind",
            "/usr",
            "/usr",
        ]
        for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64"):
            path = Path(top)
            if path.is_symlink():
                out += ["--symlink", os.readlink(path), top]
            elif path.is_dir():
                out += ["--ro-bind", top, top]
        if not self.python_prefix.startswith("/usr/"):
            out += ["--ro-bind", self.python_prefix, self.python_prefix]
        out += ["--proc", "/proc", "--dev", "/dev", "--bind", str(scratch), MOUNT]
        out += ["--remount-ro", "/"]  # bwrap's root is a tmpfs: read-only too
        out += ["--chdir", MOUNT, "--clearenv"]
        for key, value in env.items():
            out += ["--setenv", key, value]
        nproc = _user_processes() + limits.processes
        numbers = (
            math.ceil(timeout_s) + 1,
            limits.memory_bytes,
            limits.file_bytes,
            limits.open_files,
            nproc,
            limits.processes,
        )
        launch = [self.python, "-I", "-S", "-c", _LAUNCHER, ",".join(map(str, numbers))]
        return [*out, "--", *launch, *command]


@cache
def find_sandbox() -> Sandbox | None:
    """bubblewrap when it is installed AND can create its namespaces here; else ``None``."""
    if not sys.platform.startswith("linux"):
        return None
    bwrap = shutil.which("bwrap") or ("/usr/bin/bwrap" if Path("/usr/bin/bwrap").exists() else None)
    if bwrap is None:
        return None
    python = os.path.realpath(getattr(sys, "_base_executable", sys.executable))
    sandbox = Sandbox(bwrap, python, os.path.realpath(sys.base_prefix))
    try:
        with tempfile.TemporaryDirectory(prefix="lmcp-sandbox-probe-") as scratch:
            probe = sandbox.argv(
                Path(scratch), [python, "-I", "-c", "pass"], {}, 5.0, SandboxLimits()
            )
            done = subprocess.run(  # noqa: S603 - fixed argv
                probe,
                env={},
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=10,
                check=False,
            )
    except (OSError, subprocess.SubprocessError):
        return None
    return sandbox if done.returncode == 0 else None
