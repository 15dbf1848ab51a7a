"""The ``mpirun`` launcher: real OpenMPI places the ranks (hostfile or ``-H host:slots``), ``-x`` carries
the environment, ``--tag-output`` tells the ranks' lines apart, and the rank identity is OpenMPI's own
(``OMPI_COMM_WORLD_*``). ``MASTER_ADDR``/``MASTER_PORT`` point at the first host for torch.distributed.

With no hosts, every rank runs on this host (``-H localhost:N``), as ``--on mpirun --ranks N`` promises.
The seeds' MCA flags are presets (``SEED_MCA_PRESETS``); a plan passes them in ``MpirunOptions.mca``.

``virtual_nodes`` (this host only) splits the ranks into NCCL nodes exactly as the local launcher does
(``gpufabric.launch.virtual_nodes``): the program runs under ``sh -c RANK_TABLE``, which exports each
rank's ``NCCL_HOSTID``, node and GPU share by ``OMPI_COMM_WORLD_RANK``; ``mps`` starts a private MPS
control daemon before mpirun and stops it afterwards, its directories passed to the ranks with ``-x``.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
from collections.abc import Iterator
from typing import TYPE_CHECKING, ClassVar

from gpufabric.boundary_names import NODE_IPS_ENV
from gpufabric.errors import LaunchError, UsageError
from gpufabric.launch.base import LaunchOutcome, LaunchPlan, OutputSink, PlannedCommand, RankExit, RankProgram
from gpufabric.launch.hosts import HostSlots, parse_hostfile, parse_hosts
from gpufabric.launch.identity import layout_env
from gpufabric.launch.mpirun_options import MpirunOptions as MpirunOptions
from gpufabric.launch.names import LAUNCHER_KINDS, LauncherKind
from gpufabric.launch.processes import run_commands
from gpufabric.launch.task_program import is_task_program, program_layout
from gpufabric.mpirun_tag import MPIRUN_TAG

if TYPE_CHECKING:  # types only: settings imports every launcher's options, never a launcher
    from gpufabric.launch.settings import LauncherSettings
    from gpufabric.task.model import Task

# The MCA flags of the seeds' nccl-tests launches (skypilot-network-tier.md §6).
SEED_MCA_PRESETS: dict[str, list[tuple[str, str]]] = {
    "aws-efa": [("pml", "^cm,ucx"), ("btl", "tcp,self"), ("btl_tcp_if_exclude", "lo,docker0,veth_def_agent")],
    "gcp-tcpx": [("btl", "tcp,self"), ("btl_tcp_if_include", "eth0")],
}
LOCALHOST = "localhost"
RSH_AGENT = "plm_rsh_agent"
LOCAL_ADDRESS = "127.0.0.1"

_PROCESS_NAME = re.compile(r"Process name:\s*\[\[\d+,\d+\],(\d+)\]")
_EXIT_CODE = re.compile(r"Exit code:\s*(-?\d+)")
_NOT_STARTED = re.compile(
    r"(ORTE was unable to reliably start|ssh: |Host key verification failed|"
    r"could not be found|There are not enough slots)",
    re.IGNORECASE,
)


class MpirunLauncher:
    name = "mpirun"
    kind: ClassVar[LauncherKind] = LAUNCHER_KINDS["mpirun"]

    @classmethod
    def from_settings(cls, settings: LauncherSettings, *, task: Task | None = None) -> MpirunLauncher:
        return cls(settings.mpirun)

    def __init__(self, options: MpirunOptions | None = None, *, gpu_ids: list[str] | None = None) -> None:
        self.options = options or MpirunOptions()
        self.gpu_ids = gpu_ids
        """virtual nodes: the GPUs to hand out; None: this host's (``host_gpu_ids``) when the program
        wants GPUs"""

    @property
    def virtual_nodes(self) -> int | None:
        """As ``LocalLauncher.virtual_nodes``: NCCL nodes this host's ranks are split into (None: off)."""
        return self.options.virtual_nodes or None

    # --- render ------------------------------------------------------------------------------

    def _hosts(self, program: RankProgram) -> list[HostSlots]:
        opts = self.options
        if opts.hosts and opts.hostfile:
            raise UsageError("--hosts and --hostfile both given; use one of them")
        if opts.hostfile:
            hosts = parse_hostfile(opts.hostfile)
        elif opts.hosts:
            hosts = parse_hosts(opts.hosts)
        else:
            return []
        if len(hosts) != program.nodes:
            raise UsageError(
                f"{len(hosts)} hosts given ({', '.join(h.host for h in hosts)}) but the job has "
                f"{program.nodes} nodes; pass --nodes {len(hosts)} or list {program.nodes} hosts"
            )
        return hosts

    def render(self, program: RankProgram) -> LaunchPlan:
        opts = self.options
        if opts.virtual_nodes and (opts.hosts or opts.hostfile):
            raise UsageError(
                "--virtual-nodes: places every rank on this host; drop --hosts/--hostfile (ranks on other "
                "hosts are real nodes already) or drop --virtual-nodes"
            )
        hosts = self._hosts(program)
        per_node = program.ranks_per_node
        local = not hosts
        node_count = opts.virtual_nodes or program.nodes
        addresses = [LOCAL_ADDRESS] * node_count if local else [h.host for h in hosts]
        layout = program_layout(program, addresses, launcher=self.name, master_port=opts.master_port)
        env = {**program.env, **layout_env(layout)}
        program_argv = list(program.argv)
        notes: list[str] = []
        if opts.virtual_nodes:
            program_argv, notes = self._virtual_nodes(program, env)
        argv = [opts.mpirun]
        as_root = opts.allow_run_as_root if opts.allow_run_as_root is not None else os.geteuid() == 0
        if as_root:
            argv.append("--allow-run-as-root")
        argv += ["--tag-output", "-np", str(program.nranks)]
        if local:
            argv += ["-H", f"{LOCALHOST}:{program.nranks}"]
            oversubscribe = opts.oversubscribe
            if oversubscribe is None:
                oversubscribe = program.nranks > (os.cpu_count() or 1)
        else:
            if opts.hostfile:
                argv += ["--hostfile", str(opts.hostfile)]
            else:
                argv += ["-H", ",".join(f"{h.host}:{h.slots or per_node}" for h in hosts)]
            argv += ["-N", str(per_node)]
            oversubscribe = bool(opts.oversubscribe)
        if oversubscribe:
            argv.append("--oversubscribe")
        argv += ["--bind-to", "none"]
        for key, value in opts.mca:
            argv += ["--mca", key, value]
        no_agent = local and _needs_local_agent(opts)
        if no_agent:
            argv += ["--mca", RSH_AGENT, shutil.which("false") or "/bin/false"]
        for name in sorted(env):
            argv += ["-x", name]
        argv += opts.extra_args
        argv += program_argv
        command = PlannedCommand(
            argv=argv,
            env=env,
            cwd=None,
            ranks=list(range(program.nranks)),
            host=None if not local else socket.gethostname(),
        )
        if not notes:
            notes = [
                f"{program.nranks} ranks, {per_node} per node, on "
                + ("this host" if local else ", ".join(addresses))
            ]
        if no_agent:
            notes.append(
                "no ssh or rsh here (a container, often): every rank is on this host, so mpirun's remote "
                f"agent is set to false ({RSH_AGENT}); OpenMPI stops at start without one"
            )
        if is_task_program(program):
            notes.append("task: one process per node runs setup then run, with SKYPILOT_* set")
        return LaunchPlan(launcher=self.name, program=program, commands=[command], notes=notes)

    def _virtual_nodes(self, program: RankProgram, env: dict[str, str]) -> tuple[list[str], list[str]]:
        from gpufabric.launch.local import host_gpu_ids
        from gpufabric.launch.virtual_nodes import mpirun_virtual_nodes

        gpu_ids: list[str] = []
        if program.gpus_per_node:
            gpu_ids = self.gpu_ids if self.gpu_ids is not None else host_gpu_ids(os.environ)
        return mpirun_virtual_nodes(program, self.options.virtual_nodes, gpu_ids, env, mps=self.options.mps)

    # --- execute -----------------------------------------------------------------------------

    def execute(
        self, plan: LaunchPlan, *, on_output: OutputSink | None = None, timeout_s: float | None = None
    ) -> LaunchOutcome:
        command = plan.commands[0]
        self._check_ready(command)
        program = plan.program
        node_tag = is_task_program(program)
        hosts_by_rank = _hosts_by_rank(command, program, self.options.virtual_nodes)
        failed: dict[str, int] = {}

        def route(index: int, line: str) -> tuple[str, int | None, str]:
            match = MPIRUN_TAG.match(line)
            if match:
                rank = int(match["rank"])
                prefix = f"(node {rank})" if node_tag else f"[rank {rank}]"
                # mpirun tags every chunk it reads, so a block-buffered writer gets a tag mid-line.
                body = line[match.end() :].replace(f"[{match['job']},{rank}]<{match['stream']}>:", "")
                return prefix, rank, body
            name = _PROCESS_NAME.search(line)
            if name:
                failed["rank"] = int(name.group(1))
            code = _EXIT_CODE.search(line)
            if code:
                failed["code"] = int(code.group(1))
            if _NOT_STARTED.search(line):
                failed.setdefault("start_error", 1)
            return "[mpirun]", None, line

        def exits(index: int, returncode: int) -> list[RankExit]:
            bad_rank = failed.get("rank")
            result = []
            for rank in range(program.nranks):
                code = (
                    returncode
                    if returncode <= 0 or bad_rank is None
                    else (failed.get("code", returncode) if rank == bad_rank else None)
                )
                result.append(RankExit(rank=rank, host=hosts_by_rank[rank], returncode=code))
            return result

        with self._mps(program):
            outcome = run_commands(
                [command], on_output=on_output, timeout_s=timeout_s, route_line=route, exit_details=exits
            )
        if not outcome.ok and "start_error" in failed and "rank" not in failed and not outcome.timed_out:
            tail = outcome.exits[0].last_lines if outcome.exits else []
            reason = next((line.strip() for line in tail if _NOT_STARTED.search(line)), "see output above")
            outcome.failure = (
                f"mpirun could not start the ranks ({reason}); check that every host resolves, "
                "accepts passwordless ssh and has OpenMPI at the same path"
            )
        return outcome

    @contextlib.contextmanager
    def _mps(self, program: RankProgram) -> Iterator[None]:
        """``--mps``: the daemon whose directories the plan passed with ``-x``, up for the whole job."""
        if not (self.options.virtual_nodes and self.options.mps):
            yield
            return
        from gpufabric.launch.mps import mps_daemon
        from gpufabric.launch.virtual_nodes import mps_root

        with mps_daemon(mps_root(program)):
            yield

    def _check_ready(self, command: PlannedCommand) -> None:
        if shutil.which(command.argv[0]) is None:
            raise LaunchError(
                f"mpirun not found ({command.argv[0]!r} is not on PATH); install OpenMPI "
                "(apt-get install openmpi-bin) or pass --mpirun /path/to/mpirun"
            )
        for host in self._named_hosts():
            try:
                socket.getaddrinfo(host, None)
            except OSError as exc:
                raise LaunchError(
                    f"host {host!r} does not resolve ({exc.strerror or exc}); fix the name in "
                    "--hosts/--hostfile or add it to /etc/hosts"
                ) from exc

    def _named_hosts(self) -> list[str]:
        if self.options.hostfile:
            return [h.host for h in parse_hostfile(self.options.hostfile)]
        return [h.host for h in parse_hosts(self.options.hosts)]


def _needs_local_agent(opts: MpirunOptions) -> bool:
    """True when OpenMPI would refuse to start for want of ssh/rsh although every rank is local: its rsh
    launcher looks the agent up at start ("plm_rsh_agent: ssh : rsh ... could not be found") even for
    -H localhost. Not when the user set the agent (``--mca`` or ``OMPI_MCA_plm_rsh_agent``)."""
    if any(key == RSH_AGENT for key, _ in opts.mca) or f"OMPI_MCA_{RSH_AGENT}" in os.environ:
        return False
    return shutil.which("ssh") is None and shutil.which("rsh") is None


def _hosts_by_rank(command: PlannedCommand, program: RankProgram, virtual_nodes: int) -> list[str | None]:
    """Each rank's node as exit reports name it: the host, or ``host/vnodeK`` (as in results)."""
    addresses = command.env.get(NODE_IPS_ENV, "").split(",")
    local = command.host is not None
    per_node = program.ranks_per_node
    per_virtual = -(-program.nranks // max(virtual_nodes, 1))
    result: list[str | None] = []
    for rank in range(program.nranks):
        if local and virtual_nodes:
            result.append(f"{command.host}/vnode{rank // per_virtual}")
        elif local:
            result.append(command.host)
        else:
            node = min(rank // per_node, len(addresses) - 1)
            result.append(addresses[node] or None)
    return result
