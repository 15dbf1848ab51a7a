"""Flag helpers more than one command uses: a fixed-choice check, ``--env NAME[=VALUE]`` pairs and the
result a path names (a file or a run directory).

Each raises ``UsageError`` naming the flag, the value and what would be valid; ``cli/app.py`` turns it
into ``Error: message`` and the usage exit code.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from gpufabric.errors import UsageError


def choice(flag: str, value: str, choices: tuple[str, ...]) -> str:
    """``value`` when it is one of ``choices``, else a ``UsageError`` listing them."""
    if value not in choices:
        raise UsageError(f"{flag}: unknown value {value!r}; choose from {', '.join(choices)}")
    return value


def parse_env_pairs(pairs: list[str], *, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """``--env NAME=VALUE`` flags as a mapping; a bare ``NAME`` takes its value from the environment, as
    ``gpufabric launch --env`` does (one meaning of ``--env`` in every command)."""
    from gpufabric.task.load import parse_env_assignments

    return parse_env_assignments(pairs, environ=environ)


def result_path(path: Path, *, what: str = "FILE") -> Path:
    """A result file, or a run directory (``runs/<id>/``, as ``gpufabric doctor`` takes) meaning its
    ``result.json`` (or, for a run that never finished, the ``result.jsonl`` stream)."""
    if not path.is_dir():
        return path
    for name in ("result.json", "result.jsonl"):
        if (path / name).is_file():
            return path / name
    raise UsageError(
        f"{what} {path}: a directory without result.json or result.jsonl; give a result file or a run "
        "directory (runs/<id>/)"
    )
