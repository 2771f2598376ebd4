"""Attack: one installation fills a group by itself (issue 15, finding 1: "k counts signals, not
people"). The client bounds each installation's contributions per UTC day before a signal is
built: at most one per (tool, error class, friction type) and at most C in all (the published
``contract.privacy.DAILY_SIGNAL_LIMIT``). Counted in a real collector's DuckDB file: the same
failure reported 5 times stores 1 signal; 30 different failures store C = 10; no
(tool, error class, friction type) cell of one installation's day ever holds more than 1.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import duckdb
import pytest
from pydantic import SecretStr

from client.runtime import Runtime
from collector.settings import CollectorSettings
from contract.limits import DAILY_SIGNAL_LIMIT, PER_KEY_DAILY_LIMIT
from contract.schema import FrictionType
from tests._delivery import accepted, deliver_queued
from tests._servers import running_collector

TOOLS = ("read_note", "list_notes", "read_file", "list_files", "send_email", "get_datetime")


def _home(tmp_path: Path, mode: str = "on") -> Path:
    home = tmp_path / "home"
    home.mkdir()
    (home / "settings.json").write_text(f'{{"anonymous_signals": "{mode}"}}')
    return home


def _settings(tmp_path: Path) -> CollectorSettings:
    return CollectorSettings(
        db_path=tmp_path / "signals.duckdb",
        read_tokens=[SecretStr("attack-bound-token")],
        rate_limit_enabled=False,
    )


def _cells(db: Path) -> list[tuple[str, str, str, int]]:
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute(
            "SELECT tool_attempted::VARCHAR, error_class::VARCHAR, friction_type::VARCHAR, "
            "count(*) FROM signals GROUP BY ALL"
        ).fetchall()
    return [(str(t), str(e), str(f), int(n)) for t, e, f, n in rows]


def _report(rt: Runtime, **args: Any) -> dict[str, Any]:
    reply = rt.host.dispatch("report_friction", args).to_dict()
    result: dict[str, Any] = reply["result"]
    return result


@pytest.mark.slow
def test_the_same_failure_five_times_stores_one(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    home = _home(tmp_path)
    with running_collector(settings) as url:
        with Runtime.from_env({"LMCP_HOME": str(home), "LMCP_COLLECTOR_URL": url}) as rt:
            replies = []
            for _ in range(5):
                rt.host.dispatch("read_note", {"note_name": "the rare note"})
                replies.append(
                    _report(rt, friction_type="repeated_failure", tool_attempted="read_note")
                )
            # The refused reports were not queued either: at most the first waits there.
            assert len(rt.outbox) <= 1
            deliver_queued(rt)
    assert accepted(replies[0])
    assert replies[1:] == [{"sent": False, "reason": "daily_duplicate"}] * 4
    assert _cells(settings.db_path) == [("read_note", "not_found", "repeated_failure", 1)]


@pytest.mark.slow
def test_thirty_different_failures_store_ten(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    home = _home(tmp_path)
    keys = list(itertools.product(TOOLS, FrictionType))
    assert len(keys) == 30
    with running_collector(settings) as url:
        with Runtime.from_env({"LMCP_HOME": str(home), "LMCP_COLLECTOR_URL": url}) as rt:
            replies = [_report(rt, friction_type=f.value, tool_attempted=t) for t, f in keys]
            assert len(rt.outbox) <= DAILY_SIGNAL_LIMIT  # nothing refused was queued
            deliver_queued(rt)
    sent = [r for r in replies if accepted(r)]
    refused = [r for r in replies if r.get("reason") == "daily_limit"]
    assert len(sent) == DAILY_SIGNAL_LIMIT == 10
    assert len(refused) == 30 - DAILY_SIGNAL_LIMIT
    cells = _cells(settings.db_path)
    assert sum(n for *_, n in cells) == DAILY_SIGNAL_LIMIT  # L1 = C
    assert len(cells) <= DAILY_SIGNAL_LIMIT  # L0 = C
    assert max(n for *_, n in cells) <= PER_KEY_DAILY_LIMIT  # Linf = 1


def test_the_bound_holds_in_local_mode_too(tmp_path: Path) -> None:
    """Local mode previews exactly what would be sent: the bound applies there as well."""
    home = _home(tmp_path, "local")
    env = {"LMCP_HOME": str(home), "LMCP_COLLECTOR_URL": "http://127.0.0.1:9"}
    with Runtime.from_env(env) as rt:
        replies = [
            _report(rt, friction_type=f.value, tool_attempted=t)
            for t, f in itertools.product(TOOLS, FrictionType)
        ]
        kept = rt.sent_log.entries()
    assert [r["reason"] for r in replies].count("local_only") == DAILY_SIGNAL_LIMIT
    assert len(kept) == DAILY_SIGNAL_LIMIT


def test_off_touches_no_counter(tmp_path: Path) -> None:
    home = _home(tmp_path, "off")
    with Runtime.from_env({"LMCP_HOME": str(home)}) as rt:
        assert _report(rt, friction_type="other") == {
            "sent": False,
            "reason": "anonymous_signals_off",
        }
    assert not (home / "contributions.json").exists()
