"""One settings object per program: ``ClientSettings.from_env`` reads the documented variables
and nothing else, the environment can only turn signals off, and no module of ``client/`` but
the named ones reads the process environment."""

from __future__ import annotations

import ast
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from client.consent import ConsentGate, ConsentSource, SignalsMode
from client.paths import LmcpHome
from client.settings import EXEC_TIMEOUT_RANGE_S, ClientSettings, default_home, variables

CLIENT = Path(__file__).resolve().parents[2] / "client"
#: The modules that may read the process environment, and why.
READERS = {
    # The constructor every entry point calls once (``ClientSettings.from_process``).
    "settings.py",
    # ``lmcp mcp``'s token hand-over: it must run before the settings exist.
    "skills/_token.py",
    # A script's child gets what Windows needs to start a process (SYSTEMROOT), nothing else.
    "skills/_execute.py",
}
#: What reads (or writes) the process environment in the ``os`` module.
_ENV_NAMES = frozenset({"environ", "environb", "getenv", "getenvb", "putenv", "unsetenv"})


def environment_reads(source: str) -> list[int]:
    """The lines of ``source`` that touch the process environment through ``os`` (however it is
    imported or renamed)."""
    tree = ast.parse(source)
    os_names = {"os"}
    bound: set[str] = set()  # names bound to os.environ, os.getenv, ...
    lines: list[int] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in ("os", "posix", "nt"):
                    os_names.add(alias.asname or alias.name)
        elif isinstance(node, ast.ImportFrom) and node.module in ("os", "posix", "nt"):
            for alias in node.names:
                if alias.name in _ENV_NAMES:
                    bound.add(alias.asname or alias.name)
                    lines.append(node.lineno)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and node.attr in _ENV_NAMES
            and isinstance(node.value, ast.Name)
            and node.value.id in os_names
        ):
            lines.append(node.lineno)
        elif isinstance(node, ast.Name) and node.id in bound:
            lines.append(node.lineno)
    return sorted(set(lines))


def _modules() -> Iterator[tuple[str, Path]]:
    for path in sorted(CLIENT.rglob("*.py")):
        yield path.relative_to(CLIENT).as_posix(), path


def test_only_the_named_modules_read_the_process_environment() -> None:
    found = {
        name: lines
        for name, path in _modules()
        if name not in READERS and (lines := environment_reads(path.read_text(encoding="utf-8")))
    }
    assert found == {}, f"read the environment from ClientSettings instead: {found}"


def test_every_named_reader_exists_and_reads_it() -> None:
    """A reader left on the list after it stopped reading would let another start unseen."""
    for name in READERS:
        assert environment_reads((CLIENT / name).read_text(encoding="utf-8")), name


@pytest.mark.parametrize(
    "source",
    [
        "import os\nos.environ['X']",
        "import os\nos.environ.get('X')",
        "import os\nos.getenv('X')",
        "import os as o\no.environ",
        "from os import environ\nenviron['X']",
        "from os import getenv as g\ng('X')",
        "import posix\nposix.environ",
        "import os\ndict(os.environb)",
        "import os\nos.putenv('X', '1')",
        "import os\ndef f():\n    return os.environ",
    ],
)
def test_the_scan_finds_every_way_to_read_the_environment(source: str) -> None:
    assert environment_reads(source)


def test_the_scan_leaves_a_mapping_named_environ_alone() -> None:
    assert environment_reads("def f(environ):\n    return environ.get('X')\n") == []


class _Recording(Mapping[str, str]):
    """An environment that remembers which variables were asked for."""

    def __init__(self, values: Mapping[str, str]) -> None:
        self._values = dict(values)
        self.asked: set[str] = set()

    def __getitem__(self, key: str) -> str:
        self.asked.add(key)
        return self._values[key]

    def get(self, key: str, default: object = None) -> object:  # type: ignore[override]
        self.asked.add(key)
        return self._values.get(key, default)

    def __iter__(self) -> Iterator[str]:
        raise AssertionError("the settings read named variables, never the whole environment")

    def __len__(self) -> int:
        return len(self._values)


def test_from_env_reads_exactly_the_documented_variables() -> None:
    environ = _Recording({"PATH": "/bin", "HOME": "/home/x", "LMCP_OTHER": "1"})
    ClientSettings.from_env(environ)
    assert environ.asked == {name for names in variables().values() for name in names}


def test_from_env_reads_each_setting_from_its_variable(tmp_path: Path) -> None:
    settings = ClientSettings.from_env(
        {
            "LMCP_HOME": str(tmp_path),
            "LMCP_COLLECTOR_URL": "https://collector.example",
            "LMCP_ANONYMOUS_SIGNALS": "0",
            "LMCP_SKILLS_URL": "https://skills.example/",
            "LMCP_SKILLS_TOKEN": "a-token",
            "LMCP_SKILLS_TOKEN_FILE": str(tmp_path / "token"),
            "LMCP_SKILLS_EXEC_TIMEOUT_S": "12.5",
            "LMCP_SKILLS_ALLOW_UNSANDBOXED": "1",
        }
    )
    assert settings == ClientSettings(
        home=LmcpHome(tmp_path),
        collector_url="https://collector.example",
        signals_restriction=ConsentSource.env,
        skills_url="https://skills.example",
        skills_token="a-token",
        skills_token_file=tmp_path / "token",
        skills_exec_timeout_s=12.5,
        skills_allow_unsandboxed=True,
    )


def test_an_empty_environment_gives_the_defaults() -> None:
    settings = ClientSettings.from_env({})
    assert settings == ClientSettings() and settings.home == default_home()
    assert settings.signals_restriction is None and settings.skills_token is None


@pytest.mark.parametrize(
    ("raw", "seconds"),
    [
        ("", None),
        ("soon", None),
        ("nan", None),
        ("0", EXEC_TIMEOUT_RANGE_S[0]),
        ("-5", EXEC_TIMEOUT_RANGE_S[0]),
        ("1e9", EXEC_TIMEOUT_RANGE_S[1]),
        ("inf", EXEC_TIMEOUT_RANGE_S[1]),
        ("7", 7.0),
    ],
)
def test_an_unusable_time_limit_reads_as_the_default_and_others_are_clamped(
    raw: str, seconds: float | None
) -> None:
    got = ClientSettings.from_env({"LMCP_SKILLS_EXEC_TIMEOUT_S": raw}).skills_exec_timeout_s
    assert got == seconds


def test_the_token_is_never_in_the_settings_repr(tmp_path: Path) -> None:
    settings = ClientSettings.from_env({"LMCP_HOME": str(tmp_path), "LMCP_SKILLS_TOKEN": "s3cr3t"})
    assert settings.skills_token == "s3cr3t"
    assert "s3cr3t" not in repr(settings) and "s3cr3t" not in str(settings)


_VALUES = st.one_of(
    st.none(), st.sampled_from(["", "0", "1", "true", "yes", " 1", "off"]), st.text()
)


@given(dnt=_VALUES, flag=_VALUES)
def test_the_environment_can_only_turn_signals_off(dnt: str | None, flag: str | None) -> None:
    """Whatever the two variables hold, the process is restricted unless both leave it free;
    a restricted process is OFF though the user chose ``on``, a free one follows the choice."""
    pairs = (("DO_NOT_TRACK", dnt), ("LMCP_ANONYMOUS_SIGNALS", flag))
    restriction = ClientSettings.from_env(
        {k: v for k, v in pairs if v is not None}
    ).signals_restriction
    free = dnt in (None, "", "0") and flag in (None, "1")
    assert (restriction is None) is free
    with tempfile.TemporaryDirectory() as folder:
        home = LmcpHome(Path(folder))
        ConsentGate(home).set_mode(SignalsMode.on)
        want = SignalsMode.on if free else SignalsMode.off
        assert ConsentGate(home, restriction).mode() is want
