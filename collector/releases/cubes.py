"""The released cubes: what each counts, over which known domain, and what one installation
can change in one release period.

Every key of every cube but one is a public enum or catalogue name, so each cube's domain is
known before any signal arrives: the mechanism adds noise to EVERY cell of the domain, empty
or not, and no cell is selected by its data. The exception is ``ring3`` (the 3-call patterns,
millions of cells): it keeps a threshold. Cubes are shaped like the views that read them (a
view that sums many cells of a big cube sums their noise too).

A signal counts in the period holding its own ``day`` (``contract.days``). One installation
sends at most ``cap`` (C) signals a week and one per (tool, error class, friction type), so in
one period it adds at most ``l0`` cells, at most ``linf`` to one, ``l1`` in all, and at most
``l2`` in Euclidean norm -- the tight sqrt of the largest sum of squares with those bounds.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from contract.catalogue._versions import OTHER_VERSION, released_versions
from contract.days import PeriodKind
from contract.schema import (
    ArgType,
    AttemptsBucket,
    ErrorClass,
    FrictionType,
    IntentCategory,
    Outcome,
    Platform,
    SizeBucket,
    ToolName,
)

__all__ = [
    "APP_STATES",
    "CUBES",
    "NO_SIZE",
    "SHAPE_ARGS",
    "UNSPECIFIED",
    "Bounds",
    "Cube",
    "Dim",
    "cube_rows_sql",
    "cube_sql",
]

#: At most this many argument shapes of one signal count in the shapes cube (in stored order):
#: it bounds what one signal adds there (the schema allows 32).
SHAPE_ARGS = 4
UNSPECIFIED = "unspecified"
NO_SIZE = "-"
APP_STATES = ("genuine", "not_installed", "not_running", "not_permitted")
_SIZED = (ArgType.string, ArgType.array, ArgType.object)


@dataclass(frozen=True, slots=True)
class Dim:
    """One dimension: its name, the SQL expression giving it, and its known values."""

    name: str
    sql: str
    values: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Bounds:
    """What one installation can change in one period: cells (l0), one cell (linf), all cells
    (l1), and the Euclidean norm (l2) the Gaussian is calibrated on."""

    l0: int
    linf: int
    l1: int

    @property
    def l2(self) -> float:
        # The largest sum of squares of l1 units with at most linf in a cell and l0 cells.
        full, rest = divmod(self.l1, self.linf)
        return math.sqrt(min(full, self.l0) * self.linf**2 + (rest**2 if full < self.l0 else 0))


def _cells(*dims: Dim) -> tuple[tuple[str, ...], ...]:
    return tuple(itertools.product(*(d.values for d in dims)))


@dataclass(frozen=True, slots=True)
class Cube:
    name: str
    dims: tuple[Dim, ...]
    kind: PeriodKind
    #: Cells one signal adds to (at most).
    per_signal_cells: int
    #: The most one installation adds to one cell in a period, as a function of the cap.
    linf: Callable[[int], int]
    #: FROM clause: ``signals``, or a subquery over them (with ``day`` among its columns).
    source: str = "signals"
    #: The known domain; None: too large to enumerate, released with a threshold.
    domain: Callable[[], tuple[tuple[str, ...], ...]] | None = None

    @property
    def dim_names(self) -> tuple[str, ...]:
        return tuple(d.name for d in self.dims)

    @property
    def thresholded(self) -> bool:
        return self.domain is None

    def bounds(self, cap: int) -> Bounds:
        return Bounds(l0=self.per_signal_cells * cap, linf=self.linf(cap),
                      l1=self.per_signal_cells * cap)  # fmt: skip

    def sensitivity(self, cap: int) -> float:
        """The L2 the noise is calibrated on (a whole number for the thresholded cube: OpenDP
        takes integer distances on its maps of counts)."""
        l2 = self.bounds(cap).l2
        return float(math.ceil(l2 - 1e-12)) if self.thresholded else l2

    def cells(self) -> tuple[tuple[str, ...], ...]:
        """Every key of the domain, in a fixed order (the noise vector's order)."""
        if self.domain is None:
            raise ValueError(f"the {self.name} cube has no enumerable domain")
        return _domain(self.name)


def _v(expr: str) -> str:
    return f"CAST({expr} AS VARCHAR)"


def _names(
    enum: type[ToolName | ErrorClass | FrictionType | Platform | Outcome],
) -> tuple[str, ...]:
    return tuple(m.value for m in enum)


_TOOL = Dim("tool", _v("tool_attempted"), _names(ToolName))
_CLASS = Dim("error_class", _v("error_class"), _names(ErrorClass))
_TYPE = Dim("friction_type", _v("friction_type"), _names(FrictionType))
_PLATFORM = Dim("platform", _v("client_platform"), _names(Platform))
_VERSIONS = (*released_versions(), OTHER_VERSION)
_VERSION_TEXT = (
    "format('{}.{}.{}', client_version_major, client_version_minor, client_version_patch)"
)
_VERSION = Dim(
    "version",
    f"CASE WHEN {_VERSION_TEXT} IN ({', '.join(repr(v) for v in released_versions())}) "
    f"THEN {_VERSION_TEXT} ELSE '{OTHER_VERSION}' END",
    _VERSIONS,
)
_APP_STATE = Dim(
    "app_state",
    "CASE WHEN app_installed = false THEN 'not_installed' WHEN app_running = false "
    "THEN 'not_running' WHEN app_permitted = false THEN 'not_permitted' ELSE 'genuine' END",
    APP_STATES,
)
_INTENT = Dim(
    "intent",
    f"coalesce({_v('intent_category')}, '{UNSPECIFIED}')",
    (*(m.value for m in IntentCategory), UNSPECIFIED),
)
_ATTEMPTS = Dim(
    "attempts",
    f"coalesce({_v('attempts')}, '{UNSPECIFIED}')",
    (*(m.value for m in AttemptsBucket), UNSPECIFIED),
)
_OUTCOMES = _names(Outcome)
_SHAPE_OF = (
    *((t.value, s.value) for t in _SIZED for s in SizeBucket),
    *((t.value, NO_SIZE) for t in ArgType if t not in _SIZED),
)


def _shape_cells() -> tuple[tuple[str, ...], ...]:
    """Each tool's argument names a signal may carry (its declared names and ``other``: what
    ``collector.ingest.check_args`` accepts), each with every (type, size) a value of that type
    can have."""
    from contract.catalogue import load_catalogue  # builds the models: only a shapes release

    carried = load_catalogue().signal_arg_names()
    out = []
    for tool in ToolName:
        names = sorted(carried[tool.value])
        out += [(tool.value, arg, ty, size) for arg in names for ty, size in _SHAPE_OF]
    return tuple(out)


def _everything(*dims: Dim) -> Callable[[], tuple[tuple[str, ...], ...]]:
    return lambda: _cells(*dims)


def _ring_dims(n: int) -> tuple[Dim, ...]:
    names = ("prev2", "prev1")[2 - n :]
    out: list[Dim] = []
    for p in names:
        out += [Dim(f"{p}_tool", _v(f"{p}_tool"), _names(ToolName)),
                Dim(f"{p}_outcome", _v(f"{p}_outcome"), _OUTCOMES)]  # fmt: skip
    return (*out, _TOOL, _CLASS)


def _types(cap: int) -> int:
    # One installation's cell keyed by (tool, error class, ...) but not by friction type
    # takes at most one signal per friction type a week.
    return min(cap, len(FrictionType))


_RING2, _RING3 = _ring_dims(1), _ring_dims(2)
_SHAPE_DIMS = (
    _TOOL,
    Dim("arg", _v("a.name"), ()),
    Dim("arg_type", _v('a."type"'), ()),
    Dim("size", f"coalesce({_v('a.size')}, '{NO_SIZE}')", ()),
)

CUBES: Mapping[str, Cube] = {
    c.name: c
    for c in (
        # One cell per signal, keyed by the whole contribution key: 1 per cell a week.
        Cube("friction", (_TOOL, _CLASS, _TYPE), PeriodKind.week, 1, lambda cap: 1,
             domain=_everything(_TOOL, _CLASS, _TYPE)),
        # 15 cells a day: released daily, the week's seven days one vector of the same bound.
        Cube("daily", (_TYPE, _PLATFORM), PeriodKind.day, 1, lambda cap: cap,
             domain=_everything(_TYPE, _PLATFORM)),
        Cube("platforms", (_PLATFORM, _TOOL), PeriodKind.week, 1, lambda cap: cap,
             domain=_everything(_PLATFORM, _TOOL)),
        Cube("versions", (_VERSION, _TOOL, _CLASS), PeriodKind.week, 1, _types,
             domain=_everything(_VERSION, _TOOL, _CLASS)),
        Cube("apps", (_TOOL, _APP_STATE), PeriodKind.week, 1, lambda cap: cap,
             domain=_everything(_TOOL, _APP_STATE)),
        # Shares over all tools: 19 and 6 cells (keyed by tool, the overall share would sum
        # 24 cells' noise; the views do not filter them by tool).
        Cube("intents", (_INTENT,), PeriodKind.week, 1, lambda cap: cap,
             domain=_everything(_INTENT)),
        Cube("attempts", (_ATTEMPTS,), PeriodKind.week, 1, lambda cap: cap,
             domain=_everything(_ATTEMPTS)),
        # Up to SHAPE_ARGS cells per signal (argument names are distinct within a signal:
        # collector.ingest.check_args refuses any other).
        Cube("shapes", _SHAPE_DIMS, PeriodKind.week, SHAPE_ARGS, lambda cap: cap,
             source="(SELECT day, signal_id, tool_attempted, "
             f"unnest(list_slice(args, 1, {SHAPE_ARGS})) AS a FROM signals)",
             domain=_shape_cells),
        # The call before the failure: one cell per signal with a previous call.
        Cube("ring2", _RING2, PeriodKind.week, 1, _types,
             source="(SELECT * FROM signals WHERE prev1_tool IS NOT NULL)",
             domain=_everything(*_RING2)),
        # The two calls before: 1.7M cells x the ring's order -- a threshold, not a domain.
        Cube("ring3", _RING3, PeriodKind.week, 1, _types,
             source="(SELECT * FROM signals WHERE prev2_tool IS NOT NULL)"),
    )
}  # fmt: skip


@functools.cache
def _domain(name: str) -> tuple[tuple[str, ...], ...]:
    domain = CUBES[name].domain
    assert domain is not None
    return domain()


def cube_sql(cube: Cube) -> str:
    """The exact counts of the cells of the signals dated in ``[$start, $end]``, a row per
    non-empty cell (key values, then ``n``)."""
    keys = ", ".join(f"{d.sql} AS {d.name}" for d in cube.dims)
    return (
        f"SELECT {keys}, count(*) AS n FROM {cube.source} "
        "WHERE day BETWEEN $start AND $end GROUP BY ALL"
    )


def cube_rows_sql(cube: Cube) -> str:
    """One row per (signal, cell) of the signals dated in ``[$start, $end]``: the cell's key
    values and the signal's id (for measuring, e.g. how many installations a cell rests on)."""
    keys = ", ".join(f"{d.sql} AS {d.name}" for d in cube.dims)
    return f"SELECT {keys}, signal_id FROM {cube.source} WHERE day BETWEEN $start AND $end"
