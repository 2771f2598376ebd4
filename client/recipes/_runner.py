"""``recipe_run``: params bound strictly, then every step dispatched through the ``ToolHost``.

Rules (the ``recipe_save`` spec, later edition, both platforms):
- params are checked at the boundary: a bool is only true/false, an int rejects 1.0 and "01",
  defaults are applied, unknown params are refused;
- a recipe with state-changing steps and no ``confirm: true`` returns its plan as a preview and
  runs nothing; ``confirm`` in a step's args is ignored (a step cannot confirm itself), so a step
  whose tool asks its own confirmation only returns its preview (``preview_only``), and a later
  step that needs that result fails clearly;
- an optional step whose TOOL fails gives ``{ok: false, error}``, is listed in
  ``skipped_optional`` and the run goes on; a bad reference or an unknown tool stops the run
  whatever ``optional`` says, as does any non-optional failure:
  ``{ok: false, stopped_at, steps: [...]}``;
- waits are real, bounded (see ``_manifest``) and cancellable through ``cancel``.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from client.errors import ToolFailure
from client.host import Reply, ToolHost
from client.recipes._check import NOT_IN_RECIPES
from client.recipes._interpolate import RefSyntaxError, Unresolved, interpolate
from client.recipes._manifest import Manifest, Param, ToolStep, WaitStep, type_matches
from contract.schema import ErrorClass, Outcome

__all__ = ["RunControl", "bind_params", "plan", "run_recipe"]

#: Error classes a step's ``optional`` does not cover: the recipe itself is wrong.
_NOT_OPTIONAL = frozenset({ErrorClass.unknown_tool.value})


@dataclass
class RunControl:
    """How a run may be stopped from outside (the MCP server, Ctrl-C in the CLI)."""

    cancel: threading.Event = field(default_factory=threading.Event)


def bind_params(declared: tuple[Param, ...], given: Mapping[str, Any] | None) -> dict[str, Any]:
    """The run's param values: strictly typed, defaults applied, unknown ones refused.

    Messages name the declared param and the rule, never the value given.
    """
    given = {} if given is None else given
    known = {p.name for p in declared}
    unknown = sum(1 for key in given if key not in known)
    if unknown:
        raise ToolFailure(
            ErrorClass.invalid_arguments,
            f"{unknown} param(s) given that the recipe does not declare",
            code="unknown_param",
        )
    bound: dict[str, Any] = {}
    for param in declared:
        if param.name in given:
            value = given[param.name]
            if not type_matches(param.type, value):
                raise ToolFailure(
                    ErrorClass.invalid_arguments,
                    f"param '{param.name}' must be of type {param.type}",
                    code="invalid_param",
                )
            bound[param.name] = value
        elif param.has_default:
            bound[param.name] = param.default
        else:
            raise ToolFailure(
                ErrorClass.invalid_arguments,
                f"param '{param.name}' is required (it has no default)",
                code="missing_param",
            )
    return bound


def plan(manifest: Manifest, host: ToolHost) -> list[dict[str, Any]]:
    """What the recipe would do, step by step (tool names and effects, no argument values)."""
    out: list[dict[str, Any]] = []
    for index, step in enumerate(manifest.steps):
        if isinstance(step, WaitStep):
            out.append({"index": index, "wait": step.seconds})
            continue
        tool = host.catalogue.get(step.tool)
        out.append(
            {
                "index": index,
                "tool": step.tool,
                "effect": tool.effect.value if tool is not None else None,
                "asks_own_confirmation": bool(tool and tool.requires_confirmation),
                "optional": step.optional,
            }
        )
    return out


def _refuse_forbidden_steps(manifest: Manifest, host: ToolHost) -> None:
    for index, step in enumerate(manifest.steps):
        if isinstance(step, ToolStep) and (
            step.tool in NOT_IN_RECIPES or host.catalogue.get(step.tool) is None
        ):
            raise ToolFailure(
                ErrorClass.invalid_arguments,
                f"steps[{index}].tool: cannot be a recipe step; nothing was run",
                code="invalid_manifest",
            )


def _state_changing(manifest: Manifest, host: ToolHost) -> bool:
    for step in manifest.steps:
        if isinstance(step, ToolStep):
            tool = host.catalogue.get(step.tool)
            if tool is None or tool.state_changing:
                return True
    return False


def _stopped(
    manifest: Manifest,
    index: int,
    records: list[dict[str, Any]],
    skipped: list[int],
    error: dict[str, Any],
    tool_attempted: str,
) -> Reply:
    result = {
        "ok": False,
        "name": manifest.name,
        "stopped_at": index,
        "error": error,
        "steps": records,
        "skipped_optional": skipped,
        # The failed call is in the ring; the user may be offered a friction report.
        "friction": {"can_report": True, "tool_attempted": tool_attempted},
    }
    return Reply(result, Outcome.failed, ErrorClass.step_failed)


def run_recipe(
    manifest: Manifest,
    host: ToolHost,
    params: Mapping[str, Any] | None = None,
    *,
    confirm: bool = False,
    control: RunControl | None = None,
) -> Any:
    """Run ``manifest``; returns a JSON-able result or a ``Reply`` (preview / failed).

    Callers re-check a stored manifest with the save rules first (``RecipeService``); this
    refuses, before any step runs, a step no recipe may call or a tool outside the catalogue.
    """
    _refuse_forbidden_steps(manifest, host)
    values = bind_params(manifest.params, params)
    if _state_changing(manifest, host) and not confirm:
        preview = {
            "preview": True,
            "name": manifest.name,
            "plan": plan(manifest, host),
            "confirm_required": "this recipe changes state; run it again with confirm: true",
        }
        return Reply(preview, Outcome.preview)
    control = control or RunControl()
    results: dict[int, Any] = {}
    blocked: dict[int, tuple[str, str]] = {}
    records: list[dict[str, Any]] = []
    skipped: list[int] = []
    for index, step in enumerate(manifest.steps):
        if control.cancel.is_set():
            return _cancelled(manifest, index, records, skipped)
        if isinstance(step, WaitStep):
            if control.cancel.wait(step.seconds):
                return _cancelled(manifest, index, records, skipped)
            records.append({"index": index, "wait": step.seconds, "ok": True})
            continue
        args = {k: v for k, v in step.args.items() if k != "confirm"}
        try:
            args = interpolate(args, values, results, blocked)
        except (Unresolved, RefSyntaxError) as problem:
            code = problem.code if isinstance(problem, Unresolved) else "invalid_reference"
            error = {
                "class": (
                    ErrorClass.needs_confirmation.value
                    if code == "needs_confirmation"
                    else ErrorClass.step_failed.value
                ),
                "code": code,
                "message": f"steps[{index}].args: {problem}",
            }
            records.append({"index": index, "tool": step.tool, "ok": False, "error": error})
            return _stopped(manifest, index, records, skipped, error, "recipe_run")
        called = host.dispatch(step.tool, args)
        if called.error is None:
            record: dict[str, Any] = {
                "index": index,
                "tool": step.tool,
                "ok": True,
                "outcome": called.outcome.value,
                "result": called.result,
            }
            if called.outcome is Outcome.preview:
                record["preview_only"] = True
                blocked[index] = (
                    "needs_confirmation",
                    f"step {index} only returned a preview (its tool asks its own confirmation)",
                )
            else:
                results[index] = called.result
            records.append(record)
            continue
        error = called.error.to_dict()
        record = {
            "index": index,
            "tool": step.tool,
            "ok": False,
            "outcome": called.outcome.value,
            "error": error,
            "can_report_friction": called.can_report_friction,
        }
        records.append(record)
        if step.optional and error["class"] not in _NOT_OPTIONAL:
            skipped.append(index)
            blocked[index] = ("step_failed", f"optional step {index} failed and was skipped")
            continue
        return _stopped(manifest, index, records, skipped, error, called.tool)
    done: dict[str, Any] = {
        "ok": True,
        "name": manifest.name,
        "steps": records,
        "skipped_optional": skipped,
        "outputs": [dict(o) for o in manifest.outputs],
    }
    if skipped:
        last = manifest.steps[skipped[-1]]
        tool = last.tool if isinstance(last, ToolStep) else "recipe_run"
        done["friction"] = {
            "can_report": True,
            "tool_attempted": host.catalogue.tool_name(tool).value,
        }
    return done


def _cancelled(
    manifest: Manifest, index: int, records: list[dict[str, Any]], skipped: list[int]
) -> Reply:
    result = {
        "ok": False,
        "name": manifest.name,
        "stopped_at": index,
        "cancelled": True,
        "error": {"class": ErrorClass.timeout.value, "code": "cancelled", "message": "cancelled"},
        "steps": records,
        "skipped_optional": skipped,
    }
    return Reply(result, Outcome.failed, ErrorClass.timeout)
