"""nccl-tests as an engine: the seeds' exact command lines, -J detection from the usage text, binary
lookup, and the run path (launcher -> rank-0 log -> result readers) on real recorded output.

Not run here (no GPU, no nccl-tests build): a real ``all_reduce_perf``. The gpu-marked test at the
end runs it when a binary is found; the lead runs it on the GPU machine.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from gpufabric.bench.nccl_tests import (
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

FIXTURES = Path(__file__).parents[1] / "fixtures"
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

    directory = os.environ.get("GPUFABRIC_NCCL_TESTS_DIR")
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
