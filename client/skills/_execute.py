"""Running a script component on the user's machine: bounded, scrubbed, in a throw-away folder.

``run_script`` writes the pinned content into a fresh temporary directory, runs it there with
a fixed interpreter, an environment holding nothing of the user's (no token, no home, no
variables of the agent), no stdin, a wall-clock time limit and a cap on the output kept; then
it kills whatever the script left running and deletes the directory.

Given a :class:`~client.skills._sandbox.Sandbox` (bubblewrap, Linux), the script runs inside
it (see that module for what it guarantees), watched from outside by
:func:`~client.skills._watchdog.watch`. Without one it is containment only (the user's network
and files): the tool refuses that unless the user opted in.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import IO, Any

from client.skills._limits import SandboxLimits
from client.skills._sandbox import MOUNT, Sandbox, build_sandbox
from client.skills._watchdog import watch

__all__ = [
    "DEFAULT_LIMITS",
    "INTERPRETERS",
    "Interpreter",
    "ScriptLimits",
    "ScriptRun",
    "find_sandbox",
    "interpreter_for",
    "probe",
    "run_script",
    "scrubbed_env",
]

#: A script's mime_type -> interpreter id (the server accepts exactly these; a test checks).
INTERPRETERS: MappingProxyType[str, str] = MappingProxyType(
    {
        "text/x-python": "python",
        "text/x-shellscript": "sh",
        "application/x-sh": "sh",
    }
)
_SUFFIX = {"python": "skill_script.py", "sh": "skill_script.sh"}


@dataclass(frozen=True, slots=True)
class ScriptLimits:
    timeout_s: float = 30.0
    max_output_bytes: int = 64 * 1024  # per stream
    sandbox: SandboxLimits = SandboxLimits()


DEFAULT_LIMITS = ScriptLimits()


@dataclass(frozen=True, slots=True)
class ScriptRun:
    exit_code: int | None
    timed_out: bool
    stdout: str
    stderr: str
    stdout_truncated: bool
    stderr_truncated: bool
    duration_ms: int
    #: why the sandbox's watchdog stopped it (or None): "deadline", "unaccounted", or the limit
    #: passed: "processes", "memory", "descriptors", "mappings", "locks", "inodes"
    stopped_by: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "stopped_by": self.stopped_by,
            "exit_code": self.exit_code,
            "timed_out": self.timed_out,
            "stdout": self.stdout,
            "stderr": self.stderr,
            "stdout_truncated": self.stdout_truncated,
            "stderr_truncated": self.stderr_truncated,
            "duration_ms": self.duration_ms,
        }


@dataclass(frozen=True, slots=True)
class Interpreter:
    kind: str
    argv: tuple[str, ...]


def interpreter_for(mime_type: str) -> Interpreter | None:
    """The command that runs a script of ``mime_type`` here, or ``None`` when unsupported."""
    kind = INTERPRETERS.get(mime_type)
    if kind == "python":
        # -I: isolated mode (no PYTHON* variables, no user site, script dir not on sys.path).
        return Interpreter(kind, (sys.executable, "-I"))
    if kind == "sh" and os.name == "posix" and Path("/bin/sh").exists():
        return Interpreter(kind, ("/bin/sh",))
    return None


def scrubbed_env(workdir: str) -> dict[str, str]:
    """A minimal environment: nothing inherited but what the OS needs to start a process."""
    env = {
        "HOME": workdir,
        "TMPDIR": workdir,
        "TMP": workdir,
        "TEMP": workdir,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONIOENCODING": "utf-8",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    if os.name == "nt":  # pragma: no cover - exercised on Windows only
        root = os.environ.get("SYSTEMROOT", r"C:\Windows")
        env.update({"SYSTEMROOT": root, "PATH": rf"{root}\System32;{root}", "USERPROFILE": workdir})
    else:
        env["PATH"] = "/usr/local/bin:/usr/bin:/bin"
    return env


class _Capped:
    """Reads a pipe to its end, keeping the first ``limit`` bytes."""

    def __init__(self, stream: IO[bytes], limit: int) -> None:
        self.kept = bytearray()
        self.truncated = False
        self._stream = stream
        self._limit = limit
        self.thread = threading.Thread(target=self._pump, daemon=True)
        self.thread.start()

    def _pump(self) -> None:
        try:
            while chunk := self._stream.read(65536):
                room = self._limit - len(self.kept)
                if room > 0:
                    self.kept += chunk[:room]
                if len(chunk) > max(room, 0):
                    self.truncated = True
        except (OSError, ValueError):
            pass

    def text(self) -> str:
        return bytes(self.kept).decode("utf-8", errors="replace")


def _wait_unreaped(proc: subprocess.Popen[bytes], timeout_s: float) -> bool:
    """Wait for the script to exit WITHOUT reaping it; False on timeout.

    The un-reaped leader keeps its process-group id reserved, so the group kill that follows
    can never hit an unrelated process that reused the id.
    """
    if not hasattr(os, "waitid"):  # Windows, macOS: reap. A live group member keeps the
        # group id from being reused, so the group kill stays safe for what matters.
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return False
        return True
    deadline = time.monotonic() + timeout_s
    delay = 0.001
    while True:
        if os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(delay)
        delay = min(delay * 2, 0.02)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    if os.name == "posix":
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    else:  # pragma: no cover - Windows
        proc.kill()


def _popen(command: Sequence[str], **extra: Any) -> subprocess.Popen[bytes]:
    return subprocess.Popen(  # noqa: S603 - a fixed interpreter, the pinned script, args
        command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **extra
    )


def _collect(
    proc: subprocess.Popen[bytes],
    out: _Capped,
    err: _Capped,
    started: float,
    stopped_by: str | None,
) -> ScriptRun:
    assert proc.stdout is not None and proc.stderr is not None
    proc.wait()
    duration_ms = int((time.monotonic() - started) * 1000)
    # The pipes are read with a deadline: a reader still blocked is abandoned, never awaited.
    for reader in (out, err):
        reader.thread.join(timeout=2.0)
    proc.stdout.close()
    proc.stderr.close()
    timed_out = stopped_by == "deadline"
    return ScriptRun(
        exit_code=None if timed_out else proc.returncode,
        timed_out=timed_out,
        stdout=out.text(),
        stderr=err.text(),
        stdout_truncated=out.truncated,
        stderr_truncated=err.truncated,
        duration_ms=duration_ms,
        stopped_by=stopped_by,
    )


def _run_sandboxed(
    content: str,
    interpreter: Interpreter,
    args: Sequence[str],
    limits: ScriptLimits,
    sandbox: Sandbox,
) -> ScriptRun:
    name = _SUFFIX[interpreter.kind]
    inner = (
        [sandbox.inner_python, "-I", name] if interpreter.kind == "python" else ["/bin/sh", name]
    )
    env = scrubbed_env(MOUNT)
    with sandbox.launch(
        (name, content), [*inner, *args], env, limits.timeout_s, limits.sandbox
    ) as launch:
        user: dict[str, Any] = (
            {}
            if launch.user is None
            else {"user": launch.user, "group": launch.user, "extra_groups": []}
        )
        started = time.monotonic()
        proc = _popen(
            launch.argv,
            cwd="/",
            env={"PATH": "/usr/bin:/bin"},
            pass_fds=launch.pass_fds,
            start_new_session=True,
            **user,
        )
        launch.started()
        assert proc.stdout is not None and proc.stderr is not None
        out = _Capped(proc.stdout, limits.max_output_bytes)
        err = _Capped(proc.stderr, limits.max_output_bytes)
        verdict = watch(proc, launch.info, limits.sandbox, limits.timeout_s, launch.user)
        return _collect(proc, out, err, started, verdict.stopped)


def run_script(
    content: str,
    interpreter: Interpreter,
    args: Sequence[str],
    limits: ScriptLimits = DEFAULT_LIMITS,
    sandbox: Sandbox | None = None,
) -> ScriptRun:
    """Run ``content`` with ``interpreter`` (from :func:`interpreter_for`) and ``args``."""
    if sandbox is not None:
        return _run_sandboxed(content, interpreter, args, limits, sandbox)
    with tempfile.TemporaryDirectory(prefix="lmcp-skill-") as workdir:
        script = Path(workdir) / _SUFFIX[interpreter.kind]
        script.write_text(content, encoding="utf-8")
        popen_extra: dict[str, Any] = (
            {"start_new_session": True}
            if os.name == "posix"
            else {"creationflags": getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)}
        )
        started = time.monotonic()
        proc = _popen(
            [*interpreter.argv, script.name, *args],
            cwd=workdir,
            env=scrubbed_env(workdir),
            **popen_extra,
        )
        assert proc.stdout is not None and proc.stderr is not None
        out = _Capped(proc.stdout, limits.max_output_bytes)
        err = _Capped(proc.stderr, limits.max_output_bytes)
        timed_out = not _wait_unreaped(proc, limits.timeout_s)
        # Whatever the script started in its group dies with it (also after a normal exit).
        _kill_group(proc)
        return _collect(proc, out, err, started, "deadline" if timed_out else None)


def probe(sandbox: Sandbox) -> bool:
    """True when ``sandbox`` runs a script here (the check behind ``find_sandbox``)."""
    python = interpreter_for("text/x-python")
    if python is None:
        return False
    try:
        run = run_script("print('ok')\n", python, [], ScriptLimits(timeout_s=30.0), sandbox)
    except (OSError, subprocess.SubprocessError):
        return False
    return (run.exit_code, run.stdout) == (0, "ok\n")


@cache
def find_sandbox() -> Sandbox | None:
    """bubblewrap when it is installed AND runs a script in this sandbox here; else ``None``."""
    sandbox = build_sandbox()
    return sandbox if sandbox is not None and probe(sandbox) else None
