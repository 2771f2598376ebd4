"""The released cubes: which signals' columns each groups by, and how much one installation
can change it in one UTC day.

The unit of privacy is one installation over one UTC day. The client sends at most one signal
per (tool, error class, friction type) a day and at most ``cap`` (C) signals a day, so for each
cube below one installation changes at most ``l0`` cells, each by at most ``linf``, and all of
them together by at most ``l1``. Every triage view is a marginal or a post-processing of these
cubes; a column (the signal v2 attempts bucket in ``context``) is one more ``Dim``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

__all__ = [
    "CUBES",
    "DEFAULT_SPLIT",
    "SHAPE_ARGS",
    "Bounds",
    "Cube",
    "Dim",
    "cube_rows_sql",
    "cube_sql",
]

#: At most this many argument shapes of one signal count in the shapes cube (in stored order):
#: it bounds what one signal adds there (the schema allows 32).
SHAPE_ARGS = 4
#: Friction types in the schema: cells of the versions cube one installation can reach per
#: (tool, error class).
_FRICTION_TYPES = 5


@dataclass(frozen=True, slots=True)
class Dim:
    """One dimension: its name and the SQL expression (over ``signals`` or ``a``) giving it."""

    name: str
    sql: str


@dataclass(frozen=True, slots=True)
class Bounds:
    """What one installation-day can change: cells (l0), one cell (linf), all cells (l1)."""

    l0: int
    linf: int
    l1: int


@dataclass(frozen=True, slots=True)
class Cube:
    name: str
    dims: tuple[Dim, ...]
    #: Bounds as a function of the per-day cap C (the client's contribution bound).
    per_signal_cells: int
    linf_of_cap: str
    #: FROM clause: ``signals``, or a subquery over one received day (``$day``).
    source: str = "signals"

    @property
    def dim_names(self) -> tuple[str, ...]:
        return tuple(d.name for d in self.dims)

    def bounds(self, cap: int) -> Bounds:
        linf = {"1": 1, "cap": cap, "types": min(cap, _FRICTION_TYPES)}[self.linf_of_cap]
        return Bounds(l0=self.per_signal_cells * cap, linf=linf, l1=self.per_signal_cells * cap)


def _v(expr: str) -> str:
    return f"CAST({expr} AS VARCHAR)"


_TOOL = Dim("tool", _v("tool_attempted"))
_CLASS = Dim("error_class", _v("error_class"))
_APP_STATE = (
    "CASE WHEN app_installed = false THEN 'not_installed' WHEN app_running = false "
    "THEN 'not_running' WHEN app_permitted = false THEN 'not_permitted' ELSE 'genuine' END"
)

CUBES: Mapping[str, Cube] = {
    c.name: c
    for c in (
        # Each signal is one cell and the key holds (tool, error class, friction type): one
        # installation adds at most 1 to at most C cells.
        Cube(
            "friction",
            (_TOOL, _CLASS, Dim("friction_type", _v("friction_type"))),
            per_signal_cells=1,
            linf_of_cap="1",
        ),
        # One cell per signal; all C signals of a day may share one cell.
        Cube(
            "platforms",
            (Dim("platform", _v("client_platform")), _TOOL),
            per_signal_cells=1,
            linf_of_cap="cap",
        ),
        # The day's shape: one cell per signal; all C signals of a day may share one cell. Few
        # cells, so trends keep their mass (a marginal of ``friction`` would lose the cells
        # below its threshold).
        Cube(
            "daily",
            (Dim("friction_type", _v("friction_type")), Dim("platform", _v("client_platform"))),
            per_signal_cells=1,
            linf_of_cap="cap",
        ),
        # One cell per signal; (tool, error class) repeats across at most 5 friction types.
        Cube(
            "versions",
            (Dim("version", "format('{}.{}.{}', client_version_major, client_version_minor, "
                            "client_version_patch)"), _TOOL, _CLASS),
            per_signal_cells=1,
            linf_of_cap="types",
        ),
        # One cell per signal (the attempts bucket is one more key of the same cell, so the
        # bounds do not change); all C signals of a day may share one cell.
        Cube(
            "context",
            (_TOOL, Dim("app_state", _APP_STATE),
             Dim("intent", f"coalesce({_v('intent_category')}, 'unspecified')"),
             Dim("attempts", f"coalesce({_v('attempts')}, 'unspecified')")),
            per_signal_cells=1,
            linf_of_cap="cap",
        ),
        # Up to SHAPE_ARGS cells per signal (argument names are distinct within a signal).
        Cube(
            "shapes",
            (_TOOL, Dim("arg", _v("a.name")), Dim("arg_type", _v('a."type"')),
             Dim("size", f"coalesce({_v('a.size')}, '-')")),
            per_signal_cells=SHAPE_ARGS,
            linf_of_cap="cap",
            source=f"(SELECT signal_id, tool_attempted, unnest(list_slice(args, 1, {SHAPE_ARGS})) "
            "AS a FROM signals WHERE received_day = $day)",
        ),
        # Two cells per signal at most: the 2-call and the 3-call pattern ending in its failure.
        Cube(
            "ring",
            (Dim("calls", "calls"), Dim("prev2_tool", "p2t"), Dim("prev2_outcome", "p2o"),
             Dim("prev1_tool", "p1t"), Dim("prev1_outcome", "p1o"), _TOOL, _CLASS),
            per_signal_cells=2,
            linf_of_cap="cap",
            source="(SELECT signal_id, '2' AS calls, '-' AS p2t, '-' AS p2o, "
            f"{_v('prev1_tool')} AS p1t, {_v('prev1_outcome')} AS p1o, tool_attempted, "
            "error_class FROM signals WHERE received_day = $day AND prev1_tool IS NOT NULL "
            "UNION ALL SELECT signal_id, '3', "
            f"{_v('prev2_tool')}, {_v('prev2_outcome')}, {_v('prev1_tool')}, "
            f"{_v('prev1_outcome')}, tool_attempted, error_class FROM signals "
            "WHERE received_day = $day AND prev1_tool IS NOT NULL AND prev2_tool IS NOT NULL)",
        ),
    )
}  # fmt: skip

#: The default share of the daily epsilon each cube spends (they sum to 1).
DEFAULT_SPLIT: Mapping[str, float] = {
    "friction": 0.3,
    "platforms": 0.1,
    "daily": 0.1,
    "versions": 0.15,
    "context": 0.15,
    "shapes": 0.05,
    "ring": 0.15,
}


def cube_sql(cube: Cube) -> str:
    """The exact counts of one received day's cells (``$day`` bound), one row per cell."""
    return f"SELECT * EXCLUDE (signal_id), count(*) AS n FROM ({cube_rows_sql(cube)}) GROUP BY ALL"


def cube_rows_sql(cube: Cube) -> str:
    """One row per (signal, cell) of one received day: the cell's key values and the signal's
    id (for measuring, e.g. how many installations a cell rests on)."""
    keys = ", ".join(f"{d.sql} AS {d.name}" for d in cube.dims)
    where = "received_day = $day" if cube.source == "signals" else "TRUE"
    return f"SELECT {keys}, signal_id FROM {cube.source} WHERE {where}"
