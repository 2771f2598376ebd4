"""The data catalogue, generated from the code: every field of every format the pipeline keeps.

``lmcp signals catalogue`` prints it; ``docs/data-catalogue.md`` is its Markdown rendering (a
test fails when the two differ); the privacy audit compares it with the reviewed catalogue
(``privacy_tests/data_catalogue.json``), so a new field fails the audit until a reviewer
classifies it.

Sources, all read from the code rather than written by hand, one module each (the types they
share in ``_model.py``, so no section imports the module that calls it; ``_generate.py``
calls them in order, ``_render.py`` writes the result):

- the wire (``_wire.py``): ``FrictionSignal`` / ``SignalBatch`` (types, bounds, vocabularies)
  and the sender's fixed HTTP headers;
- the client's own files under ``LMCP_HOME`` (``_client_files.py``: settings, outbox, sent log,
  latest failure);
- storage (``_storage.py``): every table and column after applying ``collector/migrations/*.sql``
  (the signals file) and ``cloudskills/migrations/*.sql`` (the skills service's own file) to
  in-memory DuckDBs (needs the ``collector`` extra);
- exports (``_exports.py``): the columns of ``/v1/signals/export`` as Parquet and CSV, produced
  by running the export SQL and writers on an empty database;
- the lake mode (``_lake.py``, ``_lake_log.py``): the signals, releases and steward audit Delta
  tables, the keys of their Delta logs and the steward's mirror file, read from a real lake
  and mirror the lake's own code writes in a temporary folder.

Only the standard library is imported at module level; pydantic, DuckDB and pyarrow load when a
section is generated. Without the collector extra, the storage, export and lake sections are
omitted and the output says so.
"""

from __future__ import annotations

from lmcp.datacatalogue._generate import generate
from lmcp.datacatalogue._model import CatalogueField, DataCatalogue, DataFormat
from lmcp.datacatalogue._render import render_json, render_markdown

__all__ = [
    "CatalogueField",
    "DataCatalogue",
    "DataFormat",
    "generate",
    "render_json",
    "render_markdown",
]
