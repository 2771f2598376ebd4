"""Recipe storage: one JSON document per recipe under ``LMCP_HOME/recipes``.

A file is named ``<slug>-<hash>.json``: a short ASCII slug for people browsing the folder and
a SHA-256 of the normalised name (``name_key``) for identity -- never the raw name, so any
name is safe on every file system, and names that differ only in case share one file (as
they would on macOS and Windows anyway). New recipes are published by exclusive create (of
two concurrent saves of one name exactly one wins); overwrites are atomic replaces. A file
that cannot be read back is reported as damaged and never hides the others.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from client._files import write_new, write_replace
from client.recipes._manifest import Manifest, name_key, parse_manifest

__all__ = ["STORE_FORMAT", "Damaged", "RecipeStore", "StoreError", "recipe_filename"]

STORE_FORMAT = "lmcp.recipe"
STORE_VERSION = 1
_SLUG_CHARS = 32


class StoreError(Exception):
    """A stored recipe cannot be used: ``code`` is ``recipe_not_found`` or ``recipe_damaged``."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True, slots=True)
class Damaged:
    """A file of the store that is not a usable recipe (named by file, never by content)."""

    file: str
    problem: str

    def to_json(self) -> dict[str, str]:
        return {"file": self.file, "problem": self.problem}


def recipe_filename(name: str) -> str:
    """``<slug>-<hash>.json`` for a recipe name."""
    key = name_key(name)
    ascii_name = unicodedata.normalize("NFKD", key).encode("ascii", "ignore").decode("ascii")
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_name).strip("-")[:_SLUG_CHARS].strip("-") or "recipe"
    digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:24]
    return f"{slug}-{digest}.json"


def _encode(manifest: Manifest) -> bytes:
    doc = {"format": STORE_FORMAT, "version": STORE_VERSION, "manifest": manifest.to_json()}
    return (json.dumps(doc, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


def _decode(path: Path) -> Manifest | Damaged:
    try:
        raw = path.read_bytes()
    except OSError:
        return Damaged(path.name, "cannot be read")
    try:
        doc: Any = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return Damaged(path.name, "is not valid JSON")
    if not isinstance(doc, dict) or doc.get("format") != STORE_FORMAT:
        return Damaged(path.name, "is not an LMCP recipe document")
    if doc.get("version") != STORE_VERSION:
        return Damaged(path.name, "has an unsupported version")
    manifest, problems = parse_manifest(doc.get("manifest"))
    if manifest is None:
        return Damaged(path.name, f"holds a manifest with {len(problems)} problem(s)")
    if recipe_filename(manifest.name) != path.name:
        return Damaged(path.name, "holds a recipe whose name does not match the file name")
    return manifest


class RecipeStore:
    """The recipes under ``root`` (created on the first save)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def path_for(self, name: str) -> Path:
        return self.root / recipe_filename(name)

    def save(self, manifest: Manifest, *, overwrite: bool) -> bool | None:
        """Store ``manifest``. Returns True when it replaced a recipe, False when new, and
        None when the name is taken and ``overwrite`` is false (nothing is written)."""
        path = self.path_for(manifest.name)
        data = _encode(manifest)
        if overwrite and path.exists():
            write_replace(path, data)
            return True
        if write_new(path, data):
            return False
        if not overwrite:
            return None
        write_replace(path, data)
        return True

    def load(self, name: str) -> Manifest:
        path = self.path_for(name)
        if not path.exists():
            raise StoreError("recipe_not_found", "no recipe with this name")
        found = _decode(path)
        if isinstance(found, Damaged):
            raise StoreError("recipe_damaged", f"the recipe's file {found.problem}")
        if found.key != name_key(name):  # pragma: no cover - a hash collision
            raise StoreError("recipe_not_found", "no recipe with this name")
        return found

    def delete(self, name: str) -> bool:
        path = self.path_for(name)
        try:
            path.unlink()
        except FileNotFoundError:
            return False
        return True

    def scan(self) -> Iterator[Manifest | Damaged]:
        """Every stored recipe (sorted by file name), damaged ones as ``Damaged``."""
        if not self.root.is_dir():
            return
        for path in sorted(self.root.iterdir(), key=lambda p: p.name):
            if path.name.startswith(".") or path.suffix != ".json" or not path.is_file():
                continue
            yield _decode(path)

    def list(self) -> tuple[list[Manifest], list[Damaged]]:
        good: list[Manifest] = []
        bad: list[Damaged] = []
        for item in self.scan():
            if isinstance(item, Damaged):
                bad.append(item)
            else:
                good.append(item)
        good.sort(key=lambda m: m.key)
        return good, bad
