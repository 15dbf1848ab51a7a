"""Flag helpers more than one command uses: a fixed-choice check (``errors.choice``, which the library
uses too), the metavar of a ``--format`` and ``--env NAME[=VALUE]`` pairs.

Each raises ``UsageError`` naming the flag, the value and what would be valid; ``cli/app.py`` turns it
into ``Error: message`` and the usage exit code. (A path naming a result file or a run directory is
``results.readers.result_file``.)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from gpufabric.errors import choice

__all__ = ["choice", "formats_metavar", "parse_env_pairs"]


def formats_metavar(formats: Iterable[str]) -> str:
    """``<table|markdown|csv|json>``: the words a ``--format`` takes, as its help shows them."""
    return "<" + "|".join(formats) + ">"


def parse_env_pairs(pairs: list[str], *, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """``--env NAME=VALUE`` flags as a mapping; a bare ``NAME`` takes its value from the environment, as
    ``gpufabric launch --env`` does (one meaning of ``--env`` in every command)."""
    from gpufabric.task import parse_env_assignments

    return parse_env_assignments(pairs, environ=environ)
