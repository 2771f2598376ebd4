"""Peak memory and wall time of compacting ONE received day of a folder lake: the compaction
of a git revision (default: the one before it streamed) against the current one.

    ./.venv/bin/python scripts/measure_compaction_memory.py                  # 2,000,000 rows
    ./.venv/bin/python scripts/measure_compaction_memory.py --rows 200000 --memory-limit 64MB

The day is written in several appends, each partly copies of earlier rows (retried batches)
and of the previous day (compacted: retries across midnight). Each compaction runs in a child
process of its own, on its own copy of the lake: its peak RSS (``VmHWM``, reset as the job
starts) is its own. Both must leave the same rows, or the script fails.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.util
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a file: the packages are beside this folder
    sys.path.insert(0, str(ROOT))

from collector.lake.bounded import DEFAULT_MEMORY_LIMIT  # noqa: E402
from collector.lake.jobs import compact_day  # noqa: E402
from collector.lake.store import LakeStore, lake_rows  # noqa: E402
from collector.rows import rows_from_models  # noqa: E402
from contract.schema import FrictionSignal  # noqa: E402
from scripts._lake_cluster import random_signals  # noqa: E402

__all__ = ["many_rows", "write_day"]

DAY = dt.date(2026, 11, 30)
#: The revision whose compaction read the day into memory (the branch point of streaming).
BEFORE = "306d4f9"
_POOL = 2_000


def many_rows(count: int, *, seed: int, received_day: dt.date) -> pa.Table:
    """``count`` lake rows of ``received_day`` with fresh random ids, their other columns
    taken in turn from a pool of real signals (validated once, so millions are cheap)."""
    rng = random.Random(seed)
    items = random_signals(rng, min(count, _POOL), received_day.isoformat())
    pool = lake_rows(
        rows_from_models([FrictionSignal.model_validate_json(json.dumps(i)) for i in items]),
        received_day,
    )
    table = pool.take(pa.array([i % pool.num_rows for i in range(count)], pa.int64()))
    ids = pa.FixedSizeBinaryArray.from_buffers(
        pa.binary(16), count, [None, pa.py_buffer(rng.randbytes(16 * count))]
    )
    return table.set_column(0, table.schema.field(0), ids)


def write_day(store: LakeStore, rows: int, appends: int, *, seed: int = 1) -> None:
    """The day before ``DAY`` (a tenth of ``rows``, compacted), then ``rows`` rows received on
    ``DAY`` in ``appends`` appends, a fifth of each one copies of rows stored before it."""
    before = many_rows(max(rows // 10, 1), seed=seed, received_day=DAY - dt.timedelta(days=1))
    store.append(before)
    compact_day(store, DAY - dt.timedelta(days=1))
    store = LakeStore(store.uri)  # a table loaded after the compaction (see docs/lake-design.md)
    rng = random.Random(seed)
    seen = before
    per = rows // appends
    for n in range(appends):
        copies = per // 5
        fresh = many_rows(per - copies, seed=seed * 1000 + n, received_day=DAY)
        picked = seen.take(pa.array(rng.sample(range(seen.num_rows), copies), pa.int64()))
        picked = picked.set_column(
            picked.schema.get_field_index("received_day"),
            "received_day",
            pa.array([DAY] * copies, pa.date32()),
        )
        batch = pa.concat_tables([fresh, picked.cast(fresh.schema)])
        store.append(batch)
        seen = pa.concat_tables([seen, fresh])


def _load_before(ref: str, folder: Path) -> Any:
    """``collector/lake/jobs.py`` at ``ref``, imported as a module of its own."""
    text = subprocess.run(
        ["git", "show", f"{ref}:collector/lake/jobs.py"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    path = folder / "lake_jobs_before.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location("lake_jobs_before", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _status_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def _reset_peak() -> int:
    """Reset this process's peak RSS to its current RSS, and return it (kB). ``ru_maxrss``
    would not do: Linux carries it over ``fork`` and ``exec`` from the parent."""
    Path("/proc/self/clear_refs").write_text("5")
    return _status_kb("VmRSS")


def _child(args: argparse.Namespace) -> None:
    store = LakeStore(args.lake)
    with tempfile.TemporaryDirectory() as folder:
        if args.child == "before":
            module = _load_before(args.ref, Path(folder))

            def run() -> Any:
                return module.compact_day(store, DAY)
        else:

            def run() -> Any:
                return compact_day(store, DAY, memory_limit=args.memory_limit)

        store.table()  # the imports and one table load count in the baseline, not the job
        baseline = _reset_peak()
        start = time.perf_counter()
        result = run()
        took = time.perf_counter() - start
        peak = _status_kb("VmHWM")
    print(json.dumps({"baseline_kb": baseline, "peak_kb": peak, "seconds": took,
                      "rows_before": result.rows_before, "rows_after": result.rows_after,
                      "files_after": result.files_after}))  # fmt: skip


def _day_files(store: LakeStore) -> list[pa.Table]:
    return [
        pq.read_table(u.removeprefix("file://"))
        for u in store.table().file_uris()
        if f"received_day={DAY.isoformat()}" in u
    ]


def _ordered(store: LakeStore) -> bool:
    """Every file of the day holds its rows in ``signal_id`` order."""
    for table in _day_files(store):
        ids = table.column("signal_id").to_pylist()
        if ids != sorted(ids):
            return False
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--appends", type=int, default=5)
    parser.add_argument("--memory-limit", default=DEFAULT_MEMORY_LIMIT)
    parser.add_argument("--ref", default=BEFORE, help="the revision measured as 'before'")
    parser.add_argument("--child", choices=("before", "now"), help=argparse.SUPPRESS)
    parser.add_argument("--lake", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args)
        return
    with tempfile.TemporaryDirectory(prefix="lmcp-measure-") as folder:
        root = Path(folder)
        start = time.perf_counter()
        write_day(LakeStore(str(root / "lake")), args.rows, args.appends)
        print(f"wrote {args.rows:,} rows of {DAY} in {args.appends} appends "
              f"({time.perf_counter() - start:.0f} s)", flush=True)  # fmt: skip
        results = {}
        for variant in ("before", "now"):
            lake = root / f"lake-{variant}"
            shutil.copytree(root / "lake", lake)
            out = subprocess.run(
                [sys.executable, __file__, "--child", variant, "--lake", str(lake),
                 "--ref", args.ref, "--memory-limit", args.memory_limit],
                cwd=ROOT, check=True, stdout=subprocess.PIPE, text=True,
            ).stdout  # fmt: skip
            results[variant] = json.loads(out.strip().splitlines()[-1])
        stores = [LakeStore(str(root / f"lake-{v}")) for v in ("before", "now")]
        same = (
            pa.concat_tables(_day_files(stores[0]))
            .sort_by("signal_id")
            .equals(pa.concat_tables(_day_files(stores[1])).sort_by("signal_id"))
        )
        ordered = [_ordered(s) for s in stores]
    print(
        f"| compaction of {args.rows:,} rows | peak RSS MB | above baseline MB | s | rows after |"
    )
    print("|---|---|---|---|---|")
    for variant, label in (("before", f"before ({args.ref})"),
                           ("now", f"streaming, memory_limit {args.memory_limit}")):  # fmt: skip
        r = results[variant]
        print(f"| {label} | {r['peak_kb'] / 1024:.0f} | "
              f"{(r['peak_kb'] - r['baseline_kb']) / 1024:.0f} | {r['seconds']:.1f} | "
              f"{r['rows_after']:,} |")  # fmt: skip
    print(f"identical rows: {same}; files in signal_id order: before {ordered[0]}, "
          f"streaming {ordered[1]}")  # fmt: skip
    if not same or results["before"]["rows_after"] != results["now"]["rows_after"]:
        raise SystemExit("the two compactions left different rows")
    if not ordered[1]:
        raise SystemExit("the streaming compaction left a file out of signal_id order")


if __name__ == "__main__":
    main()
