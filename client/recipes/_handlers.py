"""The ``recipe_*`` tool handlers: thin glue between the host, the checker, the store and the
runner. Failures are ``ToolFailure``s whose messages name fields and rules only."""

from __future__ import annotations

import difflib
import hashlib
import json
import threading
import weakref
from collections.abc import Mapping
from typing import Any

from client.errors import ToolFailure
from client.host import Handler, Reply, ToolHost
from client.paths import LmcpHome
from client.recipes._check import ManifestChecker, ManifestError
from client.recipes._manifest import Manifest, ToolStep
from client.recipes._runner import RunControl, run_recipe
from client.recipes._share import ShareError, export_document, manifest_from_document
from client.recipes._store import RecipeStore, StoreError
from client.tools import NotesStore
from contract.schema import ErrorClass, Outcome

__all__ = ["RecipeService", "cancel_running", "recipe_handlers"]

_LIVE: weakref.WeakSet[RecipeService] = weakref.WeakSet()

_STORE_CLASS = {
    "recipe_not_found": ErrorClass.not_found,
    "recipe_damaged": ErrorClass.unavailable,
}
_SHARE_CLASS = {
    "secret_in_recipe": ErrorClass.invalid_arguments,
    "not_portable": ErrorClass.invalid_arguments,
}


def _invalid(error: ManifestError) -> ToolFailure:
    return ToolFailure(ErrorClass.invalid_arguments, str(error), code="invalid_manifest")


def _lines(manifest: Manifest) -> list[str]:
    return json.dumps(manifest.to_json(), indent=2, sort_keys=True).splitlines()


def _digest(manifest: Manifest) -> str:
    return hashlib.sha256("\n".join(_lines(manifest)).encode("utf-8")).hexdigest()


def _exists() -> ToolFailure:
    return ToolFailure(
        ErrorClass.conflict,
        "a recipe with this name already exists; pass overwrite: true to replace it",
        code="recipe_exists",
    )


class RecipeService:
    """Recipes of one ``LMCP_HOME``, run through one ``ToolHost``."""

    def __init__(self, home: LmcpHome, host: ToolHost) -> None:
        self.host = host
        self.store = RecipeStore(home.recipes)
        notes = NotesStore(home.notes)
        self.checker = ManifestChecker(host.catalogue, notes.name_of)
        #: Set it to stop a running recipe (between steps and during waits); cleared when a
        #: new run starts, so a stale cancellation never stops the next run.
        self.cancel = threading.Event()
        #: recipe key -> digest of the replacement whose diff this process showed: replacing
        #: an existing recipe by import runs only what was previewed.
        self.replacements: dict[str, str] = {}
        _LIVE.add(self)

    def load(self, name: str) -> Manifest:
        try:
            return self.store.load(name)
        except StoreError as exc:
            raise ToolFailure(_STORE_CLASS[exc.code], str(exc), code=exc.code) from None

    def save_raw(self, raw: object, *, overwrite: bool) -> dict[str, Any]:
        try:
            checked = self.checker.check(raw)
        except ManifestError as exc:
            raise _invalid(exc) from None
        replaced = self.store.save(checked.manifest, overwrite=overwrite)
        if replaced is None:
            raise _exists()
        return {
            "name": checked.manifest.name,
            "step_count": len(checked.manifest.steps),
            "confirm_removed_steps": checked.confirm_removed_steps,
            "replaced": replaced,
            "warnings": list(checked.warnings),
        }

    # -- handlers ---------------------------------------------------------------------------
    def recipe_save(self, args: Mapping[str, Any]) -> Any:
        return self.save_raw(args["manifest"], overwrite=args.get("overwrite") is True)

    def recipe_run(self, args: Mapping[str, Any]) -> Any:
        stored = self.load(str(args["name"]))
        # The file may have been edited on disk since it was saved: the rules of save and
        # import (catalogue tools, no report_friction or recipe_* step, declared params) hold
        # again before anything runs.
        try:
            manifest = self.checker.check(stored.to_json()).manifest
        except ManifestError as exc:
            raise _invalid(exc) from None
        self.cancel.clear()
        result = run_recipe(
            manifest,
            self.host,
            args.get("params"),
            confirm=args.get("confirm") is True,
            control=RunControl(self.cancel),
        )
        if isinstance(result, Reply) and result.outcome is Outcome.preview:
            # The user confirms what will run: every step's arguments as saved (references
            # like ${p} are resolved at run time). Shown locally, never sent anywhere.
            for entry in result.result.get("plan", []):
                step = manifest.steps[entry["index"]]
                if isinstance(step, ToolStep):
                    entry["args"] = {k: v for k, v in step.args.items() if k != "confirm"}
            result.result["params"] = dict(args.get("params") or {})
        return result

    def recipe_export(self, args: Mapping[str, Any]) -> Any:
        manifest = self.load(str(args["name"]))
        try:
            document = export_document(manifest)
        except ShareError as exc:
            raise ToolFailure(_SHARE_CLASS[exc.code], exc.message, code=exc.code) from None
        return {"name": manifest.name, "hash": document["hash"]["value"], "document": document}

    def recipe_import(self, args: Mapping[str, Any]) -> Any:
        try:
            raw = manifest_from_document(args["document"])
        except ShareError as exc:
            raise ToolFailure(ErrorClass.invalid_arguments, exc.message, code=exc.code) from None
        overwrite = args.get("overwrite") is True
        if overwrite:
            replacing = self._replacement_preview(raw, confirm=args.get("confirm") is True)
            if replacing is not None:
                return replacing
        return self.save_raw(raw, overwrite=overwrite)

    def _replacement_preview(self, raw: object, *, confirm: bool) -> Reply | None:
        """A diff to confirm when an import would replace an existing recipe, else None.

        A confirmation must carry the same document that was previewed (same digest).
        """
        try:
            new = self.checker.check(raw).manifest
        except ManifestError as exc:
            raise _invalid(exc) from None
        try:
            old = self.store.load(new.name)
        except StoreError:
            return None  # nothing (readable) to replace: no trusted recipe is lost
        diff = list(
            difflib.unified_diff(_lines(old), _lines(new), "saved", "imported", lineterm="")
        )
        if not diff:
            return None  # the same recipe: replacing it changes nothing
        digest = _digest(new)
        if confirm and self.replacements.pop(new.key, None) == digest:
            return None
        self.replacements[new.key] = digest
        preview = {
            "preview": True,
            "action": "replace_recipe",
            "name": new.name,
            "diff": diff,
            "confirm_required": "this import replaces a saved recipe: review the diff, then "
            "call again with the same document, overwrite: true and confirm: true",
        }
        return Reply(preview, Outcome.preview)

    def recipe_list(self, args: Mapping[str, Any]) -> Any:
        good, damaged = self.store.list()
        recipes = [
            {
                "name": m.name,
                "description": m.description,
                "step_count": len(m.steps),
                "params": [p.to_json() for p in m.params],
            }
            for m in good
        ]
        return {
            "recipes": recipes,
            "count": len(recipes),
            "damaged": [d.to_json() for d in damaged],
        }

    def recipe_delete(self, args: Mapping[str, Any]) -> Any:
        name = str(args["name"])
        manifest: Manifest | None
        try:
            manifest = self.store.load(name)
        except StoreError as exc:
            if exc.code == "recipe_not_found":
                raise ToolFailure(ErrorClass.not_found, str(exc), code=exc.code) from None
            manifest = None  # damaged: it can still be deleted
        if args.get("confirm") is not True:
            preview = {
                "preview": True,
                "action": "recipe_delete",
                "name": manifest.name if manifest is not None else None,
                "damaged": manifest is None,
                "step_count": len(manifest.steps) if manifest is not None else None,
                "confirm_required": "call again with confirm: true to delete this recipe",
            }
            return Reply(preview, Outcome.preview)
        if not self.store.delete(name):
            raise ToolFailure(
                ErrorClass.not_found, "no recipe with this name", code="recipe_not_found"
            )
        return {"deleted": True, "name": manifest.name if manifest is not None else None}

    def handlers(self) -> dict[str, Handler]:
        return {
            "recipe_save": self.recipe_save,
            "recipe_run": self.recipe_run,
            "recipe_export": self.recipe_export,
            "recipe_import": self.recipe_import,
            "recipe_list": self.recipe_list,
            "recipe_delete": self.recipe_delete,
        }


def cancel_running() -> None:
    """Stop every recipe running in this process (the MCP server calls it when the client
    cancels a call): the run ends at the current pause or before its next step."""
    for service in list(_LIVE):
        service.cancel.set()


def recipe_handlers(home: LmcpHome, host: ToolHost) -> dict[str, Handler]:
    """The six ``recipe_*`` handlers; every recipe step is dispatched through ``host``."""
    return RecipeService(home, host).handlers()
