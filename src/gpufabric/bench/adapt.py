"""Fit a sweep's rank program to where and how it runs, without touching the engine.

``runner.prepare_sweep`` builds a one-node ``RankProgram`` for this host (``Execution.job_launcher`` wraps
every job's launcher in this one). Two things it cannot know travel here, as
a ``Launcher`` that wraps the chosen one (the Launcher interface is the seam, so every backend gets them):

- the node layout across real hosts (``--on mpirun --hosts a,b``: 2 nodes, ranks split evenly, each
  node's GPU count = its ranks on a GPU run);
- variables a fabric-off profile must *remove* from the rank environment (``FabricProfile.unset``, e.g.
  ``FI_PROVIDER`` for EFA). An inherited variable cannot be removed by adding environment, and mpirun,
  srun and pods each inherit differently, so the rank command itself is prefixed with
  ``python -m gpufabric.bench.adapt --unset NAME ... --`` which drops them and ``exec``s the rank.

This module imports no torch: the exec wrapper must start fast on every rank.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterable, MutableMapping

from gpufabric.errors import UsageError
from gpufabric.launch.base import Launcher, LaunchOutcome, LaunchPlan, OutputSink, RankProgram

WRAPPER_MODULE = "gpufabric.bench.adapt"


def drop_names(environ: MutableMapping[str, str], names: Iterable[str]) -> list[str]:
    """Remove ``names`` from ``environ`` (a name ending in ``_`` is a prefix); returns what was removed."""
    wanted = list(names)
    gone = [k for k in environ if any(k.startswith(n) if n.endswith("_") else k == n for n in wanted)]
    for name in gone:
        del environ[name]
    return gone


def unset_argv(argv: list[str], names: Iterable[str]) -> list[str]:
    """``argv`` run through the exec wrapper that first removes ``names`` from the environment."""
    wanted = sorted(set(names))
    if not wanted:
        return list(argv)
    flags = [part for name in wanted for part in ("--unset", name)]
    return [sys.executable, "-m", WRAPPER_MODULE, *flags, "--", *argv]


class AdaptedLauncher:
    """A launcher that rewrites the program (nodes, GPUs per node, removed variables), then delegates."""

    def __init__(self, inner: Launcher, *, nodes: int = 1, unset: Iterable[str] = ()) -> None:
        if nodes < 1:
            raise UsageError(f"--hosts: {nodes} nodes; list at least one host")
        self.inner = inner
        self.name = inner.name
        self.nodes = nodes
        self.unset = tuple(unset)

    @property
    def virtual_nodes(self) -> int | None:
        """The inner launcher's virtual nodes (None: real nodes), read by whoever names a result's nodes."""
        nodes = getattr(self.inner, "virtual_nodes", None)
        return nodes if isinstance(nodes, int) and nodes > 0 else None

    def adapt(self, program: RankProgram) -> RankProgram:
        update: dict[str, object] = {"argv": unset_argv(program.argv, self.unset)}
        if self.nodes > 1:
            if program.nranks % self.nodes:
                raise UsageError(
                    f"--ranks: {program.nranks} ranks do not split evenly over {self.nodes} hosts; "
                    f"use a multiple of {self.nodes}"
                )
            update["nodes"] = self.nodes
            if program.gpus_per_node:
                update["gpus_per_node"] = program.nranks // self.nodes
        return program.model_copy(update=update)

    def render(self, program: RankProgram) -> LaunchPlan:
        return self.inner.render(self.adapt(program))

    def execute(
        self, plan: LaunchPlan, *, on_output: OutputSink | None = None, timeout_s: float | None = None
    ) -> LaunchOutcome:
        return self.inner.execute(plan, on_output=on_output, timeout_s=timeout_s)


def main(argv: list[str] | None = None) -> int:
    """``python -m gpufabric.bench.adapt --unset NAME [--unset PREFIX_] -- COMMAND ...``"""
    parser = argparse.ArgumentParser(prog=f"python -m {WRAPPER_MODULE}")
    parser.add_argument("--unset", action="append", default=[], help="variable (or NAME_ prefix) to drop")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command after --")
    drop_names(os.environ, args.unset)
    os.execvp(command[0], command)
    return 127  # not reached: exec replaces this process


if __name__ == "__main__":
    sys.exit(main())
