"""The collector's documentation keeps up with the code (like datasette's test_docs.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from collector.settings import CollectorSettings

DOCS = Path(__file__).resolve().parents[2] / "docs"
COLLECTOR = Path(__file__).resolve().parents[2] / "collector"
#: The plumbing the collector shares with Cloud Skills: its problem codes answer here too.
SERVICE = Path(__file__).resolve().parents[2] / "service"


def _collector_section() -> str:
    text = (DOCS / "configuration.md").read_text(encoding="utf-8")
    start = text.index("## Collector settings")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else None]


@pytest.mark.parametrize("name", sorted(CollectorSettings.model_fields))
def test_every_setting_is_documented(name: str) -> None:
    assert re.search(rf"^\| `{name}` \|", _collector_section(), re.MULTILINE), name


def test_no_documented_setting_is_gone() -> None:
    documented = set(re.findall(r"^\| `([a-z_0-9]+)` \|", _collector_section(), re.MULTILINE))
    assert documented == set(CollectorSettings.model_fields)


def _codes_in_code() -> set[str]:
    codes: set[str] = set()
    for path in [*COLLECTOR.glob("*.py"), *SERVICE.glob("*.py")]:
        text = path.read_text(encoding="utf-8")
        codes |= set(re.findall(r"ProblemError\(\s*\d{3},\s*\"([a-z_]+)\"", text))
        codes |= set(re.findall(r"problem_response\(\s*\d{3},\s*\"([a-z_]+)\"", text))
    text = (SERVICE / "errors.py").read_text(encoding="utf-8")
    block = text[text.index("_HTTP_CODES") : text.index("}", text.index("_HTTP_CODES"))]
    codes |= set(re.findall(r"\"([a-z_]+)\"", block))
    return codes


def test_every_error_code_is_documented() -> None:
    api = (DOCS / "collector-api.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"^\| \d{3} \| `([a-z_]+)` \|", api, re.MULTILINE))
    codes = _codes_in_code()
    assert len(codes) >= 15
    # Codes Starlette may produce for statuses the collector itself never raises are optional.
    optional = {"bad_request", "not_acceptable", "unavailable"}
    assert codes - optional <= documented, sorted(codes - optional - documented)


def test_operations_and_scaling_pages_exist() -> None:
    ops = (DOCS / "operations.md").read_text(encoding="utf-8")
    assert "/v1/signals/export" in ops and "retention" in ops.lower()
    assert "lakehouse" in (DOCS / "scaling.md").read_text(encoding="utf-8").lower()
