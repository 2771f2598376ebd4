"""Suite-wide setup: the hypothesis profile (``tests/hypothesis_profiles.py``), loaded before any
test module is imported so per-test caps (``at_most``) see it; the guard that fails a test
which leaves a child process running (``tests/_leaks.py``); and the fixtures both ``tests`` and
``privacy_tests`` use.
"""

from __future__ import annotations

import gc
import itertools
import os
import pickle
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests import hypothesis_profiles
from tests._leaks import command_of, leaked_children, record_children

if TYPE_CHECKING:  # the product is imported by the tests that use it, not at collection
    from lmcp.datacatalogue import DataCatalogue

_PROFILE = hypothesis_profiles.load()
# A collector a test starts releases nothing on its own (each closed period of 90 days costs
# seconds of sampling); the tests of the release job set their own backfill.
os.environ.setdefault("LMCP_COLLECTOR_RELEASE_BACKFILL_DAYS", "0")
# The account's default folder (``ClientSettings.account_home``: its consent choice holds for
# every state folder) is never the real one: on Linux platformdirs reads XDG_DATA_HOME. This
# one serves what starts before a test (module fixtures, the processes they spawn); each test
# gets its own below, so a test that records a choice there changes no other test.
_ACCOUNTS = Path(tempfile.mkdtemp(prefix="lmcp-test-accounts-"))
os.environ["XDG_DATA_HOME"] = str(_ACCOUNTS / "session")
_ACCOUNT_IDS = itertools.count()
record_children()


#: Allocations between two young-generation collections in a test process (CPython: 700).
TEST_GC_GEN0_THRESHOLD = 10_000


def pytest_collection_finish(session: pytest.Session) -> None:
    """The test process's garbage collector runs far less often, and never again over what
    collection loaded (``gc.freeze``): a view's derivation builds ~10^5 short-lived tuples,
    and CPython's default passes over them cost the fast tier its budget (measured in
    CONTRIBUTING.md). The serving process is tuned the same way (``tune_serving_process``)."""
    gc.collect()
    gc.freeze()
    _, gen1, gen2 = gc.get_threshold()
    gc.set_threshold(TEST_GC_GEN0_THRESHOLD, gen1, gen2)


def pytest_unconfigure(config: pytest.Config) -> None:
    shutil.rmtree(_ACCOUNTS, ignore_errors=True)


@pytest.fixture(autouse=True)
def _own_account_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test's own account folder (see ``_ACCOUNTS``): nothing is created until written."""
    monkeypatch.setenv("XDG_DATA_HOME", str(_ACCOUNTS / f"t{next(_ACCOUNT_IDS)}"))


def pytest_report_header(config: pytest.Config) -> str:
    return f"hypothesis profile: {_PROFILE} (set {hypothesis_profiles.PROFILE_ENV}=ci|dev)"


@pytest.fixture(autouse=True)
def _no_child_left_running() -> Iterator[None]:
    """Set up before, torn down after, every other fixture of the test (autouse, function
    scope): what is still running at the end was left by the test or its fixtures."""
    with leaked_children() as leaked:
        yield
    if leaked:
        commands = "; ".join(command_of(p) for p in leaked)
        pytest.fail(f"the test left {len(leaked)} child process(es) running (killed): {commands}")


@pytest.fixture(scope="session")
def data_catalogue(tmp_path_factory: pytest.TempPathFactory) -> DataCatalogue:
    """The generated data catalogue (``lmcp.datacatalogue.generate``), built once per run
    (``tests/_once.py``): each build writes and releases an example lake."""
    from lmcp.datacatalogue import DataCatalogue, generate
    from tests._once import built_once

    def build(path: Path) -> None:
        path.write_bytes(pickle.dumps(generate()))

    catalogue = pickle.loads(
        built_once(tmp_path_factory, "data-catalogue.pickle", build).read_bytes()
    )
    assert isinstance(catalogue, DataCatalogue)
    return catalogue


@pytest.fixture(scope="module")
def catalogue_command(data_catalogue: DataCatalogue) -> Iterator[DataCatalogue]:
    """From here to the end of the module, ``lmcp signals catalogue`` prints ``data_catalogue``
    rather than generating its own: the catalogue is the same at every generation
    (``test_audit_lake_catalogue.py``), and each one writes and releases an example lake (~2 s
    of CPU). The command's own generation runs in the slow tier (``test_audit_schema.py``)."""
    import lmcp.datacatalogue

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(lmcp.datacatalogue, "generate", lambda: data_catalogue)
        yield data_catalogue
