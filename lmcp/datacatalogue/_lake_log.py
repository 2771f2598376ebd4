"""The Delta log section of the data catalogue: every key the log of each lake table records,
read from the real ``_delta_log/*.json`` commits of a lake written by the lake's own code.

Each commit is a JSON file of actions, one a line (``commitInfo``, ``protocol``, ``metaData``,
``add``, ``remove``); a field here is one leaf of one action, named by its path (an ``add``'s
``stats``, a JSON text, is read as the object it holds). The statistics fields are also
derived from each table's schema and configuration, so a column whose statistics the example
happened not to write (a column that is NULL in every example row) is listed too.

Values that differ at every run (times, random file names and ids, durations, the temporary
folder) are shown as fixed examples: the page is the same at every generation.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lmcp.datacatalogue._model import CatalogueField, DataFormat
from lmcp.datacatalogue._text import sample, short

__all__ = ["LOG_KEY", "log_fields", "log_format", "stats_columns"]

LOG_KEY = "lake.delta_log"
#: The actions in the order the protocol lists them (fields are sorted by action, then name).
_ACTIONS = ("commitInfo", "protocol", "metaData", "add", "remove", "txn")
#: Leaves that are a time in milliseconds since 1970 (UTC).
_MILLIS = frozenset(
    {"timestamp", "modificationTime", "deletionTimestamp", "createdTime", "lastUpdated"}
)
#: 2026-11-30 00:00:12.345 UTC: every time shown, as a real one would differ at each run.
FIXED_MILLIS = 1795996812345
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_FIXED_UUID = "5f0e8c2a-3b1d-4e6f-9a7c-2d4b6e8f0a1c"
#: The released cells' noisy counts differ at every draw: a fixed example each.
_NOISY_EXAMPLES = {"add.stats.minValues.n": "-131", "add.stats.maxValues.n": "1800"}
_MILLIS_TEXT = re.compile(r"\b1[0-9]{12}\b")
_STATS = ("minValues", "maxValues", "nullCount")

_VALUES = {
    "commitInfo.operation": "CREATE TABLE, WRITE, DELETE, VACUUM START, VACUUM END (and "
    "OPTIMIZE, CHECKPOINT, ... if someone runs them)",
    "commitInfo.lmcp.job": "compact, fold, release, retain (a shipped batch has none)",
    "commitInfo.lmcp.day": "YYYY-MM-DD: the day a compaction or a release rewrote",
    "commitInfo.operationParameters.predicate": "the job's condition on the partition day "
    "(dates only)",
    "commitInfo.operationParameters.metadata": "the metaData action, as JSON text",
    "commitInfo.operationParameters.location": "the table's URI as given to the job",
    "commitInfo.engineInfo": "the writer's name and version",
    "commitInfo.clientVersion": "the writer's name and version",
    "metaData.schemaString": "the table's columns and types, as JSON text (no value)",
    "metaData.id": "a random UUID4 made at the table's creation",
    "metaData.name": "signals, releases, steward_audit",
    "add.path": "<partition>=YYYY-MM-DD/part-<n>-<random UUID4>-c000.snappy.parquet",
    "remove.path": "<partition>=YYYY-MM-DD/part-<n>-<random UUID4>-c000.snappy.parquet",
    "add.size": "the file's size in bytes",
    "remove.size": "the file's size in bytes",
    "add.stats.numRecords": "the file's number of rows",
    "txn.appId": "lmcp-spool-<random UUID4>: one collector file's identity, made once",
    "txn.version": "the number of the spool's batch this commit shipped (1, 2, ...)",
}
_NOTES = {
    "commitInfo.timestamp": "the commit's time to the millisecond: for a shipped batch, the "
    "shipper's (once a minute per collector), not a request's; kept as long as the log "
    "(delta.logRetentionDuration: 2 days)",
    "commitInfo.operationMetrics.num_added_rows": "a shipped batch's number of signals (a "
    "minute of one collector's traffic), beside its commit's millisecond",
    "txn.appId": "tells which collector file shipped a batch (not who sent it); kept in every "
    "checkpoint, one per spool",
    "add.modificationTime": "the file's write time to the millisecond",
    "remove.deletionTimestamp": "when a job removed the file, to the millisecond",
    "metaData.createdTime": "the table's creation time to the millisecond",
    "commitInfo.operationParameters.location": "a local lake's folder path (it may name its "
    "owner's home folder); never a credential",
    "metaData.configuration.delta.dataSkippingStatsColumns": "the signals table keeps "
    "statistics of `compacted` only (collector/lake/store.py TABLE_CONFIGURATION)",
}


@dataclass
class _Leaf:
    tables: set[str] = field(default_factory=set)
    values: list[Any] = field(default_factory=list)
    nullable: bool = False


def _walk(prefix: str, value: Any, out: dict[str, list[Any]]) -> None:
    if prefix.endswith(".stats") and isinstance(value, str):
        value = json.loads(value)  # the statistics are a JSON text inside the action
    if isinstance(value, dict) and value:
        for key, item in value.items():
            _walk(f"{prefix}.{key}", item, out)
    else:
        out.setdefault(prefix, []).append(value)


def log_fields(log_dir: Path) -> dict[str, list[Any]]:
    """Every leaf of every action of every ``*.json`` commit in ``log_dir``, with its values."""
    out: dict[str, list[Any]] = {}
    for commit in sorted(log_dir.glob("*.json")):
        for line in commit.read_text(encoding="utf-8").splitlines():
            if line.strip():
                _walk("", json.loads(line), out)
    return {name.lstrip("."): values for name, values in out.items()}


def stats_columns(log_dir: Path) -> tuple[list[tuple[str, str]], str]:
    """The columns a table's log keeps statistics of (name, Delta type), from its metaData:
    ``delta.dataSkippingStatsColumns`` when set, else every column but the partition's; and
    the partition column."""
    meta: dict[str, Any] = {}
    for commit in sorted(log_dir.glob("*.json")):
        for line in commit.read_text(encoding="utf-8").splitlines():
            if line.strip() and "metaData" in (doc := json.loads(line)):
                meta = doc["metaData"]
    columns = [(f["name"], str(f["type"])) for f in json.loads(meta["schemaString"])["fields"]]
    partition = str(meta["partitionColumns"][0])
    listed = (meta.get("configuration") or {}).get("delta.dataSkippingStatsColumns")
    if listed:
        wanted = set(str(listed).split(","))
        return [c for c in columns if c[0] in wanted], partition
    return [c for c in columns if c[0] != partition], partition


_JSON_TYPES = {"literal": "JSON null", "timestamp": "JSON integer (milliseconds)",
               "date": "JSON string (a date)"}  # fmt: skip
_DELTA_KINDS = {"boolean": "boolean", "long": "integer", "integer": "integer", "short": "integer",
                "string": "string", "date": "date", "binary": "blob"}  # fmt: skip


def _leaves(tables: Mapping[str, Path]) -> dict[str, _Leaf]:
    leaves: dict[str, _Leaf] = {}
    for table, log_dir in tables.items():
        for name, values in log_fields(log_dir).items():
            leaf = leaves.setdefault(name, _Leaf())
            leaf.tables.add(table)
            leaf.values += values
            leaf.nullable = leaf.nullable or any(v is None for v in values)
        columns, _ = stats_columns(log_dir)
        names = ["add.stats.numRecords"] + [
            f"add.stats.{part}.{column}" for part in _STATS for column, _ in columns
        ]
        for name in names:  # written whenever a file holds a non-NULL value of the column
            leaves.setdefault(name, _Leaf()).tables.add(table)
    return leaves


def _kind(name: str, values: Sequence[Any], schema_kinds: Mapping[str, str]) -> str:
    present = [v for v in values if v is not None]
    leaf = name.rsplit(".", 1)[-1]
    if not present:
        return schema_kinds.get(name, "literal")
    first = present[0]
    if isinstance(first, bool):
        return "boolean"
    if isinstance(first, int):
        return "timestamp" if leaf in _MILLIS else "integer"
    if isinstance(first, float):
        return "float"
    if isinstance(first, dict):
        return "object"
    if isinstance(first, list):
        return "list"
    return schema_kinds.get(name, "string")


def _steady(value: Any, folder: str) -> Any:
    """``value`` with what differs at each run replaced by fixed text."""
    if isinstance(value, str):
        value = value.replace(folder, "/srv/lmcp")
        return _MILLIS_TEXT.sub(str(FIXED_MILLIS), _UUID.sub(_FIXED_UUID, value))
    if isinstance(value, list | dict):
        return json.loads(_steady(json.dumps(value), folder))
    return value


def _values(name: str, kind: str, present: Sequence[Any]) -> str:
    if name in _VALUES:
        return _VALUES[name]
    if kind == "timestamp":
        return "milliseconds since 1970-01-01 UTC"
    if kind == "boolean":
        return "true, false"
    if kind == "integer":
        return "a count, a size or a version (≥ 0)" if not name.startswith("add.stats.") else (
            "the column's smallest, largest or NULL count in the file")  # fmt: skip
    if kind == "literal":
        return "null (as the lake's writers leave it)"
    if kind == "date":
        return "YYYY-MM-DD: the file's partition (a UTC day)"
    if name.startswith("add.stats."):
        return "the column's smallest or largest value in the file"
    distinct = sorted({str(v) for v in present})
    if kind == "string" and len(distinct) <= 6:
        return ", ".join(distinct)
    return "text written by delta-rs" if kind == "string" else ""


def log_format(tables: Mapping[str, Path], folder: str) -> DataFormat:
    """One format: every leaf of the logs of ``tables`` (label -> ``_delta_log`` folder)."""
    schema_kinds: dict[str, str] = {}
    for log_dir in tables.values():
        columns, partition = stats_columns(log_dir)
        for column, kind in columns:
            for part in _STATS:
                schema_kinds[f"add.stats.{part}.{column}"] = (
                    "integer" if part == "nullCount" else _DELTA_KINDS.get(kind, "other")
                )
        for action in ("add", "remove"):
            schema_kinds[f"{action}.partitionValues.{partition}"] = "date"
    leaves = _leaves(tables)
    rank = {action: i for i, action in enumerate(_ACTIONS)}
    ordered = sorted(leaves.items(), key=lambda kv: (rank.get(kv[0].split(".")[0], 9), kv[0]))
    fields = []
    for name, leaf in ordered:
        present = [v for v in leaf.values if v is not None]
        kind = _kind(name, leaf.values, schema_kinds)
        if kind == "timestamp":
            example = str(FIXED_MILLIS)
        elif name in _NOISY_EXAMPLES:
            example = _NOISY_EXAMPLES[name]
        elif name.endswith("_time_ms"):
            example = "3"
        elif present:
            example = sample(_steady(present[0], folder))
        else:
            example = "null" if kind == "literal" else "(no example row holds one)"
        where = ", ".join(t for t in tables if t in leaf.tables)
        note = "; ".join(x for x in (_NOTES.get(name, ""), f"in: {where}") if x)
        fields.append(
            CatalogueField(
                name, kind, _JSON_TYPES.get(kind, "JSON " + kind),
                leaf.nullable or not present, _values(name, kind, present), short(example), note,
            )
        )  # fmt: skip
    return DataFormat(
        LOG_KEY,
        "Lake: the Delta log of each table",
        "<lake>/_delta_log/*.json, <lake>/_releases/_delta_log/*.json, "
        "<lake>/_steward_audit/_delta_log/*.json (written by delta-rs)",
        "One JSON file per commit, one action a line; every 100 commits delta-rs also writes "
        "`<version>.checkpoint.parquet` (the same actions, one row each) and `_last_checkpoint`. "
        "Kept for `delta.logRetentionDuration` (30 days by default), also after the data files "
        "were deleted. It holds times to the millisecond and row counts per commit, file names, "
        "each table's schema, and per file the column statistics: of `compacted` only in the "
        "signals table (no signal value), of every column in `_releases` (released cells) and "
        "`_steward_audit` (labels, routes, filters).",
        tuple(fields),
    )
