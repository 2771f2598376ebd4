"""``docs/schema/recipe.v1.json`` describes what the code writes, and the public surface."""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from client import recipes
from client.host import ToolResult
from client.paths import LmcpHome
from client.recipes import MAX_STEPS, MAX_WAIT_SECONDS, recipe_filename

SCHEMA = json.loads(
    (Path(__file__).resolve().parents[2] / "docs" / "schema" / "recipe.v1.json").read_text("utf-8")
)


def _validator(definition: str) -> Draft202012Validator:
    return Draft202012Validator({"$defs": SCHEMA["$defs"], "$ref": f"#/$defs/{definition}"})


def test_the_schema_is_valid_and_matches_the_code_limits() -> None:
    Draft202012Validator.check_schema(SCHEMA)
    manifest = SCHEMA["$defs"]["manifest"]["properties"]
    assert manifest["steps"]["maxItems"] == MAX_STEPS
    wait = SCHEMA["$defs"]["wait_step"]["properties"]["wait"]["properties"]["seconds"]
    assert wait["maximum"] == MAX_WAIT_SECONDS


def test_stored_and_exported_documents_follow_the_schema(
    save: Callable[..., ToolResult], call: Callable[..., ToolResult], home: LmcpHome
) -> None:
    manifest: dict[str, Any] = {
        "name": "Documented",
        "description": "all features",
        "params": [{"name": "n", "type": "integer", "default": 2, "description": "how many"}],
        "steps": [
            {"tool": "list_notes", "args": {"limit": "${n}"}, "optional": True},
            {"wait": 1},
            {"tool": "delete_note", "args": {"note_name": "x", "confirm": True}},
        ],
        "outputs": [{"kind": "summary"}],
    }
    assert save(manifest).ok
    stored = json.loads((home.recipes / recipe_filename("Documented")).read_text("utf-8"))
    _validator("stored_document").validate(stored)
    exported = call("recipe_export", name="Documented").result["document"]
    _validator("export_document").validate(exported)
    Draft202012Validator(SCHEMA).validate(exported)


@pytest.mark.parametrize("name", ["client.recipes", "client.tools", "client.mcp_server"])
def test_public_surface_names_exist(name: str) -> None:
    module = importlib.import_module(name)
    assert len(set(module.__all__)) == len(module.__all__)
    for member in module.__all__:
        assert hasattr(module, member) and not member.startswith("_")
    assert "recipe_handlers" in recipes.__all__
