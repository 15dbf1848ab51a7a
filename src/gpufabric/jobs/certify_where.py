"""Where each of certify's jobs runs: the probe job over every node, each node's own sweep on that node
alone, and isolate's rounds over the nodes still in, for the three launchers certify runs through.

- ``local``: every node on this host. With ``--virtual-nodes`` node i is an NCCL virtual node on its
  share of this host's GPUs (node i's own sweep: two virtual nodes on that share, with MPS when it is
  one GPU); without, node i is a local rank (gloo on CPU).
- ``mpirun``: node i is the hostfile's i-th host (``--hosts`` of that host for its own sweep).
- ``slurm``: node i is Slurm node i, every job pinned to its nodes (``--nodelist``); the node stage's
  sweeps are ``srun`` steps of one allocation holding them all.
The node stage runs its per-node jobs at once on mpirun and Slurm (``node_parallel``), one at a time
on this host.
Only where every rank runs on this host can one node's ranks be split into virtual nodes, so the NET
loopback half of the self-test runs with ``--on local --virtual-nodes``; elsewhere a node's own sweep
is its intra-node one (the plan says so).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from gpufabric.bench.execution import LauncherFactory
from gpufabric.jobs.isolate_launch import LauncherChooser, pin_slurm_nodes
from gpufabric.launch.base import Launcher
from gpufabric.launch.local import LocalLauncher, host_gpu_ids
from gpufabric.launch.names import LauncherKind, launcher_kind

if TYPE_CHECKING:
    from gpufabric.launch.slurm_steps import SlurmAllocation

SELF_TEST_WHAT = (
    "each node's own all_reduce sweep as 2 NCCL virtual nodes on its GPUs (the self-test: NVLink/PCIe "
    "and the NET loopback)"
)
INTRA_WHAT = (
    "each node's own all_reduce sweep over its GPUs (intra-node; the NET loopback needs --on local "
    "--virtual-nodes)"
)
CPU_WHAT = "each node's own all_reduce sweep, 2 CPU ranks (gloo)"


@dataclasses.dataclass(frozen=True)
class Where:
    """The nodes' placement: how each stage's job finds its launcher."""

    launcher: str
    names: tuple[str, ...]
    hosts: tuple[str, ...]
    gpu_ids: tuple[str, ...]
    virtual_nodes: bool
    mps: bool
    mpirun: str
    slurm_pinned: bool

    @property
    def kind(self) -> LauncherKind:
        return launcher_kind(self.launcher)

    @property
    def on_gpu(self) -> bool:
        return bool(self.gpu_ids)

    def gpu_share(self, index: int) -> list[str]:
        """Node ``index``'s GPUs on this host (virtual nodes): its equal share, round-robin."""
        share = max(len(self.gpu_ids) // len(self.names), 1)
        first = (index * share) % len(self.gpu_ids)
        return [self.gpu_ids[(first + i) % len(self.gpu_ids)] for i in range(share)]

    def node_what(self) -> str:
        if self.virtual_nodes and self.on_gpu:
            return SELF_TEST_WHAT
        return INTRA_WHAT if self.on_gpu or not self.kind.always_here else CPU_WHAT

    def probe_launcher(self) -> Launcher:
        """The launcher of the probe job: one rank per node."""
        if self.kind.always_here:
            vnodes = len(self.names) if self.virtual_nodes else None
            return LocalLauncher(
                virtual_nodes=vnodes, gpu_ids=list(self.gpu_ids) if self.virtual_nodes else None
            )
        return self._remote(list(self.names))

    def probe_gpus_per_node(self) -> int:
        """GPUs the probe job gives each node: its share with virtual nodes (so the probe counts them)."""
        return len(self.gpu_share(0)) if self.virtual_nodes and self.on_gpu else 0

    def node_parallel(self, limit: int, jobs: int) -> int:
        """Node-stage jobs at once: up to ``limit`` where each job is its own machine (mpirun, Slurm);
        one at a time here, where the nodes share this host and would measure each other's load."""
        return 1 if self.kind.always_here else max(1, min(limit, jobs))

    def node_launcher(self, index: int) -> tuple[LauncherFactory, int | None, dict[str, str]]:
        """(launcher factory, ranks, environment changes) of node ``index``'s own sweep."""
        if self.kind.always_here:
            if self.virtual_nodes and self.on_gpu:
                mine = self.gpu_share(index)
                mps = self.mps or len(mine) == 1
                return (
                    (lambda: LocalLauncher(virtual_nodes=2, gpu_ids=mine, mps=mps)),
                    max(len(mine), 2),
                    {"CUDA_VISIBLE_DEVICES": ",".join(mine)},
                )
            return LocalLauncher, 2, {"CUDA_VISIBLE_DEVICES": ""}
        name = self.names[index]
        return (lambda: self._remote([name])), None, {}

    def node_step_launcher(self, index: int, allocation: SlurmAllocation) -> LauncherFactory:
        """Node ``index``'s own sweep on Slurm: a step of ``allocation``, the stage's, holding every node."""
        from gpufabric.launch.slurm_steps import SrunStepLauncher

        name = self.names[index]
        return lambda: SrunStepLauncher(allocation, name)

    def isolate_chooser(self, remaining: list[int]) -> LauncherChooser:
        """isolate's launchers over the nodes in ``remaining`` (their GPUs, hosts or Slurm nodes)."""
        gpus = (
            [gpu for index in remaining for gpu in self.gpu_share(index)]
            if self.virtual_nodes and self.on_gpu
            else None
        )
        names = [self.names[i] for i in remaining]

        def choose(name: str, virtual_nodes: int) -> Callable[[], Launcher]:
            if launcher_kind(name).always_here:
                return lambda: LocalLauncher(virtual_nodes=virtual_nodes or None, gpu_ids=gpus, mps=self.mps)
            return lambda: self._remote(names)

        return choose

    def _remote(self, names: list[str]) -> Launcher:
        from gpufabric.launch.factory import launcher_factory

        if self.kind.takes_hosts:
            hosts = [self.hosts[self.names.index(n)] for n in names]
            return launcher_factory("mpirun", hosts=hosts, hostfile=None, mpirun=self.mpirun, dry_run=False)()
        launcher = launcher_factory("slurm", hosts=[], hostfile=None, mpirun=self.mpirun, dry_run=False)()
        return pin_slurm_nodes(launcher, names) if self.slurm_pinned else launcher


def where_of(
    launcher: str,
    names: list[str],
    *,
    hostfile: Path | None,
    environ: Mapping[str, str],
    virtual_nodes: bool,
    mps: bool,
    mpirun: str,
    slurm_pinned: bool,
) -> Where:
    """The placement of ``names`` through ``launcher``; GPUs are this host's (``environ``)."""
    hosts: list[str] = []
    if hostfile is not None:
        from gpufabric.launch.hosts import parse_hostfile

        hosts = [entry.host for entry in parse_hostfile(hostfile)]
    gpu_ids = host_gpu_ids(environ) if launcher_kind(launcher).always_here else []
    return Where(
        launcher=launcher,
        names=tuple(names),
        hosts=tuple(hosts),
        gpu_ids=tuple(gpu_ids),
        virtual_nodes=virtual_nodes,
        mps=mps,
        mpirun=mpirun,
        slurm_pinned=slurm_pinned,
    )
