"""A service's settings read from the environment, and a bad value said in one line.

``load_settings(CollectorSettings, port=8765)`` builds a pydantic-settings model from its
environment variables (and the given overrides). When a value is not valid it raises
``SettingsProblem``, whose text names the variable and what it must be, and never the value:
it may be a token. The shell prints it as one line (``lmcp/_errors.py``).
"""

from __future__ import annotations

import re
import typing
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_settings import BaseSettings, SettingsError

__all__ = ["SettingsProblem", "load_settings"]

S = TypeVar("S", bound=BaseSettings)
_FIELD = re.compile(r'field "([^"]+)"')


class SettingsProblem(ValueError):
    """A setting is not valid: the message names it and says what it must be."""


def load_settings(cls: type[S], /, **overrides: Any) -> S:
    """``cls`` from its environment variables, with ``overrides`` (command-line options) on top."""
    try:
        return cls(**overrides)
    except SettingsError as exc:  # a variable that must be JSON is not
        raise SettingsProblem(_not_json(cls, str(exc))) from exc
    except ValidationError as exc:
        raise SettingsProblem(_invalid(cls, exc, overrides)) from exc


def _variable(cls: type[BaseSettings], field: str) -> str:
    return f"{cls.model_config.get('env_prefix', '')}{field}".upper()


def _not_json(cls: type[BaseSettings], text: str) -> str:
    match = _FIELD.search(text)
    if match is None or match.group(1) not in cls.model_fields:
        return f"a {cls.__name__} setting is not valid JSON"
    field = match.group(1)
    origin = typing.get_origin(cls.model_fields[field].annotation)
    if origin is list:
        shape = 'a JSON list, e.g. ["one", "two"]'
    elif origin is dict:
        shape = 'a JSON object, e.g. {"key": 1}'
    else:
        shape = "JSON"
    return f"{_variable(cls, field)} must be {shape} (it is not valid JSON)"


def _names(annotation: Any) -> set[str]:
    """The field names of every model inside ``annotation`` (``list[StewardToken]``: its
    fields): the only keys a message may repeat; any other key is the user's own text."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return set(annotation.model_fields)
    return {name for arg in typing.get_args(annotation) for name in _names(arg)}


def _path(parts: tuple[int | str, ...], known: set[str]) -> str:
    return "".join(
        f"[{part}]" if isinstance(part, int) else f".{part if part in known else '<key>'}"
        for part in parts
    )


def _invalid(cls: type[BaseSettings], exc: ValidationError, overrides: dict[str, Any]) -> str:
    # ``include_input=False``: pydantic's message texts name the rule, never the input.
    errors = exc.errors(include_input=False, include_url=False)
    first = errors[0]
    loc = first["loc"]
    if loc and isinstance(loc[0], str) and loc[0] in cls.model_fields:
        field = loc[0]
        where = (
            f"the command-line option for {field}" if field in overrides else _variable(cls, field)
        )
        where += _path(loc[1:], _names(cls.model_fields[field].annotation))
    else:
        where = f"the {cls.__name__} settings"
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{where}: {first['msg']}{more}"
