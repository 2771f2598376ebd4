"""A committing process of the concurrency test: ``python -m tests.lake._committer URI SEED
COMMITS ROWS START_AT`` (storage options as JSON in ``LAKE_OPTIONS``). Waits for START_AT (a
wall-clock time shared by all), then appends COMMITS commits of ROWS fresh signals each."""

from __future__ import annotations

import json
import os
import sys
import time

from collector.lake.store import LakeStore
from tests.lake.conftest import rows


def main() -> None:
    uri, seed, commits, count, start_at = sys.argv[1:6]
    store = LakeStore(uri, json.loads(os.environ.get("LAKE_OPTIONS", "{}")))
    batches = [rows(int(count), seed=int(seed) * 100_000 + i) for i in range(int(commits))]
    time.sleep(max(0.0, float(start_at) - time.time()))
    for batch in batches:
        store.append(batch)


if __name__ == "__main__":
    main()
