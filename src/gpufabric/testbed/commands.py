"""Every command a test bed runs (``ip``, ``tc``, ``cat`` inside a namespace), bounded in time.

One function, ``run_command``: a command that fails or passes its deadline becomes one ``TestbedError``
line naming the command and the last thing it said, never a traceback and never a hang. Tear-down and
sweep calls pass ``check=False``: removing what is already gone is not an error.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence

from gpufabric.errors import TestbedError

COMMAND_TIMEOUT_S = 15.0
"""One ``ip``/``tc`` call takes milliseconds; seconds mean the kernel or the machine is stuck."""


def run_command(
    argv: Sequence[str], *, timeout_s: float = COMMAND_TIMEOUT_S, check: bool = True, what: str = ""
) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` to its end within ``timeout_s``; with ``check``, a non-zero exit is a ``TestbedError``
    naming ``what`` it was for."""
    shown = " ".join(argv)
    purpose = f" ({what})" if what else ""
    try:
        done = subprocess.run(
            list(argv), capture_output=True, text=True, timeout=timeout_s, check=False,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
    except FileNotFoundError as exc:
        raise TestbedError(
            f"`{shown}`{purpose}: {argv[0]} not found; install iproute2 (apt-get install iproute2)"
        ) from exc
    except subprocess.TimeoutExpired as exc:
        raise TestbedError(f"`{shown}`{purpose}: no answer within {timeout_s:g} s") from exc
    if check and done.returncode != 0:
        said = (done.stderr.strip() or done.stdout.strip() or "no output").splitlines()[-1]
        raise TestbedError(f"`{shown}`{purpose} failed with exit {done.returncode}: {said}")
    return done


def in_namespace(namespace: str, argv: Sequence[str]) -> list[str]:
    """``argv`` run inside network namespace ``namespace`` (its own interfaces, routes and /sys/class/net)."""
    return ["ip", "netns", "exec", namespace, *argv]
