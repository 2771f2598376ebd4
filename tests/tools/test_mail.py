from __future__ import annotations

from email.message import EmailMessage
from pathlib import Path

import pytest

from client.paths import LmcpHome
from client.tools import Maildirs
from contract.schema import ErrorClass, Outcome
from tests.tools.conftest import Call


def _deliver(home: LmcpHome, sender: str, subject: str, body: str, date: str) -> str:
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"], msg["Date"] = sender, "me@example.org", subject, date
    msg.set_content(body)
    return Maildirs(home.maildir).deliver("INBOX", msg.as_bytes())


@pytest.fixture
def inbox(home: LmcpHome) -> list[str]:
    return [
        _deliver(home, "ann@example.org", "Lunch", "Noon?", "Mon, 02 Nov 2026 10:00:00 +0000"),
        _deliver(home, "bob@example.org", "Report", "Attached", "Tue, 03 Nov 2026 10:00:00 +0000"),
    ]


def test_list_newest_first_and_query(call: Call, inbox: list[str]) -> None:
    listed = call("list_emails")
    assert [e["subject"] for e in listed.result["emails"]] == ["Report", "Lunch"]
    assert all(e["unread"] for e in listed.result["emails"])
    assert [e["subject"] for e in call("list_emails", query="ANN").result["emails"]] == ["Lunch"]


def test_read_by_message_id(call: Call, inbox: list[str]) -> None:
    first = call("list_emails").result["emails"][0]["message_id"]
    read = call("read_email", message_id=first)
    assert read.result["subject"] == "Report" and read.result["body"].strip() == "Attached"


def test_missing_message_and_mailbox_are_not_found(call: Call, inbox: list[str]) -> None:
    for result in (
        call("read_email", message_id="INBOX/nope"),
        call("read_email", message_id="../../etc"),
        call("list_emails", mailbox="Archive"),
    ):
        assert result.error is not None and result.error.error_class is ErrorClass.not_found


def test_send_without_confirm_is_a_preview(call: Call, home: LmcpHome) -> None:
    preview = call("send_email", to=["ann@example.org"], subject="Hi", body="Hello")
    assert preview.outcome is Outcome.preview
    assert not (home.maildir / "Outbox").exists()


def test_send_with_confirm_delivers_into_the_outbox(call: Call, home: LmcpHome) -> None:
    sent = call("send_email", to=["ann@example.org"], subject="Hi", body="Hello", confirm=True)
    assert sent.ok and sent.result["sent"] is True
    outbox = call("list_emails", mailbox="Outbox").result["emails"]
    assert [e["subject"] for e in outbox] == ["Hi"]
    files = list(Path(home.maildir / "Outbox" / "new").iterdir())
    assert len(files) == 1 and b"Hello" in files[0].read_bytes()


def test_a_bad_address_or_header_is_refused_without_echo(call: Call) -> None:
    bad = call("send_email", to=["not an address"], subject="x", body="y", confirm=True)
    assert bad.error is not None and bad.error.code == "invalid_address"
    assert "not an address" not in bad.error.message
    header = call("send_email", to=["a@b.c"], subject="x\nBcc: evil@x.y", body="y", confirm=True)
    assert header.error is not None and header.error.code == "invalid_subject"
