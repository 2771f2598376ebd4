"""``contract/`` is the ground every program stands on: it imports the standard library and
pydantic only (``docs/architecture.md``). The personal-data scan's library checks (stdnum,
phonenumbers) are therefore given to it by the Cloud Skills service, never imported here. The
one exception is OpenDP, in the accountant only: the published guarantee is OpenDP's own
conversion of rho into (epsilon, delta), imported inside the function that prints it."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ALLOWED = {"contract", "pydantic", "pydantic_core", "__future__"}
#: Third-party imports allowed in one module each (imported lazily there).
ALLOWED_IN = {"opendp": "contract/accountant.py"}


def _imported(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_the_contract_imports_only_the_standard_library_and_pydantic() -> None:
    outside = {
        f"{path.relative_to(ROOT)}: {name}"
        for path in (ROOT / "contract").rglob("*.py")
        for name in _imported(path)
        if name not in ALLOWED
        and name not in sys.stdlib_module_names
        and ALLOWED_IN.get(name) != str(path.relative_to(ROOT))
    }
    assert outside == set()


def test_the_check_finds_a_third_party_import(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("import json\nfrom stdnum import luhn\nimport phonenumbers.util\n")
    assert {n for n in _imported(module) if n not in sys.stdlib_module_names} == {
        "stdnum",
        "phonenumbers",
    }
