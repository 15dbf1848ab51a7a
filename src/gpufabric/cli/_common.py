"""Flag helpers more than one command uses: a fixed-choice check, the metavar of a ``--format`` and
``--env NAME[=VALUE]`` pairs.

Each raises ``UsageError`` naming the flag, the value and what would be valid; ``cli/app.py`` turns it
into ``Error: message`` and the usage exit code. (A path naming a result file or a run directory is
``results.readers.result_file``.)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from gpufabric.errors import UsageError


def choice(flag: str, value: str, choices: tuple[str, ...]) -> str:
    """``value`` when it is one of ``choices``, else a ``UsageError`` listing them."""
    if value not in choices:
        raise UsageError(f"{flag}: unknown value {value!r}; choose from {', '.join(choices)}")
    return value


def formats_metavar(formats: Iterable[str]) -> str:
    """``<table|markdown|csv|json>``: the words a ``--format`` takes, as its help shows them."""
    return "<" + "|".join(formats) + ">"


def parse_env_pairs(pairs: list[str], *, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """``--env NAME=VALUE`` flags as a mapping; a bare ``NAME`` takes its value from the environment, as
    ``gpufabric launch --env`` does (one meaning of ``--env`` in every command)."""
    from gpufabric.task import parse_env_assignments

    return parse_env_assignments(pairs, environ=environ)
