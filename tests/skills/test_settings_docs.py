"""The skills service's settings: documented, read from ``LMCP_SKILLS_*``, never the collector's."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cloudskills.settings import SkillsSettings
from collector.settings import CollectorSettings

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _section() -> str:
    text = (DOCS / "configuration.md").read_text(encoding="utf-8")
    start = text.index("## Cloud Skills service settings")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else None]


def test_every_setting_is_documented_and_no_documented_one_is_gone() -> None:
    documented = set(re.findall(r"^\| `([a-z_0-9]+)` \|", _section(), re.MULTILINE))
    assert documented == set(SkillsSettings.model_fields)


def test_settings_come_from_the_environment_and_hide_tokens(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("LMCP_SKILLS_PRINCIPALS", '[{"token": "t-fake-skills", "principal": "ada"}]')
    monkeypatch.setenv("LMCP_SKILLS_DB_PATH", str(tmp_path / "s.duckdb"))
    # The client's variables share the prefix: the service ignores them.
    monkeypatch.setenv("LMCP_SKILLS_URL", "http://127.0.0.1:1")
    monkeypatch.setenv("LMCP_SKILLS_TOKEN", "t-client-fake")
    settings = SkillsSettings()
    assert settings.principals[0].principal == "ada"
    assert settings.db_path == tmp_path / "s.duckdb"
    assert (settings.host, settings.port) == ("127.0.0.1", 8766)
    assert "t-fake-skills" not in repr(settings)


def test_the_default_files_differ_and_the_collector_has_no_skills_setting() -> None:
    assert SkillsSettings().db_path != CollectorSettings().db_path
    assert not [name for name in CollectorSettings.model_fields if "skill" in name]
    assert SkillsSettings().port != CollectorSettings().port
