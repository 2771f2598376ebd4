"""The client-files section of the data catalogue: the client's own files under ``LMCP_HOME``
(settings, outbox, sent log, latest failure)."""

from __future__ import annotations

from lmcp.datacatalogue import CatalogueField, DataFormat


def client_formats() -> list[DataFormat]:
    from contract.limits import DAILY_SIGNAL_LIMIT

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
                    "daily_signal_limit", "integer", "integer", True,
                    f"0..{DAILY_SIGNAL_LIMIT}", str(DAILY_SIGNAL_LIMIT),
                    "Lowers the daily contribution bound; never raises it.",
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
            "at most 200.",
            (
                CatalogueField(
                    "status", "enum", "enum", False, "delivered, rejected, local", '"delivered"'
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
            "The daily contribution bound: today's UTC date and the keys used, never a value.",
            (
                CatalogueField("day", "date", "date", False, "a UTC day", '"2026-11-30"'),
                CatalogueField("keys", "list", "list of string", False,
                               f"0..{DAILY_SIGNAL_LIMIT} items of tool/error_class/friction_type",
                               '["read_note/not_found/cannot_complete"]'),
                CatalogueField("full", "boolean", "boolean", True, "true",
                               "true", "Set when the file was unreadable: the day is spent."),
            ),
        ),
    ]  # fmt: skip
