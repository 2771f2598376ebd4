"""Attack: turn signals off WHILE a report runs, and see what still leaves or stays.

``report_friction`` checks consent first, then claims the weekly bound (a file lock and an
fsync), builds the signal, tries one POST, and queues it or keeps it locally. The user's
``lmcp signals off`` can land between any two of those steps (or between two batches of a
drain): the old code checked consent once, at the start, so a signal went out after the user
said off, or was queued after ``off`` had purged the outbox and went out at the next ``on``.

Each test runs the user's ``off`` (the real CLI) at one of those points, deterministically, by
wrapping the step that follows it, and then checks the promise: after ``off`` returned,
nothing was sent (no row at a real loopback collector), nothing is kept (outbox, local log,
latest failure), and turning signals on again later sends nothing that was reported before.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr
from typer.testing import CliRunner

from client import delivery, friction
from client.contributions import ContributionBudget
from client.outbox import Outbox
from client.paths import LmcpHome
from client.runtime import Runtime
from client.sender import Sender
from client.sentlog import SentLog
from collector.settings import CollectorSettings, StewardToken
from lmcp.cli import app as lmcp
from tests._servers import running_collector
from tests.factories import make_signal

#: A port nothing listens on: the in-call POST is refused and the signal is queued.
DOWN = "http://127.0.0.1:9"
STEWARD = "attack-race-steward-token"


def _cli(home: Path, *args: str) -> str:
    result = CliRunner().invoke(lmcp, ["signals", *args], env={"LMCP_HOME": str(home)})
    assert result.exit_code == 0, result.output
    return " ".join(result.output.split())


@pytest.fixture(scope="module")
def collector(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One real collector on loopback for the module (each test counts what it adds)."""
    settings = CollectorSettings(
        db_path=tmp_path_factory.mktemp("race-collector") / "signals.duckdb",
        read_tokens=[SecretStr("attack-race-token")],
        steward_tokens=[StewardToken(label="audit", token=SecretStr(STEWARD))],
        rate_limit_enabled=False,
    )
    with running_collector(settings) as url:
        yield url


def _stored(url: str) -> int:
    """The signals the collector stored (the steward's exact count)."""
    answer = httpx.get(
        f"{url}/v1/signals/count", headers={"authorization": f"Bearer {STEWARD}"}, timeout=30
    )
    answer.raise_for_status()
    return int(answer.json()["count"])


@contextmanager
def _off_at(
    monkeypatch: pytest.MonkeyPatch,
    owner: Any,
    name: str,
    home: Path,
    *,
    after: bool = False,
    nth: int = 1,
) -> Iterator[list[str]]:
    """The user runs ``lmcp signals off`` once, right before (or right after) the ``nth`` call
    of ``owner.name``; yields what the CLI said."""
    said: list[str] = []
    calls = 0
    original: Callable[..., Any] = getattr(owner, name)

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls == nth and not after:
            said.append(_cli(home, "off"))
        result = original(*args, **kwargs)
        if calls == nth and after:
            said.append(_cli(home, "off"))
        return result

    monkeypatch.setattr(owner, name, wrapped)
    yield said
    monkeypatch.setattr(owner, name, original)


def _nothing_kept(home: Path) -> None:
    lmcp_home = LmcpHome(home)
    assert Outbox(lmcp_home).pending() == []
    assert [e.status for e in SentLog(lmcp_home).entries() if e.status == "local"] == []
    assert not lmcp_home.last_failure.exists()


def _later_on_sends_nothing(home: Path, url: str, before: int) -> None:
    """The user turns signals on again: what was reported before ``off`` never goes out."""
    _cli(home, "on")
    with Runtime.from_env({"LMCP_HOME": str(home), "LMCP_COLLECTOR_URL": url}) as rt:
        assert rt.reporter.flush() == {"delivered": 0, "rejected": 0, "pending": 0}
    assert _stored(url) == before


#: Where ``off`` lands: the step it lands right before (or after), for a collector that answers
#: (``up``) or refuses (the signal is queued), in mode ``on``; and in mode ``local``.
STEPS: list[tuple[str, Any, str, bool]] = [
    ("up", ContributionBudget, "claim", False),
    ("up", friction, "build_signal", False),
    ("up", Sender, "attempt", False),
    ("down", ContributionBudget, "claim", False),
    ("down", Sender, "attempt", False),
    ("down", Outbox, "add", False),
    ("down", Outbox, "add", True),
    ("local", ContributionBudget, "claim", False),
    ("local", SentLog, "append", True),
]


@pytest.mark.parametrize(
    ("collector_state", "owner", "name", "after"),
    STEPS,
    ids=[f"{s}-{'after' if a else 'before'}-{n}" for s, _, n, a in STEPS],
)
def test_off_during_a_report_sends_and_keeps_nothing(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    collector: str,
    collector_state: str,
    owner: Any,
    name: str,
    after: bool,
) -> None:
    url = collector
    home = tmp_path / "home"
    _cli(home, "local" if collector_state == "local" else "on")
    before = _stored(url)
    target = DOWN if collector_state == "down" else url
    with Runtime.from_env({"LMCP_HOME": str(home), "LMCP_COLLECTOR_URL": target}) as rt:
        rt.host.dispatch("read_note", {"note_name": "a private note title"})
        with _off_at(monkeypatch, owner, name, home, after=after) as said:
            reply = rt.host.dispatch("report_friction", {"friction_type": "cannot_complete"})
        assert said and said[0].startswith("anonymous signals are now off")
        # The delivery thread and the close's last try see the choice too.
        rt.reporter.flush()
    assert reply.to_dict()["result"] == {"sent": False, "reason": "anonymous_signals_off"}
    assert _stored(url) == before
    _nothing_kept(home)
    _later_on_sends_nothing(home, url, before)


def test_off_between_two_batches_of_a_drain_stops_the_drain(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, collector: str
) -> None:
    """A backlog of three batches; the user says off when the second is about to be sent
    (read from the outbox already): nothing after the first is sent, and the rest is purged."""
    url = collector
    home = tmp_path / "home"
    _cli(home, "on")
    Outbox(LmcpHome(home)).add([make_signal() for _ in range(2 * delivery.BATCH + 10)])
    before = _stored(url)
    with Runtime.from_env({"LMCP_HOME": str(home), "LMCP_COLLECTOR_URL": url}) as rt:
        with _off_at(monkeypatch, Sender, "send", home, nth=2) as said:
            done = rt.reporter.flush()
        assert said
    assert done["delivered"] == delivery.BATCH
    assert _stored(url) == before + delivery.BATCH
    _nothing_kept(home)
    _later_on_sends_nothing(home, url, before + delivery.BATCH)


def test_off_while_the_latest_failure_is_written_forgets_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    _cli(home, "on")
    with Runtime.from_env({"LMCP_HOME": str(home), "LMCP_COLLECTOR_URL": DOWN}) as rt:
        with _off_at(monkeypatch, friction, "atomic_write_bytes", home) as said:
            rt.host.dispatch("read_note", {"note_name": "a private note title"})
        assert said
    assert not LmcpHome(home).last_failure.exists()
