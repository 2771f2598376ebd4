"""The capacity plan for 100 M signals a day, computed from this run's measured unit costs.

Every line names where its number comes from: a table of this run (``bench_lake``), or
"extrapolation" with the assumption it rests on. Figures are per CPU-second, so they hold on
a busy machine; what they cannot show is contention between machines (one store, many
collectors), which is why the log and request figures are counted, not timed.
"""

from __future__ import annotations

import math

from benchmarks._timing import table
from collector.lake.shipper import DEFAULT_INTERVAL_S

__all__ = ["capacity_plan"]

PER_DAY = 100_000_000
PEAK = 5  # the peak hour's rate over the day's average
CORES = 2  # per collector host
BATCH = 1  # signals per request at the front door: a client reports one at a time
UTILISATION = 0.5  # of those cores at peak, to leave room for a lost collector's share
ROW_BYTES = 80  # compressed, per compacted row (docs/lake-design.md measurements)
LOG_RETENTION_DAYS = 2  # collector/lake/store.py TABLE_CONFIGURATION
CHECKPOINT_INTERVAL = 100


def _collectors(peak: float, cpu_signal: float, idle: float) -> int:
    per_collector = (CORES * UTILISATION - idle) / cpu_signal
    return max(3, math.ceil(peak / per_collector) + 1)


def capacity_plan(f: dict[str, float]) -> None:
    peak = PER_DAY / 86_400 * PEAK
    cpu_signal = f["cpu_per_request_saturated"] / BATCH + f["cpu_per_signal"]
    collectors = _collectors(peak, cpu_signal, f["idle_cpu_per_s"])
    paced = _collectors(peak, f["cpu_per_request"] / BATCH + f["cpu_per_signal"], 0.0)
    commits_collector = 86_400 / DEFAULT_INTERVAL_S
    commits = collectors * commits_collector + 24 + 2  # hourly folds, nightly compact, release
    log_objects = commits * LOG_RETENTION_DAYS * (1 + 2 / CHECKPOINT_INTERVAL)
    rows_per_file = PER_DAY / (collectors * commits_collector)
    open_files = collectors * 3_600 / DEFAULT_INTERVAL_S + 24
    compacted_files = math.ceil(PER_DAY * ROW_BYTES / (256 * 2**20))
    append_requests = f["pages_10000"] + f["gets_10000"] + 2  # LIST + GET + 2 PUT
    folded = collectors * commits_collector
    requests = commits * append_requests + folded * f["fold_requests_per_file"]
    fold_cpu = folded * f["fold_cpu_per_file"] + PER_DAY * f["fold_cpu_per_row"]
    nightly_cpu = PER_DAY * f["fold_cpu_per_row"] + 24 * f["fold_cpu_per_file"]
    ship_cpu = PER_DAY * f["ship_cpu_per_row"]
    release_cpu = f["release_cpu_per_day"]
    rows = [
        ["peak rate", f"{peak:,.0f} signals/s", f"{PEAK}x the day's average (assumption)"],
        ["collector CPU per signal", f"{cpu_signal * 1e6:.0f} us",
         f"saturated table: per request / {BATCH} (a client sends one at a time, assumption) "
         "+ split table: per signal (ingest, spool, shipper; the collectors' own CPU)"],
        ["collectors", f"{collectors} ({CORES}-core hosts)",
         f"peak / (({CORES} cores x {UTILISATION:.0%} - idle) / CPU per signal) + 1 spare, "
         "at least 3"],
        ["collectors, if no flush were shared", f"{paced}",
         "the same with the split table's per-request cost (40 requests/s, one flush each): "
         "the upper bound"],
        ["commits a day", f"{commits:,.0f}",
         f"collectors x {commits_collector:,.0f} (one a minute: commits table) + 26 jobs'"],
        ["log objects kept", f"{log_objects:,.0f}",
         f"commits x {LOG_RETENTION_DAYS} days retention + checkpoints every 100"],
        ["LIST pages per append", f"{f['pages_10000']:.0f}",
         "requests table at 10,000 versions (same as at 100)"],
        ["rows per shipped file", f"{rows_per_file:,.0f}", "100 M / files shipped a day"],
        ["open day's files (max)", f"{open_files:,.0f}", "an hour of shipped files + 24 folds"],
        ["compacted files a day", f"{compacted_files}", f"{ROW_BYTES} B a row, 256 MiB files"],
        ["S3 requests a day", f"{requests:,.0f}",
         "commits x requests per append + shipped files x fold requests per file"],
        ["shipper CPU a day", f"{ship_cpu:,.0f} CPU-s", "ship table, per row x 100 M"],
        ["hourly folds' CPU a day", f"{fold_cpu:,.0f} CPU-s",
         "fold table: per file x files + per row x 100 M"],
        ["nightly compaction CPU", f"{nightly_cpu:,.0f} CPU-s",
         "extrapolation: the fold's per-row cost for the whole day, 24 input files"],
        ["release CPU a day", f"{release_cpu:,.1f} CPU-s",
         "release of the triage lake, per day (its days are ~1 % of 100 M: extrapolation "
         "for the scans, which grow with the day)"],
        ["collector memory", f"{f['collector_rss_mb']:,.0f} MB",
         "peak RSS of a collector, commits table at 10x"],
        ["compaction memory", "bounded by --memory-limit (646 MB at 2 GB, measured)",
         "scripts/measure_compaction_memory.py, not make bench"],
    ]  # fmt: skip
    table(
        "capacity plan: 100 M signals a day, from this run's figures", ["", "value", "from"], rows
    )
