"""A small Delta table beside the signals in one lake: ``<lake>/<folder>``, partitioned by a
date column (the releases, the stewards' audit trail).

A folder whose name starts with ``_`` is hidden from the signals table (its readers and VACUUM
skip it), so one lake URI holds them all. Such a table is tiny: it is read whole.
"""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
from deltalake import DeltaTable
from deltalake.exceptions import TableNotFoundError

from collector.lake.files import LakeFile, LakeReader
from collector.lake.store import LakeStore

__all__ = ["SideTable"]


class SideTable:
    """The table ``<store.uri>/<folder>`` with ``schema``, partitioned by ``partition``."""

    def __init__(
        self, store: LakeStore, folder: str, schema: pa.Schema, partition: str, name: str
    ) -> None:
        self.uri = f"{store.uri.rstrip('/')}/{folder}"
        self.storage_options = dict(store.storage_options)
        self.schema = schema
        self.partition = partition
        self.name = name

    def create(self) -> None:
        """Create the table if absent (several processes at once: creating version 0 is a
        conditional write, the losers find the table)."""
        try:
            DeltaTable.create(
                self.uri,
                self.schema,
                mode="ignore",
                partition_by=[self.partition],
                name=self.name,
                storage_options=self.storage_options,
            )
        except Exception:
            if not self.exists():
                raise

    def exists(self) -> bool:
        return DeltaTable.is_deltatable(self.uri, self.storage_options)

    def table(self) -> DeltaTable:
        return DeltaTable(self.uri, storage_options=self.storage_options)

    def version(self) -> int | None:
        """The newest version, or None while there is no table."""
        try:
            return self.table().version()
        except TableNotFoundError:
            return None

    def files(self, table: DeltaTable) -> list[LakeFile]:
        """The data files of ``table``'s version, each with its partition's day."""
        acts = pa.table(table.get_add_actions(flatten=True))
        if acts.num_rows == 0:
            return []
        names = ("path", f"partition.{self.partition}", "size_bytes")
        cols = [acts.column(c).to_pylist() for c in names]
        out = []
        for path, day, size in zip(*cols, strict=True):
            when = day if isinstance(day, dt.date) else dt.date.fromisoformat(str(day))
            out.append(LakeFile(str(path), when, 0, int(size or 0), True))
        return out

    def read(self, table: DeltaTable | None = None) -> pa.Table:
        """Every row of ``table``'s version (default: the newest; none: no table yet)."""
        try:
            dtable = table or self.table()
        except TableNotFoundError:
            return self.schema.empty_table()
        reader = LakeReader(dtable.table_uri, self.storage_options)
        return reader.read(self.files(dtable), self.schema, partition=self.partition)
