"""What one append asks the object store for does not grow with the log's length.

A table of 100 versions and one of 10,000 (checkpoints every 100, as the shipper writes
them) on SeaweedFS, behind a counting proxy; appends made as the shipper makes them. Each
append's LIST requests start after a version at most two checkpoint intervals back (delta-rs
lists from the checkpoint its table object was loaded at: a table object kept for ever
lists ever more, which the first check catches), and the pages and GETs per append are the
same at both lengths.
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest

from collector.lake.store import LakeStore
from lakedev.counting import CountingProxy
from lakedev.logs import append_requests, long_log, upload
from lakedev.s3 import s3_client
from lakedev.seaweed import LoopbackSeaweed
from tests.lake.conftest import rows

pytestmark = pytest.mark.slow

#: Past two checkpoint intervals, so that a table object never reloaded would show.
APPENDS = 60
INTERVAL = 25


@pytest.fixture(scope="module")
def proxy(seaweed: LoopbackSeaweed) -> Iterator[CountingProxy]:
    with CountingProxy(seaweed.endpoint) as counting:
        yield counting


def _store(seaweed: LoopbackSeaweed, proxy: CountingProxy, prefix: str) -> LakeStore:
    return LakeStore(
        f"s3://{seaweed.bucket}/{prefix}",
        {
            "AWS_ENDPOINT_URL": proxy.endpoint,
            "AWS_ACCESS_KEY_ID": seaweed.key_id,
            "AWS_SECRET_ACCESS_KEY": seaweed.secret,
            "AWS_REGION": seaweed.region,
            "AWS_ALLOW_HTTP": "true",
        },
    )


def _listed_from(query: str) -> int | None:
    after = urllib.parse.parse_qs(query).get("start-after", [""])[0]
    found = re.search(r"(\d{20})", after)
    return int(found.group(1)) if found else None


def _appends(
    seaweed: LoopbackSeaweed, proxy: CountingProxy, tmp: Path, versions: int
) -> tuple[list[dict[str, int]], list[tuple[int, int]]]:
    """Per append: requests by kind; and per LIST of the log: (listed after, version then)."""
    prefix = f"log{versions}"
    long_log(tmp / prefix, versions, rows(3), checkpoint_interval=INTERVAL)
    upload(tmp / prefix, s3_client(seaweed.endpoint, seaweed.key_id, seaweed.secret, "x"),
           seaweed.bucket, prefix)  # fmt: skip
    store = _store(seaweed, proxy, prefix)
    start = proxy.mark()
    counts = append_requests(store, proxy, [rows(2, seed=i) for i in range(APPENDS)], "app")
    listed = []
    version = versions - 1
    for sent in proxy.sent[start:]:
        if sent.kind == "put" and "_delta_log/" in sent.path and sent.path.endswith(".json"):
            version = int(sent.path.rsplit("/", 1)[1].split(".")[0])
        after = _listed_from(sent.query) if sent.kind == "list" else None
        if after is not None and "_delta_log" in sent.query:
            listed.append((after, version))
    return [dict(c) for c in counts], listed


def test_pages_and_gets_per_append_do_not_grow_with_the_log(
    seaweed: LoopbackSeaweed, proxy: CountingProxy, tmp_path: Path
) -> None:
    short, short_listed = _appends(seaweed, proxy, tmp_path, 100)
    long, long_listed = _appends(seaweed, proxy, tmp_path, 10_000)
    for after, version in short_listed + long_listed:
        assert version - after <= 2 * INTERVAL + 1, (after, version)
    # Steady appends (not the first after a load, which replays the tail since the newest
    # checkpoint; not a checkpointing one): the same requests whatever the length.
    steady = [i for i in range(1, APPENDS) if (i + 1) % INTERVAL > 2]
    assert max(long[i]["list"] for i in steady) == max(short[i]["list"] for i in steady) <= 3
    assert max(long[i]["get"] for i in steady) == max(short[i]["get"] for i in steady)
    # Every append, the first and the checkpointing ones included, within a bound set by
    # the checkpoint interval, not by the log's length.
    assert max(c["list"] for c in long) <= max(c["list"] for c in short) + 1
    assert max(c.get("get", 0) for c in long) <= 12 * INTERVAL
