"""The catalogue built from the code: one section per source, in the order the page shows them."""

from __future__ import annotations

from lmcp.datacatalogue._client_files import client_formats
from lmcp.datacatalogue._exports import export_formats
from lmcp.datacatalogue._lake import lake_formats
from lmcp.datacatalogue._model import DataCatalogue
from lmcp.datacatalogue._storage import storage_formats
from lmcp.datacatalogue._wire import wire_formats

__all__ = ["generate"]


def generate(*, storage: bool = True) -> DataCatalogue:
    """Build the catalogue from the code (and, when available, the collector's schema)."""
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
