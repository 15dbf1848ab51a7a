"""The busy loop that starves a node: one process spinning on one core, inside the node's namespace.

It runs inside the namespace so the sweep (``testbed.sweep``) finds it there after a killed run, and it
asks for SIGTERM when its starter dies (``launch.orphans``' parent-death hook), so it rarely needs one.
"""

from __future__ import annotations

import contextlib
import subprocess

from gpufabric.errors import TestbedError
from gpufabric.launch.orphans import parent_death_hook
from gpufabric.testbed.commands import in_namespace

SPIN = ["sh", "-c", "while :; do :; done"]
STOP_WAIT_S = 5.0


class CpuLoad:
    """A busy loop pinned to ``core`` in ``namespace``; ``stop`` ends it (by its pid)."""

    def __init__(self, namespace: str, core: int) -> None:
        self.namespace = namespace
        self.core = core
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        argv = in_namespace(self.namespace, ["taskset", "-c", str(self.core), *SPIN])
        try:
            self.process = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                start_new_session=True, preexec_fn=parent_death_hook(),
            )  # fmt: skip
        except OSError as exc:
            raise TestbedError(f"`{' '.join(argv)}` (a starved node's load): {exc}") from exc

    def stop(self) -> None:
        if self.process is None:
            return
        self.process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=STOP_WAIT_S)
        self.process = None
