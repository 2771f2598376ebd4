"""``lmcp recipes list|show|save|run|export|import|delete``.

Every command goes through the runtime's ``ToolHost`` (the same dispatch an MCP agent uses),
so a step that fails here is kept like any other failure. Output is for people (tables, one
line per outcome) unless ``--json`` asks for the answer itself as JSON (never the MCP envelope).
Errors go to stderr in the command line's words (``--overwrite``, ``--yes``), exit code 1.

The MCP ``friction.can_report`` hint is not shown: no command here sends a report (an agent
offers one with ``report_friction``; ``lmcp signals preview`` shows what it would send).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from client.recipes._manifest import Param
from client.recipes._store import RecipeStore, StoreError

if TYPE_CHECKING:
    from client.host import ToolResult
    from client.runtime import Runtime

__all__ = ["app"]

app = typer.Typer(no_args_is_help=True, help="Saved multi-step workflows.", add_completion=False)

_INT = re.compile(r"-?(?:0|[1-9][0-9]*)")
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the answer as JSON (for scripts).")]

#: The tools' MCP wording -> this command line's flags. Longest first: the phrases overlap.
_CLI_WORDS = (
    ("call again with the same document, overwrite: true and confirm: true",
     "run the same import again with --overwrite --yes"),
    ("call again with confirm: true", "run again with --yes"),
    ("run it again with confirm: true", "run it again with --yes"),
    ("pass overwrite: true", "pass --overwrite"),
    ("overwrite: true", "--overwrite"),
    ("confirm: true", "--yes"),
)  # fmt: skip
#: MCP-only keys: the hint of a report no command here can send.
_MCP_ONLY = frozenset({"friction", "can_report_friction"})


def _runtime() -> Runtime:
    """The runtime of one command, configured once from this process's settings."""
    from client.runtime import Runtime
    from client.settings import ClientSettings

    return Runtime.from_settings(ClientSettings.from_process())


def cli_words(text: str) -> str:
    """A tool's message with the flags of this command line instead of MCP arguments."""
    for mcp, flag in _CLI_WORDS:
        text = text.replace(mcp, flag)
    return text


def _plain(value: Any) -> Any:
    """``value`` without MCP-only hints, its messages in the command line's words."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if k not in _MCP_ONLY}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return cli_words(value) if isinstance(value, str) else value


def _print_json(value: Any) -> None:
    typer.echo(json.dumps(_plain(value), ensure_ascii=False, indent=2))


def _fail(result: ToolResult, as_json: bool) -> None:
    """Report a failed call (stderr, or the error as JSON) and exit 1."""
    error = result.error.to_dict() if result.error is not None else None
    if error is None and isinstance(result.result, dict):
        error = result.result.get("error")
    error = error or {"code": result.outcome.value, "message": "the call failed"}
    if as_json:
        _print_json({"ok": False, "error": error, **_details(result)})
    else:
        typer.echo(f"error: {cli_words(str(error['message']))} ({error['code']})", err=True)
        if isinstance(result.result, dict) and result.result.get("steps"):
            _steps_table(result.result["steps"], err=True)
    raise typer.Exit(1)


def _details(result: ToolResult) -> dict[str, Any]:
    if isinstance(result.result, dict):
        return {k: v for k, v in result.result.items() if k in {"steps", "stopped_at", "name"}}
    return {}


def _table(title: str, header: list[str], rows: list[list[str]], *, err: bool = False) -> None:
    from rich.markup import escape
    from rich.table import Table

    from client._console import make_console

    table = Table(*header, title=title, title_justify="left", header_style="bold cyan")
    for row in rows:
        # Escaped: a recipe's text (``${steps[0].result.x}``) is shown as written, not as markup.
        table.add_row(*(escape(str(cell)) for cell in row))
    make_console(stderr=err).print(table)


def _steps_table(steps: list[dict[str, Any]], *, err: bool = False) -> None:
    rows = []
    for s in steps:
        what = s.get("tool") or f"wait {s.get('wait')} s"
        error = s.get("error") or {}
        outcome = s.get("outcome", "ok") if s.get("ok") else str(error.get("code", "failed"))
        rows.append([str(s["index"]), str(what), outcome, cli_words(str(error.get("message", "")))])
    _table("steps", ["#", "tool", "outcome", "message"], rows, err=err)


def _typed(param: Param, text: str) -> Any:
    if param.type == "int":
        if not _INT.fullmatch(text):
            raise typer.BadParameter(f"param '{param.name}' must be an integer (e.g. 3)")
        return int(text)
    if param.type == "bool":
        if text not in ("true", "false"):
            raise typer.BadParameter(f"param '{param.name}' must be true or false")
        return text == "true"
    return text


def _params(rt: Runtime, name: str, pairs: list[str], as_json: str | None) -> dict[str, Any]:
    values: dict[str, Any] = {}
    if as_json is not None:
        try:
            loaded = json.loads(as_json)
        except ValueError:
            raise typer.BadParameter("--params-json is not valid JSON") from None
        if not isinstance(loaded, dict):
            raise typer.BadParameter("--params-json must be a JSON object")
        values.update(loaded)
    try:
        declared: dict[str, Param] | None = {
            p.name: p for p in RecipeStore(rt.home.recipes).load(name).params
        }
    except StoreError:
        declared = None  # no such recipe (or a damaged one): the run itself says so
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep:
            raise typer.BadParameter("--param takes NAME=VALUE")
        param = (declared or {}).get(key)
        values[key] = _typed(param, text) if param is not None else text
    if declared is not None:
        _refuse_undeclared(name, values, declared)
    return values


def _refuse_undeclared(name: str, values: dict[str, Any], declared: dict[str, Param]) -> None:
    """Name a param the recipe does not take: here it is the user's own word, typed in their
    terminal (over MCP the runner names none, as an agent's key may itself be a value)."""
    unknown = [key for key in values if key not in declared]
    if unknown:
        takes = ", ".join(f"'{p}'" for p in declared) or "none"
        listed = ", ".join(f"'{key}'" for key in unknown)
        noun = "params" if len(unknown) > 1 else "param"
        raise typer.BadParameter(f"recipe '{name}' has no {noun} {listed} (it takes: {takes})")


def _read_json(file: Path, what: str) -> Any:
    try:
        return json.loads(file.read_text("utf-8"))
    except OSError:
        typer.echo(f"error: cannot read {file}", err=True)
    except ValueError:
        typer.echo(f"error: {file} is not JSON ({what})", err=True)
    raise typer.Exit(1)


def _ask(question: str, refusal: str) -> bool:
    if sys.stdin.isatty() and typer.confirm(question, default=False):
        return True
    typer.echo(refusal, err=True)
    return False


@app.command("list")
def list_(as_json: JsonOpt = False) -> None:
    """List saved recipes (and any damaged file)."""
    with _runtime() as rt:
        result = rt.host.dispatch("recipe_list", {})
    if not result.ok:
        _fail(result, as_json)
    if as_json:
        _print_json(result.result)
        return
    recipes = result.result["recipes"]
    rows = [
        [r["name"], str(r["step_count"]), ", ".join(p["name"] for p in r["params"]),
         r.get("description") or ""]
        for r in recipes
    ]  # fmt: skip
    if rows:
        _table("recipes", ["name", "steps", "params", "description"], rows)
    else:
        typer.echo("no recipe saved yet: `lmcp recipes save FILE` saves one.")
    for damaged in result.result["damaged"]:
        typer.echo(f"damaged: {damaged.get('file', damaged)}", err=True)


@app.command()
def show(name: str, as_json: JsonOpt = False) -> None:
    """Show a saved recipe's manifest (it is JSON: the same with or without --json)."""
    with _runtime() as rt:
        try:
            manifest = RecipeStore(rt.home.recipes).load(name)
        except StoreError as exc:
            if as_json:
                _print_json({"ok": False, "error": {"code": exc.code, "message": str(exc)}})
            else:
                typer.echo(f"error: {exc} ({exc.code})", err=True)
            raise typer.Exit(1) from None
    _print_json(manifest.to_json())


@app.command()
def save(
    file: Annotated[Path, typer.Argument(help="A manifest: {name, params, steps, ...}.")],
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Replace a recipe with the same name.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Save a recipe from a bare manifest file (checked exactly as the recipe_save tool does)."""
    manifest = _read_json(file, "a recipe manifest")
    with _runtime() as rt:
        args: dict[str, Any] = {"manifest": manifest}
        if overwrite:
            args["overwrite"] = True
        result = rt.host.dispatch("recipe_save", args)
    if not result.ok:
        _fail(result, as_json)
    if as_json:
        _print_json(result.result)
        return
    done = result.result
    verb = "replaced" if done.get("replaced") else "saved"
    typer.echo(f"{verb} '{done['name']}' ({done['step_count']} step(s))")
    for warning in done.get("warnings", []):
        typer.echo(f"warning: {cli_words(str(warning))}", err=True)


@app.command()
def run(
    name: str,
    param: Annotated[
        list[str] | None, typer.Option("--param", "-p", help="NAME=VALUE (repeatable).")
    ] = None,
    params_json: Annotated[
        str | None, typer.Option("--params-json", help="All params as one JSON object.")
    ] = None,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Confirm the recipe's state-changing steps.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Run a saved recipe. State-changing recipes show their plan first and ask."""
    with _runtime() as rt:
        values = _params(rt, name, param or [], params_json)
        args: dict[str, Any] = {"name": name, "params": values}
        if yes:
            args["confirm"] = True
        result = rt.host.dispatch("recipe_run", args)
        if result.outcome.value == "preview" and not yes:
            if as_json:
                _print_json(result.result)
            else:
                plan = result.result.get("plan", [])
                rows = [[str(s["index"]), str(s.get("tool") or f"wait {s.get('wait')} s"),
                         str(s.get("effect") or "")] for s in plan]  # fmt: skip
                _table(f"'{result.result['name']}' changes state", ["#", "tool", "effect"], rows)
            if not _ask("Run these steps?", "Not run. Pass --yes to confirm."):
                return
            result = rt.host.dispatch("recipe_run", {**args, "confirm": True})
    if not result.ok:
        _fail(result, as_json)
    if as_json:
        _print_json(result.result)
        return
    _steps_table(result.result["steps"])
    skipped = result.result.get("skipped_optional") or []
    typer.echo(
        f"ran '{result.result['name']}'" + (f"; skipped optional {skipped}" if skipped else "")
    )


@app.command("export")
def export_(
    name: str,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write the document here.")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Export a recipe as a portable, hashed document (refused if it holds a secret)."""
    with _runtime() as rt:
        result = rt.host.dispatch("recipe_export", {"name": name})
    if not result.ok:
        _fail(result, as_json)
    document = result.result["document"]
    if output is None:
        _print_json(document)  # the document itself is the output
        return
    output.write_text(json.dumps(document, ensure_ascii=False, indent=2) + "\n", "utf-8")
    summary = {"name": result.result["name"], "hash": result.result["hash"], "file": str(output)}
    if as_json:
        _print_json(summary)
    else:
        typer.echo(f"exported '{summary['name']}' to {output} (sha256 {summary['hash']})")


@app.command("import")
def import_(
    file: Path,
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Replace a recipe with the same name.")
    ] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Replace without asking.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Import a recipe document made by ``export`` (checked exactly like a save). Replacing a
    saved recipe shows the diff and asks first. A bare manifest: ``lmcp recipes save``."""
    document = _read_json(file, "a document made by `lmcp recipes export`")
    with _runtime() as rt:
        args: dict[str, Any] = {"document": document}
        if overwrite:
            args["overwrite"] = True
        result = rt.host.dispatch("recipe_import", args)
        if result.ok and isinstance(result.result, dict) and result.result.get("preview"):
            if not yes:
                typer.echo("\n".join(result.result.get("diff", [])))
                if not _ask("Replace it?", "Not replaced. Pass --yes to confirm."):
                    return
            result = rt.host.dispatch("recipe_import", {**args, "confirm": True})
    if not result.ok:
        _fail(result, as_json)
    if as_json:
        _print_json(result.result)
    else:
        verb = "replaced" if result.result.get("replaced") else "imported"
        typer.echo(f"{verb} '{result.result['name']}' ({result.result['step_count']} step(s))")


@app.command()
def delete(
    name: str,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Delete without asking.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Delete a saved recipe (asks first)."""
    with _runtime() as rt:
        result = rt.host.dispatch("recipe_delete", {"name": name})
        if not result.ok:
            _fail(result, as_json)
        if not yes:
            shown = result.result.get("name") or name
            if not _ask(f"Delete '{shown}'?", "Not deleted. Pass --yes to confirm."):
                return
        result = rt.host.dispatch("recipe_delete", {"name": name, "confirm": True})
    if not result.ok:
        _fail(result, as_json)
    if as_json:
        _print_json(result.result)
    else:
        typer.echo(f"deleted '{result.result.get('name') or name}'")
