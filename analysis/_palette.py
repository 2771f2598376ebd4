"""The one palette: a fixed colour per value of every category the charts colour by.

Charts (dashboard and report alike) take their colour scales from here, keyed by value, so a
category keeps its colour whichever values a view happens to show. ``SPIKE`` is the spike
markers' own colour, used by no category value of the trend chart.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from contract.schema import ArgType, FrictionType, Platform

__all__ = ["PALETTE", "SPIKE", "color_scale"]

#: category (the field a chart colours by) -> value -> colour.
PALETTE: Mapping[str, Mapping[str, str]] = {
    "friction_type": {
        "all": "#1d2b3a",
        FrictionType.repeated_failure.value: "#4c78a8",
        FrictionType.task_abandoned.value: "#f58518",
        FrictionType.workaround_needed.value: "#54a24b",
        FrictionType.cannot_complete.value: "#b279a2",
        FrictionType.other.value: "#9d755d",
    },
    "platform": {
        Platform.macos.value: "#4c78a8",
        Platform.windows.value: "#72b7b2",
        Platform.linux.value: "#f58518",
    },
    "app_state": {
        "not_installed": "#9467bd",
        "not_running": "#8c564b",
        "not_permitted": "#e377c2",
        "genuine": "#7f7f7f",
    },
    "status": {"new": "#c51b7d", "growing": "#ff7f0e"},
    "arg_type": {
        ArgType.string.value: "#4c78a8",
        ArgType.integer.value: "#f58518",
        ArgType.number.value: "#54a24b",
        ArgType.boolean.value: "#b279a2",
        ArgType.null.value: "#9d755d",
        ArgType.array.value: "#72b7b2",
        ArgType.object.value: "#eeca3b",
    },
    "calls": {"2 calls": "#4c78a8", "3 calls": "#f58518"},
}
#: The spike markers of the trend chart (no trend series has it).
SPIKE = "#e4002b"


def color_scale(category: str, present: Iterable[str]) -> dict[str, Any]:
    """A Vega-Lite scale mapping the values present (in palette order) to their fixed colours.

    Only the present values are in the domain, so the legend lists what the chart shows.
    """
    colours = PALETTE[category]
    seen = set(present)
    domain = [value for value in colours if value in seen]
    return {"domain": domain, "range": [colours[value] for value in domain]}
