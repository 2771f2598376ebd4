"""One Vega-Lite chart per triage question, rendered offline to SVG (or PNG) by vl-convert.

The specs are pure functions of an ``Answer``: data inlined as values, no URL, no CDN. The
report inlines the SVG; the dashboard serves the same SVG inside its page.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any

import vl_convert

from analysis._palette import SPIKE, color_scale
from analysis._questions import Answer
from analysis._registry import Bars
from analysis._rows import (
    AppRow,
    AttemptRow,
    PlatformRow,
    RegressionRow,
    RingRow,
    Row,
    ShapeRow,
    TopRow,
    TrendRow,
)

__all__ = [
    "CHART_ROWS",
    "WIDTH",
    "base_spec",
    "chart_png",
    "chart_spec",
    "chart_svg",
    "clear_chart_cache",
    "spec_svg",
    "warm_up",
]

Spec = dict[str, Any]
#: Bars shown at most per chart (tables show the rest).
CHART_ROWS = 15
WIDTH = 560
_SCHEMA = "https://vega.github.io/schema/vega-lite/v5.json"
_CONFIG: Spec = {
    "font": "DejaVu Sans, Helvetica, Arial, sans-serif",
    "view": {"stroke": None},
    # labelSeparation: neighbouring tick labels keep 12 px apart as measured here, so a browser
    # font a little wider than the one measured does not make them touch.
    "axis": {
        "labelFontSize": 11,
        "titleFontSize": 11,
        "labelLimit": 320,
        "labelSeparation": 12,
        "grid": True,
    },
    "legend": {"labelFontSize": 11, "titleFontSize": 11, "orient": "bottom", "columns": 4},
    "bar": {"cornerRadiusEnd": 2},
}
_ARROW = " \u2192 "
_lock = threading.Lock()


def base_spec(values: list[dict[str, Any]], height: int | None = None) -> Spec:
    """A chart's common part: its data inlined, the width, the shared config."""
    spec: Spec = {
        "$schema": _SCHEMA,
        "data": {"values": values},
        "width": WIDTH,
        "config": _CONFIG,
        "background": "white",
    }
    if height is not None:
        spec["height"] = height
    return spec


def _bar_height(n: int) -> int:
    return max(60, 20 * n)


def _hbar(
    values: list[dict[str, Any]],
    label: str,
    *,
    x: str = "n",
    x_title: str = "signals",
    color: str | None = None,
    color_title: str | None = None,
    palette: str | None = None,
    stack: str | None = None,
    sort: Any = "-x",
) -> Spec:
    labels = list(dict.fromkeys(v[label] for v in values))
    spec = base_spec(values, _bar_height(len(labels)))
    encoding: Spec = {
        "y": {"field": label, "type": "nominal", "title": None, "sort": sort},
        "x": {"field": x, "type": "quantitative", "title": x_title},
        "tooltip": [{"field": label, "type": "nominal"}, {"field": x, "type": "quantitative"}],
    }
    if stack is not None:
        encoding["x"]["stack"] = stack
    if color is not None:
        encoding["color"] = {
            "field": color,
            "type": "nominal",
            "title": color_title or color,
            "scale": color_scale(palette or color, (v[color] for v in values)),
        }
    spec["mark"] = {"type": "bar", "tooltip": True}
    spec["encoding"] = encoding
    return spec


def _top(rows: list[TopRow]) -> Spec:
    values = [
        {"what": f"{r.tool} \u00b7 {r.error_class}", "friction_type": r.friction_type, "n": r.n}
        for r in rows[:CHART_ROWS]
    ]
    return _hbar(values, "what", color="friction_type", color_title="friction type")


def _trends(rows: list[TrendRow]) -> Spec:
    values = [
        {"day": r.day.isoformat(), "series": r.series, "n": r.n, "spike": r.spike,
         "marker": "spike"}
        for r in rows
    ]  # fmt: skip
    spec = base_spec(values, 220)
    x = {"field": "day", "type": "temporal", "title": None, "axis": {"format": "%b %d"}}
    layers: list[Spec] = [
        {
            "mark": {"type": "line", "point": {"size": 18}, "strokeWidth": 2},
            "encoding": {
                "x": x,
                "y": {"field": "n", "type": "quantitative", "title": "signals per day"},
                "color": {
                    "field": "series",
                    "type": "nominal",
                    "title": "series (all: solid)",
                    "scale": color_scale("friction_type", (str(v["series"]) for v in values)),
                },
                "strokeDash": {
                    "condition": {"test": "datum.series === 'all'", "value": [1, 0]},
                    "value": [4, 2],
                },
            },
        },
    ]
    # The spike layer only where a day spiked: a legend with no entry (a window too short for
    # a baseline) has infinite bounds, and the chart no size a PNG can have.
    spikes: Spec = {
        "transform": [{"filter": "datum.spike"}],
        "mark": {"type": "point", "filled": True, "size": 90, "color": SPIKE, "opacity": 1},
        "encoding": {
            "x": x,
            "y": {"field": "n", "type": "quantitative"},
            # A one-value shape scale: the spike markers get a legend entry of their own.
            "shape": {
                "field": "marker",
                "type": "nominal",
                "title": None,
                "scale": {"range": ["triangle-up"]},
                "legend": {"symbolFillColor": SPIKE, "symbolStrokeColor": SPIKE},
            },
            "tooltip": [
                {"field": "day", "type": "temporal"},
                {"field": "series", "type": "nominal"},
                {"field": "n", "type": "quantitative"},
            ],
        },
    }
    spec["layer"] = layers + [spikes] if any(r.spike for r in rows) else layers
    return spec


def _regressions(rows: list[RegressionRow]) -> Spec:
    values = [
        {
            "what": f"{r.version} \u00b7 {r.tool} \u00b7 {r.error_class}",
            "status": r.status,
            "share_pct": r.share_pct,
        }
        for r in rows[:CHART_ROWS]
    ]
    return _hbar(
        values, "what", x="share_pct", x_title="% of the version's signals", color="status",
        sort=None,
    )  # fmt: skip


def _platforms(rows: list[PlatformRow]) -> Spec:
    totals: dict[str, int] = {}
    for r in rows:
        totals[r.tool] = totals.get(r.tool, 0) + r.n
    keep = set(sorted(totals, key=lambda t: -totals[t])[:CHART_ROWS])
    values = [{"tool": r.tool, "platform": r.platform, "n": r.n} for r in rows if r.tool in keep]
    return _hbar(values, "tool", color="platform")


def _apps(rows: list[AppRow]) -> Spec:
    order = ["not_installed", "not_running", "not_permitted", "genuine"]
    tools = list(dict.fromkeys(r.tool for r in rows))[:CHART_ROWS]
    values = [
        {"tool": r.tool, "app_state": r.app_state, "n": r.n, "order": order.index(r.app_state)}
        for r in rows
        if r.tool in tools
    ]
    spec = _hbar(
        values, "tool", x_title="share of the tool's signals", color="app_state",
        color_title="app state", stack="normalize", sort=tools,
    )  # fmt: skip
    spec["encoding"]["order"] = {"field": "order", "type": "ordinal"}
    spec["encoding"]["x"]["axis"] = {"format": "%"}
    return spec


def _shapes(rows: list[ShapeRow]) -> Spec:
    values = [
        {"what": f"{r.tool} \u00b7 {r.arg}: {r.arg_type} {r.size}", "type": r.arg_type, "n": r.n}
        for r in rows[:CHART_ROWS]
    ]
    return _hbar(values, "what", color="type", color_title="argument type", palette="arg_type")


def _ring_label(r: RingRow) -> str:
    steps = [f"{r.prev1_tool} ({r.prev1_outcome})", f"{r.tool} \u2717 {r.error_class}"]
    if r.calls == 3:
        steps.insert(0, f"{r.prev2_tool} ({r.prev2_outcome})")
    return _ARROW.join(steps)


def _ring(rows: list[RingRow]) -> Spec:
    per_length = {2: 0, 3: 0}
    values = []
    for r in rows:
        if per_length[r.calls] < CHART_ROWS // 2 + 1:
            per_length[r.calls] += 1
            values.append({"what": _ring_label(r), "calls": f"{r.calls} calls", "n": r.n})
    spec = _hbar(values, "what", color="calls", color_title="sequence")
    spec["encoding"]["y"]["axis"] = {"labelLimit": 520}
    spec["width"] = WIDTH - 120
    return spec


def _bars(rows: list[Any], label: str) -> Spec:
    values = [{label: getattr(r, label), "n": r.n} for r in rows[:CHART_ROWS]]
    return _hbar(values, label)


def _attempts(rows: list[AttemptRow]) -> Spec:
    values = [{"attempts": r.attempts, "n": r.n} for r in rows]
    spec = base_spec(values, 180)
    spec["mark"] = {"type": "bar", "tooltip": True}
    spec["encoding"] = {
        "x": {
            "field": "attempts",
            "type": "ordinal",
            "sort": None,
            "title": "attempts",
            "axis": {"labelAngle": 0},
        },
        "y": {"field": "n", "type": "quantitative", "title": "signals"},
    }
    return spec


#: The charts of their own, by the name a registry entry's ``Custom`` chart gives.
_BUILDERS: Mapping[str, Callable[[list[Any]], Spec]] = {
    "top": _top,
    "trends": _trends,
    "regressions": _regressions,
    "platforms": _platforms,
    "apps": _apps,
    "shapes": _shapes,
    "ring": _ring,
    "attempts": _attempts,
}


def chart_spec(answer: Answer[Row], *, width: int = WIDTH) -> Spec | None:
    """The Vega-Lite spec of an answer's chart; None when there is nothing to draw.

    ``width`` is the plot width of a default chart (label columns come on top of it).
    """
    if not answer.rows:
        return None
    chart = answer.question.spec.chart
    rows = list(answer.rows)
    spec = _bars(rows, chart.label) if isinstance(chart, Bars) else _BUILDERS[chart.builder](rows)
    spec["width"] = int(spec["width"] * width / WIDTH)
    return spec


#: Rendered SVGs by spec, most recent last (the dashboard's pages and the report's charts).
_SVGS: OrderedDict[str, str] = OrderedDict()
_SVG_CACHE = 128


def _svg_of(spec_json: str) -> str:
    # One conversion at a time (the converter is a shared engine), and the cache is looked up
    # under the same lock: a page asking for a chart another thread is drawing (the start-up
    # drawing of the first view) waits for it instead of drawing it twice.
    svg = _SVGS.get(spec_json)  # a hit needs no lock (a dict read is atomic)
    if svg is not None:
        return svg
    with _lock:
        svg = _SVGS.get(spec_json)
        if svg is None:
            svg = str(vl_convert.vegalite_to_svg(json.loads(spec_json)))
            _SVGS[spec_json] = svg
            while len(_SVGS) > _SVG_CACHE:  # the oldest drawn first
                _SVGS.popitem(last=False)
    return svg


_warmed = threading.Event()


def warm_up() -> None:
    """Start the converter's engine in a background thread, once per process: its first
    conversion pays the engine's start-up, which must not fall on a person's first view."""
    if _warmed.is_set():
        return
    _warmed.set()

    def warm() -> None:
        spec = {"$schema": _SCHEMA, "data": {"values": [{"n": 1}]}, "mark": "point"}
        with _lock:
            vl_convert.vegalite_to_svg(spec)

    threading.Thread(target=warm, name="chart-warm-up", daemon=True).start()


def clear_chart_cache() -> None:
    """Forget rendered SVGs (benchmarks time the rendering itself)."""
    with _lock:
        _SVGS.clear()


def chart_svg(answer: Answer[Row], *, width: int = WIDTH) -> str | None:
    """The chart as an SVG document (offline); None when there is nothing to draw.

    The same data draws the same chart: SVGs are cached by their spec (a dashboard reloaded
    while no new signal changed an answer does not render again).
    """
    spec = chart_spec(answer, width=width)
    return None if spec is None else spec_svg(spec)


def spec_svg(spec: Spec) -> str:
    """Any Vega-Lite spec as SVG, cached by the spec (the friction page's own charts)."""
    return _svg_of(json.dumps(spec, sort_keys=True))


def _notice_spec(text: str) -> Spec:
    """A chart of one line of text: what an answer with nothing to draw shows instead."""
    spec = base_spec([{"text": text}], 40)
    spec["mark"] = {"type": "text", "align": "left", "baseline": "middle", "fontSize": 13,
                    "color": "#555555", "x": 0, "y": 20}  # fmt: skip
    spec["encoding"] = {"text": {"field": "text", "type": "nominal"}}
    return spec


def chart_png(answer: Answer[Row], *, scale: float = 2.0) -> bytes:
    """The chart as PNG bytes (for docs); an answer with nothing to draw says so (its
    ``empty_text``), so each question has its picture whatever the window held."""
    spec = chart_spec(answer)
    if spec is None:
        spec = _notice_spec(answer.empty_text)
    with _lock:
        png: bytes = vl_convert.vegalite_to_png(spec, scale=scale)
    return png
