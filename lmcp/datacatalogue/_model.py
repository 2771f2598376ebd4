"""The data catalogue's types: a catalogue is formats, a format is fields (its sections build
them, ``_render`` writes them out)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

__all__ = ["CatalogueField", "DataCatalogue", "DataFormat"]


@dataclass(frozen=True, slots=True)
class CatalogueField:
    """One field of one format."""

    name: str
    #: Structural kind: literal, enum, boolean, integer, float, date, timestamp, uuid, string,
    #: list, object, blob.
    kind: str
    type: str
    nullable: bool
    values: str
    example: str
    note: str = ""


@dataclass(frozen=True, slots=True)
class DataFormat:
    key: str
    title: str
    where: str
    summary: str
    fields: tuple[CatalogueField, ...]


@dataclass(frozen=True, slots=True)
class DataCatalogue:
    formats: tuple[DataFormat, ...]
    vocabularies: dict[str, tuple[str, ...]] = field(default_factory=dict)
    omitted: tuple[str, ...] = ()

    def fields(self) -> Iterator[tuple[str, CatalogueField]]:
        for fmt in self.formats:
            for item in fmt.fields:
                yield fmt.key, item
