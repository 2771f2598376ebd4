"""The lake's OpenTelemetry instruments: aggregate counters and histograms, no span per request.

Recorded by the shipper and the jobs, never on a request's path; never a signal's value.
``lost_races`` counts the versions another writer took before a commit landed (each one a
conditional create refused with 412 and retried on the next version). delta-rs does not
expose its LIST requests: ``log_tail`` (versions since the newest checkpoint, what a fresh
load reads beyond it) is the figure that bounds them; the tests count the pages themselves.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from opentelemetry import metrics

__all__ = ["LakeMetrics"]


@dataclass
class LakeMetrics:
    meter: metrics.Meter
    clock: Callable[[], float] = time.monotonic
    #: Values the observable gauges report (set by the shipper).
    lag_since: float | None = None
    open_day_files: int = 0
    log_tail: int = 0
    _made: bool = field(default=False, repr=False)

    def __post_init__(self) -> None:
        m = self.meter
        self.commits = m.create_counter(
            "lmcp.lake.commits", unit="{commit}", description="Appends committed to the lake."
        )
        self.commit_seconds = m.create_histogram(
            "lmcp.lake.commit.duration", unit="s", description="Time of one append's commit."
        )
        self.lost_races = m.create_counter(
            "lmcp.lake.commit.lost_races",
            unit="{version}",
            description="Versions another writer committed first (412, retried).",
        )
        self.rows = m.create_counter(
            "lmcp.lake.shipped.rows", unit="{row}", description="Rows shipped to the lake."
        )
        self.failures = m.create_counter(
            "lmcp.lake.ship.failures", unit="{attempt}", description="Ship attempts that failed."
        )
        self.checkpoint_seconds = m.create_histogram(
            "lmcp.lake.checkpoint.duration",
            unit="s",
            description="Time to write a checkpoint and clean the expired log entries.",
        )
        m.create_observable_gauge(
            "lmcp.lake.shipper.lag",
            callbacks=[self._lag],
            unit="s",
            description="Age of the oldest row acknowledged and not shipped yet (0: none).",
        )
        m.create_observable_gauge(
            "lmcp.lake.open_day.files",
            callbacks=[lambda _o: [metrics.Observation(self.open_day_files)]],
            unit="{file}",
            description="Data files of the open (today's) day, as of the last commit seen.",
        )
        m.create_observable_gauge(
            "lmcp.lake.log.tail",
            callbacks=[lambda _o: [metrics.Observation(self.log_tail)]],
            unit="{version}",
            description="Versions after the newest checkpoint, as of the last commit seen.",
        )

    def _lag(self, _options: metrics.CallbackOptions) -> Iterable[metrics.Observation]:
        since = self.lag_since
        return [metrics.Observation(0.0 if since is None else self.clock() - since)]
