"""The client's settings: one value per program, read from the environment once, passed down.

Each entry point builds a :class:`ClientSettings` once (``lmcp mcp``, ``lmcp signals …``,
``lmcp recipes …``, ``lmcp skills delete``) and hands it to what it runs; nothing else in
``client/`` reads the process environment (``tests/client/test_settings.py`` scans for it).
The one other reader is ``client.skills._token``, which moves the Cloud Skills token out of the
environment of ``lmcp mcp`` before these settings are built (``handed_over_settings``).

:meth:`ClientSettings.from_env` is pure: it reads only the mapping it is given (a test or a
simulation runs many isolated clients in one process) and touches no file. Every field names
the variables it comes from (``variables``), and docs/configuration.md documents each field
(a test compares the two).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path

import platformdirs

from client.collector_url import URL_VARIABLE, collector_url
from client.consent import ConsentSource, env_restriction
from client.paths import LmcpHome

__all__ = [
    "DEFAULT_SKILLS_URL",
    "EXEC_TIMEOUT_RANGE_S",
    "ClientSettings",
    "default_home",
    "variables",
]

#: ``lmcp skills serve``'s default address (a service of its own, never the collector).
DEFAULT_SKILLS_URL = "http://127.0.0.1:8766"
#: The least and the most a Cloud Skill script may be given to run, in seconds.
EXEC_TIMEOUT_RANGE_S = (0.1, 300.0)


def _from(*names: str) -> dict[str, tuple[str, ...]]:
    """A field's metadata: the environment variables it is read from."""
    return {"variables": names}


def default_home() -> LmcpHome:
    """The state folder when ``LMCP_HOME`` is unset: the platform's user data folder."""
    return LmcpHome(Path(platformdirs.user_data_dir("lmcp", False)))


@dataclass(frozen=True, slots=True)
class ClientSettings:
    """Everything the client is configured with (the consent choice itself is a file: the
    environment can only restrict it, ``signals_restriction``)."""

    #: The folder of all client state (``client.paths.LmcpHome``).
    home: LmcpHome = field(default_factory=default_home, metadata=_from("LMCP_HOME"))
    #: This account's default folder: its consent choice also holds where ``home`` is another
    #: folder (the lower of the two: ``client.consent.ConsentGate``). No variable of LMCP's
    #: moves it.
    account_home: LmcpHome = field(default_factory=default_home, metadata=_from())
    #: The collector's base URL; ``client.collector_url.url_problem`` says when it is unusable.
    collector_url: str = field(default=collector_url({}), metadata=_from(URL_VARIABLE))
    #: The variable that keeps signals OFF in this process, or None (it never turns them on).
    signals_restriction: ConsentSource | None = field(
        default=None, metadata=_from("DO_NOT_TRACK", "LMCP_ANONYMOUS_SIGNALS")
    )
    #: The Cloud Skills service (the skills token is sent only here).
    skills_url: str = field(default=DEFAULT_SKILLS_URL, metadata=_from("LMCP_SKILLS_URL"))
    #: The Cloud Skills token given in the environment (or handed over by ``lmcp mcp``'s
    #: re-exec). Never in ``repr``: settings may be printed or logged, the token never.
    skills_token: str | None = field(default=None, repr=False, metadata=_from("LMCP_SKILLS_TOKEN"))
    #: A file whose first line is the token, read when the skill tools are built.
    skills_token_file: Path | None = field(default=None, metadata=_from("LMCP_SKILLS_TOKEN_FILE"))
    #: One script run's time limit; None: the sandbox's default (``ScriptLimits``).
    skills_exec_timeout_s: float | None = field(
        default=None, metadata=_from("LMCP_SKILLS_EXEC_TIMEOUT_S")
    )
    #: Run Cloud Skill scripts where no sandbox exists (containment only).
    skills_allow_unsandboxed: bool = field(
        default=False, metadata=_from("LMCP_SKILLS_ALLOW_UNSANDBOXED")
    )

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> ClientSettings:
        """The settings ``environ`` configures; an unusable value reads as its default, except
        for consent, where an unknown value keeps signals off (fail closed)."""
        home = environ.get("LMCP_HOME")
        token_file = environ.get("LMCP_SKILLS_TOKEN_FILE")
        account = default_home()
        return cls(
            home=LmcpHome(Path(home).expanduser()) if home else account,
            account_home=account,
            collector_url=collector_url(environ),
            signals_restriction=env_restriction(environ),
            skills_url=(environ.get("LMCP_SKILLS_URL") or DEFAULT_SKILLS_URL).rstrip("/"),
            skills_token=environ.get("LMCP_SKILLS_TOKEN") or None,
            skills_token_file=Path(token_file) if token_file else None,
            skills_exec_timeout_s=_seconds(environ.get("LMCP_SKILLS_EXEC_TIMEOUT_S")),
            skills_allow_unsandboxed=environ.get("LMCP_SKILLS_ALLOW_UNSANDBOXED") == "1",
        )

    @classmethod
    def from_process(cls) -> ClientSettings:
        """This process's settings: an entry point calls it once and passes the value down."""
        return cls.from_env(os.environ)


def variables() -> dict[str, tuple[str, ...]]:
    """Each setting's name -> the environment variables it is read from."""
    return {f.name: f.metadata["variables"] for f in fields(ClientSettings)}


def _seconds(raw: str | None) -> float | None:
    """A time limit within ``EXEC_TIMEOUT_RANGE_S``; None when unset or not a number."""
    try:
        value = float(raw) if raw else None
    except ValueError:
        return None
    if value is None or value != value:  # NaN: not a number either
        return None
    low, high = EXEC_TIMEOUT_RANGE_S
    return min(max(value, low), high)
