"""The watchdog's census: which total a run is stopped for, and what its memory counts."""

from __future__ import annotations

import dataclasses
import sys

from hypothesis import given
from hypothesis import strategies as st

from client.skills._census import Census, count
from client.skills._sandbox import SandboxLimits
from tests._servers import child_process

#: The census's totals, in the order ``over`` checks them, by the name it reports.
ORDER = (
    ("processes", "processes"),
    ("memory_bytes", "memory"),
    ("descriptors", "descriptors"),
    ("mappings", "mappings"),
    ("locks", "locks"),
    ("inodes", "inodes"),
)
LIMITS = SandboxLimits()
BOUND = {"processes": LIMITS.processes + 1, "memory_bytes": LIMITS.memory_bytes}


def _bound(field: str) -> int:
    return BOUND[field] if field in BOUND else int(getattr(LIMITS, field))


@given(st.fixed_dictionaries({field: st.sampled_from([0, 1, 2]) for field, _ in ORDER}))
def test_a_run_is_stopped_for_the_first_total_past_its_limit(offsets: dict[str, int]) -> None:
    # 0: under its limit, 1: at it, 2: past it
    census = Census(**{field: _bound(field) - 1 + offset for field, offset in offsets.items()})
    past = [name for field, name in ORDER if offsets[field] == 2]
    assert census.over(LIMITS) == (past[0] if past else None)


def test_an_empty_census_is_within_every_limit() -> None:
    assert Census().over(LIMITS) is None
    assert [f.name for f in dataclasses.fields(Census)] == [field for field, _ in ORDER]


def test_page_tables_count_as_the_memory_they_are() -> None:
    # One touched page every 2 MiB of a 256 MiB mapping: a page-table page for each, kernel
    # memory that no Rss shows.
    script = (
        "import mmap, time\nm = mmap.mmap(-1, 256 << 20, flags=mmap.MAP_PRIVATE)\n"
        "for at in range(0, len(m), 2 << 20):\n    m[at] = 1\n"
        "print('ready', flush=True); time.sleep(600)\n"
    )
    with child_process([sys.executable, "-c", script], stdout=-1) as child:
        assert child.popen.stdout is not None and child.popen.stdout.readline() == b"ready\n"
        pid = child.popen.pid
        with open(f"/proc/{pid}/status", "rb") as file:
            status = dict(line.split(b":", 1) for line in file.read().splitlines())
        resident = sum(int(status[k].split()[0]) * 1024 for k in (b"RssAnon", b"RssShmem"))
        tables = int(status[b"VmPTE"].split()[0]) * 1024
        assert tables >= 128 * 4096
        counted = count([pid], pid, [], {}).memory_bytes
        assert counted >= resident + tables - 256 * 1024  # its interpreter may free a little
