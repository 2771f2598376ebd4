"""A lake whose log is long, made quickly, and what one append asks the store for.

``long_log`` makes a folder table of ``versions`` versions: a real table (created by
``LakeStore``, its checkpoint interval set, one real append), then empty commits (commit
info only, as Delta allows) up to the length wanted, with a checkpoint every
``checkpoint_interval`` versions as the shipper's ``maintain`` writes them. ``upload``
copies it into a bucket. ``append_requests`` appends through ``LakeStore`` as the shipper
does (an append, then ``maintain``) and counts, for each append, the requests the store
received (``CountingProxy``).
"""

from __future__ import annotations

import concurrent.futures as cf
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
from deltalake import DeltaTable

from collector.lake.store import LakeStore
from lakedev.counting import CountingProxy

__all__ = ["append_requests", "long_log", "upload"]


def long_log(
    folder: Path, versions: int, first_rows: pa.Table, *, checkpoint_interval: int = 100
) -> None:
    """A table at ``folder`` whose newest version is ``versions - 1``."""
    store = LakeStore(str(folder))
    store.create()
    DeltaTable(str(folder)).alter.set_table_properties(
        {"delta.checkpointInterval": str(checkpoint_interval)}
    )
    store.append(first_rows)
    log = folder / "_delta_log"
    empty = json.dumps({"commitInfo": {"timestamp": 0, "operation": "WRITE"}}) + "\n"
    for version in range(3, versions):
        (log / f"{version:020d}.json").write_text(empty)
        if version % checkpoint_interval == 0:
            DeltaTable(str(folder), version=version).create_checkpoint()


def upload(folder: Path, client: Any, bucket: str, prefix: str) -> None:
    """Every file under ``folder`` to ``bucket``/``prefix``/... (8 PUTs at a time)."""
    files = [p for p in folder.rglob("*") if p.is_file()]

    def put(path: Path) -> None:
        key = f"{prefix}/{path.relative_to(folder).as_posix()}"
        client.put_object(Bucket=bucket, Key=key, Body=path.read_bytes())

    with cf.ThreadPoolExecutor(8) as pool:
        list(pool.map(put, files))


def append_requests(
    store: LakeStore, proxy: CountingProxy, batches: list[pa.Table], app_id: str
) -> list[Counter[str]]:
    """Append each batch as the shipper does (with its transaction; the check only for the
    first), then ``maintain``; the requests of each, by kind (``Sent.kind``)."""
    out: list[Counter[str]] = []
    for number, rows in enumerate(batches, start=1):
        mark = proxy.mark()
        version = store.append(rows, txn=(app_id, number), check_txn=number == 1)
        if version is not None:
            store.maintain(store.live(), version)
        out.append(proxy.requests_since(mark))
    return out
