"""Sharing recipes: a portable, hashed export document, and its import.

    {"format": "lmcp-recipe", "format_version": 1,
     "manifest": {...the normalised manifest...},
     "hash": {"algorithm": "sha256", "canonicalization": "RFC8785", "value": "<64 hex>"}}

The hash is the SHA-256 of the manifest's RFC 8785 (JSON Canonicalization Scheme) bytes, made
with the ``rfc8785`` package, so any JCS implementation in any language reproduces it. An export
is refused while a step's args (or a param's default, which flows into args) hold a
secret-looking literal: the refusal names the rule and the step, never the value. Import checks
the format, the hash, and then the manifest exactly like ``recipe_save``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Any

import rfc8785

from client.recipes._manifest import Manifest
from contract.secrets_scan import scan_json

__all__ = [
    "EXPORT_FORMAT",
    "EXPORT_VERSION",
    "ShareError",
    "canonical_hash",
    "export_document",
    "manifest_from_document",
    "secret_findings",
]

EXPORT_FORMAT = "lmcp-recipe"
EXPORT_VERSION = 1
_HEX64 = re.compile(r"[0-9a-f]{64}")
_WHERE = re.compile(r"^((?:steps|params)\[\d+\](?:\.args\.[A-Za-z0-9_]+|\.default)?)")


class ShareError(ValueError):
    """An export or import was refused; ``code`` is stable, the message names no value."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def canonical_hash(manifest_json: Mapping[str, Any]) -> str:
    """SHA-256 (hex) of the RFC 8785 canonical form of a manifest."""
    return hashlib.sha256(rfc8785.dumps(dict(manifest_json))).hexdigest()


def secret_findings(manifest: Manifest) -> list[tuple[str, str]]:
    """(where, rule) for every secret-looking literal in step args and param defaults.

    ``where`` is cut to the step (or param) and the top-level argument name, which the
    catalogue declares; deeper keys could be user text.
    """
    doc = manifest.to_json()
    found: list[tuple[str, str]] = []
    for location, rule in scan_json({"steps": doc["steps"], "params": doc["params"]}):
        match = _WHERE.match(location)
        where = match.group(1) if match else "manifest"
        if (where, rule) not in found:
            found.append((where, rule))
    return found


def export_document(manifest: Manifest) -> dict[str, Any]:
    """The portable document for ``manifest``; ``ShareError`` when it holds a secret."""
    findings = secret_findings(manifest)
    if findings:
        shown = "; ".join(f"{where}: looks like a secret (rule {rule})" for where, rule in findings)
        raise ShareError(
            "secret_in_recipe",
            f"not exported, the recipe holds secret-looking literals: {shown}. "
            "Replace each with a param and pass it at run time.",
        )
    manifest_json = manifest.to_json()
    try:
        value = canonical_hash(manifest_json)
    except (rfc8785.CanonicalizationError, TypeError, ValueError):
        raise ShareError(
            "not_portable", "a number in the recipe is outside what RFC 8785 can represent"
        ) from None
    return {
        "format": EXPORT_FORMAT,
        "format_version": EXPORT_VERSION,
        "manifest": manifest_json,
        "hash": {
            "algorithm": "sha256",
            "canonicalization": "RFC8785",
            "value": value,
        },
    }


def manifest_from_document(document: object) -> Any:
    """The raw manifest inside an export document, after checking format and hash.

    The manifest is then checked like a save (``ManifestChecker``) by the caller.
    """
    if not isinstance(document, Mapping):
        raise ShareError("invalid_document", "document: must be an object")
    if document.get("format") != EXPORT_FORMAT:
        raise ShareError("invalid_document", f"document.format: must be '{EXPORT_FORMAT}'")
    version = document.get("format_version")
    if isinstance(version, bool) or version != EXPORT_VERSION:
        raise ShareError(
            "unsupported_version", f"document.format_version: must be {EXPORT_VERSION}"
        )
    extra = sum(1 for k in document if k not in {"format", "format_version", "manifest", "hash"})
    if extra:
        raise ShareError("invalid_document", f"document: has {extra} unknown field(s)")
    manifest = document.get("manifest")
    if not isinstance(manifest, Mapping):
        raise ShareError("invalid_document", "document.manifest: must be an object")
    digest = document.get("hash")
    if (
        not isinstance(digest, Mapping)
        or digest.get("algorithm") != "sha256"
        or digest.get("canonicalization") != "RFC8785"
        or not isinstance(digest.get("value"), str)
        or not _HEX64.fullmatch(digest["value"])
    ):
        raise ShareError(
            "invalid_document",
            "document.hash: must be {algorithm: sha256, canonicalization: RFC8785, value: hex}",
        )
    try:
        actual = canonical_hash(manifest)
    except (rfc8785.CanonicalizationError, TypeError, ValueError):
        raise ShareError(
            "invalid_document", "document.manifest: cannot be canonicalised (RFC 8785)"
        ) from None
    if actual != digest["value"]:
        raise ShareError(
            "hash_mismatch", "document.hash: does not match the manifest (altered or damaged)"
        )
    return manifest
