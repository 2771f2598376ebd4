"""Bodies in every legal spelling: the one JSON writer of the write-path tests.

``bodies()`` draws a batch of valid signals and one of the many bodies pydantic validates into
exactly those signals: keys in any order, whitespace and line breaks, ``\\u`` escapes, omitted
defaults, other UUID spellings, ``2.0`` for ``schema_version``, a repeated key whose LAST value
is the valid one (its first is ``CANARY``, a smuggling attempt).
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

from contract.schema import FrictionSignal
from tests.factories import signals

__all__ = ["CANARY", "Obj", "bodies", "render", "spelled"]

CANARY = "CANARY-d41d8cd98f00b204"

Pairs = list[tuple[str, Any]]


class Obj:
    """A JSON object as ordered (key, value) pairs: keys may repeat."""

    def __init__(self, pairs: Pairs) -> None:
        self.pairs = pairs


def _string(text: str, escape: bool) -> str:
    if not escape:
        return json.dumps(text)
    return '"' + "".join(f"\\u{ord(c):04x}" if c.isalpha() else c for c in text) + '"'


def render(value: Any, *, escape: bool, newline: str) -> str:
    if isinstance(value, Obj):
        inner = ("," + newline).join(
            _string(k, escape) + ":" + render(v, escape=escape, newline=newline)
            for k, v in value.pairs
        )
        return "{" + newline + inner + newline + "}"
    if isinstance(value, list):
        return "[" + ",".join(render(v, escape=escape, newline=newline) for v in value) + "]"
    if isinstance(value, str):
        return _string(value, escape)
    return json.dumps(value)


def spelled(signal: FrictionSignal, draw: st.DrawFn) -> Obj:
    """One of the many bodies pydantic validates into ``signal``."""
    data: dict[str, Any] = signal.model_dump(mode="json")
    sid = str(signal.signal_id)
    data["signal_id"] = draw(
        st.sampled_from(
            [sid, sid.upper(), "{" + sid + "}", "urn:uuid:" + sid, sid.replace("-", "")]
        )
    )
    data["schema_version"] = draw(st.sampled_from([2, 2.0]))
    for key in ("error_category", "intent_category", "attempts"):
        if data[key] is None and draw(st.booleans()):
            del data[key]  # an omitted optional field is its default, None
    for key in ("args", "ring"):
        if not data[key] and draw(st.booleans()):
            del data[key]  # an omitted list is its default, ()
    if all(v is None for v in data["app"].values()) and draw(st.booleans()):
        del data["app"]  # an omitted app is its default, every flag unknown

    def obj(d: dict[str, Any]) -> Obj:
        return Obj([(k, obj(v) if isinstance(v, dict) else _lists(v)) for k, v in d.items()])

    def _lists(v: Any) -> Any:
        return [obj(x) if isinstance(x, dict) else x for x in v] if isinstance(v, list) else v

    top = obj(data)
    top.pairs = draw(st.permutations(top.pairs))
    if draw(st.booleans()):
        # A repeated key: the first value is a canary (the smuggling attempt), the last valid.
        key = draw(st.sampled_from(["tool_attempted", "friction_type", "error_class"]))
        top.pairs.insert(0, (key, CANARY))
    return top


@st.composite
def bodies(draw: st.DrawFn) -> tuple[bytes, list[FrictionSignal]]:
    batch = draw(st.lists(signals, min_size=1, max_size=6, unique_by=lambda s: s.signal_id))
    doc = Obj([("signals", [spelled(s, draw) for s in batch])])
    text = render(
        doc, escape=draw(st.booleans()), newline=draw(st.sampled_from(["", "\n", "\r\n", " "]))
    )
    return text.encode(), batch
