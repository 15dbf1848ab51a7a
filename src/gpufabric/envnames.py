"""Environment variable names that may reach a script, a manifest or a process environment.

A name travels into shell text (``export NAME=...`` in ``env.sh``, the comment that lists the variables of
an sbatch script, ``-x NAME`` on an mpirun command line, ``--env=NAME`` for ``docker run``), where only a
POSIX name (``[A-Za-z_][A-Za-z0-9_]*``, IEEE Std 1003.1 "Environment Variables") is inert: a newline ends
a comment and starts a command, ``=`` splits the name from a value, ``;`` and ``$(...)`` are syntax. So every
name is checked at the boundary where it enters (task files, ``--env`` flags, pod_config ``env`` entries,
the programs and plans the launchers render) and refused in one line here, with the rule and the fix.

Values are never checked: they travel in the environment or are quoted (``shlex.quote``) where they are
rendered into shell text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from gpufabric.errors import UsageError

RULE = "POSIX: letters, digits and _, not starting with a digit"
_POSIX_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def is_env_name(name: str) -> bool:
    """True for a POSIX name: ``NCCL_DEBUG``, ``_x1``; false for ``1X``, ``A=B``, ``a.b``, ``X\\ny``."""
    return _POSIX_NAME.fullmatch(name) is not None


def suggested_name(name: str) -> str:
    """A POSIX name close to ``name`` for the fix: runs of other characters become one ``_``."""
    fixed = re.sub(r"[^A-Za-z0-9_]+", "_", name).strip("_") or "NAME"
    return f"_{fixed}" if fixed[0].isdigit() else fixed


def name_problem(name: str) -> str:
    """``'X\\ntouch' is not a valid environment variable name (...); rename it, e.g. X_touch``: the
    one-line reason (``repr`` keeps a newline or a control character visible and on the line)."""
    shown = repr(name) if len(name) <= 60 else repr(name[:57]) + "..."
    return (
        f"{shown} is not a valid environment variable name ({RULE}); rename it, e.g. "
        f"{suggested_name(name)[:60]}"
    )


def check_env_name(name: str, *, where: str) -> str:
    """``name`` when it is a POSIX name, else ``UsageError`` naming ``where`` it came from (a flag, a file
    and field), the rule and the fix."""
    if not is_env_name(name):
        raise UsageError(f"{where}: {name_problem(name)}")
    return name


def check_env_names(names: Iterable[str], *, where: str) -> None:
    """``check_env_name`` for each of ``names`` (the keys of an environment mapping)."""
    for name in names:
        check_env_name(name, where=where)


def check_one_line(value: str, *, where: str) -> str:
    """``value`` when it holds no line break or other control character, else ``UsageError``: a value put
    on a line of a script (an ``#SBATCH`` option, a comment) must end where its line ends."""
    bad = next((c for c in value if c in "\r\n" or (ord(c) < 32 and c != "\t") or ord(c) == 127), None)
    if bad is not None:
        raise UsageError(
            f"{where}: {value[:60]!r} holds the control character {bad!r}, which would start a new line of "
            "the script; remove it"
        )
    return value
