"""Flag helpers more than one command uses: a fixed-choice check and ``--env NAME=VALUE`` pairs.

Each raises ``UsageError`` naming the flag, the value and what would be valid; ``cli/app.py`` turns it
into ``Error: message`` and the usage exit code.
"""

from __future__ import annotations

from gpufabric.errors import UsageError


def choice(flag: str, value: str, choices: tuple[str, ...]) -> str:
    """``value`` when it is one of ``choices``, else a ``UsageError`` listing them."""
    if value not in choices:
        raise UsageError(f"{flag}: unknown value {value!r}; choose from {', '.join(choices)}")
    return value


def parse_env_pairs(pairs: list[str]) -> dict[str, str]:
    """``--env NAME=VALUE`` flags as a mapping (names stripped, values kept as written)."""
    env: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise UsageError(f"--env: {pair!r} is not NAME=VALUE; write e.g. --env NCCL_ALGO=Ring")
        env[name.strip()] = value
    return env
