"""The triage filter as one DuckDB macro against the same block written inline in each question.

For every question, on a synthetic file (1M signals; ``LMCP_BENCH_FILTER_N`` to change it): the
median time of the question as ``run_sql`` runs it (creating the TEMP macro on the cursor, then
the query) against the question with the macro's body pasted in, with no filter and with all
filters set; and whether the two physical plans are the same. Results go to docs/triage.md.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable

import duckdb

from analysis import Filters, Question
from analysis._questions import DEFAULT_K, last_day, load_query, query_params
from benchmarks._timing import median, table
from benchmarks.bench_analysis import _synth_file

RUNS = 9
_CALL = re.compile(r"triage_filter\(([^)]*)\)")
_MACRO = re.compile(r"MACRO triage_filter\(([^)]*)\) AS \((.*)\);\s*$", re.DOTALL)


def _inlined(text: str) -> str:
    """The question with the macro call replaced by the macro's body (arguments substituted)."""
    found = _MACRO.search(load_query("triage_filter")[0])
    assert found is not None
    formals = [p.strip() for p in found.group(1).split(",")]
    body = found.group(2)

    def expand(match: re.Match[str]) -> str:
        out = body
        for formal, actual in zip(formals, match.group(1).split(","), strict=True):
            out = re.sub(rf"\b{formal}\b", actual.strip(), out)
        return f"({out})"

    return _CALL.sub(expand, text)


def _timed(*fns: Callable[[], object]) -> list[float]:
    """The median time of each function, their runs interleaved (a shared machine drifts)."""
    times: list[list[float]] = [[] for _ in fns]
    for fn in fns:
        fn()
    for _ in range(RUNS):
        for fn, out in zip(fns, times, strict=True):
            start = time.perf_counter()
            fn()
            out.append(time.perf_counter() - start)
    return [median(t) for t in times]


def _plan(cur: duckdb.DuckDBPyConnection, text: str, params: dict[str, object]) -> str:
    rows = cur.execute("EXPLAIN " + text, params).fetchall()
    return "\n".join(str(r[-1]) for r in rows)


def run() -> None:
    n = int(os.environ.get("LMCP_BENCH_FILTER_N", "1000000"))
    con = duckdb.connect(str(_synth_file(n)), read_only=True)
    macro = load_query("triage_filter")[0]
    filters = {
        "none": Filters(),
        "all": Filters.parse({"platform": "windows", "tool": "read_note", "version": "1.2"}),
    }
    period = Filters().resolve(last_day(con))
    rows = []
    for q in Question:
        text, names = load_query(q.value)
        inline = _inlined(text)
        for label, f in filters.items():
            values = query_params(f, period, k=DEFAULT_K)
            params = {p: values[p] for p in names}

            def with_macro(text: str = text, params: dict[str, object] = params) -> object:
                cur = con.cursor()
                try:
                    cur.execute(macro)
                    return cur.execute(text, params).fetchall()
                finally:
                    cur.close()

            def inlined(inline: str = inline, params: dict[str, object] = params) -> object:
                cur = con.cursor()
                try:
                    return cur.execute(inline, params).fetchall()
                finally:
                    cur.close()

            assert with_macro() == inlined(), q
            cur = con.cursor()
            cur.execute(macro)
            same = _plan(cur, text, params) == _plan(cur, inline, params)
            cur.close()
            m, i = _timed(with_macro, inlined)
            rows.append((q.value, label, f"{i * 1000:.1f}", f"{m * 1000:.1f}", f"{m / i:.2f}",
                         "yes" if same else "no"))  # fmt: skip
    (create,) = _timed(lambda: con.cursor().execute(macro).close())
    con.close()
    table(
        f"Triage filter: macro vs inline, {n:,} signals, median of {RUNS} runs (ms)",
        ("question", "filters", "inline", "macro", "ratio", "same plan"),
        rows,
    )
    print(f"creating the macro on a fresh cursor: {create * 1000:.2f} ms (median)")


if __name__ == "__main__":
    run()
