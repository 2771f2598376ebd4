"""Where the Cloud Skills token lives: never in the environment of a process that runs for long.

A process's environment stays readable in ``/proc/<pid>/environ`` (by the same user and root)
for as long as it runs, and deleting from ``os.environ`` does not touch the kernel's copy: it
is the block ``execve`` was given. So a long-running client does not keep it there:

- ``LMCP_SKILLS_TOKEN_FILE`` names a file whose first line is the token; it is read when the
  skill tools are built (:func:`token_from`), and the token is then only in this process's
  memory;
- ``LMCP_SKILLS_TOKEN`` (the variable MCP clients' configurations set) is moved by
  :func:`exec_without_token`: ``lmcp mcp`` writes the token into a pipe and re-executes itself
  (same process id, same stdin/stdout, same arguments) with an environment that lacks it;
  :func:`handed_over_settings` reads the pipe once in the new image, closes it, and builds the
  process's settings with the token in them.

Besides ``client.settings``, this module is the only one in ``client/`` that reads its
configuration from the process environment: the hand-over must happen before the settings
exist. Short commands
(``lmcp skills ...``, a test's runtime) read the variable as given.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Mapping
from pathlib import Path

from client.settings import ClientSettings

__all__ = [
    "HANDOVER_VAR",
    "TOKEN_FILE_VAR",
    "TOKEN_VAR",
    "exec_without_token",
    "handed_over",
    "handed_over_settings",
    "token_from",
]

TOKEN_VAR = "LMCP_SKILLS_TOKEN"
TOKEN_FILE_VAR = "LMCP_SKILLS_TOKEN_FILE"
#: Set by :func:`exec_without_token` only: the descriptor of the pipe that holds the token.
HANDOVER_VAR = "LMCP_SKILLS_TOKEN_FD"
#: A pipe holds at least this much without a reader (POSIX: 4 KiB; Linux: 64 KiB), so writing
#: the token before the exec never blocks. A longer "token" is not one: it is dropped.
_MAX_TOKEN_BYTES = 4096


def token_from(settings: ClientSettings) -> str | None:
    """The token ``settings`` configure: the variable's, else the first line of the file."""
    if settings.skills_token:
        return settings.skills_token
    path = settings.skills_token_file
    if path is None:
        return None
    try:
        with Path(path).open("rb") as handle:
            first = handle.read(_MAX_TOKEN_BYTES + 1).split(b"\n", 1)[0]
    except OSError:
        return None
    text = first.decode("utf-8", errors="replace").strip()
    return text if text and len(first) <= _MAX_TOKEN_BYTES else None


def exec_without_token() -> None:
    """Re-execute this program without ``LMCP_SKILLS_TOKEN`` in its environment.

    Returns at once when the variable is not set (or not on POSIX, where ``execve`` would not
    keep the process). Otherwise never returns: the new image finds the token through
    :func:`handed_over`. Call it first, before any thread starts or any stdin is read.
    """
    token = os.environ.get(TOKEN_VAR)
    if token is None or os.name != "posix":
        return
    env = {k: v for k, v in os.environ.items() if k not in (TOKEN_VAR, HANDOVER_VAR)}
    data = token.encode("utf-8")
    if data and len(data) <= _MAX_TOKEN_BYTES:
        read_end, write_end = os.pipe()
        os.write(write_end, data)
        os.close(write_end)
        os.set_inheritable(read_end, True)
        env[HANDOVER_VAR] = str(read_end)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, sys.orig_argv, env)


def handed_over_settings() -> ClientSettings:
    """This process's settings, with the token :func:`exec_without_token` left in its pipe
    (``lmcp mcp``'s entry point: call it once and pass the value down)."""
    env = handed_over(os.environ)
    # A child started with this process's environment must not find the number: that
    # descriptor is closed now, and may be another pipe by the time it reads it.
    os.environ.pop(HANDOVER_VAR, None)
    return ClientSettings.from_env(env)


def handed_over(environ: Mapping[str, str]) -> dict[str, str]:
    """``environ`` as a plain dict, with the token the re-exec left in its pipe (read once, the
    pipe then closed). The dict lives in this process's memory only: pass it down, never to a
    child's environment."""
    raw = environ.get(HANDOVER_VAR, "")
    env = {k: v for k, v in environ.items() if k != HANDOVER_VAR}
    if not raw.isdigit() or int(raw) <= 2:
        return env
    fd = int(raw)
    try:
        ours = stat.S_ISFIFO(os.fstat(fd).st_mode)
    except OSError:
        return env
    if not ours:  # a stale number, not the pipe: leave that descriptor alone
        return env
    try:
        data = os.read(fd, _MAX_TOKEN_BYTES + 1)
    except OSError:
        data = b""
    finally:
        os.close(fd)
    if data and len(data) <= _MAX_TOKEN_BYTES:
        env[TOKEN_VAR] = data.decode("utf-8", errors="replace")
    return env
