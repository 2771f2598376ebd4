"""The wire section of the data catalogue: the signal and batch models (types, bounds,
vocabularies) and the sender's fixed HTTP headers, read from ``contract.schema``."""

from __future__ import annotations

import datetime as dt
import enum
import json
import types
import typing
import uuid
from collections.abc import Sequence
from typing import Any

from lmcp.datacatalogue._model import CatalogueField, DataFormat
from lmcp.datacatalogue._text import short, snake, values_text


def example_signal() -> Any:
    from contract.schema import SCHEMA_VERSION, FrictionSignal

    doc = {
        "schema_version": SCHEMA_VERSION,
        "signal_id": "0b7f2c1e-6a43-4a8e-9a51-2f1d3c4b5a69",
        "day": "2026-11-30",
        "friction_type": "repeated_failure",
        "error_category": "not_found",
        "intent_category": "manage_note",
        "tool_attempted": "read_note",
        "attempts": "3-5",
        "error_class": "not_found",
        "args": [{"name": "note_name", "type": "string", "size": "17-256"}],
        "ring": [
            {"tool": "list_notes", "outcome": "ok"},
            {"tool": "read_note", "outcome": "failed"},
        ],
        "app": {"installed": True, "running": True, "permitted": True},
        "client": {"version": "1.4.2", "platform": "macos"},
    }
    return FrictionSignal.model_validate_json(json.dumps(doc))


def _pick(doc: Any, path: str) -> Any:
    for part in path.split("."):
        if isinstance(doc, list):
            doc = doc[0] if doc else None
        if part.endswith("[]"):
            part = part[:-2]
        doc = doc.get(part) if isinstance(doc, dict) else None
    return doc


class _Walker:
    def __init__(self, vocabularies: dict[str, tuple[str, ...]]) -> None:
        self.vocabularies = vocabularies
        self.out: list[CatalogueField] = []

    def model(self, model: Any, prefix: str, example: Any) -> None:
        for name, info in model.model_fields.items():
            path = f"{prefix}{name}"
            note = info.description or ""
            self.leaf(path, info.annotation, list(info.metadata), example, note)

    def leaf(self, path: str, annotation: Any, meta: list[Any], example: Any, note: str) -> None:
        from pydantic import BaseModel

        nullable = False
        origin = typing.get_origin(annotation)
        if origin is typing.Annotated:
            base, *extra = typing.get_args(annotation)
            for item in extra:
                meta += [item, *getattr(item, "metadata", [])]
            self.leaf(path, base, meta, example, note)
            return
        if origin in (typing.Union, types.UnionType):
            options = [a for a in typing.get_args(annotation) if a is not type(None)]
            nullable = len(options) < len(typing.get_args(annotation))
            annotation = options[0]
            origin = typing.get_origin(annotation)
            if origin is typing.Annotated:
                base, *extra = typing.get_args(annotation)
                for item in extra:
                    meta += [item, *getattr(item, "metadata", [])]
                annotation = base
                origin = typing.get_origin(annotation)
        sample = _pick(example, path)
        shown = json.dumps(sample, ensure_ascii=False) if sample is not None else "null"
        if origin is tuple:
            most = _bound(meta, "max_length")
            (inner,) = typing.get_args(annotation)[:1]
            self.out.append(
                CatalogueField(
                    path, "list", f"list of {inner.__name__}", nullable, f"0..{most} items",
                    short(shown), note,
                )
            )  # fmt: skip
            self.model(inner, f"{path}[].", example)
            return
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            self.out.append(
                CatalogueField(path, "object", annotation.__name__, nullable, "", "", note)
            )
            self.model(annotation, f"{path}.", example)
            return
        if origin is typing.Literal:
            values = ", ".join(str(v) for v in typing.get_args(annotation))
            self.out.append(
                CatalogueField(path, "literal", "literal", nullable, values, shown, note)
            )
            return
        if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
            vocab = snake(annotation.__name__)
            members = tuple(str(m.value) for m in annotation)
            self.vocabularies[vocab] = members
            self.out.append(
                CatalogueField(
                    path,
                    "enum",
                    f"enum {vocab}",
                    nullable,
                    values_text(vocab, members),
                    shown,
                    note,
                )
            )
            return
        kind, type_name, values = _scalar(annotation, meta)
        self.out.append(CatalogueField(path, kind, type_name, nullable, values, shown, note))


def _bound(meta: Sequence[Any], attr: str) -> Any:
    for item in meta:
        value = getattr(item, attr, None)
        if value is not None:
            return value
    return None


def _scalar(annotation: Any, meta: Sequence[Any]) -> tuple[str, str, str]:
    if annotation is bool:
        return "boolean", "boolean", "true, false"
    if annotation is int:
        lo, hi = _bound(meta, "ge"), _bound(meta, "le")
        return "integer", "integer", f"{lo}..{hi}"
    if annotation is dt.date:
        return "date", "date (UTC day)", "YYYY-MM-DD"
    if annotation is uuid.UUID or getattr(annotation, "__name__", "") == "UUID":
        return "uuid", "UUID version 4", "random, derived from nothing"
    if annotation is str:
        pattern = _bound(meta, "pattern")
        most = _bound(meta, "max_length")
        return "string", f"string, at most {most} characters", f"pattern {pattern}"
    name = getattr(annotation, "__name__", repr(annotation))
    return "object", name, ""


def wire_formats(vocabularies: dict[str, tuple[str, ...]]) -> list[DataFormat]:
    from client.sender import USER_AGENT
    from contract.schema import MAX_BATCH, SCHEMA_VERSION, FrictionSignal

    example = json.loads(example_signal().model_dump_json())
    walker = _Walker(vocabularies)
    walker.model(FrictionSignal, "", example)
    signal = DataFormat(
        "wire.signal",
        f"Friction signal, version {SCHEMA_VERSION}",  # the version the client sends
        "the JSON body sent to POST /v1/signals (contract/schema/_models.py)",
        "One anonymous signal. Also the content of the outbox, the sent log and the database row.",
        tuple(walker.out),
    )
    batch = DataFormat(
        "wire.batch",
        "Signal batch",
        "the body of POST /v1/signals",
        "The envelope: nothing but the signals.",
        (
            CatalogueField(
                "signals", "list", "list of FrictionSignal", False, f"1..{MAX_BATCH} items",
                "[{…}]", "The signals of one delivery.",
            ),
        ),
    )  # fmt: skip
    http = DataFormat(
        "wire.http",
        "HTTP request of a delivery",
        "client/sender.py",
        "Fixed headers: no version, platform, locale or machine name travels in them.",
        (
            CatalogueField("user-agent", "literal", "literal", False, USER_AGENT, USER_AGENT),
            CatalogueField(
                "content-type", "literal", "literal", False, "application/json", "application/json"
            ),
        ),
    )
    return [signal, batch, http]
