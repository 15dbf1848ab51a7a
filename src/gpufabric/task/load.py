"""Reading task files: ``yaml.safe_load`` into ``Task``, with one-line, field-level errors, and the
``--env K=V`` overrides that ``sky launch --env USE_EFA=false`` users expect.

Error lines name the file, the field path, the problem and the valid choices, e.g.
``nccl.yaml: resources.network_tier: 'fast' is not one of: standard, best``.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError
from pydantic_core import ErrorDetails

from gpufabric.envnames import RULE, check_env_name, check_env_names
from gpufabric.errors import InputError, UsageError
from gpufabric.task.model import Resources, Task, TaskConfig
from gpufabric.yaml_input import load_yaml

_FIELDS_BY_MODEL: dict[str, tuple[str, ...]] = {
    "": tuple(Task.model_fields),
    "resources": tuple(Resources.model_fields),
    "config": tuple(TaskConfig.model_fields),
}


def load_task(path: Path, env_overrides: Mapping[str, str] | None = None) -> Task:
    """Read and validate a task file; apply ``--env`` overrides (they win over ``envs:``)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read task file ({exc.__class__.__name__}: {exc})") from exc
    return task_from_text(text, source=str(path), env_overrides=env_overrides)


def task_from_text(text: str, *, source: str, env_overrides: Mapping[str, str] | None = None) -> Task:
    data = safe_yaml(text, source=source)
    if data is None:
        raise InputError(f"{source}: the task file is empty; a task needs at least `run:`")
    if not isinstance(data, dict):
        raise InputError(f"{source}: a task file is a YAML mapping (name, resources, run ...), not a list")
    try:
        task = Task.model_validate(data)
    except RecursionError:
        raise InputError(
            f"{source}: a value is nested too deeply to check; a task file is a few levels deep"
        ) from None
    except ValidationError as exc:
        problem = " ".join(describe_validation_error(exc.errors()[0], data).split())  # keys may span lines
        raise InputError(f"{source}: {problem[:300]}") from exc
    return apply_env_overrides(task, env_overrides or {}, source=source)


def safe_yaml(text: str, *, source: str) -> Any:
    """``yaml.safe_load`` whose every failure is one InputError line: bad syntax, a key written twice in one
    mapping (``yaml_input``), a tag on a value it cannot convert (``!!int abc``, an integer of more than
    4300 digits), or nesting deeper than Python recurses."""
    try:
        return load_yaml(text)  # yaml.safe_load, duplicate keys refused
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InputError(f"{source}{where}: not valid YAML ({problem})") from None
    except RecursionError:
        raise InputError(
            f"{source}: YAML nested too deeply to read (thousands of levels); a task file is a few "
            "levels deep"
        ) from None
    except (ValueError, TypeError, OverflowError) as exc:
        raise InputError(f"{source}: a YAML value cannot be converted ({str(exc)[:120]})") from None


def apply_env_overrides(task: Task, overrides: Mapping[str, str], *, source: str) -> Task:
    """Overrides replace or add envs; envs left null in the file (SkyPilot's "required") must be given."""
    check_env_names(overrides, where=f"{source}: --env")
    envs = {**task.envs, **overrides}
    missing = sorted(name for name, value in envs.items() if value is None)
    if missing:
        flags = " ".join(f"--env {name}=..." for name in missing)
        raise InputError(f"{source}: envs.{missing[0]} is required (null in the task file); pass {flags}")
    return task.model_copy(update={"envs": envs})


def parse_env_assignments(
    items: Sequence[str], *, environ: Mapping[str, str] | None = None, flag: str = "--env"
) -> dict[str, str]:
    """``["USE_EFA=false", "HF_TOKEN"]`` -> dict; a bare NAME takes its value from ``environ``."""
    environ = os.environ if environ is None else environ
    result: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not name:
            raise UsageError(f"{flag} {item!r}: expected NAME=VALUE with NAME like USE_EFA ({RULE})")
        check_env_name(name, where=f"{flag} {item[:80]!r}")
        if not sep:
            if name not in environ:
                raise UsageError(
                    f"{flag} {name}: no '=VALUE' and {name} is not set here; use {flag} {name}=VALUE"
                )
            value = environ[name]
        result[name] = value
    return result


def describe_validation_error(error: ErrorDetails, data: Any) -> str:
    """One pydantic error as ``field.path: problem (valid choices / did you mean)``."""
    loc = [str(part) for part in error["loc"]]
    path = ".".join(loc) or "(top level)"
    kind = error["type"]
    value = error.get("input")
    if kind == "extra_forbidden":
        parent = ".".join(loc[:-1])
        choices = _FIELDS_BY_MODEL.get(parent, ())
        hint = difflib.get_close_matches(loc[-1], choices, n=1)
        guess = f"; did you mean {hint[0]!r}?" if hint else ""
        return f"{path}: unknown field{guess} (valid here: {', '.join(choices)})"
    if kind == "literal_error":
        expected = error.get("ctx", {}).get("expected", "")
        return f"{path}: {value!r} is not one of: {expected.replace(' or ', ', ').replace(chr(39), '')}"
    if kind == "missing":
        return f"{path}: required field is missing"
    if kind == "less_than_equal":
        limit = error.get("ctx", {}).get("le")
        return f"{path}: {_short(value)} is above the limit of {limit}; use a value up to {limit}"
    message = error["msg"].removeprefix("Value error, ")
    if kind in {"value_error", "assertion_error"}:
        return f"{path}: {message}"
    return f"{path}: {message} (got {_short(value)})"


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
