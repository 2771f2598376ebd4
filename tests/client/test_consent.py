"""Consent as a table over modes, counting HTTP requests AND files written
(in the style of golang/telemetry's TestRun_ModeHandling)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest

import client.consent as consent_module
from client.consent import ConsentGate, ConsentSource
from client.paths import LmcpHome
from client.runtime import Runtime
from client.settings import ClientSettings

from .conftest import Recorder

SIGNAL_FILES = {
    "outbox.json",
    "sent.jsonl",
    "last_failure.json",
    "outbox.corrupt.json",
    "contributions.json",
}
SENT = {"sent.jsonl", "last_failure.json", "contributions.json"}
QUEUED = {"outbox.json", "last_failure.json", "contributions.json"}
KEPT = {"sent.jsonl", "last_failure.json", "contributions.json"}  # local: the log, no upload


def _files(root: Path) -> set[str]:
    return {p.name for p in root.rglob("*") if p.is_file()}


def _settings(content: str | None) -> Callable[[LmcpHome], None]:
    def write(home: LmcpHome) -> None:
        if content is not None:
            home.settings.write_text(content)

    return write


def _unreadable(home: LmcpHome) -> None:
    home.settings.mkdir()  # a directory where the file should be: reading fails


_FILE = {
    "no-file": _settings(None),
    "off": _settings('{"anonymous_signals": "off"}'),
    "local": _settings('{"anonymous_signals": "local"}'),
    "on": _settings('{"anonymous_signals": "on"}'),
}
#: What each user choice does with no restricting environment: (requests, files written).
_UNRESTRICTED = {"no-file": (0, set()), "off": (0, set()), "local": (0, KEPT), "on": (1, SENT)}
_ENVS: dict[str, dict[str, str]] = {
    "": {},
    "LMCP_ANONYMOUS_SIGNALS=1": {"LMCP_ANONYMOUS_SIGNALS": "1"},  # allows; never turns on
    "LMCP_ANONYMOUS_SIGNALS=0": {"LMCP_ANONYMOUS_SIGNALS": "0"},
    "LMCP_ANONYMOUS_SIGNALS=yes": {"LMCP_ANONYMOUS_SIGNALS": "yes"},  # unknown: off
    "DO_NOT_TRACK=1": {"DO_NOT_TRACK": "1"},
    "DO_NOT_TRACK=0": {"DO_NOT_TRACK": "0"},  # "0" is unset
    "DO_NOT_TRACK=1+LMCP_ANONYMOUS_SIGNALS=1": {"DO_NOT_TRACK": "1", "LMCP_ANONYMOUS_SIGNALS": "1"},
}
_RESTRICTS = {"LMCP_ANONYMOUS_SIGNALS=0", "LMCP_ANONYMOUS_SIGNALS=yes", "DO_NOT_TRACK=1",
              "DO_NOT_TRACK=1+LMCP_ANONYMOUS_SIGNALS=1"}  # fmt: skip

#: (id, settings writer, env, reachable collector, requests, signal files written): every user
#: choice under every environment. The environment can only take signals DOWN to off.
MODES: list[tuple[str, Callable[[LmcpHome], None], dict[str, str], bool, int, set[str]]] = [
    (
        f"{choice}{'+' + env_id if env_id else ''}",
        _FILE[choice],
        env,
        True,
        *((0, set()) if env_id in _RESTRICTS else _UNRESTRICTED[choice]),
    )
    for choice in _FILE
    for env_id, env in _ENVS.items()
] + [
    # One bounded try in the report, 4 in flush, one more when the runtime closes (the background
    # retries wait 0.5 s first: they never come in this test).
    ("on-unreachable", _FILE["on"], {}, False, 6, QUEUED),
    ("legacy-true", _settings('{"anonymous_signals": true}'), {}, True, 1, SENT),
    ("legacy-false", _settings('{"anonymous_signals": false}'), {}, True, 0, set()),
    ("file-garbage", _settings("{not json"), {}, True, 0, set()),
    ("file-unknown-mode", _settings('{"anonymous_signals": "yes"}'), {}, True, 0, set()),
    ("file-non-bool", _settings('{"anonymous_signals": 1}'), {}, True, 0, set()),
    ("unreadable", _unreadable, {}, True, 0, set()),
    (
        "unreadable+LMCP_ANONYMOUS_SIGNALS=1",
        _unreadable,
        {"LMCP_ANONYMOUS_SIGNALS": "1"},
        True,
        0,
        set(),
    ),
]


@pytest.mark.parametrize(
    ("setup", "env", "reachable", "want_requests", "want_files"),
    [m[1:] for m in MODES],
    ids=[m[0] for m in MODES],
)
def test_mode_handling(
    home: LmcpHome,
    setup: Callable[[LmcpHome], None],
    env: dict[str, str],
    reachable: bool,
    want_requests: int,
    want_files: set[str],
) -> None:
    setup(home)
    before = _files(home.root)
    responses = [] if reachable else [httpx.ConnectError("down")] * 10
    recorder = Recorder(*responses)
    rt = Runtime.from_env({"LMCP_HOME": str(home.root), **env}, transport=recorder.transport)
    rt.sender._sleep = lambda s: None  # noqa: SLF001 - keep the unreachable case fast
    rt.host.dispatch("read_note", {"note_name": "x"})  # fails: no handler or no such note
    result = rt.reporter.report({"friction_type": "cannot_complete", "tool_attempted": "read_note"})
    flushed = rt.reporter.flush()
    rt.close()
    assert len(recorder.requests) == want_requests
    written = (_files(home.root) - before) & SIGNAL_FILES
    assert written == want_files
    if not want_files:
        assert result == {"sent": False, "reason": "anonymous_signals_off"}
    if want_files == KEPT and want_requests == 0:
        assert result["reason"] == "local_only"
        assert [e.status for e in rt.sent_log.entries()] == ["local"]
        assert flushed == {"delivered": 0, "rejected": 0, "pending": 0}


def test_turning_off_purges_a_non_empty_outbox(home: LmcpHome) -> None:
    rt = Runtime.from_env(
        {"LMCP_HOME": str(home.root)},
        transport=Recorder(*[httpx.ConnectError("down")] * 10).transport,
    )
    rt.sender._sleep = lambda s: None  # noqa: SLF001
    rt.consent.set_enabled(True)
    rt.host.dispatch("read_note", {"note_name": "x"})
    assert rt.reporter.report({"friction_type": "other"}) == {
        "sent": False,
        "queued": True,
        "reason": "collector_not_reached",
    }
    assert len(rt.outbox) == 1 and home.outbox.exists()
    rt.consent.set_enabled(False)
    assert not home.outbox.exists() and len(rt.outbox) == 0
    assert not home.last_failure.exists()
    rt.close()


def test_status_names_the_deciding_source(home: LmcpHome) -> None:
    assert ConsentGate(home).status().source is ConsentSource.no_settings
    ConsentGate(home).set_enabled(True)
    assert ConsentGate(home).status().enabled
    for env, source in (
        ({"DO_NOT_TRACK": "1"}, ConsentSource.do_not_track),
        ({"LMCP_ANONYMOUS_SIGNALS": "0"}, ConsentSource.env),
    ):
        restriction = ClientSettings.from_env(env).signals_restriction
        assert ConsentGate(home, restriction).status().source is source


def test_off_from_another_process_takes_effect_at_once(home: LmcpHome) -> None:
    gate = ConsentGate(home)
    gate.set_enabled(True)
    assert gate.enabled()
    # Another process (the CLI) turns signals off: an ON decision is never reused.
    ConsentGate(home).set_enabled(False)
    assert not gate.enabled()


def test_only_off_is_cached_and_only_for_the_ttl(
    home: LmcpHome, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The gate's clock, moved by the test: the TTL is a count of seconds, not a race with
    # how fast this machine runs the next line.
    now = [1000.0]
    monkeypatch.setattr(consent_module, "time", SimpleNamespace(monotonic=lambda: now[0]))
    gate = ConsentGate(home, off_ttl_s=0.2)
    assert not gate.enabled()
    ConsentGate(home).set_enabled(True)  # another process turns it on
    now[0] += 0.19
    assert not gate.enabled()  # a stale OFF: safe, it can only delay a send
    now[0] += 0.02
    assert gate.enabled()
    home.settings.write_text('{"anonymous_signals": false, "padding": "xxxxxxxx"}')
    os.utime(home.settings, ns=(1, 1))
    assert not gate.enabled()


#: What a folder's ``settings.json`` may hold: a mode, nothing, or something unreadable.
_HELD = ["off", "local", "on", None, "garbage"]


def _hold(folder: Path, held: str | None) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    if held == "garbage":
        (folder / "settings.json").write_text("{not json", encoding="utf-8")
    elif held is not None:
        (folder / "settings.json").write_text(f'{{"anonymous_signals": "{held}"}}')


@pytest.mark.parametrize("account_held", _HELD)
@pytest.mark.parametrize("home_held", _HELD)
def test_a_folder_follows_the_lower_of_its_choice_and_the_account_s(
    tmp_path: Path, home_held: str | None, account_held: str | None
) -> None:
    """No file in the account's folder restricts nothing; anything else it holds lowers the
    folder's own mode (an unreadable file to off); never does it raise it."""
    order = ["off", "local", "on"]
    home, account = tmp_path / "home", tmp_path / "account"
    _hold(home, home_held)
    _hold(account, account_held)
    gate = ConsentGate(LmcpHome(home), account=LmcpHome(account))
    own = home_held if home_held in order else "off"  # no file, or unreadable: off
    if account_held is None:
        expected = own
    else:
        ceiling = account_held if account_held in order else "off"
        expected = min(own, ceiling, key=order.index)
    assert gate.mode().value == expected
    lowered = expected != own
    assert (gate.status().source is ConsentSource.account) == lowered
    assert gate.status().setting.value == own  # what the folder itself says, always shown


def test_the_account_s_off_reaches_a_server_at_once_and_its_own_folder_is_not_restricted(
    tmp_path: Path,
) -> None:
    home, account = LmcpHome(tmp_path / "home"), LmcpHome(tmp_path / "account")
    _hold(home.root, "on")
    gate = ConsentGate(home, account=account)
    assert gate.enabled()
    ConsentGate(account).set_mode(consent_module.SignalsMode.off)  # `lmcp signals off` there
    assert not gate.enabled()
    # The account's own folder is not "another" folder: it follows only itself.
    assert ConsentGate(account, account=account).account is None
