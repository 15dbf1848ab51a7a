"""The parts of ``gpufabric bench`` beyond one local sweep: where it runs (``--on``, ``--hosts``), the run
directory, ``--dry-run`` (the nccl-tests engine is wired in ``cli/bench_nccl_tests.py``). Parse and wire
only; the work is in ``gpufabric.bench`` and ``gpufabric.launch``. Nothing heavy is imported at module
level (the CLI must start without torch).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from pathlib import Path

from gpufabric.bench.config import BenchConfig
from gpufabric.errors import UsageError
from gpufabric.launch.base import Launcher, RankProgram
from gpufabric.results.model import RunResult

ENGINES: tuple[str, ...] = ("gpufabric", "nccl", "torch", "nccl-tests")
"""``gpufabric``: our default (the direct NCCL engine on GPUs when the ``gpu`` extra is installed, else
torch.distributed); ``nccl`` and ``torch`` name one of ours; ``nccl-tests`` runs NVIDIA's binaries."""
RUNNING_LAUNCHERS: tuple[str, ...] = ("local", "mpirun", "slurm")
VIRTUAL_NODE_LAUNCHERS: tuple[str, ...] = ("local", "mpirun")
"""Launchers that place every rank on this host, so they can split them into virtual nodes."""


def self_test_shape(
    virtual_nodes: int, mps: bool, ranks: int | None, on: str, instance_type: str | None = None
) -> tuple[int, bool, int | None]:
    """``--self-test``: two virtual nodes of half this host's GPUs each (two ranks sharing one GPU, with
    MPS, on a one-GPU host); prints what the mode proves and what it cannot, on stderr. A misspelt
    ``--instance-type`` (the shape whose catalog figures the result is read against) stops it here."""
    import os
    import sys

    from gpufabric.bench.self_test import SELF_TEST_NOTE, check_instance
    from gpufabric.bench.world import visible_gpu_count

    if on not in VIRTUAL_NODE_LAUNCHERS:
        raise UsageError(f"--self-test: runs on this node (--on local or --on mpirun); drop --on {on}")
    if virtual_nodes not in (0, 2):
        raise UsageError("--self-test: is two virtual nodes; drop --virtual-nodes")
    check_instance(instance_type)
    gpus = visible_gpu_count(os.environ)
    if gpus == 0:
        raise UsageError("--self-test: needs this node's GPUs and NCCL; none is visible here")
    print(f"note: {SELF_TEST_NOTE}", file=sys.stderr)
    shared = gpus == 1
    return 2, mps or shared, ranks if ranks is not None else max(gpus, 2)


def print_self_test_figures(instance_type: str | None, config: BenchConfig, result: RunResult | None) -> None:
    """On stderr, next to the result (or the dry run's plan): the catalog's expected figures for this
    node's shape, what they mean here, and what the loopback cannot prove."""
    from gpufabric.bench.self_test import check_instance, self_test_lines

    lines = self_test_lines(check_instance(instance_type), config.collectives, config.sizes(), result)
    print("\n".join(lines), file=sys.stderr)


def nccl_tests_layout(
    on: str,
    *,
    virtual_nodes: int,
    ranks: int | None,
    gpus_per_node: int | None,
    visible_gpus: int,
    nodes: int,
) -> tuple[int, int]:
    """(nodes, GPU slots per node) of an nccl-tests job: one process per slot under MPI, ``-g 1``.

    Without virtual nodes: the hosts, and ``--gpus-per-node`` (default: this host's GPUs). With
    ``--virtual-nodes N`` (mpirun on this host): N nodes; the processes are ``--ranks R`` (mpirun's
    ``-np``, R/N per node), else N x ``--gpus-per-node G``, else this host's GPUs split over the nodes
    (at least one process per node: on one GPU, ``--virtual-nodes 2`` is 2 processes sharing it)."""
    if not virtual_nodes:
        return nodes, gpus_per_node or visible_gpus
    if on == "local":
        raise UsageError(
            "--virtual-nodes with --engine nccl-tests: one process per rank needs MPI; use --on mpirun "
            "(nccl-tests built with make MPI=1)"
        )
    if ranks is None:
        return virtual_nodes, gpus_per_node or (max(visible_gpus // virtual_nodes, 1) if visible_gpus else 0)
    if ranks % virtual_nodes:
        raise UsageError(
            f"--ranks: {ranks} processes do not split evenly over {virtual_nodes} virtual nodes; use a "
            f"multiple of {virtual_nodes}"
        )
    per_node = ranks // virtual_nodes
    if visible_gpus and per_node > max(visible_gpus // virtual_nodes, 1):
        # Within one node NCCL refuses two ranks on one GPU ("Duplicate GPU detected").
        raise UsageError(
            f"--ranks {ranks} on {virtual_nodes} virtual nodes puts {per_node} processes of one node on "
            f"{max(visible_gpus // virtual_nodes, 1)} GPU(s); NCCL refuses two ranks of a node on one GPU "
            f"(Duplicate GPU): use --virtual-nodes {ranks}"
        )
    if gpus_per_node is not None and gpus_per_node != per_node:
        raise UsageError(
            f"--ranks {ranks} and --gpus-per-node {gpus_per_node} disagree: {virtual_nodes} virtual nodes x "
            f"{gpus_per_node} = {virtual_nodes * gpus_per_node} processes; give one of them"
        )
    return virtual_nodes, per_node


def host_count(hosts: list[str], hostfile: Path | None) -> int:
    """Nodes named by ``--hosts``/``--hostfile`` (1 when none: every rank on this host)."""
    from gpufabric.launch.hosts import parse_hostfile, parse_hosts

    if hosts and hostfile:
        raise UsageError("--hosts and --hostfile both given; use one of them")
    if hostfile is not None:
        return len(parse_hostfile(hostfile))
    return len(parse_hosts(hosts)) if hosts else 1


def launcher_factory(
    on: str,
    *,
    hosts: list[str],
    hostfile: Path | None,
    mpirun: str,
    dry_run: bool,
    image: str | None = None,
    virtual_nodes: int = 0,
    mps: bool = False,
) -> Callable[[], Launcher]:
    """A fresh launcher per job (A/B rounds and tune candidates are separate jobs)."""
    from gpufabric.launch.local import free_port
    from gpufabric.launch.registry import LauncherSettings, check_launcher_name, make_launcher

    name = check_launcher_name(on)
    if (virtual_nodes or mps) and name not in VIRTUAL_NODE_LAUNCHERS:
        raise UsageError(
            "--virtual-nodes/--mps: split ranks on this host (--on local or --on mpirun); drop them with "
            f"--on {name}"
        )
    if virtual_nodes and (hosts or hostfile):
        raise UsageError(
            "--virtual-nodes: places every rank on this host; drop --hosts/--hostfile (ranks on other hosts "
            "are real nodes already) or drop --virtual-nodes"
        )
    if mps and not virtual_nodes:
        raise UsageError("--mps: for ranks that share a GPU; add --virtual-nodes N or drop --mps")
    if (hosts or hostfile) and name != "mpirun":
        raise UsageError(f"--hosts/--hostfile: only --on mpirun places ranks on hosts, not --on {name}")
    if name not in RUNNING_LAUNCHERS and not dry_run:
        raise UsageError(
            f"--on {name}: bench runs through {', '.join(RUNNING_LAUNCHERS)}; add --dry-run to print the "
            f"{name} plan, or run it with `gpufabric launch TASK --on {name}`"
        )

    def make() -> Launcher:
        settings = LauncherSettings()
        settings.mpirun.hosts = list(hosts)
        settings.mpirun.hostfile = hostfile
        settings.mpirun.mpirun = mpirun
        settings.local_virtual_nodes = virtual_nodes or None
        settings.local_mps = mps
        settings.mpirun.virtual_nodes = virtual_nodes
        settings.mpirun.mps = mps
        settings.kubernetes.image = image
        if not (hosts or hostfile):
            # Ranks on this host: a free port, so concurrent jobs here never share a rendezvous.
            settings.mpirun.master_port = free_port()
            settings.slurm.master_port = free_port()
        return make_launcher(name, settings)

    return make


# Launchers whose ranks run on machines that are not this one and share nothing with it (a pod from an
# image, a fresh cloud VM): their dry run shows the program as it runs there.
REMOTE_LAUNCHERS: tuple[str, ...] = ("kubernetes", "skypilot")
REMOTE_PYTHON = "python3"  # the image's/VM's interpreter, never this machine's virtualenv path
REMOTE_RUN_ROOT = "/tmp/gpufabric/runs"  # writable in any container or VM, whoever the user is


def rank_program(
    config: BenchConfig,
    nranks: int,
    on_gpu: bool,
    env: Mapping[str, str],
    *,
    launcher: str = "local",
    backend: str | None = None,
) -> RankProgram:
    """The program ``run_bench`` would hand its launcher (for ``--dry-run``; nothing is written).

    For a remote launcher (``REMOTE_LAUNCHERS``) it is the program as it runs there: ``python3`` from the
    image, the run directory under ``REMOTE_RUN_ROOT``, and the rank's config written there by the
    command itself (this machine's files are not in the pod or on the VM)."""
    from gpufabric.bench.config import resolve_engine
    from gpufabric.bench.runner import nccl_debug_env, rank_module

    chosen = backend or ("nccl" if on_gpu else (config.backend or "gloo"))
    engine = resolve_engine(config, chosen)
    module = rank_module(config.model_copy(update={"engine": engine}))
    local_dir = resolved_run_dir(config)
    if launcher not in REMOTE_LAUNCHERS:
        argv = [sys.executable, "-m", module, "--config", str(local_dir / "config.json")]
        full_env = {**env, **nccl_debug_env(local_dir, {}, env)}
        return RankProgram(argv=argv, env=full_env, nranks=nranks, gpus_per_node=nranks if on_gpu else 0,
                           workdir=local_dir, label=config.label)  # fmt: skip
    run_dir = f"{REMOTE_RUN_ROOT}/{local_dir.name}"
    full_env = {**env, **nccl_debug_env(local_dir, {}, env)}
    if "NCCL_DEBUG_FILE" not in env:
        full_env["NCCL_DEBUG_FILE"] = f"{run_dir}/nccl/nccl.%h.%p.log"
    return RankProgram(
        argv=["sh", "-c", remote_script(config, run_dir, module, chosen, engine)],
        env=full_env,
        nranks=nranks,
        gpus_per_node=nranks if on_gpu else 0,
        workdir=local_dir,  # where a plan's files are written and results are fetched to, here
        remote_workdir=run_dir,
        label=config.label,
    )


def remote_script(config: BenchConfig, run_dir: str, module: str, backend: str, engine: str) -> str:
    """Write the rank's config into the remote run directory, then start the rank with the image's
    python. Written to a temporary name and renamed, so a rank never reads a half-written config while
    another rank of the same node writes it."""
    import shlex

    from gpufabric.redact import redact_argv

    remote = config.model_copy(
        update={"run_dir": Path(run_dir), "backend": backend, "engine": engine,
                "command": redact_argv(list(config.command))}
    )  # fmt: skip
    path = f"{run_dir}/config.json"
    return (
        f"mkdir -p {shlex.quote(run_dir)}/nccl\n"
        f"cat > {shlex.quote(path)}.$$ <<'GPUFABRIC_CONFIG'\n{remote.model_dump_json()}\nGPUFABRIC_CONFIG\n"
        f"mv {shlex.quote(path)}.$$ {shlex.quote(path)}\n"
        f"exec {REMOTE_PYTHON} -m {module} --config {shlex.quote(path)}"
    )


def ensure_engine(config: BenchConfig, on_gpu: bool, *, for_what: str) -> None:
    """Refuse, in one line naming the extra, an engine whose packages are missing here, before any rank
    starts (the ranks run this python and would each die on the import). Nothing is imported."""
    from gpufabric._optional import ensure_installed
    from gpufabric.bench.config import resolve_engine

    if resolve_engine(config, "nccl" if on_gpu else (config.backend or "gloo")) == "nccl":
        for module in ("nccl.bindings", "cuda.bindings"):  # what bench/direct imports
            ensure_installed(module, extra="gpu", for_what=f"{for_what} (the direct NCCL engine)")
        return
    gpu_hint = 'the direct NCCL engine: pip install "gpufabric[gpu]"' if on_gpu else None
    ensure_installed("torch", extra="torch", for_what=f"{for_what} on torch.distributed", instead=gpu_hint)


def resolved_run_dir(config: BenchConfig) -> Path:
    """The absolute run directory: ``runs/<timestamp>-<label>/`` unless ``--run-dir`` named one."""
    from gpufabric.bench.runner import default_run_dir

    run_dir = config.run_dir
    return (default_run_dir(config.label, root=run_dir) if run_dir == Path("runs") else run_dir).resolve()


def dry_run_text(launcher: Launcher, program: RankProgram) -> str:
    from gpufabric.cli.launch import render_plan_text

    if launcher.name == "kubernetes":  # one rank per pod: a pod is a node with one GPU (or none)
        gpus = 1 if program.gpus_per_node else 0
        program = program.model_copy(update={"nodes": program.nranks, "gpus_per_node": gpus})
    return render_plan_text(launcher.render(program))
