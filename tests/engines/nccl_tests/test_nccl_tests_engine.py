"""nccl-tests as an engine: the seeds' exact command lines, -J detection from the usage text, binary
lookup, and the run path (launcher -> rank-0 log -> result readers) on real recorded output.

Not run here (no GPU, no nccl-tests build): a real ``all_reduce_perf``. The gpu-marked tests at the
end run the real binaries when found (``GPUFABRIC_NCCL_TESTS_DIR``, PATH or /opt/nccl-tests/build): on
this host alone, and on 2 and 4 processes over 2 virtual nodes through mpirun with MPS.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from gpufabric.engines.nccl_tests.driver import (
    NcclTestsSettings,
    binary_supports_json,
    command_line,
    help_supports_json,
    locate_binary,
    nccl_tests_program,
    run_nccl_tests,
)
from gpufabric.errors import UsageError
from gpufabric.launch.base import RankProgram
from gpufabric.launch.mpirun import MpirunLauncher
from gpufabric.results.model import RunResult

# Read at import: the autouse fixture scrubs GPUFABRIC_* from every test's environment.
NCCL_TESTS_DIR = os.environ.get("GPUFABRIC_NCCL_TESTS_DIR")

FIXTURES = Path(__file__).parents[2] / "fixtures"
HELP = FIXTURES / "launch" / "nccl_tests_help"
SEED_LOG = FIXTURES / "nccl_tests" / "seed003_skypilot_rdma_h200_all_gather.log"


def test_seed_command_line_exactly() -> None:
    argv = command_line("/opt/nccl-tests/build/all_reduce_perf", NcclTestsSettings(), gpus_per_process=1)
    assert " ".join(argv) == "/opt/nccl-tests/build/all_reduce_perf -b 8 -e 2G -f 2 -g 1 -c 5 -w 5 -n 100"
    with_json = command_line("x", NcclTestsSettings(), gpus_per_process=1, json_path=Path("/r/out.json"))
    assert with_json[-2:] == ["-J", "/r/out.json"]


def test_gke_rdma_seed_variant() -> None:
    settings = NcclTestsSettings(collective="all_gather", min_bytes="1K", max_bytes="8G")
    argv = command_line("all_gather_perf", settings, gpus_per_process=1)
    assert argv[:5] == ["all_gather_perf", "-b", "1K", "-e", "8G"]


def test_json_flag_detected_from_usage_text() -> None:
    assert help_supports_json((HELP / "help_with_J_json.txt").read_text())
    assert not help_supports_json((HELP / "help_with_F_csv.txt").read_text())


def test_process_layout_per_launcher(tmp_path: Path) -> None:
    settings = NcclTestsSettings()
    local = nccl_tests_program(
        "b", settings, launcher_name="local", workdir=tmp_path, nodes=1, gpus_per_node=4
    )
    assert (local.nranks, local.argv[local.argv.index("-g") + 1]) == (1, "4")
    mpi = nccl_tests_program(
        "b", settings, launcher_name="mpirun", workdir=tmp_path, nodes=2, gpus_per_node=8, json_output=True
    )
    assert (mpi.nranks, mpi.ranks_per_node, mpi.argv[mpi.argv.index("-g") + 1]) == (16, 8, "1")
    assert mpi.argv[-1] == str(tmp_path / "nccl-tests-all_reduce.json")
    plan = MpirunLauncher().render(mpi.model_copy(update={"nodes": 1, "nranks": 2}))
    assert plan.commands[0].argv[-len(mpi.argv) :] == mpi.argv
    with pytest.raises(UsageError, match=r"one node; use --on mpirun or --on slurm"):
        nccl_tests_program("b", settings, launcher_name="local", workdir=tmp_path, nodes=2, gpus_per_node=1)


def test_locate_binary(tmp_path: Path) -> None:
    build = tmp_path / "build"
    build.mkdir()
    binary = build / "all_reduce_perf"
    shutil.copy("/bin/true", binary)
    assert locate_binary("all_reduce", build) == binary
    assert locate_binary("all_reduce", environ={"PATH": str(build)}) == binary
    with pytest.raises(UsageError, match=r"no executable all_gather_perf there"):
        locate_binary("all_gather", build)
    if not Path("/opt/nccl-tests/build/all_reduce_perf").exists():
        with pytest.raises(UsageError, match=r"all_reduce_perf not found on PATH .* --nccl-tests-dir"):
            locate_binary("all_reduce", environ={"PATH": str(tmp_path)})


def test_recorded_output_through_real_mpirun_and_readers(tmp_path: Path) -> None:
    # Replays the seed's real recorded table (prefixes stripped) from rank 0 of a real 2-rank mpirun job:
    # exercises the launcher -> rank-0 log -> readers path; it measures nothing.
    replay = f"[ \"$OMPI_COMM_WORLD_RANK\" = 0 ] && sed -n 's/^.*<stdout>://p' {SEED_LOG}; exit 0"
    program = RankProgram(
        argv=["bash", "-c", replay], nranks=2, workdir=tmp_path, label="nccl-tests-all_gather"
    )
    run = run_nccl_tests(MpirunLauncher(), program, timeout_s=60)
    assert run.outcome.ok, run.outcome.failure
    assert run.result is not None
    # A 16-rank table from a 2-process job is not what was launched: the engine refuses it with this line.
    assert run.mismatch is not None and "the table has 16 rank(s), the job launched 2" in run.mismatch
    (series,) = run.result.series
    assert series.collective == "all_gather"
    assert len(series.rows) == 24 and series.rows[0].size_bytes == 1024
    last = series.rows[-1]
    assert last.size_bytes == 8589934592 and last.out_of_place is not None
    assert last.out_of_place.busbw_gbs == pytest.approx(325.72)
    assert series.avg_busbw_gbs == pytest.approx(122.073)


ROOT_MPI = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"} if os.geteuid() == 0 else {}


@pytest.mark.gpu
def test_real_all_reduce_perf_on_this_host(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, host_mpi_env: dict[str, str]
) -> None:
    """On a GPU host with nccl-tests: the seeds' command via --on local, read back with -J if supported."""
    from gpufabric.launch.local import LocalLauncher

    directory = NCCL_TESTS_DIR
    try:
        binary = locate_binary("all_reduce", Path(directory) if directory else None)
    except UsageError as exc:
        pytest.skip(str(exc))
    import torch

    # An MPI=1 build started alone is an OpenMPI singleton: it needs the host's MPI settings back (as
    # root in a container, OMPI_ALLOW_RUN_AS_ROOT*), which the autouse scrub removed.
    for name, value in {**host_mpi_env, **ROOT_MPI}.items():
        monkeypatch.setenv(name, value)
    gpus = torch.cuda.device_count()
    settings = NcclTestsSettings(max_bytes="64M", iters=20)
    program = nccl_tests_program(
        binary,
        settings,
        launcher_name="local",
        workdir=tmp_path,
        nodes=1,
        gpus_per_node=gpus,
        json_output=binary_supports_json(binary),
    )
    run = run_nccl_tests(LocalLauncher(), program, timeout_s=300)
    assert run.outcome.ok, run.outcome.failure
    assert run.result is not None and run.result.series[0].rows[-1].size_bytes == 64 << 20


def _nccl_tests_dir() -> Path:
    """The real build (GPUFABRIC_NCCL_TESTS_DIR, else PATH, else /opt/nccl-tests/build); skip without it."""
    directory = NCCL_TESTS_DIR
    try:
        return locate_binary("all_reduce", Path(directory) if directory else None).parent
    except UsageError as exc:
        pytest.skip(str(exc))


# Each sweep: -b -e -f, then what our flags add (dtype, op, root, --check, --graph); nccl-tests' -J is on
# where the binary lists it (the CLI probes --help); test_real_binaries_without_json covers -J off.
VNODE_SWEEPS = [
    (["-b", "8", "-e", "1M", "-f", "4"], ["-d", "bfloat16", "-o", "max", "-r", "1", "--check"]),
    (["-b", "1K", "-e", "64K", "-f", "2"], ["-d", "float", "-o", "sum", "--graph", "--no-check"]),
]
VNODE_COLLECTIVES = "all_reduce,all_gather,reduce_scatter,alltoall,broadcast,reduce,sendrecv,gather,scatter"


@pytest.mark.gpu
@pytest.mark.parametrize("ranks", [2, 4])
@pytest.mark.parametrize(("sweep", "flags"), VNODE_SWEEPS)
def test_real_binaries_on_virtual_nodes_through_mpirun(
    tmp_path: Path, ranks: int, sweep: list[str], flags: list[str]
) -> None:
    """Every *_perf binary on 2 or 4 processes through our driver, one virtual node per process (MPS on):
    on one GPU a node cannot hold two ranks (NCCL: "Duplicate GPU"). The output must match the command
    (sizes, counts, type, op, root) and read back through show, compare and doctor."""
    from typer.testing import CliRunner

    from gpufabric.cli.app import app
    from gpufabric.launch.mps import CONTROL

    build = _nccl_tests_dir()
    if shutil.which("mpirun") is None or shutil.which(CONTROL) is None:
        pytest.skip(f"needs OpenMPI's mpirun and {CONTROL}")
    run_dir = tmp_path / "run"
    runner = CliRunner()
    args = ["bench", "--engine", "nccl-tests", "--on", "mpirun", "--virtual-nodes", str(ranks), "--mps",
            "--ranks", str(ranks), "--nccl-tests-dir", str(build), "-c", VNODE_COLLECTIVES, *sweep, *flags,
            "-n", "5", "-w", "2", "--timeout", "400", "--format", "json",
            "--run-dir", str(run_dir)]  # fmt: skip
    done = runner.invoke(app, args)
    assert done.exit_code == 0, done.output
    result = RunResult.model_validate_json((run_dir / "result.json").read_text())
    assert result.complete and result.metadata.world_size == ranks
    assert {d.host.rsplit("/", 1)[-1] for d in result.metadata.devices if d.host} == {
        f"vnode{k}" for k in range(ranks)
    }
    assert sorted(s.collective for s in result.series) == sorted(VNODE_COLLECTIVES.split(","))
    if "--check" in flags:
        assert all(s.wrong_total == 0 for s in result.series)
    shown = runner.invoke(app, ["show", str(run_dir), "--format", "csv"])
    assert shown.exit_code == 0 and "all_reduce" in shown.output
    compared = runner.invoke(app, ["compare", str(run_dir), str(run_dir / "result.json"), "-c", "all_reduce"])
    assert compared.exit_code == 0, compared.output
    doctor = runner.invoke(app, ["doctor", str(run_dir), "--format", "json"])
    assert doctor.exit_code in (0, 1), doctor.output
    assert "virtual nodes on one host" in doctor.output


@pytest.mark.gpu
def test_real_binaries_without_json(tmp_path: Path) -> None:
    """-J off: the text table is read (2 processes on 2 virtual nodes, MPS on), and it matches."""
    from gpufabric.launch.mpirun import MpirunOptions
    from gpufabric.launch.mps import CONTROL

    build = _nccl_tests_dir()
    if shutil.which("mpirun") is None or shutil.which(CONTROL) is None:
        pytest.skip(f"needs OpenMPI's mpirun and {CONTROL}")
    settings = NcclTestsSettings(collective="all_gather", min_bytes="8", max_bytes="4M", step_factor=4,
                                 iters=5, warmup_iters=2, check_iters=1)  # fmt: skip
    program = nccl_tests_program(build / "all_gather_perf", settings, launcher_name="mpirun",
                                 workdir=tmp_path, nodes=2, gpus_per_node=1, json_output=False)  # fmt: skip
    assert "-J" not in program.argv
    run = run_nccl_tests(MpirunLauncher(MpirunOptions(virtual_nodes=2, mps=True)), program, timeout_s=300)
    assert run.outcome.ok, run.outcome.failure
    assert run.mismatch is None and run.result is not None
    assert run.result.metadata.hosts and all("/vnode" in h for h in run.result.metadata.hosts)
