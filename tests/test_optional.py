"""Optional parts are skipped only when an extra's third-party dependency is missing."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from lmcp._optional import import_optional


def test_present_module_is_returned() -> None:
    module = import_optional("contract.schema")
    assert module is not None and hasattr(module, "FrictionSignal")


def test_missing_third_party_dependency_means_absent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "lmcp_fake_extra.py").write_text("import not_an_installed_package_xyz\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert import_optional("lmcp_fake_extra") is None
    sys.modules.pop("lmcp_fake_extra", None)


def test_a_broken_own_module_is_a_bug_not_an_absent_extra() -> None:
    with pytest.raises(ModuleNotFoundError):
        import_optional("client.no_such_module")
