"""A valid signal's JSON without pydantic's serializer: ``model_dump_json``'s bytes, sooner.

``FrictionSignal.model_dump_json``'s cost is mostly per nested model it meets (the ring alone
holds up to ten), not per enum ``.value`` it reads (docs/mcp.md). Every string a valid
signal holds is a member of a closed vocabulary (whose JSON is known ahead: its quoted value,
never escaped -- checked below when this module loads) or a release version (a checked pattern
of digits and dots), so the JSON is written here from tables and concatenation. A value outside
the tables (only a model built without validation holds one) is left to pydantic, whose bytes
are then the answer. Same bytes as ``model_dump_json`` for every valid signal:
``tests/contract/test_signal_json.py`` proves it for generated signals.
"""

from __future__ import annotations

import json
import typing
from enum import StrEnum

from pydantic import BaseModel

from contract.schema._enums import Outcome
from contract.schema._models import FrictionSignal
from contract.schema._names import ToolName

__all__ = ["signal_json"]


def _vocabularies(annotation: object) -> set[type[StrEnum]]:
    """Every enum a field of ``annotation`` (a model, or a field's type) may hold, nested
    models, optionals and tuples followed: the tables follow the models, not a second list."""
    if isinstance(annotation, type) and issubclass(annotation, StrEnum):
        return {annotation}
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        fields = annotation.model_fields.values()
        return set().union(*(_vocabularies(f.annotation) for f in fields))
    return set().union(*(_vocabularies(a) for a in typing.get_args(annotation)))


def _quoted() -> dict[str | None, str]:
    """Each member's JSON, and null. Keyed by the members themselves: a lookup then matches
    by identity (a member of another vocabulary with the same value matches as the ``str`` it
    is, and has the same JSON)."""
    table: dict[str | None, str] = {None: "null"}
    for vocabulary in sorted(_vocabularies(FrictionSignal), key=lambda v: v.__name__):
        for member in vocabulary:
            text = json.dumps(member.value, ensure_ascii=False)
            if text != f'"{member.value}"':  # pragma: no cover - the vocabularies are plain
                raise ValueError(f"{vocabulary.__name__}.{member.name} needs escaping in JSON")
            table.setdefault(member, text)
    return table


_Q = _quoted()
_BOOL: dict[bool | None, str] = {None: "null", True: "true", False: "false"}
#: Each ring entry's JSON, by its (tool, outcome): a lookup instead of four concatenations.
_RING: dict[tuple[str, str], str] = {
    (tool, outcome): '{"tool":' + _Q[tool] + ',"outcome":' + _Q[outcome] + "}"
    for tool in ToolName
    for outcome in Outcome
}
#: Each arg shape's JSON met so far, by its (name, type, size): at most every combination of
#: the vocabularies (filled on first use, not at import).
_ARGS: dict[tuple[str, str, str | None], str] = {}
#: The versions met so far (one per installation): their JSON, as pydantic writes it.
_VERSIONS: dict[str, str] = {}


def _arg(key: tuple[str, str, str | None]) -> str:
    name, type_, size = key
    text = '{"name":' + _Q[name] + ',"type":' + _Q[type_] + ',"size":' + _Q[size] + "}"
    _ARGS[key] = text  # only members reach here (_Q refused the rest): a bounded table
    return text


def _version(version: str) -> str:
    text = _VERSIONS.get(version)
    if text is None:
        text = json.dumps(version, ensure_ascii=False)
        if len(_VERSIONS) < 16:
            _VERSIONS[version] = text
    return text


def signal_json(signal: FrictionSignal) -> str:
    """``signal.model_dump_json()``, byte for byte, for a valid signal."""
    q = _Q
    try:
        shapes = _ARGS
        args = ",".join(
            [
                shapes.get(key) or _arg(key)
                for key in [(a.name, a.type, a.size) for a in signal.args]
            ]
        )
        entries = _RING
        ring = ",".join([entries[r.tool, r.outcome] for r in signal.ring])
        app = signal.app
        client = signal.client
        return "".join(
            (
                '{"schema_version":',
                str(signal.schema_version),
                ',"signal_id":"',
                str(signal.signal_id),
                '","day":"',
                signal.day.isoformat(),
                '","friction_type":',
                q[signal.friction_type],
                ',"error_category":',
                q[signal.error_category],
                ',"intent_category":',
                q[signal.intent_category],
                ',"tool_attempted":',
                q[signal.tool_attempted],
                ',"attempts":',
                q[signal.attempts],
                ',"error_class":',
                q[signal.error_class],
                ',"args":[',
                args,
                '],"ring":[',
                ring,
                '],"app":{"installed":',
                _BOOL[app.installed],
                ',"running":',
                _BOOL[app.running],
                ',"permitted":',
                _BOOL[app.permitted],
                '},"client":{"version":',
                _version(client.version),
                ',"platform":',
                q[client.platform],
                "}}",
            )
        )
    except (KeyError, TypeError):  # a value outside the vocabularies: pydantic's own answer
        return signal.model_dump_json()
