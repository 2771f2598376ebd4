"""The three Cloud Skill tools: save, recall and execute (``*_cloud_skill``).

They call the skills service's ``/v1/skills`` over httpx (``ClientSettings.skills_url``; the
token from ``LMCP_SKILLS_TOKEN`` or ``LMCP_SKILLS_TOKEN_FILE``, kept out of a long-running
process's environment: ``client.skills._token``), never the collector. The server stores and
validates; scripts run HERE, on the user's machine, where the agent runs: the server only
serves the pinned content (see ``docs/cloud-skills.md``). Every failure is a value-free
:class:`~client.errors.ToolFailure`, so it flows through ``ToolHost`` into the ring and can be
reported as friction like any other tool's.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

import httpx

from client.errors import ToolFailure
from client.host import Handler, Reply
from client.settings import ClientSettings
from client.skills._execute import (
    DEFAULT_LIMITS,
    INTERPRETERS,
    ScriptLimits,
    find_sandbox,
    interpreter_for,
    run_script,
)
from client.skills._http import SkillsApi, skill_path
from client.skills._sandbox import Sandbox
from contract.schema import ErrorClass, Outcome

__all__ = [
    "ALLOW_UNSANDBOXED",
    "DEFAULT_LIMITS",
    "INTERPRETERS",
    "SAVE_PARAMETERS",
    "Sandbox",
    "ScriptLimits",
    "SkillsApi",
    "find_sandbox",
    "interpreter_for",
    "run_script",
    "skill_handlers",
    "skill_path",
]

SAVE_PARAMETERS = ("name", "instructions", "slug", "description", "publish", "components_json")
#: The explicit opt-in to run scripts where no sandbox exists (containment only).
ALLOW_UNSANDBOXED = "LMCP_SKILLS_ALLOW_UNSANDBOXED"
#: Previews remembered for their confirmation: how many, and for how long.
_MAX_PREVIEWS = 64
_PREVIEW_TTL_S = 600.0


def _limits(settings: ClientSettings) -> ScriptLimits:
    timeout = settings.skills_exec_timeout_s
    return ScriptLimits(
        DEFAULT_LIMITS.timeout_s if timeout is None else timeout, DEFAULT_LIMITS.max_output_bytes
    )


def _invalid(message: str, code: str) -> ToolFailure:
    return ToolFailure(ErrorClass.invalid_arguments, message, code=code, outcome=Outcome.invalid)


def _digest(content: str, interpreter: str, mime: str, args: list[str]) -> str:
    """What a preview showed, as one hash: the script, how it runs and with which arguments."""
    shown = {"content": content, "interpreter": interpreter, "mime_type": mime, "args": args}
    return hashlib.sha256(json.dumps(shown, sort_keys=True).encode("utf-8")).hexdigest()


class _Tools:
    def __init__(
        self,
        api: SkillsApi,
        limits: ScriptLimits,
        sandbox: Sandbox | None | bool,
        allow_unsandboxed: bool,
    ) -> None:
        self.api = api
        self.limits = limits
        #: True: look for bubblewrap on first use (building a runtime never spawns anything).
        self._sandbox = sandbox
        self.allow_unsandboxed = allow_unsandboxed
        #: call identity -> (digest previewed, when). A confirmation runs only the script whose
        #: digest this process previewed for the same call: the server cannot swap it between.
        self.previews: OrderedDict[tuple[Any, ...], tuple[str, float]] = OrderedDict()

    @property
    def sandbox(self) -> Sandbox | None:
        if self._sandbox is True:
            self._sandbox = find_sandbox()
        return self._sandbox or None

    def _remember(self, key: tuple[Any, ...], digest: str) -> None:
        self.previews[key] = (digest, time.monotonic())
        self.previews.move_to_end(key)
        while len(self.previews) > _MAX_PREVIEWS:
            self.previews.popitem(last=False)

    def _check_previewed(self, key: tuple[Any, ...], digest: str) -> None:
        seen = self.previews.pop(key, None)
        if seen is None or time.monotonic() - seen[1] > _PREVIEW_TTL_S:
            raise ToolFailure(
                ErrorClass.needs_confirmation,
                "preview this script first (call without confirm), then confirm that preview",
                code="preview_required",
            )
        if seen[0] != digest:
            raise ToolFailure(
                ErrorClass.conflict,
                "the script to run differs from the one previewed: nothing ran; preview again",
                code="preview_mismatch",
            )

    # -- save_cloud_skill ------------------------------------------------------------------
    def save(self, args: Mapping[str, Any]) -> Any:
        body = {key: args[key] for key in SAVE_PARAMETERS if key in args}
        return self.api.request("POST", "/v1/skills", json=body)

    # -- recall_cloud_skill ----------------------------------------------------------------
    def recall(self, args: Mapping[str, Any]) -> Any:
        slug = args.get("slug")
        params = {"team": args.get("team"), "revision_id": args.get("revision_id")}
        if slug is None:
            for needs_slug in ("team", "revision_id", "resource_path"):
                if args.get(needs_slug) is not None:
                    raise _invalid(f"argument '{needs_slug}' needs 'slug'", "slug_required")
            found = self.api.request(
                "GET", "/v1/skills", params={"query": args.get("query"), "limit": args.get("limit")}
            )
            results = found.get("data", {}).get("results")
            return Reply(found, Outcome.empty) if not results else found
        for discovery_only in ("query", "limit"):
            if args.get(discovery_only) is not None:
                raise _invalid(
                    f"argument '{discovery_only}' is for discovery: leave out 'slug'",
                    "discovery_with_slug",
                )
        path = args.get("resource_path")
        if path is not None:
            return self.api.request("GET", skill_path(slug, "resources", path), params=params)
        return self.api.request("GET", skill_path(slug), params=params)

    # -- execute_cloud_skill ---------------------------------------------------------------
    def execute(self, args: Mapping[str, Any]) -> Any:
        revision_id, expected_hash = args["revision_id"], args["canonical_hash"]
        path = args["logical_path"]
        script_args = [str(a) for a in args.get("args") or []]
        envelope = self.api.request(
            "GET",
            skill_path(args["slug"], "resources", path),
            params={"team": args.get("team"), "revision_id": revision_id},
        )
        data = envelope.get("data") or {}
        resource = data.get("resource") or {}
        if data.get("revision_id") != revision_id or data.get("canonical_hash") != expected_hash:
            raise ToolFailure(
                ErrorClass.conflict,
                "canonical_hash does not match the revision: recall the skill again",
                code="revision_mismatch",
            )
        if envelope.get("render_status") != "published":
            raise ToolFailure(
                ErrorClass.conflict,
                "only a published revision can be executed (drafts, proposals and rejected "
                "revisions cannot)",
                code="revision_not_published",
            )
        if resource.get("type") != "script":
            raise _invalid("the component is not declared as a script", "not_a_script")
        content = resource.get("content")
        if not isinstance(content, str) or hashlib.sha256(
            content.encode("utf-8")
        ).hexdigest() != resource.get("hash"):
            raise ToolFailure(
                ErrorClass.conflict,
                "the script's content does not match its pinned hash",
                code="content_hash_mismatch",
            )
        mime = str(resource.get("mime_type"))
        interpreter = interpreter_for(mime)
        if interpreter is None:
            raise ToolFailure(
                ErrorClass.unavailable,
                "no interpreter for this script's mime_type on this machine",
                code="interpreter_unavailable",
            )
        digest = _digest(content, interpreter.kind, mime, script_args)
        key = (
            args["slug"],
            args.get("team"),
            revision_id,
            expected_hash,
            path,
            tuple(script_args),
        )
        plan = {
            "slug": data.get("slug"),
            "revision_id": revision_id,
            "revision_number": data.get("revision_number"),
            "canonical_hash": expected_hash,
            "logical_path": path,
            "interpreter": interpreter.kind,
            "mime_type": mime,
            "size": resource.get("size"),
            "hash": resource.get("hash"),
            "arg_count": len(script_args),
            "limits": {
                "timeout_s": self.limits.timeout_s,
                "max_output_bytes": self.limits.max_output_bytes,
                "memory_bytes": self.limits.sandbox.memory_bytes,
            },
            "sandbox": "bubblewrap" if self.sandbox is not None else "none",
            "preview_digest": digest,
        }
        if args.get("confirm") is not True:
            self._remember(key, digest)
            return Reply(
                {
                    "preview": True,
                    "would_run": plan,
                    "content": content,
                    "message": "nothing ran: call again with confirm: true to run this script",
                },
                Outcome.preview,
            )
        self._check_previewed(key, digest)
        if self.sandbox is None and not self.allow_unsandboxed:
            raise ToolFailure(
                ErrorClass.unavailable,
                f"no sandbox on this machine (bubblewrap on Linux): nothing ran; set "
                f"{ALLOW_UNSANDBOXED}=1 to run scripts without one",
                code="sandbox_unavailable",
            )
        run = run_script(content, interpreter, script_args, self.limits, self.sandbox)
        if run.timed_out:
            raise ToolFailure(
                ErrorClass.timeout,
                f"the script ran past its time limit ({self.limits.timeout_s:g} s) and was stopped",
                code="script_timeout",
            )
        return {"ran": plan, **run.to_dict()}


def skill_handlers(
    settings: ClientSettings,
    transport: httpx.BaseTransport | None = None,
    sandbox: Sandbox | None | bool = True,
) -> dict[str, Handler]:
    """The three Cloud Skill handlers, configured by ``settings``.

    ``sandbox``: ``True`` finds bubblewrap, ``False``/``None`` runs without (tests of the
    refusal), or a given :class:`Sandbox`. The token is resolved here once (a script's child
    never gets this process's environment: ``client.skills._execute``).
    """
    api = SkillsApi.from_settings(settings, transport)
    tools = _Tools(api, _limits(settings), sandbox, settings.skills_allow_unsandboxed)
    return {
        "save_cloud_skill": tools.save,
        "recall_cloud_skill": tools.recall,
        "execute_cloud_skill": tools.execute,
    }
