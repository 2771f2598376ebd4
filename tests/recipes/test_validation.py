"""Checks at save: errors name the step and the field, never a value; property tests."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from client.recipes import MAX_STEPS, ManifestChecker, ManifestError, parse_manifest
from contract.catalogue import load_catalogue
from tests.recipes.conftest import Save, message

CHECKER = ManifestChecker(load_catalogue())


def problems(raw: Any) -> str:
    with pytest.raises(ManifestError) as caught:
        CHECKER.check(raw)
    return str(caught.value)


def test_every_tool_must_be_in_the_catalogue() -> None:
    text = problems({"name": "x", "steps": [{"tool": "get_datetime"}, {"tool": "rm_rf_secret"}]})
    assert "steps[1].tool: is not a tool in the LMCP catalogue" in text
    assert "rm_rf_secret" not in text


@pytest.mark.parametrize("tool", ["recipe_run", "recipe_save", "report_friction"])
def test_recipes_do_not_nest_or_report_friction(tool: str) -> None:
    assert "cannot be a recipe step" in problems({"name": "x", "steps": [{"tool": tool}]})


def test_args_must_be_valid_for_the_tool_naming_step_and_field() -> None:
    text = problems(
        {
            "name": "x",
            "steps": [
                {"tool": "get_datetime"},
                {"tool": "list_notes", "args": {"limit": "many-canary"}},
                {"tool": "read_file", "args": {}},
                {"tool": "get_datetime", "args": {"undeclared-canary": 1}},
            ],
        }
    )
    assert "steps[1].args: argument 'limit' breaks rule 'type'" in text
    assert "steps[2].args: missing required argument 'path'" in text
    assert "steps[3].args: 1 argument(s) not declared by the tool" in text
    assert "canary" not in text


def test_placeholders_are_checked_against_declared_param_types() -> None:
    base = {"name": "x", "params": [{"name": "s", "type": "string"}, {"name": "n", "type": "int"}]}
    bad = problems({**base, "steps": [{"tool": "list_notes", "args": {"limit": "${s}"}}]})
    assert "steps[0].args: argument 'limit' breaks rule 'type'" in bad
    embedded = problems({**base, "steps": [{"tool": "list_notes", "args": {"limit": "1${n}"}}]})
    assert "argument 'limit' breaks rule 'type'" in embedded
    # an int param where an integer with bounds is wanted: only the type can be checked now
    ok = CHECKER.check(
        {**base, "steps": [{"tool": "list_notes", "args": {"limit": "${n}", "folder": "${s}"}}]}
    )
    assert ok.warnings == ()
    # an earlier step's result is known only at run time
    assert CHECKER.check(
        {
            "name": "x",
            "steps": [
                {"tool": "list_notes"},
                {"tool": "list_notes", "args": {"limit": "${steps[0].result.count}"}},
            ],
        }
    )


def test_every_placeholder_must_be_declared() -> None:
    text = problems(
        {"name": "x", "steps": [{"tool": "read_note", "args": {"note_name": "${who_canary}"}}]}
    )
    assert "steps[0].args.note_name: refers to a param that is not declared" in text
    assert "who_canary" not in text


def test_a_step_reference_to_a_pause_is_refused() -> None:
    text = problems(
        {
            "name": "x",
            "steps": [
                {"wait": 0},
                {"tool": "read_note", "args": {"note_name": "${steps[0].result}"}},
            ],
        }
    )
    assert "is a pause, it has no result" in text


def test_unused_params_are_warned_about(save: Save) -> None:
    saved = save(
        {
            "name": "Unused",
            "params": [{"name": "spare", "type": "bool"}],
            "steps": [{"tool": "get_datetime"}],
        }
    )
    assert saved.result["warnings"] == ["param 'spare' is declared but never used"]


def test_steps_are_bounded() -> None:
    text = problems({"name": "x", "steps": [{"tool": "get_datetime"}] * (MAX_STEPS + 1)})
    assert f"steps: must have at most {MAX_STEPS} items" in text
    waits = problems({"name": "x", "steps": [{"wait": 300}] * 4})
    assert "pauses add up to more than" in waits


def test_unknown_fields_are_counted_not_named() -> None:
    text = problems(
        {"name": "x", "colour_canary": 1, "steps": [{"tool": "get_datetime", "why_canary": 2}]}
    )
    assert "manifest: has 1 unknown field(s)" in text and "canary" not in text


def test_a_refused_save_writes_nothing(save: Save, home: Any) -> None:
    refused = save({"name": "Broken", "steps": [{"tool": "nope"}]})
    assert refused.error is not None and refused.error.code == "invalid_manifest"
    assert not home.recipes.exists() or not any(home.recipes.iterdir())
    assert "Broken" not in message(refused)


# -- properties -------------------------------------------------------------------------------
canary = st.text(alphabet="QZXJ", min_size=6, max_size=10).map(lambda s: "CANARY" + s)
junk = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | canary,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            canary
            | st.sampled_from(
                ["name", "steps", "tool", "args", "wait", "params", "optional", "type", "default"]
            ),
            inner,
            max_size=4,
        )
    ),
    max_leaves=15,
)


@given(raw=junk)
def test_any_input_is_refused_or_accepted_cleanly_and_errors_never_echo_a_value(raw: Any) -> None:
    try:
        CHECKER.check(raw)
    except ManifestError as exc:
        assert "CANARY" not in str(exc)
        assert exc.problems


read_steps = st.one_of(
    st.just({"tool": "get_datetime"}),
    st.builds(lambda n: {"tool": "list_notes", "args": {"limit": n}}, st.integers(1, 500)),
    st.builds(
        lambda q: {"tool": "search_files", "args": {"query": q}, "optional": True},
        st.text(min_size=1, max_size=20).filter(lambda t: "${" not in t),
    ),
    st.builds(lambda s: {"wait": s}, st.integers(0, 5)),
)


@given(
    name=st.text(min_size=1, max_size=40).filter(
        lambda t: t.strip() and not any(ord(c) < 32 or 0x7F <= ord(c) < 0xA0 for c in t)
    ),
    steps=st.lists(read_steps, min_size=1, max_size=8),
)
def test_a_valid_manifest_is_accepted_and_its_normal_form_is_a_fixed_point(
    name: str, steps: list[dict[str, Any]]
) -> None:
    checked = CHECKER.check({"name": name, "steps": steps})
    normal = checked.manifest.to_json()
    again = CHECKER.check(normal)
    assert again.manifest == checked.manifest
    assert parse_manifest(normal)[0] == checked.manifest
    assert len(checked.manifest.steps) == len(steps)
