"""The client-files section of the data catalogue: the client's own files under ``LMCP_HOME``
(settings, outbox, sent log, latest failure, contributions). Every name, bound, count and
vocabulary is read from the client's code; only the prose and the examples are written here."""

from __future__ import annotations

import typing
from pathlib import Path

from lmcp.datacatalogue._model import CatalogueField, DataFormat
from lmcp.datacatalogue._text import snake, values_text


def _where(path: Path, module: str) -> str:
    return f"{path.as_posix()} ({module})"


def client_formats() -> list[DataFormat]:
    from client.consent import SETTINGS_KEY, SignalsMode
    from client.contributions import LEGACY_LIMIT_SETTING, LIMIT_SETTING
    from client.outbox import MAX_SIGNALS
    from client.paths import LmcpHome
    from client.sentlog import MAX_ENTRIES, Status
    from contract.limits import PER_KEY_WEEKLY_LIMIT, WEEKLY_SIGNAL_LIMIT
    from contract.schema import MAX_ARGS, RING_SIZE, ErrorClass, ToolName

    limit = WEEKLY_SIGNAL_LIMIT
    home = LmcpHome(Path("LMCP_HOME"))
    modes = ", ".join(m.value for m in SignalsMode)
    statuses = ", ".join(typing.get_args(Status))

    def vocabulary(enum: type[ToolName] | type[ErrorClass]) -> tuple[str, str]:
        vocab = snake(enum.__name__)
        return f"enum {vocab}", values_text(vocab, [m.value for m in enum])

    tool_type, tool_values = vocabulary(ToolName)
    error_type, error_values = vocabulary(ErrorClass)
    return [
        DataFormat(
            "client.settings",
            home.settings.name,
            _where(home.settings, "client/consent.py"),
            "The user's choice. Missing or unreadable means OFF; the environment only restricts.",
            (
                CatalogueField(
                    SETTINGS_KEY, "enum", "enum", False,
                    f"{modes} (true/false from older releases)", '"on"',
                    "off: nothing; local: kept for preview/log, never uploaded; on: uploaded.",
                ),
                CatalogueField(
                    LIMIT_SETTING, "integer", "integer", True,
                    f"0..{limit}", str(limit),
                    "Lowers the weekly contribution bound; never raises it.",
                ),
                CatalogueField(
                    LEGACY_LIMIT_SETTING, "integer", "integer", True,
                    f"0..{limit}", str(limit),
                    "Written by older releases: still read, as one more lower bound of the "
                    "weekly bound.",
                ),
            ),
        ),
        DataFormat(
            "client.outbox",
            home.outbox.name,
            _where(home.outbox, "client/outbox.py"),
            "Signals not delivered yet, one FrictionSignal per line (JSON lines), appended and "
            f"fsynced; at most {MAX_SIGNALS:,}, re-validated on load; a torn last line is "
            "ignored; off purges it.",
            (CatalogueField("signal", "object", "FrictionSignal", False, "", "{…}"),),
        ),
        DataFormat(
            "client.sent_log",
            home.sent_log.name,
            _where(home.sent_log, "client/sentlog.py"),
            "What was sent (or, in local mode, kept) on this machine, one JSON line each, "
            f"at most {MAX_ENTRIES:,}; the weekly contribution bound counts it with "
            f"{home.contributions.name}.",
            (
                CatalogueField(
                    "status", "enum", "enum", False, statuses, '"delivered"',
                    "expired: too late for its week's release, dropped and never counted.",
                ),
                CatalogueField("signal", "object", "FrictionSignal", False, "", "{…}"),
            ),
        ),
        DataFormat(
            "client.last_failure",
            home.last_failure.name,
            _where(home.last_failure, "client/friction.py"),
            "The latest failure's shapes, for `lmcp signals preview`; never written when off.",
            (
                CatalogueField("tool", "enum", tool_type, False, tool_values, '"read_note"'),
                CatalogueField("error_class", "enum", error_type, False, error_values,
                               '"not_found"'),
                CatalogueField("args", "list", "list of ArgShape", False, f"0..{MAX_ARGS} items",
                               "[{…}]"),
                CatalogueField("ring", "list", "list of RingEntry", False,
                               f"0..{RING_SIZE} items", "[{…}]"),
                CatalogueField("app", "object", "AppState", False, "", "{…}"),
            ),
        ),
        DataFormat(
            "client.contributions",
            home.contributions.name,
            _where(home.contributions, "client/contributions.py"),
            f"The weekly contribution bound: at most {limit} signals per UTC week (Monday to "
            f"Sunday), {PER_KEY_WEEKLY_LIMIT} per key, claimed for the week of the signal's "
            "day. Holds the latest day claimed and the keys of that week and the one before, "
            "never a value; the outbox and the sent log are counted with it.",
            (
                CatalogueField("latest", "date", "date", False, "a UTC day", '"2026-11-30"',
                               "The latest day ever claimed: an earlier day is refused."),
                CatalogueField("weeks", "object", "object", False,
                               "week (its Monday) -> "
                               f"0..{limit} items of tool/error_class/friction_type",
                               '{"2026-11-30": ["read_note/not_found/cannot_complete"]}'),
                CatalogueField("full", "list", "list of date", True, "weeks (their Monday)",
                               '["2026-11-30"]',
                               "Set when the file was unreadable: that week is spent."),
            ),
        ),
    ]  # fmt: skip
