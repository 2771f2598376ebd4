"""The Cloud Skills token never stays in the environment of ``lmcp mcp``, a process that runs for
as long as the agent does: ``/proc/<pid>/environ`` (the kernel's copy, which ``del os.environ``
never touched) and ``/proc/<pid>/cmdline`` of the real server process hold no trace of it, while
its skills tools still authenticate against the real skills service on loopback."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest

from tests.mcp.conftest import mcp_session
from tests.skills.conftest import token_of

pytestmark = [
    pytest.mark.slow,  # every test here starts a process
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc"),
]


def _children_named(word: bytes) -> list[int]:
    """Our child processes whose command line holds ``word``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        ppid = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("PPid"))
        if ppid == os.getpid() and word in cmdline.split(b"\0"):
            found.append(int(entry.name))
    return found


def _payload(result: types.CallToolResult) -> dict[str, Any]:
    assert isinstance(result.structured_content, dict)
    return result.structured_content


def _serve_and_inspect(env: dict[str, str], slug: str) -> dict[str, Any]:
    async def run() -> dict[str, Any]:
        async with mcp_session(env) as session:  # initialised: the server's final image runs
            (pid,) = _children_named(b"mcp") or _children_named(b"client.mcp_stdio")
            proc = Path(f"/proc/{pid}")
            seen: dict[str, Any] = {"environ": (proc / "environ").read_bytes()}
            seen["cmdline"] = (proc / "cmdline").read_bytes()
            seen["saved"] = await session.call_tool(
                "save_cloud_skill",
                {"name": "Token check", "instructions": "Say hello.", "slug": slug},
            )
            seen["found"] = await session.call_tool("recall_cloud_skill", {"slug": slug})
            return seen

    return anyio.run(run)


def _base_env(tmp_path: Path, base_url: str) -> dict[str, str]:
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith("LMCP_")},
        "LMCP_HOME": str(tmp_path / "home"),
        "LMCP_COLLECTOR_URL": "http://127.0.0.1:9",  # signals are off; nobody listens there
        "LMCP_SKILLS_URL": base_url,
    }


def _assert_clean_and_authenticated(seen: dict[str, Any], token: str, base_url: str) -> None:
    environ = seen["environ"].split(b"\0")
    assert f"LMCP_SKILLS_URL={base_url}".encode() in environ  # the right process was read
    assert token.encode() not in seen["environ"]
    assert token.encode() not in seen["cmdline"]
    assert not any(v.startswith(b"LMCP_SKILLS_TOKEN=") for v in environ)
    assert not seen["saved"].is_error, _payload(seen["saved"])
    assert _payload(seen["saved"])["result"]["render_status"] == "published"
    assert not seen["found"].is_error, _payload(seen["found"])


def test_a_token_in_the_environment_is_not_in_the_mcp_server_s_proc_environ(
    base_url: str, slug: str, tmp_path: Path
) -> None:
    token = token_of("ann")
    env = {**_base_env(tmp_path, base_url), "LMCP_SKILLS_TOKEN": token}
    seen = _serve_and_inspect(env, slug)
    _assert_clean_and_authenticated(seen, token, base_url)


def test_a_token_file_is_read_and_the_token_never_enters_the_environment(
    base_url: str, slug: str, tmp_path: Path
) -> None:
    token = token_of("ann")
    token_file = tmp_path / "skills-token"
    token_file.write_text(token + "\n")
    token_file.chmod(0o600)
    env = {**_base_env(tmp_path, base_url), "LMCP_SKILLS_TOKEN_FILE": str(token_file)}
    seen = _serve_and_inspect(env, slug)
    _assert_clean_and_authenticated(seen, token, base_url)
    assert f"LMCP_SKILLS_TOKEN_FILE={token_file}".encode() in seen["environ"].split(b"\0")
