"""The data catalogue, generated from the code: every field of every format the pipeline keeps.

``lmcp signals catalogue`` prints it; ``docs/data-catalogue.md`` is its Markdown rendering (a
test fails when the two differ); the privacy audit compares it with the reviewed catalogue
(``privacy_tests/data_catalogue.json``), so a new field fails the audit until a reviewer
classifies it.

Sources, all read from the code rather than written by hand (one module each under
``lmcp/_catalogue/``):

- the wire (``wire.py``): ``FrictionSignal`` / ``SignalBatch`` (types, bounds, vocabularies)
  and the sender's fixed HTTP headers;
- the client's own files under ``LMCP_HOME`` (``client_files.py``: settings, outbox, sent log,
  latest failure);
- storage (``storage.py``): every table and column after applying ``collector/migrations/*.sql``
  (the signals file) and ``cloudskills/migrations/*.sql`` (the skills service's own file) to
  in-memory DuckDBs (needs the ``collector`` extra);
- exports (``exports.py``): the columns of ``/v1/signals/export`` as Parquet and CSV, produced
  by running the export SQL and writers on an empty database;
- the lake mode (``lake.py``, ``lake_log.py``): the signals, releases and steward audit Delta
  tables, the keys of their Delta logs and the steward's mirror file, read from a real lake
  and mirror the lake's own code writes in a temporary folder.

Only the standard library is imported at module level; pydantic, DuckDB and pyarrow load when a
section is generated. Without the collector extra, the storage, export and lake sections are
omitted and the output says so.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field

from collector.releases.published import privacy_json, privacy_parameters
from lmcp.privacy_params import privacy_markdown

__all__ = [
    "CatalogueField",
    "DataCatalogue",
    "DataFormat",
    "generate",
    "render_json",
    "render_markdown",
]


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


# -- public ------------------------------------------------------------------------------------


def generate(*, storage: bool = True) -> DataCatalogue:
    """Build the catalogue from the code (and, when available, the collector's schema)."""
    from lmcp._catalogue.client_files import client_formats
    from lmcp._catalogue.exports import export_formats
    from lmcp._catalogue.lake import lake_formats
    from lmcp._catalogue.storage import storage_formats
    from lmcp._catalogue.wire import wire_formats

    vocabularies: dict[str, tuple[str, ...]] = {}
    formats = wire_formats(vocabularies) + client_formats()
    omitted: tuple[str, ...] = ()
    if storage:
        try:
            stored, con = storage_formats(vocabularies)
        except ImportError:
            omitted = ("storage, exports and the lake (install the `collector` extra)",)
        else:
            try:
                formats += stored + export_formats(con, stored)
            finally:
                con.close()
            try:
                formats += lake_formats(stored, vocabularies)
            except ImportError:
                omitted = ("the lake mode's tables, logs and mirror (install `deltalake`)",)
    return DataCatalogue(tuple(formats), dict(sorted(vocabularies.items())), omitted)


def render_json(catalogue: DataCatalogue) -> str:
    doc = {
        "formats": [
            {**{k: v for k, v in asdict(fmt).items() if k != "fields"},
             "fields": [asdict(f) for f in fmt.fields]}
            for fmt in catalogue.formats
        ],
        "vocabularies": {k: list(v) for k, v in catalogue.vocabularies.items()},
        "omitted": list(catalogue.omitted),
        "privacy": privacy_json(privacy_parameters()),
    }  # fmt: skip
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ") if text else ""


def render_markdown(catalogue: DataCatalogue) -> str:
    """The catalogue as one Markdown page (``docs/data-catalogue.md``)."""
    lines = [
        "# Data catalogue",
        "",
        "GENERATED by `lmcp signals catalogue --markdown` from the code (lmcp/datacatalogue.py)"
        " -- do not edit; a test fails when this page and the code differ.",
        "",
        "Every field of every format the friction pipeline keeps or sends: its type, its possible "
        "values and an example. Each field is also classified in the reviewed catalogue "
        "(`privacy_tests/data_catalogue.json`); the privacy audit fails on a field that is not. "
        "What each signal field is for: [signal-schema.md](signal-schema.md); the promises: "
        "[privacy.md](privacy.md).",
        "",
    ]
    for omitted in catalogue.omitted:
        lines += [f"> Omitted here: {omitted}.", ""]
    for fmt in catalogue.formats:
        lines += [f"## {fmt.title}", "", f"`{fmt.key}` — {fmt.where}.", ""]
        if fmt.summary:
            lines += [fmt.summary, ""]
        lines += [
            "| field | type | null | values | example | note |",
            "|---|---|---|---|---|---|",
        ]
        for f in fmt.fields:
            lines.append(
                f"| `{f.name}` | {_cell(f.type)} | {'yes' if f.nullable else 'no'} | "
                f"{_cell(f.values)} | {_cell(f.example)} | {_cell(f.note)} |"
            )
        lines.append("")
    lines += privacy_markdown(privacy_parameters())
    lines += ["## Vocabularies", ""]
    for name, members in catalogue.vocabularies.items():
        lines += [f"**{name}** ({len(members)}): " + ", ".join(f"`{m}`" for m in members), ""]
    return "\n".join(lines).rstrip("\n") + "\n"
