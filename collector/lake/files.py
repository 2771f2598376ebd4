"""The data files of one version of the lake, and reading them with Arrow (folder or S3).

delta-rs lists a version's files (its add actions, with their partition and statistics);
Arrow reads them. Reading through ``DeltaTable.to_pyarrow_dataset`` costs ~1.3 s per call on
a table of a few hundred files (it imports a module per file), so the jobs read the files
they need directly: one day's files, or one column of the compacted files, lazily.
"""

from __future__ import annotations

import datetime as dt
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import duckdb
import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.fs as pafs
from deltalake import DeltaTable

__all__ = ["LakeFile", "LakeReader", "lake_files"]

PARTITION = "received_day"


@dataclass(frozen=True, slots=True)
class LakeFile:
    #: Relative to the table's root, as in the log.
    path: str
    day: dt.date
    rows: int
    size: int
    #: Every row of the file is compacted (its statistics say so; unknown counts as not).
    compacted: bool


def lake_files(table: DeltaTable) -> list[LakeFile]:
    """The files of ``table``'s version."""
    acts = pa.table(table.get_add_actions(flatten=True))
    if acts.num_rows == 0:
        return []
    cols = [
        acts.column(name).to_pylist()
        for name in ("path", f"partition.{PARTITION}", "num_records", "size_bytes")
    ]
    done = acts.column("min.compacted").to_pylist()
    out = []
    for path, day, rows, size, compacted in zip(*cols, done, strict=True):
        when = day if isinstance(day, dt.date) else dt.date.fromisoformat(str(day))
        out.append(LakeFile(str(path), when, int(rows or 0), int(size or 0), compacted is True))
    return out


class LakeReader:
    """Reads lake files with Arrow's file systems (local, or S3 from delta-rs's options)."""

    def __init__(self, table_uri: str, storage_options: Mapping[str, str]) -> None:
        parsed = urllib.parse.urlsplit(table_uri)
        if parsed.scheme == "s3":
            endpoint = urllib.parse.urlsplit(storage_options.get("AWS_ENDPOINT_URL", ""))
            self.filesystem: pafs.FileSystem = pafs.S3FileSystem(
                access_key=storage_options.get("AWS_ACCESS_KEY_ID"),
                secret_key=storage_options.get("AWS_SECRET_ACCESS_KEY"),
                region=storage_options.get("AWS_REGION", "us-east-1"),
                endpoint_override=endpoint.netloc or None,
                scheme=endpoint.scheme or "https",
            )
            self.root = (parsed.netloc + parsed.path).rstrip("/")
        else:
            self.filesystem = pafs.LocalFileSystem()
            self.root = urllib.parse.unquote(parsed.path if parsed.scheme else table_uri)
            self.root = self.root.rstrip("/")

    def paths(self, files: Sequence[LakeFile]) -> list[str]:
        return [f"{self.root}/{urllib.parse.unquote(f.path)}" for f in files]

    def dataset(
        self, files: Sequence[LakeFile], schema: pa.Schema, *, partition: str = PARTITION
    ) -> pads.Dataset:
        """A lazy Arrow dataset of ``files`` (read as scanned: memory stays bounded)."""
        if not files:
            return pads.dataset(schema.empty_table())
        return pads.dataset(
            self.paths(files),
            schema=schema,
            format="parquet",
            filesystem=self.filesystem,
            partitioning=pads.partitioning(pa.schema([(partition, pa.date32())]), flavor="hive"),
            partition_base_dir=self.root,
        )

    @property
    def is_local(self) -> bool:
        return isinstance(self.filesystem, pafs.LocalFileSystem)

    def parquet_sql(self, files: Sequence[LakeFile], *, partition: str = PARTITION) -> str:
        """A DuckDB ``SELECT`` over local ``files`` (``partition`` from their paths)."""
        listed = ", ".join("'" + p.replace("'", "''") + "'" for p in self.paths(files))
        return (
            f"SELECT * FROM read_parquet([{listed}], hive_partitioning = true, "
            f"hive_types = {{'{partition}': DATE}}, union_by_name = true)"
        )

    def scan(
        self,
        con: duckdb.DuckDBPyConnection,
        name: str,
        files: Sequence[LakeFile],
        schema: pa.Schema,
        *,
        partition: str = PARTITION,
    ) -> None:
        """``name`` on ``con``: the rows of ``files``, scanned lazily by each query (nothing is
        copied in; only the columns a query uses are read). A folder's files are read by
        DuckDB's own reader, S3 objects through ``dataset`` (DuckDB has no offline ``httpfs``).
        Either way only ``con`` sees it (a temporary view, a registered dataset), not its
        cursors, and nothing of it is stored in ``con``'s database."""
        if files and self.is_local:
            # Data files never change once written: their footers can be cached.
            con.execute("SET parquet_metadata_cache = true")
            sql = self.parquet_sql(files, partition=partition)
            con.execute(f"CREATE OR REPLACE TEMP VIEW {name} AS {sql}")
        else:
            con.register(name, self.dataset(files, schema, partition=partition))

    def read(
        self,
        files: Sequence[LakeFile],
        schema: pa.Schema,
        columns: Sequence[str] | None = None,
        *,
        partition: str = PARTITION,
    ) -> pa.Table:
        """The rows of ``files`` (``schema``: the table's; ``partition`` from the paths)."""
        dataset = self.dataset(files, schema, partition=partition)
        return dataset.to_table(columns=list(columns) if columns is not None else None)
