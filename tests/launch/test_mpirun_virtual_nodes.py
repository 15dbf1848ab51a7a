"""Virtual nodes under mpirun: the rank table in the ``sh -c`` wrapper gives each rank the same variables
as the local launcher (checked by running the real wrapper with ``sh``), real OpenMPI starts the ranks with
them, and ``gpufabric bench --on mpirun --virtual-nodes 2`` runs gloo ranks and the nccl-tests engine
(a real script standing in for the binary: no GPU here) with results naming ``<host>/vnode<k>``.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from gpufabric.errors import UsageError
from gpufabric.launch.base import RankProgram
from gpufabric.launch.local import LocalLauncher
from gpufabric.launch.mpirun import MpirunLauncher, MpirunOptions
from gpufabric.launch.mps import pipe_directory
from gpufabric.launch.virtual_nodes import WRAPPER_NAME
from gpufabric.results.model import RunResult

FIXTURES = Path(__file__).parents[1] / "fixtures"
# nccl-tests 2.19.6 on the lent H100: all_reduce_perf -b 8 -e 256M -f 2 on 2 virtual nodes (see its README).
TWO_VNODE_TABLE = FIXTURES / "nccl_tests" / "h100x1_v2_19_6" / "2vnodes_all_reduce_8B_256M.log"
PLACEMENT = ("NCCL_HOSTID", "GPUFABRIC_VIRTUAL_NODE", "CUDA_VISIBLE_DEVICES", "NCCL_TESTS_DEVICE")
HOST = socket.gethostname().split(".")[0]


def _program(tmp_path: Path, nranks: int, argv: list[str] | None = None, gpus: int = 1) -> RankProgram:
    return RankProgram(argv=argv or ["prog", "--flag"], nranks=nranks, gpus_per_node=gpus, workdir=tmp_path)


def _wrapper(argv: list[str]) -> list[str]:
    """The ``sh -c TABLE NAME PROGRAM...`` tail of an mpirun command line."""
    return argv[argv.index("sh") :]


def _run_wrapper(wrapper: list[str], rank: int | None) -> subprocess.CompletedProcess[str]:
    """The real wrapper under the real sh, as mpirun would start it for ``rank``, its program replaced by
    ``env`` so the exported variables can be read."""
    table = wrapper[: wrapper.index(WRAPPER_NAME) + 1]
    env = {"PATH": os.environ["PATH"]}
    if rank is not None:
        env["OMPI_COMM_WORLD_RANK"] = str(rank)
    return subprocess.run([*table, "env"], capture_output=True, text=True, env=env, timeout=30, check=False)


EIGHT_GPUS = [str(i) for i in range(8)]


@pytest.mark.parametrize(("nranks", "gpus"), [(2, ["0"]), (4, ["0"]), (8, EIGHT_GPUS), (4, [])])
def test_each_rank_gets_the_local_launchers_values(tmp_path: Path, nranks: int, gpus: list[str]) -> None:
    program = _program(tmp_path, nranks, gpus=1 if gpus else 0)
    local = LocalLauncher(virtual_nodes=2, gpu_ids=gpus, master_port=1).render(program)
    mpirun = MpirunLauncher(MpirunOptions(virtual_nodes=2), gpu_ids=gpus).render(program)
    (command,) = mpirun.commands
    wrapper = _wrapper(command.argv)
    assert wrapper[3:] == [WRAPPER_NAME, "prog", "--flag"]
    for rank, planned in enumerate(local.commands):
        done = _run_wrapper(wrapper, rank)
        assert done.returncode == 0, done.stderr
        seen = dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)
        wanted = {name: planned.env[name] for name in PLACEMENT if name in planned.env}
        assert {name: seen.get(name) for name in wanted} == wanted
        assert not set(PLACEMENT) - set(wanted) & set(seen)  # nothing a local rank would not get
    # What the table sets per rank is not also passed (with another value) by -x.
    assert "NCCL_HOSTID" not in command.env and "GPUFABRIC_VIRTUAL_NODE" not in command.env
    assert command.env["GPUFABRIC_NUM_NODES"] == "2"


def test_a_rank_outside_the_table_stops_with_one_line(tmp_path: Path) -> None:
    plan = MpirunLauncher(MpirunOptions(virtual_nodes=2), gpu_ids=["0"]).render(_program(tmp_path, 2))
    for rank in (2, None):
        done = _run_wrapper(_wrapper(plan.commands[0].argv), rank)
        assert done.returncode == 2 and done.stdout == ""
        assert done.stderr.strip() == (
            f"{WRAPPER_NAME}: rank {rank if rank is not None else 'unset'} is not one of the 2 ranks "
            "this job placed on virtual nodes"
        )


def test_a_program_argument_reaches_the_program_verbatim(tmp_path: Path) -> None:
    odd = ["printf", "%s|", "it's", "$HOME", "a b", "`x`", ""]
    plan = MpirunLauncher(MpirunOptions(virtual_nodes=2)).render(_program(tmp_path, 2, odd, gpus=0))
    wrapper = _wrapper(plan.commands[0].argv)
    done = subprocess.run(wrapper, capture_output=True, text=True, timeout=30, check=False,
                          env={"PATH": os.environ["PATH"], "OMPI_COMM_WORLD_RANK": "1"})  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout == "it's|$HOME|a b|`x`||"


def test_hosts_with_virtual_nodes_is_refused(tmp_path: Path) -> None:
    launcher = MpirunLauncher(MpirunOptions(virtual_nodes=2, hosts=["a:1", "b:1"]))
    with pytest.raises(UsageError, match=r"^--virtual-nodes: places every rank on this host; drop --hosts"):
        launcher.render(_program(tmp_path, 2))


def test_mps_directories_travel_with_x_and_the_plan_says_so(tmp_path: Path) -> None:
    launcher = MpirunLauncher(MpirunOptions(virtual_nodes=2, mps=True), gpu_ids=["0"])
    plan = launcher.render(_program(tmp_path, 4))
    (command,) = plan.commands
    # the daemon's own choice (run directory's mps/pipe, or a short one when that is too deep for a socket)
    assert command.env["CUDA_MPS_PIPE_DIRECTORY"] == str(pipe_directory(tmp_path / "mps"))
    assert command.env["CUDA_MPS_LOG_DIRECTORY"] == str(tmp_path / "mps" / "log")
    flags = [command.argv[i + 1] for i, arg in enumerate(command.argv) if arg == "-x"]
    assert {"CUDA_MPS_PIPE_DIRECTORY", "CUDA_MPS_LOG_DIRECTORY"} <= set(flags)
    assert any("4 ranks share each GPU: an MPS control daemon runs" in note for note in plan.notes)
    quiet = MpirunLauncher(MpirunOptions(virtual_nodes=2), gpu_ids=["0"]).render(_program(tmp_path, 4))
    assert any("time-slice the GPU" in note for note in quiet.notes)


def test_real_mpirun_ranks_see_their_own_node(tmp_path: Path) -> None:
    """A real program through real OpenMPI writes down what it was given: two nodes, two host ids. (A file
    per rank: mpirun splices the ranks' output chunks, so stdout is no place for a rank's JSON.)"""
    names = [*PLACEMENT, "OMPI_COMM_WORLD_RANK"]
    show = (
        "import json, os; rank = os.environ['OMPI_COMM_WORLD_RANK']; "
        f"open(os.path.join({str(tmp_path)!r}, 'rank.' + rank), 'w').write("
        f"json.dumps({{k: os.environ.get(k) for k in {names!r}}}))"
    )
    program = _program(tmp_path, 4, [sys.executable, "-c", show])
    launcher = MpirunLauncher(MpirunOptions(virtual_nodes=2), gpu_ids=["0"])
    outcome = launcher.execute(launcher.render(program), timeout_s=120)
    assert outcome.ok, outcome.failure
    seen = [json.loads((tmp_path / f"rank.{rank}").read_text()) for rank in range(4)]
    assert [env["OMPI_COMM_WORLD_RANK"] for env in seen] == ["0", "1", "2", "3"]
    assert [env["NCCL_HOSTID"] for env in seen] == [f"{HOST}-vnode{n}" for n in (0, 0, 1, 1)]
    assert [env["GPUFABRIC_VIRTUAL_NODE"] for env in seen] == ["0", "0", "1", "1"]
    assert {(env["CUDA_VISIBLE_DEVICES"], env["NCCL_TESTS_DEVICE"]) for env in seen} == {("0", "0")}
    assert [e.host for e in outcome.exits] == [f"{socket.gethostname()}/vnode{n}" for n in (0, 0, 1, 1)]


def _bench(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "gpufabric.cli", "bench", *args]
    full_env = {**os.environ, **env}
    return subprocess.run(
        command, capture_output=True, text=True, timeout=300, check=False, cwd=cwd, env=full_env
    )


def test_bench_gloo_ranks_on_two_virtual_nodes(tmp_path: Path) -> None:
    """One real end to end: 4 gloo ranks under real mpirun, two per virtual node (the one-rank-per-node
    placement is the same wrapper with another split: its case lines are checked by the dry run below)."""
    ranks = 4
    args = ["--on", "mpirun", "--virtual-nodes", "2", "--backend", "gloo", "--ranks", str(ranks),
            "-c", "all_reduce", "-e", "1K", "-f", "8", "--iters", "2", "--batches", "2", "--format", "json",
            "--run-dir", str(tmp_path / "run")]  # fmt: skip
    done = _bench(args, tmp_path)
    assert done.returncode == 0, done.stderr
    result = RunResult.model_validate_json(done.stdout)
    meta = result.metadata
    assert meta.launcher == "mpirun" and meta.world_size == ranks
    host = socket.gethostname()
    assert meta.hosts == [f"{host}/vnode0", f"{host}/vnode1"]
    per_node = ranks // 2
    placed = [(r, f"{host}/vnode{r // per_node}") for r in range(ranks)]
    assert [(d.rank, d.host) for d in meta.devices] == placed
    assert [s.wrong_total for s in result.series] == [0]


def test_bench_dry_run_prints_the_wrapper_as_run(tmp_path: Path) -> None:
    args = ["--on", "mpirun", "--virtual-nodes", "2", "--mps", "--backend", "gloo", "--ranks", "2",
            "--dry-run", "--run-dir", str(tmp_path / "run")]  # fmt: skip
    done = _bench(args, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "case $OMPI_COMM_WORLD_RANK in\n0) export GPUFABRIC_VIRTUAL_NODE=0" in done.stdout
    assert f"NCCL_HOSTID={HOST}-vnode1;;" in done.stdout
    assert f'exec "$@"\' {WRAPPER_NAME} {sys.executable} -m gpufabric.engines.torch.rank' in done.stdout
    assert "-x CUDA_MPS_PIPE_DIRECTORY" in done.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--hosts", "a:1,b:1"], "--virtual-nodes: places every rank on this host; drop --hosts/--hostfile"),
        (["--on", "slurm"], "--virtual-nodes/--mps: split ranks on this host (--on local or --on mpirun)"),
        (["--engine", "nccl-tests", "--on", "local"], "needs MPI; use --on mpirun"),
        (["--engine", "nccl-tests", "--ranks", "3"], "--ranks: 3 processes do not split evenly over 2"),
        (["--engine", "nccl-tests", "--ranks", "4", "--gpus-per-node", "1"], "--gpus-per-node 1 disagree"),
    ],
)
def test_bad_virtual_node_requests_are_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    base = ["--virtual-nodes", "2", "--dry-run", "--run-dir", str(tmp_path / "r")]
    if "--on" not in args:
        base += ["--on", "mpirun"]
    done = _bench([*base, *args], tmp_path, CUDA_VISIBLE_DEVICES="0")
    assert done.returncode == 2, done.stdout + done.stderr
    assert message in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1


def _stand_in_binary(directory: Path) -> Path:
    """all_reduce_perf as a script: records every rank's argv and placement, and prints from rank 0 the
    real 2-rank table nccl-tests 2.19.6 printed on two virtual nodes (no -J in its --help: text output)."""
    directory.mkdir()
    binary = directory / "all_reduce_perf"
    names = " ".join(PLACEMENT)
    binary.write_text(
        "#!/bin/sh\n"
        '[ "$1" = "--help" ] && exit 0\n'
        f"out={directory}/rank.$OMPI_COMM_WORLD_RANK\n"
        'echo "argv $*" > "$out"\n'
        f'for name in {names}; do eval "echo $name=\\${{$name}}" >> "$out"; done\n'
        f'[ "$OMPI_COMM_WORLD_RANK" = 0 ] && cat {TWO_VNODE_TABLE}\n'
        "exit 0\n"
    )
    binary.chmod(0o755)
    return binary


def _recorded(directory: Path, rank: int) -> dict[str, str]:
    lines = (directory / f"rank.{rank}").read_text().splitlines()
    return dict(line.split("=", 1) if "=" in line else line.split(" ", 1) for line in lines)


def test_nccl_tests_engine_on_two_virtual_nodes(tmp_path: Path) -> None:
    build = tmp_path / "build"
    _stand_in_binary(build)
    args = ["--engine", "nccl-tests", "--on", "mpirun", "--virtual-nodes", "2",
            "--nccl-tests-dir", str(build), "-c", "all_reduce", "-b", "8", "-e", "256M", "-f", "2",
            "--format", "json",
            "--run-dir", str(tmp_path / "run")]  # fmt: skip
    done = _bench(args, tmp_path, CUDA_VISIBLE_DEVICES="0")
    assert done.returncode == 0, done.stderr
    result = RunResult.model_validate_json(done.stdout)
    assert [len(s.rows) for s in result.series] == [26]
    # nccl-tests printed its host ("vm") for both ranks; the result names their virtual nodes.
    assert result.metadata.hosts == ["vm/vnode0", "vm/vnode1"]
    # NCCL writes NCCL_DEBUG_FILE only into an existing directory (else its log goes to stdout, and
    # doctor has nothing to attest): the driver makes it.
    assert (tmp_path / "run" / "nccl").is_dir()
    ranks = [_recorded(build, rank) for rank in (0, 1)]
    assert [r["NCCL_HOSTID"] for r in ranks] == [f"{HOST}-vnode0", f"{HOST}-vnode1"]
    assert [(r["CUDA_VISIBLE_DEVICES"], r["NCCL_TESTS_DEVICE"]) for r in ranks] == [("0", "0")] * 2
    argv = ranks[0]["argv"].split()
    assert argv[argv.index("-g") + 1] == "1" and argv[:6] == ["-b", "8", "-e", "268435456", "-f", "2"]


def test_nccl_tests_engine_counts_every_process_on_virtual_nodes(tmp_path: Path) -> None:
    """--ranks 4 on 2 virtual nodes is 4 processes: a 2-rank table is not what was launched."""
    build = tmp_path / "build"
    _stand_in_binary(build)
    args = ["--engine", "nccl-tests", "--on", "mpirun", "--virtual-nodes", "2", "--ranks", "4",
            "--nccl-tests-dir", str(build), "-c", "all_reduce", "-b", "8", "-e", "256M", "-f", "2",
            "--run-dir", str(tmp_path / "run")]  # fmt: skip
    done = _bench(args, tmp_path, CUDA_VISIBLE_DEVICES="0,1,2,3")
    assert done.returncode == 1, done.stderr
    assert "the table has 2 rank(s), the job launched 4 (4 process(es) x 1 GPU(s))" in done.stderr
    host_ids = [_recorded(build, r)["NCCL_HOSTID"] for r in range(4)]
    assert host_ids == [f"{HOST}-vnode{n}" for n in (0, 0, 1, 1)]


def test_nccl_tests_dry_run_on_four_processes(tmp_path: Path) -> None:
    """The plan as it would run: -np 4, one row of the table per process (2 processes per virtual node,
    each on its own GPU of the node's share, with NCCL_TESTS_DEVICE=0), the binary with -g 1; nothing is
    started."""
    args = ["--engine", "nccl-tests", "--on", "mpirun", "--virtual-nodes", "2", "--ranks", "4",
            "--nccl-tests-dir", str(tmp_path / "absent"), "-c", "all_gather", "-b", "8", "-e", "1M",
            "--dry-run", "--run-dir", str(tmp_path / "run")]  # fmt: skip
    done = _bench(args, tmp_path, CUDA_VISIBLE_DEVICES="0,1,2,3")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert " -np 4 -H localhost:4 " in out
    for rank in range(4):
        node = rank // 2
        assert (
            f"\n{rank}) export GPUFABRIC_VIRTUAL_NODE={node} GPUFABRIC_NODE_RANK={node} "
            f"NCCL_HOSTID={HOST}-vnode{node} CUDA_VISIBLE_DEVICES={rank} GPUFABRIC_GPUS_PER_NODE=2 "
            "NCCL_TESTS_DEVICE=0;;"
        ) in out
    binary = str(tmp_path / "absent" / "all_gather_perf")
    assert f"{WRAPPER_NAME} {binary} -b 8 -e 1048576 -f 2 -g 1 " in out
    assert "all_gather_perf was not found on this machine" in out  # a dry run needs no binary here


def test_two_ranks_of_a_node_on_one_gpu_are_refused(tmp_path: Path) -> None:
    """NCCL refuses two ranks of one node on one GPU ("Duplicate GPU detected", seen on the lent H100):
    one line naming the fix before anything starts."""
    args = ["--engine", "nccl-tests", "--on", "mpirun", "--virtual-nodes", "2", "--ranks", "4",
            "--nccl-tests-dir", str(tmp_path / "absent"), "-c", "all_gather", "--dry-run",
            "--run-dir", str(tmp_path / "run")]  # fmt: skip
    done = _bench(args, tmp_path, CUDA_VISIBLE_DEVICES="0")
    assert done.returncode == 2
    assert "NCCL refuses two ranks of a node on one GPU (Duplicate GPU): use --virtual-nodes 4" in done.stderr
    assert "Traceback" not in done.stderr
