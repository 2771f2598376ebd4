"""Property tests of the pure interpolation core."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from client.recipes import (
    ParamRef,
    RefSyntaxError,
    StepRef,
    Unresolved,
    find_refs,
    interpolate,
    parse_ref,
    stringify,
)

names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,10}", fullmatch=True)
keys = st.from_regex(r"[A-Za-z_][A-Za-z0-9_\-]{0,8}", fullmatch=True)
scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=20)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=3),
    max_leaves=10,
)


@given(name=names, value=json_values)
def test_an_exact_placeholder_keeps_the_json_type(name: str, value: Any) -> None:
    assert interpolate("${" + name + "}", {name: value}) == value
    assert type(interpolate("${" + name + "}", {name: value})) is type(value)


@given(name=names, value=json_values, prefix=st.text(alphabet="ab $-", max_size=5))
def test_an_embedded_placeholder_is_stringified(name: str, value: Any, prefix: str) -> None:
    prefix = prefix.replace("$", "")
    out = interpolate(prefix + "${" + name + "}!", {name: value})
    assert out == prefix + stringify(value) + "!"
    if not isinstance(value, str):
        assert json.loads(stringify(value)) == value


@given(name=names, other=names, text=st.text(max_size=10))
def test_substituted_text_is_never_interpolated_again(name: str, other: str, text: str) -> None:
    assume(name != other)
    sneaky = text + "${" + other + "}"
    params = {name: sneaky, other: "LEAKED"}
    assert interpolate("${" + name + "}", params) == sneaky
    assert interpolate("<${" + name + "}>", params) == "<" + sneaky + ">"


@given(data=st.data(), result=json_values)
def test_key_and_index_paths_reach_into_an_earlier_result(data: st.DataObject, result: Any) -> None:
    path: list[str | int] = []
    current = result
    while isinstance(current, dict | list) and current and data.draw(st.booleans()):
        if isinstance(current, dict):
            key = data.draw(st.sampled_from(sorted(current)))
            path.append(key)
            current = current[key]
        else:
            index = data.draw(st.integers(0, len(current) - 1))
            path.append(index)
            current = current[index]
    ref = StepRef(0, tuple(path))
    assert parse_ref(str(ref)) == ref
    assert interpolate("${" + str(ref) + "}", {}, {0: result}) == current


@given(result=st.dictionaries(keys, scalars, max_size=4), missing=keys)
def test_a_missing_key_is_an_error_naming_the_reference_never_an_empty_string(
    result: dict[str, Any], missing: str
) -> None:
    if missing in result:
        return
    ref = "${steps[0].result." + missing + "}"
    with pytest.raises(Unresolved) as caught:
        interpolate({"a": "x " + ref}, {}, {0: result})
    assert str(caught.value).startswith(f"reference {ref} cannot be resolved")
    for value in result.values():
        if isinstance(value, str) and len(value) > 3:
            assert value not in str(caught.value)


def test_unresolved_cases() -> None:
    cases: list[tuple[str, dict[int, Any], str]] = [
        ("${steps[0].result[3]}", {0: [1]}, "past the end"),
        ("${steps[0].result.a}", {0: [1]}, "not an object"),
        ("${steps[0].result[0]}", {0: {"a": 1}}, "not a list"),
        ("${steps[1].result}", {0: 1}, "has no result"),
        ("${p}", {}, "no value"),
    ]
    for text, results, reason in cases:
        with pytest.raises(Unresolved, match=reason):
            interpolate(text, {}, results)
    with pytest.raises(Unresolved) as blocked:
        interpolate("${steps[0].result}", {}, {}, {0: ("needs_confirmation", "only a preview")})
    assert blocked.value.code == "needs_confirmation"


def test_nested_structures_are_walked_and_keys_are_not() -> None:
    value = {"to": ["${a}", "x${a}"], "${a}": {"deep": "${b}"}}
    assert interpolate(value, {"a": "A", "b": 2}) == {"to": ["A", "xA"], "${a}": {"deep": 2}}


def test_dollar_dollar_brace_is_a_literal() -> None:
    assert interpolate("cost $${x} ${x}", {"x": 5}) == "cost ${x} 5"
    assert find_refs("$${x}") == ((), False)


@pytest.mark.parametrize(
    "bad",
    [
        "${}",
        "${1x}",
        "${steps[0]}",
        "${steps[01].result}",
        "${steps[0].result..a}",
        "${steps[0].result[x]}",
        "${a b}",
        "open ${x",
    ],
)
def test_malformed_references_are_syntax_errors(bad: str) -> None:
    with pytest.raises(RefSyntaxError):
        find_refs(bad)


def test_parse_ref_forms() -> None:
    assert parse_ref("count") == ParamRef("count")
    assert parse_ref("steps[2].result.accounts[0].name") == StepRef(2, ("accounts", 0, "name"))
    assert find_refs("${a} and ${steps[0].result}") == ((ParamRef("a"), StepRef(0)), False)
