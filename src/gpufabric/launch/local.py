"""The local launcher: N rank processes on this machine, optionally grouped into virtual nodes.

Every rank is its own process in its own session (so a stop reaches everything it started), inherits
this process's environment (GPU runs depend on variables such as ``NCCL_NVLS_ENABLE=0`` passing through)
plus the program's, and gets torchrun's identity variables (``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``,
``LOCAL_WORLD_SIZE``, ``NODE_RANK``, ``MASTER_ADDR``, ``MASTER_PORT`` on a free port outside the
ephemeral range: ``launch.ports``). A virtual node sees
its own GPU subset through ``CUDA_VISIBLE_DEVICES`` and each rank picks ``cuda:LOCAL_RANK`` in it.

``seats`` (``launch.seats``) places the ranks on nodes that are places on this machine, each command
prefixed to land there (a test bed's network namespaces), the rendezvous on node 0's address.

A program that asks for more GPUs than this host has is refused, except on a host with no GPU at all:
there the GPUs are *virtual* (``GPUFABRIC_GPUS_PER_NODE`` as asked, no ``CUDA_VISIBLE_DEVICES``), so a
2 x 8-GPU task's multi-node logic can still be exercised on a laptop; the plan carries a warning note.

Supervision (prefixed output, stop-all on the first failure, timeout, exit report) is
``gpufabric.launch.processes.run_commands``. A rank this command started before its plan
(``launch.standby``: ``gpufabric bench``'s early start) takes over the planned command it can become
exactly; the others start afresh.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, ClassVar

from gpufabric.boundary_names import GPUS_PER_NODE_ENV
from gpufabric.errors import UsageError
from gpufabric.launch.base import LaunchOutcome, LaunchPlan, OutputSink, PlannedCommand, RankProgram
from gpufabric.launch.gpu_listing import listed_gpus
from gpufabric.launch.identity import LOOPBACK, rank_env
from gpufabric.launch.names import LAUNCHER_KINDS, LauncherKind
from gpufabric.launch.ports import free_port
from gpufabric.launch.processes import run_commands
from gpufabric.launch.seats import NodeSeat, seated_commands
from gpufabric.launch.standby import Spawner, held

if TYPE_CHECKING:  # types only: settings imports every launcher's options, never a launcher
    from gpufabric.launch.settings import LauncherSettings
    from gpufabric.task.model import Task

WARNING_PREFIX = "warning: "
"""Plan notes that start with this are said on stderr when the plan runs, not only in ``--dry-run``."""


def host_gpu_ids(environ: Mapping[str, str]) -> list[str]:
    """The GPU ids this process may hand out: its CUDA_VISIBLE_DEVICES when set (empty or -1: none),
    else the GPUs ``nvidia-smi -L`` lists (none without nvidia-smi; ``launch.gpu_listing``)."""
    visible = environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        return [d.strip() for d in visible.split(",") if d.strip() and d.strip() != "-1"]
    return list(listed_gpus(shutil.which("nvidia-smi")))


def virtual_gpus_warning(nodes: int, gpus_per_node: int) -> str:
    return (
        f"{WARNING_PREFIX}no GPU on this host: the {nodes} node(s) x {gpus_per_node} GPU(s) are virtual "
        f"({GPUS_PER_NODE_ENV}={gpus_per_node}, no CUDA_VISIBLE_DEVICES set); the multi-node logic runs, "
        "anything that needs a GPU will fail"
    )


class LocalLauncher:
    """Spawns the ranks of a ``RankProgram`` here; ``nodes > 1`` splits them into virtual nodes."""

    name = "local"
    kind: ClassVar[LauncherKind] = LAUNCHER_KINDS["local"]

    @classmethod
    def from_settings(cls, settings: LauncherSettings, *, task: Task | None = None) -> LocalLauncher:
        return cls(
            master_port=settings.local_master_port,
            virtual_nodes=settings.local_virtual_nodes,
            mps=settings.local_mps,
        )

    def __init__(
        self,
        *,
        master_port: int | None = None,
        environ: Mapping[str, str] | None = None,
        gpu_ids: Sequence[str] | None = None,
        virtual_nodes: int | None = None,
        mps: bool = False,
        seats: Sequence[NodeSeat] | None = None,
    ) -> None:
        self.virtual_nodes = virtual_nodes
        """NCCL virtual nodes: split the ranks into this many nodes, each with its own ``NCCL_HOSTID`` (so
        NCCL connects them through its network transport, as separate hosts), several ranks per GPU allowed"""
        self.mps = mps
        """start a private MPS control daemon for the job (ranks sharing a GPU run concurrently)"""
        self.seats = list(seats) if seats is not None else None
        """nodes that are places on this machine (``launch.seats``: a test bed's namespaces); CPU ranks"""
        self.master_port = master_port
        self.environ = environ
        self.gpu_ids = None if gpu_ids is None else list(gpu_ids)
        """the GPUs to hand out; None: this host's (``host_gpu_ids``), looked up when a program wants GPUs"""

    def render(self, program: RankProgram) -> LaunchPlan:
        if self.seats is not None:
            if program.gpus_per_node:
                raise UsageError("a test bed's nodes have no GPUs: run CPU ranks (--backend gloo)")
            port = self.master_port or free_port()
            seated, seat_notes = seated_commands(program, self.seats, port, self.name)
            return LaunchPlan(launcher=self.name, program=program, commands=seated, notes=seat_notes)
        if self.virtual_nodes:
            return self._render_virtual(program, self.virtual_nodes)
        environ = os.environ if self.environ is None else self.environ
        per_node = program.ranks_per_node
        if program.nodes > program.nranks:
            raise UsageError(
                f"--nodes: {program.nodes} nodes for {program.nranks} ranks leaves nodes empty; "
                f"use --nodes {program.nranks} or fewer"
            )
        gpu_ids: list[str] = []
        notes: list[str] = []
        if program.gpus_per_node > 0:
            wanted = program.gpus_per_node * program.nodes
            gpu_ids = self.gpu_ids if self.gpu_ids is not None else host_gpu_ids(environ)
            if not gpu_ids:
                notes.append(virtual_gpus_warning(program.nodes, program.gpus_per_node))
            elif len(gpu_ids) < wanted:
                raise UsageError(
                    f"--gpus-per-node: {program.nodes} node(s) x {program.gpus_per_node} GPU(s) = {wanted}, "
                    f"but only {len(gpu_ids)} GPU(s) are visible here; lower --nodes or --gpus-per-node "
                    f"until nodes x GPUs per node <= {len(gpu_ids)}, or set CUDA_VISIBLE_DEVICES= to run "
                    "on virtual GPUs"
                )
            if gpu_ids and per_node > program.gpus_per_node:
                raise UsageError(
                    f"--ranks: {per_node} ranks per node but {program.gpus_per_node} GPU(s) per node; "
                    "one process per GPU needs at least as many GPUs as ranks"
                )
        port = self.master_port or free_port()
        commands = []
        for rank in range(program.nranks):
            node, local = divmod(rank, per_node)
            local_size = min(per_node, program.nranks - node * per_node)
            env = rank_env(program, rank=rank, node=node, local=local, local_size=local_size, port=port,
                           launcher=self.name, nodes=program.nodes)  # fmt: skip
            env[GPUS_PER_NODE_ENV] = str(program.gpus_per_node)
            if gpu_ids:
                start = node * program.gpus_per_node
                env["CUDA_VISIBLE_DEVICES"] = ",".join(gpu_ids[start : start + program.gpus_per_node])
            commands.append(
                PlannedCommand(
                    argv=list(program.argv), env=env, cwd=None, ranks=[rank], node_rank=None, host=None
                )
            )
        notes.insert(
            0, f"{program.nranks} rank(s) on {program.nodes} virtual node(s), rendezvous {LOOPBACK}:{port}"
        )
        return LaunchPlan(launcher=self.name, program=program, commands=commands, notes=notes)

    def _render_virtual(self, program: RankProgram, nodes: int) -> LaunchPlan:
        """Virtual nodes: every rank sees one GPU (node k's share of the GPUs, round-robin within it)
        and carries its node's ``NCCL_HOSTID``; NCCL then treats the nodes as separate hosts."""
        from gpufabric.launch.virtual_nodes import virtual_node_commands

        environ = os.environ if self.environ is None else self.environ
        gpu_ids = (
            (self.gpu_ids if self.gpu_ids is not None else host_gpu_ids(environ))
            if program.gpus_per_node
            else []
        )
        port = self.master_port or free_port()
        commands, notes = virtual_node_commands(program, nodes, gpu_ids, port, self.name, mps=self.mps)
        return LaunchPlan(launcher=self.name, program=program, commands=commands, notes=notes)

    def execute(
        self, plan: LaunchPlan, *, on_output: OutputSink | None = None, timeout_s: float | None = None
    ) -> LaunchOutcome:
        base = os.environ if self.environ is None else self.environ
        if not self.mps:
            return run_commands(plan.commands, on_output=on_output, timeout_s=timeout_s, base_env=base,
                                spawner=_spawner(plan, base))  # fmt: skip
        from gpufabric.launch.mps import mps_daemon
        from gpufabric.launch.virtual_nodes import mps_root

        with mps_daemon(mps_root(plan.program)) as mps_env:
            env = {**base, **mps_env}
            return run_commands(plan.commands, on_output=on_output, timeout_s=timeout_s, base_env=env,
                                spawner=_spawner(plan, env))  # fmt: skip


def _spawner(plan: LaunchPlan, env_base: Mapping[str, str]) -> Spawner | None:
    """What starts each of ``plan``'s commands: the rank this command started before its plan, where one
    can become it exactly (``launch.standby``), else a fresh process (None: ``run_commands``' own)."""
    standby = held()
    return None if standby is None else standby.spawner(plan.commands, env_base)
