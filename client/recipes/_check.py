"""Checks of a manifest against the catalogue, at save and import (pure apart from the
injected note-id resolver).

Every problem names the step and the field, and the rule; none repeats a value. The rules:
every tool is in the catalogue (and is not a recipe or friction tool: recipes do not nest);
args are valid for the tool's schema, with placeholders checked against the declared param
types; every ``${name}`` is a declared param; every ``${steps[N]...}`` refers to an EARLIER
tool step; ``confirm`` is removed from step args (counted); a step naming a note keeps
``note_name`` alone, and a literal ``note_id`` alone is resolved to the note's name on this
machine or refused. Unused params give warnings.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft202012Validator

from client.host import describe_validation_error
from client.recipes._interpolate import ParamRef, RefSyntaxError, StepRef, find_refs, walk_strings
from client.recipes._manifest import Manifest, Param, ToolStep, WaitStep, parse_manifest
from contract.catalogue import Catalogue, Tool

__all__ = ["NOT_IN_RECIPES", "Checked", "ManifestChecker", "ManifestError"]

#: Catalogue tools a recipe step may not call: recipes do not nest, and a friction report
#: needs the user's consent for one failure at a time.
NOT_IN_RECIPES = frozenset(
    {
        "recipe_save",
        "recipe_run",
        "recipe_export",
        "recipe_import",
        "recipe_delete",
        "report_friction",
    }
)
_SENTINELS: Mapping[str, Any] = {"string": "", "int": 0, "bool": False}

NoteResolver = Callable[[str], str | None]


class ManifestError(ValueError):
    """The manifest breaks rules; ``problems`` name where and which, never a value."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = tuple(problems)
        shown = "; ".join(self.problems[:10])
        more = f" (and {len(self.problems) - 10} more)" if len(self.problems) > 10 else ""
        super().__init__(f"the manifest is not valid: {shown}{more}")


@dataclass(frozen=True, slots=True)
class Checked:
    manifest: Manifest
    confirm_removed_steps: int
    warnings: tuple[str, ...]


def _no_note(_: str) -> str | None:
    return None


def _fmt(path: tuple[str | int, ...]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


class ManifestChecker:
    """Checks manifests against one catalogue (its validators are built once)."""

    def __init__(self, catalogue: Catalogue, resolve_note_id: NoteResolver = _no_note) -> None:
        self.catalogue = catalogue
        self.resolve_note_id = resolve_note_id
        self._validators: dict[str, Draft202012Validator] = {}

    def _validator(self, tool: Tool) -> Draft202012Validator:
        found = self._validators.get(tool.name)
        if found is None:
            found = Draft202012Validator(dict(tool.input_schema))
            self._validators[tool.name] = found
        return found

    def check(self, raw: object) -> Checked:
        """The normalised manifest, or ``ManifestError`` listing every problem."""
        manifest, problems = parse_manifest(raw)
        if manifest is None:
            raise ManifestError(problems)
        params = {p.name: p for p in manifest.params}
        used: set[str] = set()
        warnings: list[str] = []
        removed = 0
        steps: list[ToolStep | WaitStep] = []
        for index, step in enumerate(manifest.steps):
            if isinstance(step, WaitStep):
                steps.append(step)
                continue
            where = f"steps[{index}]"
            args = dict(step.args)
            if "confirm" in args:
                del args["confirm"]
                removed += 1
            tool = self.catalogue.get(step.tool)
            if tool is None:
                problems.append(f"{where}.tool: is not a tool in the LMCP catalogue")
                continue
            if tool.name in NOT_IN_RECIPES:
                problems.append(f"{where}.tool: '{tool.name}' cannot be a recipe step")
                continue
            args = self._note_rule(where, tool, args, problems, warnings)
            refs_ok = self._check_refs(where, manifest, index, args, params, used, problems)
            if refs_ok:
                self._check_args(where, tool, args, params, problems)
            steps.append(ToolStep(tool.name, args, step.optional))
        if problems:
            raise ManifestError(problems)
        for param in manifest.params:
            if param.name not in used:
                warnings.append(f"param '{param.name}' is declared but never used")
        normalised = Manifest(
            name=manifest.name,
            steps=tuple(steps),
            description=manifest.description,
            params=manifest.params,
            outputs=manifest.outputs,
        )
        return Checked(normalised, removed, tuple(warnings))

    # -- the note rule ----------------------------------------------------------------------
    def _note_rule(
        self,
        where: str,
        tool: Tool,
        args: dict[str, Any],
        problems: list[str],
        warnings: list[str],
    ) -> dict[str, Any]:
        if "note_id" not in tool.arg_names or "note_id" not in args:
            return args
        note_id = args["note_id"]
        if "note_name" in args:
            del args["note_id"]
            warnings.append(f"{where}.args: note_id removed; the step names the note by note_name")
            return args
        if isinstance(note_id, str) and "${" in note_id:
            return args  # resolved at run time on this machine
        name = self.resolve_note_id(note_id) if isinstance(note_id, str) else None
        if name is None:
            problems.append(
                f"{where}.args.note_id: names no note on this machine; give note_name "
                "(the note's title), which names the note on every machine"
            )
            return args
        del args["note_id"]
        args["note_name"] = name
        warnings.append(f"{where}.args: note_id replaced by the note's note_name")
        return args

    # -- references -------------------------------------------------------------------------
    def _check_refs(
        self,
        where: str,
        manifest: Manifest,
        index: int,
        args: Mapping[str, Any],
        params: Mapping[str, Param],
        used: set[str],
        problems: list[str],
    ) -> bool:
        ok = True
        for path, text in walk_strings(args):
            at = f"{where}.args{_fmt(path)}"
            try:
                refs, _ = find_refs(text)
            except RefSyntaxError as exc:
                problems.append(f"{at}: a reference {exc}")
                ok = False
                continue
            for ref in refs:
                if isinstance(ref, ParamRef):
                    if ref.name not in params:
                        problems.append(f"{at}: refers to a param that is not declared")
                        ok = False
                    else:
                        used.add(ref.name)
                elif ref.step >= index:
                    problems.append(f"{at}: ${{steps[{ref.step}]}} is not an EARLIER step")
                    ok = False
                elif not isinstance(manifest.steps[ref.step], ToolStep):
                    problems.append(f"{at}: ${{steps[{ref.step}]}} is a pause, it has no result")
                    ok = False
        return ok

    # -- arguments --------------------------------------------------------------------------
    def _check_args(
        self,
        where: str,
        tool: Tool,
        args: Mapping[str, Any],
        params: Mapping[str, Param],
        problems: list[str],
    ) -> None:
        declared = tool.input_schema.get("properties", {})
        undeclared = sum(1 for key in args if key not in declared)
        if undeclared:
            problems.append(f"{where}.args: {undeclared} argument(s) not declared by the tool")
            return
        probe: Any = dict(args)
        # Where a placeholder stands, only its TYPE can be checked now (param) or nothing
        # at all (an earlier step's result, known only at run time).
        typed: set[tuple[str | int, ...]] = set()
        opaque: set[tuple[str | int, ...]] = set()
        for path, text in list(walk_strings(args)):
            refs, exact = find_refs(text)
            if not refs:
                continue
            if exact and isinstance(refs[0], ParamRef):
                probe = _replaced(probe, path, _SENTINELS[params[refs[0].name].type])
                typed.add(path)
            elif exact and isinstance(refs[0], StepRef):
                opaque.add(path)
            else:
                typed.add(path)
        for error in self._validator(tool).iter_errors(probe):
            path = tuple(error.absolute_path)
            if any(path[: len(p)] == p for p in opaque):
                continue
            if path in typed and error.validator != "type":
                continue
            if any(path[: len(p)] == p and len(path) > len(p) for p in typed):
                continue
            problems.append(f"{where}.args: {describe_validation_error(tool, error)}")


def _replaced(target: Any, path: tuple[str | int, ...], value: Any) -> Any:
    """A copy of ``target`` with ``value`` at ``path`` (only the containers on the path are
    copied; the caller's args are never changed)."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(target, dict):
        out: Any = dict(target)
    else:
        out = list(target)
    out[head] = _replaced(target[head], rest, value)
    return out
