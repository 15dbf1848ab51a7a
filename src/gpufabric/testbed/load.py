"""The busy loop that starves a node: one process spinning on one core, inside the node's namespace.

It runs inside the namespace so the sweep (``testbed.sweep``) finds it there after a killed run, and it
asks for SIGTERM when its starter dies (``launch.orphans``' parent-death hook), so it rarely needs one.
"""

from __future__ import annotations

import contextlib
import subprocess
import time
from pathlib import Path

from gpufabric.errors import TestbedError
from gpufabric.launch.orphans import parent_death_hook
from gpufabric.testbed.commands import in_namespace

SPIN = ["sh", "-c", "while :; do :; done"]
STOP_WAIT_S = 5.0
START_WAIT_S = 10.0


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
        # ip execs taskset, which execs sh in the same process: once it is sh, it spins in the node's
        # namespace on its core, and the fault is in place when ``start`` returns.
        comm = Path(f"/proc/{self.process.pid}/comm")
        deadline = time.monotonic() + START_WAIT_S
        while time.monotonic() < deadline and self.process.poll() is None:
            with contextlib.suppress(OSError):
                if comm.read_text().strip() == SPIN[0]:
                    return
            time.sleep(0.02)
        self.stop()
        raise TestbedError(
            f"`{' '.join(argv)}` (a starved node's load): not spinning after {START_WAIT_S:g} s"
        )

    def stop(self) -> None:
        if self.process is None:
            return
        self.process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=STOP_WAIT_S)
        self.process = None
