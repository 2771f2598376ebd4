"""The spec's validation rules, one test per rule, on the pure core (no I/O).

Spec (save_cloud_skill, Errors): validation failure -- name or instructions empty, invalid
slug, or instructions over 64 KiB; component validation failure -- components_json not a JSON
array, a component path empty / absolute / traversing / reserved / duplicated, an invalid type,
or a component over 128 KiB. Plus: at most 50 components, secrets refused.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cloudskills.limits import (
    MAX_COMPONENT_BYTES,
    MAX_COMPONENTS,
    MAX_INSTRUCTIONS_BYTES,
)
from cloudskills.paths import path_problem
from cloudskills.slugs import derive_slug, is_valid_slug
from cloudskills.validation import InvalidSkill, Issue, validate_save


def body(**overrides: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"name": "Deployment procedure", "instructions": "Run the smoke test."}
    out.update(overrides)
    return out


def components(*items: dict[str, Any]) -> str:
    return json.dumps(list(items))


def comp(path: str = "notes/readme.md", **overrides: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "reference", "logical_path": path, "content": "hello"}
    out.update(overrides)
    return out


def issues_of(request: dict[str, Any]) -> list[Issue]:
    with pytest.raises(InvalidSkill) as caught:
        validate_save(request)
    return caught.value.issues


def rules(request: dict[str, Any]) -> set[str]:
    return {issue.code for issue in issues_of(request)}


# -- parameters and defaults ------------------------------------------------------------------


def test_parameters_defaults_slug_derived_description_empty_publish_true_components_empty() -> None:
    draft = validate_save(body())
    assert draft.slug == "deployment-procedure"
    assert draft.description == ""
    assert draft.publish is True
    assert draft.components == ()


def test_parameters_given_values_are_kept() -> None:
    draft = validate_save(
        body(slug="deploy", description="A bounded check", publish=False, components_json="[]")
    )
    assert (draft.slug, draft.description, draft.publish) == ("deploy", "A bounded check", False)


def test_parameters_null_optional_values_take_their_defaults() -> None:
    draft = validate_save(body(slug=None, description=None, publish=None, components_json=None))
    assert (draft.slug, draft.description, draft.publish) == ("deployment-procedure", "", True)


def test_parameters_unknown_field_refused_without_naming_it() -> None:
    found = issues_of(body(team_secret_field="x"))
    assert [i.code for i in found] == ["field_unknown"]
    assert "team_secret_field" not in found[0].detail


def test_parameters_wrong_types_refused() -> None:
    assert rules(body(name=3)) == {"field_type"}
    assert rules(body(publish="yes")) == {"field_type"}
    assert rules(body(slug=7)) == {"field_type"}


# -- validation failure: name ----------------------------------------------------------------


def test_validation_failure_name_empty() -> None:
    assert rules(body(name="")) == {"name_empty"}


def test_validation_failure_name_whitespace_only_is_empty() -> None:
    assert "name_empty" in rules(body(name="  \t "))


def test_validation_failure_name_missing() -> None:
    request = body()
    del request["name"]
    assert "name_empty" in rules(request)


# -- validation failure: instructions ---------------------------------------------------------


def test_validation_failure_instructions_empty() -> None:
    assert rules(body(instructions="")) == {"instructions_empty"}


def test_validation_failure_instructions_missing() -> None:
    request = body()
    del request["instructions"]
    assert rules(request) == {"instructions_empty"}


def test_validation_failure_instructions_over_64_kib() -> None:
    assert rules(body(instructions="a" * (MAX_INSTRUCTIONS_BYTES + 1))) == {
        "instructions_too_large"
    }


def test_instructions_of_exactly_64_kib_accepted() -> None:
    assert validate_save(body(instructions="a" * MAX_INSTRUCTIONS_BYTES)).instructions


def test_instructions_limit_counts_utf8_bytes_not_characters() -> None:
    # 'é' is 2 bytes: 32 Ki characters are exactly 64 KiB; one more is over.
    assert validate_save(body(instructions="é" * (MAX_INSTRUCTIONS_BYTES // 2)))
    assert rules(body(instructions="é" * (MAX_INSTRUCTIONS_BYTES // 2) + "a")) == {
        "instructions_too_large"
    }


def test_instructions_with_a_lone_surrogate_refused_as_not_utf8() -> None:
    assert rules(body(instructions="abc\ud800")) == {"text_not_utf8"}


# -- validation failure: slug ----------------------------------------------------------------


@pytest.mark.parametrize(
    "slug", ["", "Deploy", "deploy_now", "-deploy", "deploy-", "de--ploy", "a" * 65, "déploy"]
)
def test_validation_failure_invalid_slug(slug: str) -> None:
    assert rules(body(slug=slug)) == {"slug_invalid"}


@pytest.mark.parametrize("slug", ["a", "deploy", "deploy-2", "a" * 64, "0-x"])
def test_slug_of_1_to_64_lowercase_characters_accepted(slug: str) -> None:
    assert validate_save(body(slug=slug)).slug == slug


def test_slug_derived_from_name_when_absent() -> None:
    assert validate_save(body(name="Déploiement  Procédure v2!")).slug == "deploiement-procedure-v2"


def test_slug_not_derivable_from_name_refused() -> None:
    assert rules(body(name="部署手順")) == {"slug_underivable"}


@given(st.text(max_size=200))
def test_property_a_derived_slug_always_honours_the_slug_contract(name: str) -> None:
    slug = derive_slug(name)
    assert slug is None or is_valid_slug(slug)


@given(st.text(max_size=80))
def test_property_slug_contract_is_1_to_64_lowercase(slug: str) -> None:
    if is_valid_slug(slug):
        assert 1 <= len(slug) <= 64
        assert slug == slug.lower() and slug.isascii()


# -- component validation failure -------------------------------------------------------------


@pytest.mark.parametrize("raw", ["{}", '"[]"', "3", "null", "not json", "[1,", "[NaN]"])
def test_component_validation_failure_components_json_not_a_json_array(raw: str) -> None:
    assert rules(body(components_json=raw)) == {"components_not_array"}


def test_component_validation_failure_components_json_given_as_an_array_not_a_string() -> None:
    assert rules(body(components_json=[comp()])) == {"components_not_array"}


def test_component_validation_failure_duplicate_json_keys_refused() -> None:
    raw = '[{"type": "reference", "type": "script", "logical_path": "a", "content": "x"}]'
    assert rules(body(components_json=raw)) == {"components_not_array"}


def test_component_validation_failure_component_path_empty() -> None:
    assert rules(body(components_json=components(comp("")))) == {"path_empty"}


def test_component_validation_failure_component_path_missing() -> None:
    item = comp()
    del item["logical_path"]
    assert rules(body(components_json=components(item))) == {"path_empty"}


@pytest.mark.parametrize("path", ["/etc/passwd", "/a", "C:/x", "c:relative"])
def test_component_validation_failure_component_path_absolute(path: str) -> None:
    assert rules(body(components_json=components(comp(path)))) == {"path_absolute"}


@pytest.mark.parametrize("path", ["..", "../x", "a/../../b", "a/.."])
def test_component_validation_failure_component_path_traverses_directories(path: str) -> None:
    assert rules(body(components_json=components(comp(path)))) == {"path_traversal"}


@pytest.mark.parametrize(
    "path", ["SKILL.md", "skill.MD", "manifest.json", "CON", "a/nul.txt", "x/COM1", "lpt9.log"]
)
def test_component_validation_failure_component_path_reserved(path: str) -> None:
    assert rules(body(components_json=components(comp(path)))) == {"path_reserved"}


@pytest.mark.parametrize(
    ("first", "second"),
    [("a/b.md", "a/b.md"), ("Docs/Readme.md", "docs/README.md"), ("caf\u00e9", "cafe\u0301")],
)
def test_component_validation_failure_component_path_duplicated(first: str, second: str) -> None:
    found = issues_of(body(components_json=components(comp(first), comp(second))))
    assert [(i.code, i.location) for i in found] == [
        ("path_duplicate", "components[1].logical_path")
    ]


@pytest.mark.parametrize("path", ["a\\b", "..\\x", "\\abs"])
def test_component_path_with_backslashes_refused(path: str) -> None:
    assert rules(body(components_json=components(comp(path)))) == {"path_backslash"}


@pytest.mark.parametrize("path", ["a//b", "./a", "a/./b", "a/"])
def test_component_path_with_empty_or_dot_segments_refused(path: str) -> None:
    assert rules(body(components_json=components(comp(path)))) == {"path_not_normalized"}


@pytest.mark.parametrize("path", ["a\x00b", "ab:c", "what?", "trailing.", "space ", "a|b"])
def test_component_path_not_portable_refused(path: str) -> None:
    assert rules(body(components_json=components(comp(path)))) == {"path_not_portable"}


def test_component_path_over_512_characters_refused() -> None:
    assert rules(body(components_json=components(comp("a" * 513)))) == {"path_too_long"}


@given(st.lists(st.sampled_from(["a", "b", ".", "..", "/", "\\", ":", "C", " "]), max_size=12))
def test_property_an_accepted_path_is_relative_normalised_and_never_escapes(
    parts: list[str],
) -> None:
    path = "".join(parts)
    if path_problem(path) is None:
        assert path and not path.startswith("/") and "\\" not in path
        segments = path.split("/")
        assert all(s not in ("", ".", "..") for s in segments)


@pytest.mark.parametrize("kind", ["", "Script", "binary", "executable", None, 3])
def test_component_validation_failure_type_invalid(kind: Any) -> None:
    assert rules(body(components_json=components(comp(type=kind)))) == {"component_type_invalid"}


@pytest.mark.parametrize("kind", ["asset", "example", "reference", "schema", "template"])
def test_component_types_of_the_fixed_set_accepted(kind: str) -> None:
    assert validate_save(body(components_json=components(comp(type=kind)))).components


def test_component_validation_failure_component_over_128_kib() -> None:
    big = comp(content="a" * (MAX_COMPONENT_BYTES + 1))
    assert rules(body(components_json=components(big))) == {"component_too_large"}


def test_component_of_exactly_128_kib_accepted() -> None:
    exact = comp(content="a" * MAX_COMPONENT_BYTES)
    (component,) = validate_save(body(components_json=components(exact))).components
    assert component.size == MAX_COMPONENT_BYTES


def test_component_count_at_most_50() -> None:
    items = [comp(f"c{i}.md") for i in range(MAX_COMPONENTS)]
    assert len(validate_save(body(components_json=components(*items))).components) == 50
    items.append(comp("one-more.md"))
    assert rules(body(components_json=components(*items))) == {"too_many_components"}


@pytest.mark.parametrize(
    "item",
    [
        {"type": "reference", "logical_path": "a.md"},
        {"type": "reference", "logical_path": "a.md", "content": "x", "artifact_ref": "art:1"},
    ],
)
def test_component_content_xor_artifact_ref(item: dict[str, Any]) -> None:
    assert rules(body(components_json=components(item))) == {"component_content_xor_artifact_ref"}


def test_component_artifact_ref_accepted_without_content() -> None:
    item = {"type": "asset", "logical_path": "logo.png", "artifact_ref": "artifact:1234"}
    (component,) = validate_save(body(components_json=components(item))).components
    assert component.artifact_ref == "artifact:1234"
    assert (component.size, component.hash, component.mime_type) == (
        None,
        None,
        "application/octet-stream",
    )


def test_component_not_an_object_refused() -> None:
    assert rules(body(components_json="[1]")) == {"component_not_object"}


def test_component_unknown_field_refused() -> None:
    assert rules(body(components_json=components(comp(extra=1)))) == {"component_unknown_field"}


def test_component_mime_type_defaulted_from_a_fixed_table_and_checked() -> None:
    (component,) = validate_save(body(components_json=components(comp("x.json")))).components
    assert component.mime_type == "application/json"
    bad = comp(mime_type="Text/Plain; charset=utf-8")
    assert rules(body(components_json=components(bad))) == {"mime_type_invalid"}


@pytest.mark.parametrize("metadata", [[1], "x", {"n": 2**60}, {"s": "\ud800"}])
def test_component_metadata_must_be_canonical_json_object(metadata: Any) -> None:
    assert rules(body(components_json=components(comp(metadata=metadata)))) == {"metadata_invalid"}


def test_script_component_needs_content_and_a_supported_interpreter() -> None:
    ref = {"type": "script", "logical_path": "run.py", "artifact_ref": "artifact:1"}
    assert "script_needs_content" in rules(body(components_json=components(ref)))
    ruby = comp("run.rb", type="script", mime_type="text/x-ruby")
    assert rules(body(components_json=components(ruby))) == {"script_interpreter_unsupported"}
    ok = comp("run.py", type="script", content="print('ok')")
    assert validate_save(body(components_json=components(ok))).components[0].mime_type == (
        "text/x-python"
    )


def test_components_are_kept_in_logical_path_order() -> None:
    raw = components(comp("b.md"), comp("a/z.md"), comp("a.md"))
    draft = validate_save(body(components_json=raw))
    assert [c.logical_path for c in draft.components] == ["a.md", "a/z.md", "b.md"]


def test_every_issue_is_reported_at_once() -> None:
    found = rules(
        body(name="", instructions="", slug="BAD", components_json=components(comp("../x")))
    )
    assert found == {"name_empty", "instructions_empty", "slug_invalid", "path_traversal"}


def test_issue_classes_follow_the_spec_error_classes() -> None:
    found = issues_of(body(name="", components_json=components(comp("/abs"))))
    assert {(i.code, i.kind) for i in found} == {
        ("name_empty", "validation"),
        ("path_absolute", "component_validation"),
    }
