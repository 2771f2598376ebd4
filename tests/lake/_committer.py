"""A committing process of the concurrency test: ``python -m tests.lake._committer URI SEED
COMMITS ROWS`` (storage options as JSON in ``LAKE_OPTIONS``). Prepares its batches, prints
``ready``, waits for a line on stdin (the parent's start, sent to all once all are ready),
then appends COMMITS commits of ROWS fresh signals each."""

from __future__ import annotations

import json
import os
import sys

from collector.lake.store import LakeStore
from tests.lake.conftest import rows


def main() -> None:
    uri, seed, commits, count = sys.argv[1:5]
    store = LakeStore(uri, json.loads(os.environ.get("LAKE_OPTIONS", "{}")))
    batches = [rows(int(count), seed=int(seed) * 100_000 + i) for i in range(int(commits))]
    print("ready", flush=True)
    sys.stdin.readline()
    for batch in batches:
        store.append(batch)


if __name__ == "__main__":
    main()
