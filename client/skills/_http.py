"""The HTTP side of the Cloud Skill tools: one request to the skills service's ``/v1/skills``.

The token goes only to the configured URL, only over HTTPS or to a loopback address, and
redirects are not followed. Every failure becomes a value-free :class:`ToolFailure`.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import httpx

from client._tls import tls_context
from client.errors import ToolFailure
from client.settings import ClientSettings
from client.skills._codes import failure_from_problem
from client.skills._token import token_from
from contract.schema import ErrorClass

__all__ = ["SkillsApi"]

_TIMEOUT = httpx.Timeout(10.0, read=30.0)


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True, slots=True)
class SkillsApi:
    """Calls ``/v1/skills`` of ``url`` with ``token`` (a fresh httpx client per call)."""

    url: str
    token: str | None = field(repr=False)  # never printed, never logged
    transport: httpx.BaseTransport | None = None

    @classmethod
    def from_settings(
        cls, settings: ClientSettings, transport: httpx.BaseTransport | None = None
    ) -> SkillsApi:
        """The service ``settings`` name, with their token (its file is read here, once)."""
        return cls(settings.skills_url, token_from(settings), transport)

    def _check(self) -> str:
        if not self.token:
            raise ToolFailure(
                ErrorClass.permission_denied,
                "Cloud Skills need a token: set LMCP_SKILLS_TOKEN or LMCP_SKILLS_TOKEN_FILE",
                code="skills_token_missing",
            )
        try:
            parsed = httpx.URL(self.url)
        except httpx.InvalidURL:
            parsed = None
        if parsed is None or parsed.scheme not in ("http", "https") or not parsed.host:
            raise ToolFailure(
                ErrorClass.unavailable,
                "LMCP_SKILLS_URL is not an http(s) URL",
                code="skills_url_invalid",
            )
        if parsed.scheme == "http" and not _is_loopback(parsed.host):
            raise ToolFailure(
                ErrorClass.unavailable,
                "LMCP_SKILLS_URL must use https unless it is a loopback address "
                "(the token would travel in clear text)",
                code="skills_url_insecure",
            )
        return self.token

    def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
    ) -> dict[str, Any]:
        """The JSON body of a 2xx answer; any other answer raises :class:`ToolFailure`."""
        token = self._check()
        clean = {k: v for k, v in (params or {}).items() if v is not None}
        try:
            with httpx.Client(
                base_url=self.url,
                transport=self.transport,
                timeout=_TIMEOUT,
                follow_redirects=False,
                verify=tls_context(trust_env=True),
                headers={"Authorization": f"Bearer {token}", "Accept": "application/json"},
            ) as client:
                response = client.request(method, path, params=clean, json=json)
        except httpx.TimeoutException:
            raise ToolFailure(
                ErrorClass.timeout, "the skills service did not answer in time", code="timeout"
            ) from None
        except httpx.HTTPError:
            raise ToolFailure(
                ErrorClass.unavailable,
                "the skills service could not be reached",
                code="skills_unreachable",
            ) from None
        try:
            body = response.json()
        except ValueError:
            body = None
        if not response.is_success:
            raise failure_from_problem(response.status_code, body)
        if not isinstance(body, dict):
            raise ToolFailure(
                ErrorClass.unavailable,
                "the skills service sent an unexpected answer",
                code="skills_bad_response",
            )
        return body


def skill_path(slug: str, *rest: str) -> str:
    """``/v1/skills/{slug}/...`` with every part percent-encoded (``/`` kept in the last)."""
    parts = [quote(slug, safe="")] + [quote(part, safe="/") for part in rest]
    return "/v1/skills/" + "/".join(parts)
