"""Mail over a local Maildir: ``list_emails``, ``read_email``, ``send_email`` (into an outbox).

Layout: ``LMCP_HOME/mail/<mailbox>/{new,cur,tmp}``; ``INBOX`` is the default mailbox and sent
mail is delivered into ``Outbox``. A ``message_id`` is ``<mailbox>/<maildir key>``. Keys of
delivered mail are random: nothing of the machine (no host name) goes into them.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from email.utils import format_datetime, getaddresses, make_msgid, parsedate_to_datetime
from pathlib import Path
from typing import Any

from client._files import fsync_dir, write_temp
from client.errors import ToolFailure
from client.host import Handler, Reply
from client.tools._common import not_found, opt_int, opt_str
from contract.schema import ErrorClass, Outcome

__all__ = ["OUTBOX", "SENDER", "Maildirs", "mail_handlers"]


INBOX = "INBOX"
OUTBOX = "Outbox"
#: The From address of mail sent through the local outbox (the account layer fills the real one).
SENDER = "LMCP <me@localhost>"
_MAILBOX = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 _.\-]{0,63}$")
_KEY = re.compile(r"^[A-Za-z0-9._\-]{1,200}$")
_ADDRESS = re.compile(r"^[^@\s<>\"]+@[^@\s<>\"]+$")
_PARSER = BytesParser(policy=policy.default)


@dataclass(frozen=True, slots=True)
class _Entry:
    key: str
    path: Path
    seen: bool


class Maildirs:
    """The mailboxes under ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def mailbox(self, name: str, *, create: bool = False) -> Path:
        if not _MAILBOX.match(name) or ".." in name:
            raise ToolFailure(
                ErrorClass.invalid_arguments,
                "argument 'mailbox' is not a valid mailbox name",
                code="invalid_mailbox",
            )
        folder = self.root / name
        if create:
            for sub in ("tmp", "new", "cur"):
                (folder / sub).mkdir(parents=True, exist_ok=True)
        elif not (folder / "cur").is_dir() and not (folder / "new").is_dir():
            raise not_found("mailbox")
        return folder

    def entries(self, folder: Path) -> Iterator[_Entry]:
        for sub in ("new", "cur"):
            try:
                names = sorted(os.listdir(folder / sub))
            except OSError:
                continue
            for name in names:
                if name.startswith("."):
                    continue
                key, _, info = name.partition(":")
                seen = sub == "cur" and "S" in info.partition(",")[2]
                yield _Entry(key, folder / sub / name, seen)

    def find(self, message_id: str) -> tuple[str, _Entry]:
        box, _, key = message_id.partition("/")
        if not key or not _KEY.match(key):
            raise not_found("message")
        folder = self.mailbox(box) if _MAILBOX.match(box) else None
        if folder is None:
            raise not_found("message")
        for entry in self.entries(folder):
            if entry.key == key:
                return box, entry
        raise not_found("message")

    def deliver(self, mailbox: str, data: bytes) -> str:
        """Deliver ``data`` Maildir-style (write in tmp/, rename into new/); returns the key."""
        folder = self.mailbox(mailbox, create=True)
        key = f"{int(time.time())}.{secrets.token_hex(8)}.lmcp"
        tmp = write_temp(folder / "tmp", data, key)
        try:
            os.rename(tmp, folder / "new" / key)
        except BaseException:
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise
        fsync_dir(folder / "new")
        return key


def _date(value: object, fallback: float) -> datetime:
    if isinstance(value, str) and value:
        try:
            parsed = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            parsed = None
        if parsed is not None:
            return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    return datetime.fromtimestamp(fallback, UTC)


def _header(msg: Any, name: str) -> str:
    value = msg.get(name)
    return str(value) if value is not None else ""


def _addresses(args: Mapping[str, Any], key: str) -> list[str]:
    """The entries of ``key``: each must hold exactly ONE valid address.

    ``"a@x, b@y"`` in one entry is refused, so the preview and the reply's ``recipients``
    count what the message header will really carry.
    """
    raw = args.get(key) or []
    out: list[str] = []
    for item in raw:
        text = str(item)
        parsed = getaddresses([text])
        if not any(_ADDRESS.match(address) for _, address in parsed):
            raise ToolFailure(
                ErrorClass.invalid_arguments,
                f"argument '{key}' holds an address that is not valid",
                code="invalid_address",
            )
        if "\r" in text or "\n" in text or len(parsed) != 1:
            raise ToolFailure(
                ErrorClass.invalid_arguments,
                f"each entry of argument '{key}' must hold exactly one address",
                code="one_address_per_entry",
            )
        out.append(text)
    return out


def _compose(to: list[str], cc: list[str], subject: str, body: str) -> bytes:
    msg = EmailMessage(policy=policy.SMTP)
    msg["From"] = SENDER
    msg["To"] = ", ".join(to)
    if cc:
        msg["Cc"] = ", ".join(cc)
    msg["Subject"] = subject
    msg["Date"] = format_datetime(datetime.now(UTC))
    msg["Message-ID"] = make_msgid(domain="lmcp.local")
    msg.set_content(body)
    return msg.as_bytes()


def mail_handlers(mail: Maildirs) -> dict[str, Handler]:
    """The three mail tools over ``mail`` (without the app check)."""

    def list_emails(args: Mapping[str, Any]) -> Any:
        box = opt_str(args, "mailbox", INBOX) or INBOX
        folder = mail.mailbox(box)
        query = (opt_str(args, "query") or "").casefold()
        unread_only = args.get("unread_only") is True
        limit = opt_int(args, "limit", 20)
        rows: list[tuple[datetime, dict[str, Any]]] = []
        for entry in mail.entries(folder):
            if unread_only and entry.seen:
                continue
            try:
                with entry.path.open("rb") as handle:
                    msg = _PARSER.parse(handle, headersonly=True)
                mtime = entry.path.stat().st_mtime
            except OSError:
                continue
            sender, subject = _header(msg, "From"), _header(msg, "Subject")
            if query and query not in sender.casefold() and query not in subject.casefold():
                continue
            when = _date(msg.get("Date"), mtime)
            rows.append(
                (
                    when,
                    {
                        "message_id": f"{box}/{entry.key}",
                        "from": sender,
                        "subject": subject,
                        "date": when.isoformat(timespec="seconds"),
                        "unread": not entry.seen,
                    },
                )
            )
        rows.sort(key=lambda r: r[0], reverse=True)
        shown = [row for _, row in rows[:limit]]
        result = {"emails": shown, "count": len(shown), "truncated": len(rows) > limit}
        return Reply(result, Outcome.empty) if not shown else result

    def read_email(args: Mapping[str, Any]) -> Any:
        box, entry = mail.find(str(args["message_id"]))
        try:
            with entry.path.open("rb") as handle:
                msg = _PARSER.parse(handle)
        except OSError:
            raise not_found("message") from None
        body_part = msg.get_body(preferencelist=("plain", "html"))
        body = body_part.get_content() if body_part is not None else ""
        attachments = sum(1 for _ in msg.iter_attachments())
        return {
            "message_id": f"{box}/{entry.key}",
            "from": _header(msg, "From"),
            "to": _header(msg, "To"),
            "cc": _header(msg, "Cc"),
            "subject": _header(msg, "Subject"),
            "date": _date(msg.get("Date"), entry.path.stat().st_mtime).isoformat(
                timespec="seconds"
            ),
            "body": body if isinstance(body, str) else "",
            "attachments": attachments,
            "unread": not entry.seen,
        }

    def send_email(args: Mapping[str, Any]) -> Any:
        to, cc = _addresses(args, "to"), _addresses(args, "cc")
        subject, body = str(args["subject"]), str(args["body"])
        if "\n" in subject or "\r" in subject:
            raise ToolFailure(
                ErrorClass.invalid_arguments,
                "argument 'subject' holds a line break",
                code="invalid_subject",
            )
        if args.get("confirm") is not True:
            preview = {
                "preview": True,
                "action": "send_email",
                "to": to,
                "cc": cc,
                "subject": subject,
                "body_size": len(body.encode("utf-8")),
                "confirm_required": "call again with confirm: true to send this e-mail",
            }
            return Reply(preview, Outcome.preview)
        try:
            data = _compose(to, cc, subject, body)
        except (ValueError, TypeError, IndexError):
            raise ToolFailure(
                ErrorClass.invalid_arguments,
                "the e-mail's headers could not be encoded",
                code="invalid_headers",
            ) from None
        key = mail.deliver(OUTBOX, data)
        return {"sent": True, "message_id": f"{OUTBOX}/{key}", "recipients": len(to) + len(cc)}

    return {"list_emails": list_emails, "read_email": read_email, "send_email": send_email}
