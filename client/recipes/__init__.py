"""Recipes: saved, named series of LMCP tool calls, run through the same ``ToolHost``.

Public surface:

- ``recipe_handlers(home, host)``: the ``recipe_save``, ``recipe_run``, ``recipe_export``,
  ``recipe_import``, ``recipe_list`` and ``recipe_delete`` handlers;
- ``RecipeService``: the same, as an object (the CLI uses it);
- the pure core: ``parse_manifest``/``ManifestChecker`` (validation), ``interpolate``
  (``${...}`` references), ``bind_params``; and ``RecipeStore``, ``export_document``,
  ``canonical_hash``.

The contract is ``recipe_save``'s reference text; see ``docs/recipes.md``.
"""

from __future__ import annotations

from client.recipes._check import NOT_IN_RECIPES, Checked, ManifestChecker, ManifestError
from client.recipes._handlers import RecipeService, cancel_running, recipe_handlers
from client.recipes._interpolate import (
    ParamRef,
    RefSyntaxError,
    StepRef,
    Unresolved,
    find_refs,
    interpolate,
    parse_ref,
    stringify,
)
from client.recipes._manifest import (
    MAX_STEPS,
    MAX_TOTAL_WAIT_SECONDS,
    MAX_WAIT_SECONDS,
    Manifest,
    Param,
    ToolStep,
    WaitStep,
    name_key,
    parse_manifest,
)
from client.recipes._runner import RunControl, bind_params, plan, run_recipe
from client.recipes._share import (
    EXPORT_FORMAT,
    EXPORT_VERSION,
    ShareError,
    canonical_hash,
    export_document,
    manifest_from_document,
)
from client.recipes._store import Damaged, RecipeStore, recipe_filename

__all__ = [
    "EXPORT_FORMAT",
    "EXPORT_VERSION",
    "MAX_STEPS",
    "MAX_TOTAL_WAIT_SECONDS",
    "MAX_WAIT_SECONDS",
    "NOT_IN_RECIPES",
    "Checked",
    "Damaged",
    "Manifest",
    "ManifestChecker",
    "ManifestError",
    "Param",
    "ParamRef",
    "RecipeService",
    "RecipeStore",
    "RefSyntaxError",
    "RunControl",
    "ShareError",
    "StepRef",
    "ToolStep",
    "Unresolved",
    "WaitStep",
    "bind_params",
    "canonical_hash",
    "cancel_running",
    "export_document",
    "find_refs",
    "interpolate",
    "manifest_from_document",
    "name_key",
    "parse_manifest",
    "parse_ref",
    "plan",
    "recipe_filename",
    "recipe_handlers",
    "run_recipe",
    "stringify",
]
