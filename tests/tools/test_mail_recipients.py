"""One ``send_email`` ``to`` entry cannot carry several recipients while the reply says 1; every
entry is exactly one address, so the count is the header's truth."""

from __future__ import annotations

from email import message_from_bytes, policy
from email.utils import getaddresses
from pathlib import Path

import pytest

from client.paths import LmcpHome
from tests.tools.conftest import Call


@pytest.mark.parametrize(
    "entry",
    ["a@x.io, b@y.io", "a@x.io;b@y.io", "a@x.io b@y.io", "Jane <a@x.io>, b@y.io"],
)
def test_one_to_entry_with_several_recipients_is_refused(call: Call, entry: str) -> None:
    for confirm in (False, True):
        result = call("send_email", to=[entry], subject="x", body="y", confirm=confirm)
        assert result.error is not None
        assert result.error.code in {"one_address_per_entry", "invalid_address"}
        assert entry not in result.error.message
    cc = call("send_email", to=["ok@x.io"], cc=[entry], subject="x", body="y", confirm=True)
    assert cc.error is not None
    assert cc.error.code in {"one_address_per_entry", "invalid_address"}


def test_recipients_count_matches_the_delivered_header(call: Call, home: LmcpHome) -> None:
    to = ['"Doe, Jane" <jane@x.io>', "bob@y.io"]
    sent = call("send_email", to=to, cc=["c@z.io"], subject="Hi", body="Hello", confirm=True)
    assert sent.ok and sent.result["recipients"] == 3
    (path,) = Path(home.maildir / "Outbox" / "new").iterdir()
    msg = message_from_bytes(path.read_bytes(), policy=policy.default)
    header = [str(msg["To"]), str(msg["Cc"])]
    assert len(getaddresses(header)) == 3
