"""LMCP's built-in tools, working on real local stores under ``LMCP_HOME``.

``builtin_handlers(home, app_probe)`` returns the handlers of ``get_datetime``, the notes tools
(a local store addressed by ``note_name``), the files tools (under ``home.files_root``; no path
escapes it) and the mail tools (a local Maildir; ``send_email`` delivers into an outbox). Each
tool of an app first asks the ``AppProbe``: an app marked not installed, not permitted or not
running fails the call with ``app_not_installed``, ``permission_denied`` or ``app_not_running``.
Tools that send, delete or replace return a preview (``Outcome.preview``) without
``confirm: true`` and change nothing.
"""

from __future__ import annotations

from client.apps import AppProbe
from client.host import Handler
from client.paths import LmcpHome
from client.tools._clock import make_get_datetime
from client.tools._common import check_app, guarded
from client.tools._files import FilesRoot, files_handlers
from client.tools._mail import OUTBOX, Maildirs, mail_handlers
from client.tools._notes import NotesStore, notes_handlers

__all__ = [
    "FilesRoot",
    "Maildirs",
    "NotesStore",
    "OUTBOX",
    "builtin_handlers",
    "check_app",
    "files_handlers",
    "guarded",
    "mail_handlers",
    "make_get_datetime",
    "notes_handlers",
]


def builtin_handlers(home: LmcpHome, app_probe: AppProbe) -> dict[str, Handler]:
    """Every built-in tool's handler, keyed by catalogue name."""
    handlers: dict[str, Handler] = {"get_datetime": make_get_datetime()}
    for app, group in (
        ("notes", notes_handlers(NotesStore(home.notes))),
        ("files", files_handlers(FilesRoot(home.files_root))),
        ("mail", mail_handlers(Maildirs(home.maildir))),
    ):
        handlers.update({name: guarded(app_probe, app, fn) for name, fn in group.items()})
    return handlers
