"""The canonical hash of a revision: SHA-256 of the RFC 8785 canonical JSON of its content.

The hashed document is ``{name, description, instructions, components}`` with the components
sorted by ``logical_path`` (Unicode code point order) and each component holding its
``type``, ``logical_path``, ``mime_type``, ``metadata`` and either ``content`` or
``artifact_ref``. The slug, the scope and the publish intent are not content: they are not
hashed. Key order never matters (RFC 8785 sorts keys); component order never matters (sorted).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import Any

import rfc8785

__all__ = ["canonical_bytes", "canonical_document", "canonical_hash", "content_hash"]


def _component_document(component: Mapping[str, Any]) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "type": component["type"],
        "logical_path": component["logical_path"],
        "mime_type": component["mime_type"],
        "metadata": component["metadata"],
    }
    if component.get("content") is not None:
        doc["content"] = component["content"]
    else:
        doc["artifact_ref"] = component["artifact_ref"]
    return doc


def canonical_document(
    *, name: str, description: str, instructions: str, components: Iterable[Mapping[str, Any]]
) -> dict[str, Any]:
    """The JSON document whose canonical form is hashed."""
    parts = sorted((_component_document(c) for c in components), key=lambda c: c["logical_path"])
    return {
        "name": name,
        "description": description,
        "instructions": instructions,
        "components": parts,
    }


def canonical_bytes(
    *, name: str, description: str, instructions: str, components: Iterable[Mapping[str, Any]]
) -> bytes:
    """RFC 8785 canonical JSON of the revision's content."""
    doc = canonical_document(
        name=name, description=description, instructions=instructions, components=components
    )
    out: bytes = rfc8785.dumps(doc)
    return out


def canonical_hash(
    *, name: str, description: str, instructions: str, components: Iterable[Mapping[str, Any]]
) -> str:
    """Lowercase hex SHA-256 of :func:`canonical_bytes`."""
    raw = canonical_bytes(
        name=name, description=description, instructions=instructions, components=components
    )
    return hashlib.sha256(raw).hexdigest()


def content_hash(content: str) -> str:
    """Lowercase hex SHA-256 of a component's UTF-8 content (the manifest's ``hash``)."""
    return hashlib.sha256(content.encode("utf-8")).hexdigest()
