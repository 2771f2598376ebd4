"""Render ``collector/_wire.py``: msgspec structs derived from the pydantic wire contract.

The collector decodes bodies with these structs first (``collector.ingest``): msgspec checks the
same rules as the pydantic models at several times their speed. They are a translation, never a
second definition: this script reads ``contract.schema.AcceptedBatch`` and every model under
it, and refuses (``UnsupportedContract``) any construct whose msgspec translation it cannot
prove to accept no more than pydantic does: validators, aliases, default factories, lax
models, metadata it does not know, patterns outside a plain subset. ``make generate`` writes
the file and ``make check`` fails when it is stale; ``tests/collector/test_fast_decoder.py``
proves on generated bodies that the fast path and pydantic accept and refuse alike.

What the translation keeps, rule by rule:

- enums become ``Literal`` of their values (the decoded value is the plain ``str``);
- ``Literal``, ``bool``, ``int`` (``ge``/``le``), ``str`` (``max_length``, ``pattern``),
  ``datetime.date``, ``X | None`` and ``tuple[X, ...]`` (``min_length``/``max_length``) map
  one to one; ``FailFast`` is msgspec's only behaviour;
- a pattern's ``$`` becomes ``\\Z``: Python's ``$`` also matches before a final newline,
  pydantic's (Rust) regex does not;
- ``UUID`` with a version becomes ``uuid.UUID`` plus a ``__post_init__`` check of the version
  and the RFC 4122 variant (what pydantic's ``UUID4`` checks);
- a discriminated union becomes a tagged union on the same field (``tag_field``);
- every struct forbids unknown fields; msgspec keeps the last of a repeated key, as pydantic.
"""

from __future__ import annotations

import datetime as dt
import enum
import re
import subprocess
import sys
import types
import typing
import uuid
from pathlib import Path
from typing import Any

import annotated_types
from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic.types import FailFast, UuidVersion
from pydantic_core import PydanticUndefined

from scripts.gen_schema import ROOT

WIRE_PY = ROOT / "collector" / "_wire.py"

__all__ = ["WIRE_PY", "UnsupportedContract", "render_wire"]


class UnsupportedContract(TypeError):
    """The contract uses something the fast decoder cannot translate exactly."""


#: Patterns made only of anchors, literal characters, escaped punctuation, character classes
#: of ASCII ranges, groups, alternation and bounded quantifiers: both regex engines read
#: these alike (no \\d, \\w, \\s, \\b, ".", flags or look-arounds, whose meanings differ).
_PLAIN_PATTERN = re.compile(
    r"^\^(?:[A-Za-z0-9_\-]|\\[.\-+*?()\[\]{}|^$\\/]|\[[^\]\\]*\]|[()|]|\{\d+(?:,\d*)?\}|[?*+])*\$$"
)


def _pattern(pattern: str, where: str) -> str:
    if not _PLAIN_PATTERN.match(pattern):
        raise UnsupportedContract(f"{where}: pattern {pattern!r} is outside the plain subset")
    return pattern[:-1] + r"\Z"


class _Renderer:
    def __init__(self, names: dict[type[BaseModel], str]) -> None:
        self.names = names
        self.order: list[type[BaseModel]] = []
        self.tags: dict[type[BaseModel], tuple[str, Any]] = {}
        self.blocks: dict[type[BaseModel], list[str]] = {}

    # ------------------------------------------------------------------ types

    def type_of(self, annotation: Any, metadata: list[Any], where: str) -> str:
        origin = typing.get_origin(annotation)
        if origin is typing.Annotated:
            inner, *extras = typing.get_args(annotation)
            more: list[Any] = []
            for extra in extras:
                if isinstance(extra, FieldInfo):
                    more += extra.metadata
                    if extra.discriminator is not None:
                        more.append(("discriminator", extra.discriminator))
                else:
                    more.append(extra)
            return self.type_of(inner, [*metadata, *more], where)
        limits: dict[str, Any] = {}
        discriminator: str | None = None
        version: int | None = None
        for item in metadata:
            if isinstance(item, FailFast):
                continue  # msgspec stops at the first failing item anyway
            if isinstance(item, annotated_types.MaxLen):
                limits["max_length"] = item.max_length
            elif isinstance(item, annotated_types.MinLen):
                limits["min_length"] = item.min_length
            elif isinstance(item, annotated_types.Ge):
                limits["ge"] = item.ge
            elif isinstance(item, annotated_types.Le):
                limits["le"] = item.le
            elif isinstance(item, UuidVersion):
                version = item.uuid_version
            elif isinstance(item, tuple) and item and item[0] == "discriminator":
                discriminator = item[1]
            elif type(item).__name__ == "_PydanticGeneralMetadata" and set(vars(item)) == {
                "pattern"
            }:
                limits["pattern"] = _pattern(vars(item)["pattern"], where)
            else:
                raise UnsupportedContract(f"{where}: unsupported constraint {item!r}")
        base = self._base(annotation, origin, discriminator, version, limits, where)
        if limits:
            meta = ", ".join(f"{k}={v!r}" for k, v in sorted(limits.items()))
            return f"Annotated[{base}, Meta({meta})]"
        return base

    def _base(
        self,
        annotation: Any,
        origin: Any,
        discriminator: str | None,
        version: int | None,
        limits: dict[str, Any],
        where: str,
    ) -> str:
        if version is not None and annotation is not uuid.UUID:
            raise UnsupportedContract(f"{where}: a UUID version on {annotation!r}")
        if origin is typing.Literal:
            values = typing.get_args(annotation)
            if not all(type(v) in (int, str) for v in values):
                raise UnsupportedContract(f"{where}: Literal of {values!r}")
            return f"Literal[{', '.join(repr(v) for v in values)}]"
        if origin in (typing.Union, types.UnionType):
            members = typing.get_args(annotation)
            if discriminator is not None:
                return " | ".join(self._tagged(m, discriminator, where) for m in members)
            rest = [m for m in members if m is not type(None)]
            if len(rest) != 1 or len(members) != 2:
                raise UnsupportedContract(f"{where}: an untagged union {annotation!r}")
            return f"{self.type_of(rest[0], [], where)} | None"
        if origin is tuple:
            args = typing.get_args(annotation)
            if len(args) != 2 or args[1] is not Ellipsis:
                raise UnsupportedContract(f"{where}: a fixed tuple {annotation!r}")
            return f"tuple[{self.type_of(args[0], [], where + '[]')}, ...]"
        if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
            names = [m.value for m in annotation]
            if not issubclass(annotation, str) or not all(isinstance(v, str) for v in names):
                raise UnsupportedContract(f"{where}: a non-string enum {annotation!r}")
            return f"Literal[{', '.join(repr(v) for v in names)}]"
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            return self.model(annotation)
        simple = {bool: "bool", int: "int", str: "str", dt.date: "dt.date", uuid.UUID: "uuid.UUID"}
        if annotation in simple and not (annotation is bool and limits):
            return simple[annotation]
        raise UnsupportedContract(f"{where}: unsupported type {annotation!r}")

    def _tagged(self, member: Any, field: str, where: str) -> str:
        if not (isinstance(member, type) and issubclass(member, BaseModel)):
            raise UnsupportedContract(f"{where}: a tagged union member {member!r}")
        tag = member.model_fields[field].annotation
        values = typing.get_args(tag) if typing.get_origin(tag) is typing.Literal else ()
        if len(values) != 1:
            raise UnsupportedContract(f"{where}: tag {field} of {member.__name__} is not one value")
        self.tags[member] = (field, values[0])
        return self.model(member)

    # ------------------------------------------------------------------ models

    def model(self, cls: type[BaseModel]) -> str:
        name = self.names.get(cls)
        if name is None:
            raise UnsupportedContract(f"{cls.__qualname__} is not exported by contract.schema")
        if cls not in self.blocks:
            self.blocks[cls] = []  # placeholder: a model is rendered once
            self.blocks[cls] = self._render(cls, name)
            self.order.append(cls)
        return name

    def _render(self, cls: type[BaseModel], name: str) -> list[str]:
        config = cls.model_config
        if (
            config.get("strict") is not True
            or config.get("extra") != "forbid"
            or config.get("frozen") is not True
        ):
            raise UnsupportedContract(f"{name}: the model must be strict, frozen, extra=forbid")
        decorators = cls.__pydantic_decorators__
        for kind in (
            "validators",
            "field_validators",
            "root_validators",
            "model_validators",
            "computed_fields",
        ):
            if getattr(decorators, kind):
                raise UnsupportedContract(f"{name}: {kind} cannot be translated")
        tag = self.tags.get(cls)
        options = "forbid_unknown_fields=True, frozen=True, gc=False, kw_only=True"
        if tag is not None:
            options += f", tag_field={tag[0]!r}, tag={tag[1]!r}"
        lines = [f"class {name}(msgspec.Struct, {options}):"]
        doc = (cls.__doc__ or "").strip().splitlines()[0]
        lines.append(f'    """{doc}"""')
        lines.append("")
        checks: list[str] = []
        for field, info in cls.model_fields.items():
            if tag is not None and field == tag[0]:
                continue  # the tag is the struct's own
            where = f"{name}.{field}"
            if info.alias is not None or info.validation_alias is not None:
                raise UnsupportedContract(f"{where}: aliases cannot be translated")
            if info.default_factory is not None:
                raise UnsupportedContract(f"{where}: a default factory cannot be translated")
            text = self.type_of(info.annotation, list(info.metadata), where)
            if info.default is PydanticUndefined:
                lines.append(f"    {field}: {text}")
            else:
                lines.append(f"    {field}: {text} = {self._default(info.default, where)}")
            for item in info.metadata:
                if isinstance(item, UuidVersion):
                    checks.append(f"        _uuid_version(self.{field}, {item.uuid_version})")
        if checks:
            lines += ["", "    def __post_init__(self) -> None:", *checks]
        return lines

    def _default(self, value: Any, where: str) -> str:
        if value is None or isinstance(value, bool | int) or value == ():
            return repr(value)
        if isinstance(value, str) and not isinstance(value, enum.Enum):
            return repr(value)
        if isinstance(value, BaseModel):
            name = self.model(type(value))
            fields = ", ".join(
                f"{k}={self._default(getattr(value, k), where)}" for k in type(value).model_fields
            )
            return f"{name}({fields})"
        raise UnsupportedContract(f"{where}: default {value!r} cannot be translated")


_HEADER = '''"""GENERATED by ``make generate`` from ``contract.schema.AcceptedBatch``: do not edit.

msgspec structs with the wire contract's rules (``scripts/gen_wire.py`` says how each rule is
translated). The collector's fast decoder; pydantic stays the definition and the judge of
every body these refuse (``collector.ingest``).
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Annotated, Literal

import msgspec
from msgspec import Meta

__all__ = [{exports}]


def _uuid_version(value: uuid.UUID, version: int) -> None:
    # pydantic's UUID<n>: that version and the RFC 4122 variant (bits 10).
    if (value.int >> 76) & 0xF != version or (value.int >> 62) & 0x3 != 0x2:
        raise ValueError(f"not a version {{version}} UUID")

'''


def render_wire() -> str:
    import contract.schema as schema

    # The package loads its models on first use (``__getattr__``): ask for each export.
    exported = {name: getattr(schema, name) for name in schema.__all__}
    names = {
        obj: name
        for name, obj in exported.items()
        if isinstance(obj, type) and issubclass(obj, BaseModel)
    }
    renderer = _Renderer(names)
    batch = renderer.model(schema.AcceptedBatch)
    field, info = next(iter(schema.AcceptedBatch.model_fields.items()))
    item = renderer.type_of(typing.get_args(info.annotation)[0], [], "AcceptedBatch.signals[]")
    exports = [renderer.names[cls] for cls in renderer.order] + ["Envelope", "Signal"]
    out = [_HEADER.format(exports=", ".join(f'"{e}"' for e in sorted(exports)))]
    for cls in renderer.order:
        out.append("\n".join(renderer.blocks[cls]) + "\n\n")
    out.append(
        f"#: One item of ``{batch}.{field}``, any accepted version.\n"
        f"Signal = {item}\n\n\n"
        f"class Envelope(msgspec.Struct, forbid_unknown_fields=True, frozen=True, gc=False):\n"
        f'    """``{batch}``, its items undecoded (the refusal path reads them one by one)."""\n'
        f"\n"
        f"    {field}: tuple[msgspec.Raw, ...]\n"
    )
    return _formatted("\n".join(out))


def _formatted(text: str) -> str:
    """``text`` as ``ruff format`` writes it (the project's formatter, from the same venv)."""
    ruff = Path(sys.executable).with_name("ruff")
    done = subprocess.run(
        [str(ruff), "format", "--stdin-filename", str(WIRE_PY), "-"],
        input=text,
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    return done.stdout
