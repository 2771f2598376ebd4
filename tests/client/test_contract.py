"""The committed contract files match the code: a change to the contract is a reviewed diff."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from contract.catalogue import load_catalogue, raw_catalogue
from contract.schema import (
    ArgName,
    ArgType,
    AttemptsBucket,
    ErrorCategory,
    ErrorClass,
    FrictionSignal,
    FrictionType,
    IntentCategory,
    Outcome,
    Platform,
    SizeBucket,
    ToolName,
)
from scripts.gen_schema import (
    BATCH_SCHEMA,
    NAMES_PY,
    SIGNAL_SCHEMA,
    render_batch_schema,
    render_names,
    render_signal_schema,
    render_v1_schemas,
)

ROOT = Path(__file__).resolve().parents[2]


def test_committed_json_schema_matches_the_model() -> None:
    assert SIGNAL_SCHEMA.read_text(encoding="utf-8") == render_signal_schema(), (
        "docs/schema/friction-signal.v2.json differs from FrictionSignal: run `make generate`"
    )
    assert BATCH_SCHEMA.read_text(encoding="utf-8") == render_batch_schema()


def test_previous_version_schemas_are_the_ones_v1_shipped() -> None:
    """v1 is kept for reference: the model the collector still accepts is v1 exactly."""
    for path, text in render_v1_schemas().items():
        assert path.read_text(encoding="utf-8") == text, f"{path.name} differs: run `make schema`"


def test_generated_names_match_the_catalogue() -> None:
    assert NAMES_PY.read_text(encoding="utf-8") == render_names(raw_catalogue()), (
        "contract/schema/_names.py is stale: run `make generate`"
    )


def test_signal_has_exactly_the_architecture_fields() -> None:
    assert list(FrictionSignal.model_fields) == [
        "schema_version", "signal_id", "day", "friction_type", "error_category",
        "intent_category", "tool_attempted", "attempts", "error_class", "args", "ring",
        "app", "client",
    ]  # fmt: skip


def test_models_are_frozen_and_closed() -> None:
    for model in (FrictionSignal,):
        assert model.model_config.get("frozen") is True
        assert model.model_config.get("extra") == "forbid"


def test_catalogue_holds_the_required_tools() -> None:
    names = {t.name for t in load_catalogue()}
    required = {
        "report_friction", "recipe_save", "recipe_run", "recipe_export", "recipe_import",
        "recipe_list", "recipe_delete", "save_cloud_skill", "recall_cloud_skill",
        "execute_cloud_skill", "get_datetime", "list_notes", "read_note", "create_note",
        "append_to_note", "delete_note", "list_files", "read_file", "write_file",
        "search_files", "list_emails", "read_email", "send_email",
    }  # fmt: skip
    assert required <= names
    for tool in load_catalogue():
        assert tool.effect.value in {"read", "write", "send"}
        assert tool.input_schema.get("type") == "object"


def test_catalogue_file_matches_its_schema() -> None:
    from jsonschema import Draft202012Validator

    schema = json.loads((ROOT / "docs/schema/tool-catalogue.v1.json").read_text())
    Draft202012Validator(schema).validate(raw_catalogue())
    for tool in raw_catalogue()["tools"]:
        Draft202012Validator.check_schema(tool["input_schema"])


@pytest.mark.parametrize(
    ("type_name", "enum"),
    [
        ("friction_type", FrictionType),
        ("error_category", ErrorCategory),
        ("intent_category", IntentCategory),
        ("error_class", ErrorClass),
        ("outcome", Outcome),
        ("arg_type", ArgType),
        ("size_bucket", SizeBucket),
        ("platform", Platform),
        ("attempts_bucket", AttemptsBucket),
        ("tool_name", ToolName),
        ("arg_name", ArgName),
    ],  # fmt: skip
)
def test_storage_enums_mirror_the_wire_enums(type_name: str, enum: type) -> None:
    con = duckdb.connect()
    for migration in sorted((ROOT / "collector/migrations").glob("000*.sql")):
        con.execute(migration.read_text())
    (values,) = con.execute("SELECT enum_range(NULL::" + type_name + ")").fetchone() or ((),)
    assert list(values) == [m.value for m in enum]  # type: ignore[attr-defined]
