"""``lmcp recipes list|show|run|export|import|delete``.

Every command goes through the runtime's ``ToolHost`` (the same dispatch an MCP agent uses),
so a step that fails here is kept for a friction report like any other failure. Output is
JSON on stdout; exit code 1 when the call failed.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from client.host import ToolResult
from client.recipes._manifest import Param
from client.recipes._store import RecipeStore, StoreError
from client.runtime import Runtime

__all__ = ["app"]

app = typer.Typer(no_args_is_help=True, help="Saved multi-step workflows.")

_INT = re.compile(r"-?(?:0|[1-9][0-9]*)")


def _runtime() -> Runtime:
    return Runtime.from_env()


def _print(value: Any) -> None:
    typer.echo(json.dumps(value, ensure_ascii=False, indent=2))


def _finish(result: ToolResult) -> None:
    _print(result.to_dict())
    if not result.ok:
        raise typer.Exit(1)


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
    if pairs:
        try:
            declared = {p.name: p for p in RecipeStore(rt.home.recipes).load(name).params}
        except StoreError:
            declared = {}
        for pair in pairs:
            key, sep, text = pair.partition("=")
            if not sep:
                raise typer.BadParameter("--param takes NAME=VALUE")
            param = declared.get(key)
            values[key] = _typed(param, text) if param is not None else text
    return values


@app.command("list")
def list_() -> None:
    """List saved recipes (and any damaged file)."""
    with _runtime() as rt:
        _finish(rt.host.dispatch("recipe_list", {}))


@app.command()
def show(name: str) -> None:
    """Show a saved recipe's manifest."""
    with _runtime() as rt:
        try:
            manifest = RecipeStore(rt.home.recipes).load(name)
        except StoreError as exc:
            _print({"ok": False, "error": {"code": exc.code, "message": str(exc)}})
            raise typer.Exit(1) from None
        _print(manifest.to_json())


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
) -> None:
    """Run a saved recipe. State-changing recipes show their plan first and ask."""
    with _runtime() as rt:
        values = _params(rt, name, param or [], params_json)
        args: dict[str, Any] = {"name": name, "params": values}
        if yes:
            args["confirm"] = True
        result = rt.host.dispatch("recipe_run", args)
        if result.outcome.value == "preview" and not yes:
            _print(result.to_dict())
            if not sys.stdin.isatty() or not typer.confirm("Run these steps?", default=False):
                typer.echo("Not run. Pass --yes to confirm.", err=True)
                return
            result = rt.host.dispatch("recipe_run", {**args, "confirm": True})
        _finish(result)


@app.command("export")
def export_(
    name: str,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write the document here.")
    ] = None,
) -> None:
    """Export a recipe as a portable, hashed document (refused if it holds a secret)."""
    with _runtime() as rt:
        result = rt.host.dispatch("recipe_export", {"name": name})
        if not result.ok or output is None:
            _finish(result)
            return
        document = result.result["document"]
        output.write_text(json.dumps(document, ensure_ascii=False, indent=2) + "\n", "utf-8")
        _print({"ok": True, "name": result.result["name"], "hash": result.result["hash"]})


@app.command("import")
def import_(
    file: Path,
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Replace a recipe with the same name.")
    ] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Replace without asking.")] = False,
) -> None:
    """Import a recipe document made by ``export`` (checked exactly like a save). Replacing a
    saved recipe shows the diff and asks first."""
    try:
        document = json.loads(file.read_text("utf-8"))
    except (OSError, ValueError):
        _print({"ok": False, "error": {"code": "invalid_document", "message": "cannot read it"}})
        raise typer.Exit(1) from None
    with _runtime() as rt:
        args: dict[str, Any] = {"document": document}
        if overwrite:
            args["overwrite"] = True
        result = rt.host.dispatch("recipe_import", args)
        if result.ok and isinstance(result.result, dict) and result.result.get("preview"):
            if not yes:
                typer.echo("\n".join(result.result.get("diff", [])))
                if not sys.stdin.isatty() or not typer.confirm("Replace it?", default=False):
                    typer.echo("Not replaced. Pass --yes to confirm.", err=True)
                    return
            result = rt.host.dispatch("recipe_import", {**args, "confirm": True})
        _finish(result)


@app.command()
def delete(
    name: str,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Delete without asking.")] = False,
) -> None:
    """Delete a saved recipe (asks first)."""
    with _runtime() as rt:
        result = rt.host.dispatch("recipe_delete", {"name": name})
        if not result.ok:
            _finish(result)
            return
        if not yes:
            _print(result.to_dict())
            if not sys.stdin.isatty() or not typer.confirm("Delete it?", default=False):
                typer.echo("Not deleted. Pass --yes to confirm.", err=True)
                return
        _finish(rt.host.dispatch("recipe_delete", {"name": name, "confirm": True}))
