"""The client-files section of the data catalogue: the client's own files under ``LMCP_HOME``
(settings, outbox, sent log, latest failure)."""

from __future__ import annotations

from lmcp.datacatalogue import CatalogueField, DataFormat


def client_formats() -> list[DataFormat]:
    from contract.limits import PER_KEY_WEEKLY_LIMIT, WEEKLY_SIGNAL_LIMIT

    limit = WEEKLY_SIGNAL_LIMIT

    return [
        DataFormat(
            "client.settings",
            "settings.json",
            "LMCP_HOME/settings.json (client/consent.py)",
            "The user's choice. Missing or unreadable means OFF; the environment only restricts.",
            (
                CatalogueField(
                    "anonymous_signals", "enum", "enum", False,
                    "off, local, on (true/false from older releases)", '"on"',
                    "off: nothing; local: kept for preview/log, never uploaded; on: uploaded.",
                ),
                CatalogueField(
                    "weekly_signal_limit", "integer", "integer", True,
                    f"0..{limit}", str(limit),
                    "Lowers the weekly contribution bound; never raises it.",
                ),
                CatalogueField(
                    "daily_signal_limit", "integer", "integer", True,
                    f"0..{limit}", str(limit),
                    "Written by older releases: still read, as one more lower bound of the "
                    "weekly bound.",
                ),
            ),
        ),
        DataFormat(
            "client.outbox",
            "outbox.json",
            "LMCP_HOME/outbox.json (client/outbox.py)",
            "Signals not delivered yet, one FrictionSignal per line (JSON lines), appended and "
            "fsynced; at most 1,000, re-validated on load; a torn last line is ignored; off "
            "purges it.",
            (CatalogueField("signal", "object", "FrictionSignal", False, "", "{…}"),),
        ),
        DataFormat(
            "client.sent_log",
            "sent.jsonl",
            "LMCP_HOME/sent.jsonl (client/sentlog.py)",
            "What was sent (or, in local mode, kept) on this machine, one JSON line each, "
            "at most 200; the weekly contribution bound counts it with contributions.json.",
            (
                CatalogueField(
                    "status", "enum", "enum", False, "delivered, rejected, expired, local",
                    '"delivered"',
                    "expired: too late for its week's release, dropped and never counted.",
                ),
                CatalogueField("signal", "object", "FrictionSignal", False, "", "{…}"),
            ),
        ),
        DataFormat(
            "client.last_failure",
            "last_failure.json",
            "LMCP_HOME/last_failure.json (client/friction.py)",
            "The latest failure's shapes, for `lmcp signals preview`; never written when off.",
            (
                CatalogueField("tool", "enum", "enum tool_name", False, "24 values of `tool_name`",
                               '"read_note"'),
                CatalogueField("error_class", "enum", "enum error_class", False,
                               "15 values of `error_class`", '"not_found"'),
                CatalogueField("args", "list", "list of ArgShape", False, "0..32 items", "[{…}]"),
                CatalogueField("ring", "list", "list of RingEntry", False, "0..10 items", "[{…}]"),
                CatalogueField("app", "object", "AppState", False, "", "{…}"),
            ),
        ),
        DataFormat(
            "client.contributions",
            "contributions.json",
            "LMCP_HOME/contributions.json (client/contributions.py)",
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
